/* The trust matrix: which INI and plugin files the registry accepts, by the
 * file's mode, its folder's mode, an ancestor folder's mode, its owner, a
 * symlink into an untrusted folder, a sticky folder, and a file swapped after
 * the scan-time check; and an untrusted INI that claims no name. Each case
 * builds its own tree under the test's temp folder (mkdtemp: 0700, in the
 * sticky /tmp) with a copy of fixture_good.so. */
#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include "registry_test.h"

/* TEMP/relative (static buffer rotation of 8). */
static const char *temp(const char *relative) {
    static char paths[8][4096];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 4096, "%s/%s", tp_test_temp_dir(), relative);
    return path;
}

static void make_folder(const char *relative, mode_t mode) {
    const char *path = temp(relative);
    mkdir(path, 0755);
    ck_assert_int_eq(chmod(path, mode), 0);
}

static void copy_good_plugin(const char *relative, mode_t mode) {
    FILE *from = fopen(fixture("fixture_good.so"), "rb");
    ck_assert_ptr_nonnull(from);
    const char *path = temp(relative);
    FILE *to = fopen(path, "wb");
    ck_assert_ptr_nonnull(to);
    char buffer[65536];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, from)) > 0)
        ck_assert_uint_eq(fwrite(buffer, 1, got, to), got);
    fclose(from);
    fclose(to);
    ck_assert_int_eq(chmod(path, mode), 0);
}

/* An INI at TEMP/ini_relative with one [name] entry loading `library`. */
static const char *write_ini(const char *ini_relative, const char *name, const char *library,
                             mode_t mode) {
    char text[8192];
    snprintf(text, sizeof text,
             "[tensorplay]\nformat = 1\n\n[%s]\nlibrary = %s\nentry = tp_fixture_backend\n"
             "contract = 1\n",
             name, library);
    const char *path = temp(ini_relative);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    fclose(file);
    ck_assert_int_eq(chmod(path, mode), 0);
    return path;
}

static uid_t nobody_uid(void) {
    struct passwd *nobody = getpwnam("nobody");
    return nobody ? nobody->pw_uid : 65534;
}

/* Expects `state`, and `fragment` in the reason when it is not NULL. */
static void expect_state(const char *name, tp_backend_state state, const char *fragment) {
    char reason[2048];
    tp_backend_state got = backend_state(name, reason, sizeof reason);
    ck_assert_msg(got == state, "'%s' is %s (%s), expected %s", name, tp_backend_state_name(got),
                  reason, tp_backend_state_name(state));
    if (fragment) ck_assert_contains(reason, fragment);
}

START_TEST(plain_tree_is_available_and_loads) {
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0755);
    use_backend_files(write_ini("good.ini", "good", temp("lib/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_AVAILABLE, NULL);
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("good", &backend) == TP_OK, "%s", tp_last_error());
}
END_TEST

START_TEST(ini_writable_by_others_is_refused) {
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0755);
    use_backend_files(write_ini("open.ini", "good", temp("lib/plugin.so"), 0666));
    expect_state("good", TP_BACKEND_UNAVAILABLE, "INI file");
    expect_state("good", TP_BACKEND_UNAVAILABLE, "writable by others (mode 0666)");
}
END_TEST

