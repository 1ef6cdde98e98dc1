/* tp_backend_register_file: one INI file added at run time comes first on
 * the search path, its backends can be looked up at once, and a file that
 * cannot be read or parsed is an error naming it. */
#include "registry_test.h"

START_TEST(registered_file_backends_can_be_looked_up) {
    use_backend_files(tp_test_temp_dir()); /* nothing else on the path */
    ck_assert_int_eq(tp_backend_lookup("good", &(tp_backend *){NULL}), TP_ERR_NOT_FOUND);
    ck_assert_msg(tp_backend_register_file(fixture("good.ini")) == TP_OK, "%s", tp_last_error());
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("good", &backend) == TP_OK, "%s", tp_last_error());
    ck_assert_str_eq(tp_backend_name(backend), "good");
}
END_TEST

START_TEST(registered_file_comes_before_tp_backends_files) {
    use_backend_files(TP_FIXTURE_DIR);
    char text[8192];
    snprintf(text, sizeof text,
             "[tensorplay]\nformat = 1\n\n[good]\nlibrary = %s\nentry = tp_fixture_backend\n"
             "contract = 1\ndescription = from the registered file\n",
             fixture("fixture_good.so"));
    const char *path = write_temp_file("mine/good.ini", text);
    ck_assert_msg(tp_backend_register_file(path) == TP_OK, "%s", tp_last_error());
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("good", &info), TP_OK);
    ck_assert_str_eq(info->description, "from the registered file");
    ck_assert_ptr_nonnull(strstr(info->file, "mine/good.ini"));
    tp_backend_info_release(info, 1);
}
END_TEST

START_TEST(missing_file_is_an_io_error_naming_it) {
    ck_assert_int_eq(tp_backend_register_file("/nonexistent/tp.ini"), TP_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "'/nonexistent/tp.ini' cannot be read"));
    ck_assert_int_eq(tp_backend_register_file(tp_test_temp_dir()), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "not a regular file"));
}
END_TEST

START_TEST(malformed_file_is_a_parse_error_naming_its_line) {
    use_backend_files(tp_test_temp_dir());
    const char *path = write_temp_file("broken.ini", "[tensorplay]\nformat = 1\n[unclosed\n");
    ck_assert_int_eq(tp_backend_register_file(path), TP_ERR_PARSE);
    ck_assert_msg(strstr(tp_last_error(), "broken.ini:3") != NULL, "%s", tp_last_error());
}
END_TEST

TP_TEST_SUITE(register_file) {
    Suite *suite = suite_create("registry.register_file");
    TCase *files = tcase_create("register_file");
    tcase_add_test(files, registered_file_backends_can_be_looked_up);
    tcase_add_test(files, registered_file_comes_before_tp_backends_files);
    tcase_add_test(files, missing_file_is_an_io_error_naming_it);
    tcase_add_test(files, malformed_file_is_a_parse_error_naming_its_line);
    suite_add_tcase(suite, files);
    return suite;
}
