/* The plugins' shared disk cache (plugins/common/tpcommon_cache.c): a hit
 * needs the full key, a folder others can write is not used (with a logged
 * reason), an entry is a regular file of the user's that nobody else can
 * write, and nothing in the folder can block a reader. Each case ends in a
 * miss or a refusal the test can see. */
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp_test.h"
#include "tpcommon_cache.h"

static char cache_root[4200];
static char logged[4096];
static bool environment_is_empty;

static const char *test_getenv(const char *name) {
    if (environment_is_empty) return NULL;
    if (strcmp(name, "TP_CACHE_DIR") == 0) return cache_root;
    return NULL;
}

static void test_log(const tp_plugin_host *host, int32_t level, const char *message) {
    (void)host, (void)level;
    snprintf(logged, sizeof logged, "%s", message);
}

static tp_plugin_host host = {.getenv = test_getenv, .log = test_log};

static void use_root(const char *relative, mode_t mode) {
    snprintf(cache_root, sizeof cache_root, "%s/%s", tp_test_temp_dir(), relative);
    mkdir(cache_root, 0700);
    ck_assert_int_eq(chmod(cache_root, mode), 0);
    logged[0] = '\0';
}

static tpcommon_cache open_cache(void) {
    tpcommon_cache cache;
    ck_assert_msg(tpcommon_cache_open(&cache, &host, "unit"), "cache refused: %s", logged);
    return cache;
}

static const char payload[] = "compiled code bytes";

START_TEST(stored_entry_is_read_back_under_its_key) {
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    ck_assert(tpcommon_cache_write(&cache, "key one", payload, sizeof payload));
    size_t size = 0;
    char *read = tpcommon_cache_read(&cache, "key one", &size);
    ck_assert_ptr_nonnull(read);
    ck_assert_uint_eq(size, sizeof payload);
    ck_assert_mem_eq(read, payload, sizeof payload);
    free(read);
    char path[4400];
    tpcommon_cache_entry_path(&cache, "key one", path, sizeof path);
    struct stat info;
    ck_assert_int_eq(stat(path, &info), 0);
    ck_assert_int_eq(info.st_mode & 077, 0); /* written 0600 */
}
END_TEST

START_TEST(valid_entry_copied_under_another_key_is_a_miss) {
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    ck_assert(tpcommon_cache_write(&cache, "relu graph", payload, sizeof payload));
    char from[4400], to[4400];
    tpcommon_cache_entry_path(&cache, "relu graph", from, sizeof from);
    tpcommon_cache_entry_path(&cache, "sign graph", to, sizeof to);
    ck_assert_int_eq(link(from, to), 0);
    size_t size = 0;
    ck_assert_ptr_null(tpcommon_cache_read(&cache, "sign graph", &size));
}
END_TEST