START_TEST(plugin_writable_by_group_is_refused) {
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0775);
    use_backend_files(write_ini("good.ini", "good", temp("lib/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_UNAVAILABLE, "writable by its group (mode 0775)");
}
END_TEST

START_TEST(plugin_folder_writable_by_others_is_refused) {
    make_folder("lib", 0777);
    copy_good_plugin("lib/plugin.so", 0755);
    use_backend_files(write_ini("good.ini", "good", temp("lib/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_UNAVAILABLE, "its folder");
    expect_state("good", TP_BACKEND_UNAVAILABLE, "writable by others (mode 0777)");
}
END_TEST

START_TEST(ancestor_folder_writable_by_others_is_refused) {
    make_folder("open", 0777);
    make_folder("open/lib", 0755);
    copy_good_plugin("open/lib/plugin.so", 0755);
    use_backend_files(write_ini("good.ini", "good", temp("open/lib/plugin.so"), 0644));
    char fragment[4200];
    snprintf(fragment, sizeof fragment, "its folder %s is writable by others", temp("open"));
    expect_state("good", TP_BACKEND_UNAVAILABLE, fragment);
}
END_TEST

START_TEST(ini_in_an_ancestor_writable_by_others_is_refused) {
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0755);
    make_folder("open", 0777);
    make_folder("open/etc", 0755);
    use_backend_files(write_ini("open/etc/good.ini", "good", temp("lib/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_UNAVAILABLE, "INI file");
}
END_TEST

START_TEST(symlink_into_an_open_folder_is_refused) {
    make_folder("open", 0777);
    copy_good_plugin("open/plugin.so", 0755);
    make_folder("lib", 0755);
    ck_assert_int_eq(symlink(temp("open/plugin.so"), temp("lib/plugin.so")), 0);
    use_backend_files(write_ini("good.ini", "good", temp("lib/plugin.so"), 0644));
    char fragment[4200];
    snprintf(fragment, sizeof fragment, "its folder %s is writable by others", temp("open"));
    expect_state("good", TP_BACKEND_UNAVAILABLE, fragment);
}
END_TEST

START_TEST(sticky_open_folder_is_trusted_for_the_users_own_file) {
    make_folder("sticky", 01777);
    copy_good_plugin("sticky/plugin.so", 0755);
    use_backend_files(write_ini("good.ini", "good", temp("sticky/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_AVAILABLE, NULL);
}
END_TEST

START_TEST(file_owned_by_another_user_is_refused) {
    if (geteuid() != 0) {
        fprintf(stderr, "trust: skipping the other-owner cases: they chown to nobody and need "
                        "root (CI runs as root)\n");
        return;
    }
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0755);
    ck_assert_int_eq(chown(temp("lib/plugin.so"), nobody_uid(), (gid_t)-1), 0);
    use_backend_files(write_ini("good.ini", "good", temp("lib/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_UNAVAILABLE, "neither root nor you");
}
END_TEST

START_TEST(folder_owned_by_another_user_is_refused) {
    if (geteuid() != 0) {
        fprintf(stderr, "trust: skipping: chown to nobody needs root (CI runs as root)\n");
        return;
    }
    make_folder("theirs", 0755);
    copy_good_plugin("theirs/plugin.so", 0755);
    ck_assert_int_eq(chown(temp("theirs"), nobody_uid(), (gid_t)-1), 0);
    use_backend_files(write_ini("good.ini", "good", temp("theirs/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_UNAVAILABLE, "is owned by uid");
}
END_TEST

START_TEST(sticky_folder_does_not_cover_a_file_of_another_user) {
    if (geteuid() != 0) {
        fprintf(stderr, "trust: skipping: chown to nobody needs root (CI runs as root)\n");
        return;
    }
    /* The file belongs to root, the process runs as nobody: root is an
     * accepted owner, but in a sticky open folder only the user's own files
     * are safe from being replaced. */
    ck_assert_int_eq(chmod(tp_test_temp_dir(), 0755), 0);
    make_folder("sticky", 01777);
    copy_good_plugin("sticky/plugin.so", 0755);
    const char *ini = write_ini("good.ini", "good", temp("sticky/plugin.so"), 0644);
    ck_assert_int_eq(seteuid(nobody_uid()), 0);
    use_backend_files(ini);
    expect_state("good", TP_BACKEND_UNAVAILABLE,
                 "sticky folders are trusted only for files you own");
    /* Back to root before the test process ends: LeakSanitizer's exit scan
     * cannot read this process's memory map under a changed euid. */
    ck_assert_int_eq(seteuid(0), 0);
}
END_TEST

START_TEST(untrusted_ini_claims_no_name) {
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0755);
    const char *untrusted = write_ini("a-open.ini", "good", temp("lib/plugin.so"), 0666);
    const char *trusted = write_ini("b-good.ini", "good", temp("lib/plugin.so"), 0644);
    char files[8400];
    snprintf(files, sizeof files, "%s:%s", untrusted, trusted);
    use_backend_files(files);
    expect_state("good", TP_BACKEND_AVAILABLE, NULL);
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("good", &backend) == TP_OK, "%s", tp_last_error());
    /* The refused entry is still listed, with its reason. */
    tp_backend_info *infos = NULL;
    int count = 0;
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.include_unavailable = true;
    options.include_shadowed = true;
    ck_assert_int_eq(tp_backend_list(&options, &infos, &count), TP_OK);
    bool listed = false;
    for (int i = 0; i < count; i++)
        if (strcmp(infos[i].file, untrusted) == 0) {
            listed = true;
            ck_assert_int_eq(infos[i].state, TP_BACKEND_UNAVAILABLE);
            ck_assert_contains(infos[i].reason, "writable by others");
        }
    tp_backend_info_release(infos, count);
    ck_assert(listed);
}
END_TEST

START_TEST(plugin_swapped_after_the_check_is_refused_at_load) {
    make_folder("lib", 0755);
    copy_good_plugin("lib/plugin.so", 0755);
    use_backend_files(write_ini("good.ini", "good", temp("lib/plugin.so"), 0644));
    expect_state("good", TP_BACKEND_AVAILABLE, NULL); /* scanned and checked */
    /* Swap: a copy others can write replaces the checked file. */
    copy_good_plugin("lib/swap.so", 0777);
    ck_assert_int_eq(rename(temp("lib/swap.so"), temp("lib/plugin.so")), 0);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_ERR_BACKEND);
    ck_assert_contains(tp_last_error(), "writable by others");
}
END_TEST

TP_TEST_SUITE(trust) {
    Suite *suite = suite_create("registry.trust");
    TCase *matrix = tcase_create("matrix");
    tcase_add_test(matrix, plain_tree_is_available_and_loads);
    tcase_add_test(matrix, ini_writable_by_others_is_refused);
    tcase_add_test(matrix, plugin_writable_by_group_is_refused);
    tcase_add_test(matrix, plugin_folder_writable_by_others_is_refused);
    tcase_add_test(matrix, ancestor_folder_writable_by_others_is_refused);
    tcase_add_test(matrix, ini_in_an_ancestor_writable_by_others_is_refused);
    tcase_add_test(matrix, symlink_into_an_open_folder_is_refused);
    tcase_add_test(matrix, sticky_open_folder_is_trusted_for_the_users_own_file);
    tcase_add_test(matrix, file_owned_by_another_user_is_refused);
    tcase_add_test(matrix, folder_owned_by_another_user_is_refused);
    tcase_add_test(matrix, sticky_folder_does_not_cover_a_file_of_another_user);
    tcase_add_test(matrix, untrusted_ini_claims_no_name);
    tcase_add_test(matrix, plugin_swapped_after_the_check_is_refused_at_load);
    suite_add_tcase(suite, matrix);
    return suite;
}
