/* Availability decided without loading: contract revision, core range,
 * library file, required sonames, and refusing files others can write. */
#include <unistd.h>

#include "registry_test.h"

static void expect_unavailable(const char *ini, const char *name, const char *message) {
    use_backend_files(fixture(ini));
    char reason[2048];
    ck_assert_int_eq(backend_state(name, reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(reason, message);
    ck_assert(!fixture_is_loaded("fixture_good.so"));
}

START_TEST(contract_too_new_says_upgrade_tensorplay) {
    expect_unavailable("contract_new.ini", "contract_new",
                       "backend 'contract_new' speaks contract revision 3, this TensorPlay "
                       "implements revisions 1 to 2; upgrade TensorPlay");
}
END_TEST

START_TEST(core_too_old_names_the_minimum) {
    expect_unavailable("core_too_old.ini", "core_too_old",
                       "backend 'core_too_old' requires TensorPlay >= 9.0.0, found 0.1.0");
}
END_TEST

START_TEST(core_too_new_names_the_maximum_and_the_fix) {
    expect_unavailable("core_too_new.ini", "core_too_new",
                       "backend 'core_too_new' supports TensorPlay <= 0.0.9, found 0.1.0; check "
                       "the backend package for an update");
}
END_TEST

START_TEST(missing_library_names_the_path) {
    char message[4200];
    snprintf(message, sizeof message, "library %s not found", fixture("fixture_not_built.so"));
    expect_unavailable("missing_library.ini", "missing_library", message);
}
END_TEST

START_TEST(missing_requires_names_each_missing_library_and_its_provider) {
    use_backend_files(fixture("missing_requires.ini"));
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("missing_requires", &info), TP_OK);
    ck_assert_int_eq(info->state, TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(info->reason, "libtp-fixture-missing.so.7 not found");
    ck_assert_contains(info->reason, "libLLVM.so.99.1 not found");
    ck_assert(strstr(info->reason, "libc.so.6") == NULL);
    ck_assert_int_eq(info->num_required_sonames, 3);
    ck_assert_ptr_nonnull(info->required_sonames_found[0]); /* libc.so.6 */
    ck_assert_ptr_null(info->required_sonames_found[1]);
    tp_backend_info_release(info, 1);
}
END_TEST

START_TEST(well_known_sonames_say_what_provides_them) {
    ck_assert_str_eq(tp_soname_provider("libLLVM.so.19.1"), "the Debian package libllvm19");
    ck_assert_contains(tp_soname_provider("libOpenCL.so.1"), "ocl-icd-libopencl1");
    ck_assert_str_eq(tp_soname_provider("libcuda.so.1"), "the NVIDIA driver");
    ck_assert_ptr_null(tp_soname_provider("libnothing.so.1"));
}
END_TEST

START_TEST(soname_found_through_ld_library_path) {
    write_temp_file("lib/libtp-only-here.so.3", "not really a library\n");
    char folder[4200];
    snprintf(folder, sizeof folder, "/nonexistent:%s/lib", tp_test_temp_dir());
    setenv("LD_LIBRARY_PATH", folder, 1);
    char *found = tp_soname_find("libtp-only-here.so.3");
    ck_assert_ptr_nonnull(found);
    ck_assert_contains(found, "/lib/libtp-only-here.so.3");
    free(found);
    unsetenv("LD_LIBRARY_PATH");
    ck_assert_ptr_null(tp_soname_find("libtp-only-here.so.3"));
}
END_TEST

START_TEST(soname_found_through_the_loader_cache) {
    unsetenv("LD_LIBRARY_PATH");
    char *found = tp_soname_find("libc.so.6");
    ck_assert_ptr_nonnull(found);
    ck_assert_contains(found, "libc.so.6");
    free(found);
}
END_TEST

START_TEST(world_writable_ini_is_refused) {
    char text[8192];
    snprintf(text, sizeof text, "[good]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\n",
             fixture("fixture_good.so"));
    const char *path = write_temp_file("open.ini", text);
    chmod(path, 0666);
    use_backend_files(path);
    char reason[2048];
    ck_assert_int_eq(backend_state("good", reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(reason, "is refused: it is writable by others (mode 0666)");
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_ERR_BACKEND);
    ck_assert(!fixture_is_loaded("fixture_good.so"));
}
END_TEST

START_TEST(group_writable_plugin_file_is_refused) {
    char copy[4200], command[9000];
    snprintf(copy, sizeof copy, "%s/plugin.so", tp_test_temp_dir());
    snprintf(command, sizeof command, "cp '%s' '%s'", fixture("fixture_good.so"), copy);
    ck_assert_int_eq(system(command), 0);
    chmod(copy, 0775);
    char text[8192];
    snprintf(text, sizeof text,
             "[good]\nlibrary = plugin.so\nentry = tp_fixture_backend\ncontract = 1\n");
    use_backend_files(write_temp_file("good.ini", text));
    char reason[2048];
    ck_assert_int_eq(backend_state("good", reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(reason, "plugin file");
    ck_assert_contains(reason, "writable by its group");
}
END_TEST

START_TEST(version_parse_accepts_short_forms_and_rejects_junk) {
    int version[3];
    ck_assert(tp_version_parse("0.1.0", version) && version[1] == 1);
    ck_assert(tp_version_parse("2", version) && version[0] == 2 && version[2] == 0);
    ck_assert(!tp_version_parse("1.x", version));
    ck_assert(!tp_version_parse("1.2.3.4", version));
    ck_assert(!tp_version_parse("", version));
}
END_TEST

TP_TEST_SUITE(registry_availability) {
    Suite *suite = suite_create("registry.availability");
    TCase *tc = tcase_create("availability");
    tcase_add_test(tc, contract_too_new_says_upgrade_tensorplay);
    tcase_add_test(tc, core_too_old_names_the_minimum);
    tcase_add_test(tc, core_too_new_names_the_maximum_and_the_fix);
    tcase_add_test(tc, missing_library_names_the_path);
    tcase_add_test(tc, missing_requires_names_each_missing_library_and_its_provider);
    tcase_add_test(tc, well_known_sonames_say_what_provides_them);
    tcase_add_test(tc, soname_found_through_ld_library_path);
    tcase_add_test(tc, soname_found_through_the_loader_cache);
    tcase_add_test(tc, world_writable_ini_is_refused);
    tcase_add_test(tc, group_writable_plugin_file_is_refused);
    tcase_add_test(tc, version_parse_accepts_short_forms_and_rejects_junk);
    suite_add_tcase(suite, tc);
    return suite;
}