START_TEST(fifo_in_place_of_an_entry_is_a_miss_without_blocking) {
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    char path[4400];
    tpcommon_cache_entry_path(&cache, "fifo key", path, sizeof path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    alarm(10); /* a blocking open would end the test with SIGALRM */
    size_t size = 0;
    ck_assert_ptr_null(tpcommon_cache_read(&cache, "fifo key", &size));
    alarm(0);
}
END_TEST

START_TEST(symlinked_entry_is_a_miss) {
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    ck_assert(tpcommon_cache_write(&cache, "real", payload, sizeof payload));
    char real[4400], link_path[4400];
    tpcommon_cache_entry_path(&cache, "real", real, sizeof real);
    tpcommon_cache_entry_path(&cache, "linked", link_path, sizeof link_path);
    ck_assert_int_eq(symlink(real, link_path), 0);
    size_t size = 0;
    ck_assert_ptr_null(tpcommon_cache_read(&cache, "linked", &size));
}
END_TEST

START_TEST(entry_writable_by_others_is_a_miss) {
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    ck_assert(tpcommon_cache_write(&cache, "open", payload, sizeof payload));
    char path[4400];
    tpcommon_cache_entry_path(&cache, "open", path, sizeof path);
    ck_assert_int_eq(chmod(path, 0666), 0);
    size_t size = 0;
    ck_assert_ptr_null(tpcommon_cache_read(&cache, "open", &size));
}
END_TEST

START_TEST(entry_owned_by_another_user_is_a_miss) {
    if (geteuid() != 0) {
        fprintf(stderr, "disk_cache: skipping: chown to nobody needs root (CI runs as root)\n");
        return;
    }
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    ck_assert(tpcommon_cache_write(&cache, "theirs", payload, sizeof payload));
    char path[4400];
    tpcommon_cache_entry_path(&cache, "theirs", path, sizeof path);
    struct passwd *nobody = getpwnam("nobody");
    ck_assert_int_eq(chown(path, nobody ? nobody->pw_uid : 65534, (gid_t)-1), 0);
    size_t size = 0;
    ck_assert_ptr_null(tpcommon_cache_read(&cache, "theirs", &size));
}
END_TEST

START_TEST(corrupt_or_truncated_entry_is_a_miss) {
    use_root("cache", 0700);
    tpcommon_cache cache = open_cache();
    ck_assert(tpcommon_cache_write(&cache, "k", payload, sizeof payload));
    char path[4400];
    tpcommon_cache_entry_path(&cache, "k", path, sizeof path);
    struct stat info;
    ck_assert_int_eq(stat(path, &info), 0);
    ck_assert_int_eq(truncate(path, info.st_size - 1), 0);
    size_t size = 0;
    ck_assert_ptr_null(tpcommon_cache_read(&cache, "k", &size));
}
END_TEST

START_TEST(folder_writable_by_others_is_not_used_and_says_why) {
    use_root("open-cache", 0777);
    tpcommon_cache cache;
    ck_assert(!tpcommon_cache_open(&cache, &host, "unit"));
    ck_assert_msg(strstr(logged, "writable by others") && strstr(logged, cache_root), "%s", logged);
    ck_assert(!tpcommon_cache_write(&cache, "k", payload, sizeof payload));
}
END_TEST

START_TEST(folder_owned_by_another_user_is_not_used_and_says_why) {
    if (geteuid() != 0) {
        fprintf(stderr, "disk_cache: skipping: chown to nobody needs root (CI runs as root)\n");
        return;
    }
    use_root("their-cache", 0755);
    struct passwd *nobody = getpwnam("nobody");
    ck_assert_int_eq(chown(cache_root, nobody ? nobody->pw_uid : 65534, (gid_t)-1), 0);
    tpcommon_cache cache;
    ck_assert(!tpcommon_cache_open(&cache, &host, "unit"));
    ck_assert_msg(strstr(logged, "not by you") != NULL, "%s", logged);
}
END_TEST

START_TEST(no_environment_means_no_cache) {
    /* What a privileged process sees: host->getenv returns NULL for all. */
    environment_is_empty = true;
    tpcommon_cache cache;
    ck_assert(!tpcommon_cache_open(&cache, &host, "unit"));
    environment_is_empty = false;
}
END_TEST

START_TEST(cache_dir_off_disables_the_cache) {
    snprintf(cache_root, sizeof cache_root, "off");
    tpcommon_cache cache;
    ck_assert(!tpcommon_cache_open(&cache, &host, "unit"));
}
END_TEST

START_TEST(entry_parse_rejects_another_key_and_bad_sizes) {
    unsigned char entry[64] = "TPCACHE2";
    uint64_t fields[3] = {1, 1, 0};
    memcpy(entry + 8, fields, sizeof fields);
    entry[32] = 'a';
    entry[33] = 'x';
    size_t offset = 0, size = 0;
    /* checksum 0 is wrong for ("a", "x"): refused even with the right key */
    ck_assert(!tpcommon_cache_entry_parse(entry, 34, "a", &offset, &size));
    ck_assert(!tpcommon_cache_entry_parse(entry, 34, "b", &offset, &size));
    fields[0] = UINT64_MAX; /* key length past the end */
    memcpy(entry + 8, fields, sizeof fields);
    ck_assert(!tpcommon_cache_entry_parse(entry, 34, "a", &offset, &size));
    ck_assert(!tpcommon_cache_entry_parse(entry, 10, "a", &offset, &size));
}
END_TEST

TP_TEST_SUITE(disk_cache) {
    Suite *suite = suite_create("disk_cache");
    TCase *entries = tcase_create("entries");
    tcase_add_test(entries, stored_entry_is_read_back_under_its_key);
    tcase_add_test(entries, valid_entry_copied_under_another_key_is_a_miss);
    tcase_add_test(entries, fifo_in_place_of_an_entry_is_a_miss_without_blocking);
    tcase_add_test(entries, symlinked_entry_is_a_miss);
    tcase_add_test(entries, entry_writable_by_others_is_a_miss);
    tcase_add_test(entries, entry_owned_by_another_user_is_a_miss);
    tcase_add_test(entries, corrupt_or_truncated_entry_is_a_miss);
    tcase_add_test(entries, entry_parse_rejects_another_key_and_bad_sizes);
    suite_add_tcase(suite, entries);
    TCase *folder = tcase_create("folder");
    tcase_add_test(folder, folder_writable_by_others_is_not_used_and_says_why);
    tcase_add_test(folder, folder_owned_by_another_user_is_not_used_and_says_why);
    tcase_add_test(folder, no_environment_means_no_cache);
    tcase_add_test(folder, cache_dir_off_disables_the_cache);
    suite_add_tcase(suite, folder);
    return suite;
}
