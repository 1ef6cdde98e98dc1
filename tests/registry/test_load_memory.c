/* The load memory: a plugin whose load failed in another process shows as
 * failed, with that reason, in this one without being loaded; it is
 * forgotten when its library file changes; `tp-backends check` refreshes
 * it; an untrusted memory folder is ignored. Each test has its own memory
 * folder (use_backend_files sets TP_CACHE_DIR to TEMP/cache). */
#include <fcntl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry_test.h"

/* Loads `name` in a child process (as another program would) and waits. */
static void load_in_another_process(const char *name) {
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        tp_backend *backend = NULL;
        tp_backend_lookup(name, &backend); /* failure is the point for some fixtures */
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
}

static bool remembered(const char *name, char *reason, size_t size) {
    tp_backend_info *info = NULL;
    ck_assert_msg(tp_backend_info_get(name, &info) == TP_OK, "%s", tp_last_error());
    bool result = info->remembered && info->state == TP_BACKEND_FAILED;
    snprintf(reason, size, "%s", info->reason);
    tp_backend_info_release(info, 1);
    return result;
}

START_TEST(a_failed_init_is_remembered_with_its_reason_without_loading) {
    use_backend_files(fixture("init_fails.ini"));
    load_in_another_process("init_fails");
    char reason[1024];
    ck_assert(remembered("init_fails", reason, sizeof reason));
    ck_assert_contains(reason, "init: fixture license file");
    ck_assert_int_eq(tp_registry_dlopen_count(), 0);
    ck_assert(!fixture_is_loaded("fixture_init_fails.so"));
}
END_TEST

START_TEST(an_entry_returning_null_is_remembered) {
    use_backend_files(fixture("entry_null.ini"));
    load_in_another_process("entry_null");
    char reason[1024];
    ck_assert(remembered("entry_null", reason, sizeof reason));
    ck_assert_contains(reason, "returned NULL");
}
END_TEST

START_TEST(a_plugin_that_loaded_is_available) {
    use_backend_files(fixture("good.ini"));
    load_in_another_process("good");
    char reason[1024];
    ck_assert(!remembered("good", reason, sizeof reason));
    ck_assert_int_eq(backend_state("good", NULL, 0), TP_BACKEND_AVAILABLE);
}
END_TEST

START_TEST(nothing_is_remembered_before_any_load) {
    use_backend_files(fixture("init_fails.ini"));
    ck_assert_int_eq(backend_state("init_fails", NULL, 0), TP_BACKEND_AVAILABLE);
}
END_TEST

/* TEMP/lib/copy.so: a copy of the fixture library `file`, with an INI
 * TEMP/lib/copy.ini naming it `init_fails`; returns the library's path. */
static const char *copy_fixture(const char *file) {
    static char library[4200];
    snprintf(library, sizeof library, "%s/lib/copy.so", tp_test_temp_dir());
    char ini[8400];
    snprintf(ini, sizeof ini,
             "[tensorplay]\nformat = 1\n\n[init_fails]\nlibrary = %s\n"
             "entry = tp_fixture_backend\ncontract = 1\n",
             library);
    const char *ini_path = write_temp_file("lib/copy.ini", ini);
    FILE *from = fopen(fixture(file), "rb"), *to = fopen(library, "wb");
    ck_assert(from && to);
    char buffer[65536];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, from)) > 0) fwrite(buffer, 1, got, to);
    fclose(from);
    fclose(to);
    chmod(library, 0755);
    use_backend_files(ini_path);
    return library;
}

START_TEST(a_changed_library_file_is_forgotten) {
    const char *library = copy_fixture("fixture_init_fails.so");
    load_in_another_process("init_fails");
    char reason[1024];
    ck_assert(remembered("init_fails", reason, sizeof reason));
    struct timeval later[2];
    gettimeofday(&later[0], NULL);
    later[0].tv_sec += 10;
    later[1] = later[0];
    ck_assert_int_eq(utimes(library, later), 0); /* same bytes, new mtime */
    ck_assert(!remembered("init_fails", reason, sizeof reason));
    ck_assert_int_eq(backend_state("init_fails", NULL, 0), TP_BACKEND_AVAILABLE);
}
END_TEST

START_TEST(a_memory_folder_writable_by_others_is_ignored) {
    use_backend_files(fixture("init_fails.ini"));
    load_in_another_process("init_fails");
    char reason[1024], folder[4200];
    ck_assert(remembered("init_fails", reason, sizeof reason));
    snprintf(folder, sizeof folder, "%s/cache/registry", tp_test_temp_dir());
    ck_assert_int_eq(chmod(folder, 0777), 0);
    ck_assert(!remembered("init_fails", reason, sizeof reason));
}
END_TEST

/* A remembered failure (written here, as a stale record would be) of a
 * plugin that loads: `tp-backends check good` loads it and the memory says
 * loaded again. */
START_TEST(check_refreshes_a_remembered_failure) {
    use_backend_files(fixture("good.ini"));
    tp_registry_ensure_scanned();
    tp_backend *good = tp_registry_find("good");
    ck_assert_ptr_nonnull(good);
    tp_load_memory_record(good, "a stale failure");
    char reason[1024];
    ck_assert(remembered("good", reason, sizeof reason));
    ck_assert_str_eq(reason, "a stale failure");
    char command[16384];
    snprintf(command, sizeof command,
             "TP_BACKENDS_FILES='%s' TP_CACHE_DIR='%s/cache' '%s' check good >/dev/null 2>&1",
             fixture("good.ini"), tp_test_temp_dir(), TP_BACKENDS_TOOL);
    int status = system(command);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "check good: status %d", status);
    ck_assert(!remembered("good", reason, sizeof reason));
}
END_TEST

START_TEST(list_shows_failed_with_the_last_load_reason) {
    use_backend_files(fixture("init_fails.ini"));
    load_in_another_process("init_fails");
    char command[16384], out[16384];
    snprintf(command, sizeof command, "'%s' list 2>&1", TP_BACKENDS_TOOL);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t used = fread(out, 1, sizeof out - 1, pipe);
    out[used] = '\0';
    pclose(pipe);
    ck_assert_contains(out, "failed");
    ck_assert_contains(out, "(last load: init: fixture license file");
}
END_TEST

TP_TEST_SUITE(load_memory) {
    Suite *suite = suite_create("registry.load_memory");
    TCase *memory = tcase_create("memory");
    tcase_add_test(memory, a_failed_init_is_remembered_with_its_reason_without_loading);
    tcase_add_test(memory, an_entry_returning_null_is_remembered);
    tcase_add_test(memory, a_plugin_that_loaded_is_available);
    tcase_add_test(memory, nothing_is_remembered_before_any_load);
    tcase_add_test(memory, a_changed_library_file_is_forgotten);
    tcase_add_test(memory, a_memory_folder_writable_by_others_is_ignored);
    tcase_add_test(memory, check_refreshes_a_remembered_failure);
    tcase_add_test(memory, list_shows_failed_with_the_last_load_reason);
    suite_add_tcase(suite, memory);
    return suite;
}
