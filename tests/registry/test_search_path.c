/* The search path: what replaces it, what is prepended, XDG, and the
 * origin of each part. */
#include <unistd.h>

#include "registry_test.h"

static int find_part(const tp_backend_path_part *parts, int count, const char *path) {
    for (int i = 0; i < count; i++)
        if (strcmp(parts[i].path, path) == 0) return i;
    return -1;
}

START_TEST(backends_files_replaces_everything) {
    setenv("TP_BACKENDS_FILES", "/a.ini:/b.d", 1);
    setenv("TP_BACKENDS_PATH", "/ignored", 1);
    tp_backend_path_part *parts = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_search_path(&parts, &count), TP_OK);
    ck_assert_int_eq(count, 2);
    ck_assert_str_eq(parts[0].path, "/a.ini");
    ck_assert_str_eq(parts[1].path, "/b.d");
    ck_assert_str_eq(parts[1].origin, "TP_BACKENDS_FILES");
    tp_free(parts);
}
END_TEST

START_TEST(backends_path_comes_first_then_xdg_system_prefix) {
    unsetenv("TP_BACKENDS_FILES");
    setenv("TP_BACKENDS_PATH", "/first:/second", 1);
    setenv("XDG_CONFIG_HOME", "/xdg", 1);
    tp_backend_path_part *parts = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_search_path(&parts, &count), TP_OK);
    ck_assert_int_ge(count, 5);
    ck_assert_str_eq(parts[0].path, "/first");
    ck_assert_str_eq(parts[1].path, "/second");
    ck_assert_str_eq(parts[0].origin, "TP_BACKENDS_PATH");
    int xdg = find_part(parts, count, "/xdg/tensorplay/backends.d");
    int system = find_part(parts, count, "/etc/tensorplay/backends.d");
    int prefix = find_part(parts, count, TP_INSTALL_PREFIX "/share/tensorplay/backends.d");
    ck_assert_int_eq(xdg, 2);
    ck_assert_int_eq(system, 3);
    ck_assert_int_eq(prefix, 4);
    tp_free(parts);
}
END_TEST

START_TEST(home_config_is_used_when_xdg_is_unset) {
    unsetenv("TP_BACKENDS_FILES");
    unsetenv("TP_BACKENDS_PATH");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/someone", 1);
    tp_backend_path_part *parts = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_search_path(&parts, &count), TP_OK);
    ck_assert_str_eq(parts[0].path, "/home/someone/.config/tensorplay/backends.d");
    tp_free(parts);
}
END_TEST

START_TEST(build_tree_registry_is_read_from_the_build_tree) {
    unsetenv("TP_BACKENDS_FILES");
    unsetenv("TP_BACKENDS_PATH");
    tp_backend_path_part *parts = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_search_path(&parts, &count), TP_OK);
    ck_assert_str_eq(parts[count - 1].path, TP_BUILD_TREE_REGISTRY);
    ck_assert_str_eq(parts[count - 1].origin, "build tree");
    ck_assert(parts[count - 1].exists);
    tp_free(parts);
    /* The in-tree stax entry comes from the build tree's INI; whether it is
     * available depends on whether this build has LLVM, and the state says
     * which, truthfully. */
    tp_backend_info *info = NULL;
    ck_assert_msg(tp_backend_info_get("stax", &info) == TP_OK, "%s", tp_last_error());
    ck_assert_contains(info->file, TP_BUILD_TREE_REGISTRY);
    ck_assert_contains(info->library, "stax-llvm.so");
    if (access(info->library, F_OK) == 0) {
        ck_assert_int_eq(info->state, TP_BACKEND_AVAILABLE);
    } else {
        ck_assert_int_eq(info->state, TP_BACKEND_UNAVAILABLE);
        ck_assert_contains(info->reason, "stax-llvm.so");
    }
    tp_backend_info_release(info, 1);
}
END_TEST

TP_TEST_SUITE(registry_search_path) {
    Suite *suite = suite_create("registry.search_path");
    TCase *tc = tcase_create("search_path");
    tcase_add_test(tc, backends_files_replaces_everything);
    tcase_add_test(tc, backends_path_comes_first_then_xdg_system_prefix);
    tcase_add_test(tc, home_config_is_used_when_xdg_is_unset);
    tcase_add_test(tc, build_tree_registry_is_read_from_the_build_tree);
    suite_add_tcase(suite, tc);
    return suite;
}
