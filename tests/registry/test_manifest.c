/* Reading INI files: required keys, unknown keys, syntax errors, manifest
 * format, relative library paths, duplicate names across files. */
#include "registry_test.h"

START_TEST(relative_library_resolves_against_the_ini_folder) {
    use_backend_files(fixture("good.ini"));
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("good", &info), TP_OK);
    ck_assert_str_eq(info->library, fixture("fixture_good.so"));
    ck_assert_int_eq(info->state, TP_BACKEND_AVAILABLE);
    ck_assert_str_eq(info->file, fixture("good.ini"));
    ck_assert_int_eq(info->line, 5);
    tp_backend_info_release(info, 1);
}
END_TEST

START_TEST(missing_required_key_makes_entry_unavailable_with_file_line_and_key) {
    const char *path = write_temp_file("a.ini", "[tensorplay]\nformat = 1\n\n[partial]\n"
                                                "library = x.so\ncontract = 1\n");
    use_backend_files(path);
    char reason[1024], expected[4200];
    ck_assert_int_eq(backend_state("partial", reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    snprintf(expected, sizeof expected, "%s:4: entry 'partial' lacks the required key 'entry'",
             path);
    ck_assert_str_eq(reason, expected);
}
END_TEST

START_TEST(malformed_contract_names_the_key_and_line) {
    const char *path = write_temp_file("a.ini", "[b]\nlibrary = x.so\nentry = e\ncontract = one\n");
    use_backend_files(path);
    char reason[1024];
    ck_assert_int_eq(backend_state("b", reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(reason, ":4: key 'contract' of entry 'b' must be a revision number");
}
END_TEST

START_TEST(unknown_key_is_a_warning_kept_in_info) {
    char text[8192];
    snprintf(text, sizeof text,
             "[good]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\ncolour = blue\n",
             fixture("fixture_good.so"));
    use_backend_files(write_temp_file("a.ini", text));
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("good", &info), TP_OK);
    ck_assert_int_eq(info->state, TP_BACKEND_AVAILABLE);
    ck_assert_int_eq(info->num_warnings, 1);
    ck_assert_contains(info->warnings[0], ":5: unknown key 'colour' in [good] is ignored");
    tp_backend_info_release(info, 1);
}
END_TEST

START_TEST(syntax_error_reports_line_and_keeps_entries_before_it) {
    char text[8192];
    snprintf(text, sizeof text,
             "[good]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\n"
             "[broken\nlibrary = evil.so\n[after]\nlibrary = x.so\nentry = e\ncontract = 1\n",
             fixture("fixture_good.so"));
    const char *path = write_temp_file("a.ini", text);
    use_backend_files(path);
    ck_assert_int_eq(backend_state("good", NULL, 0), TP_BACKEND_AVAILABLE);
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("good", &info), TP_OK);
    ck_assert_str_eq(info->library, fixture("fixture_good.so")); /* not evil.so */
    tp_backend_info_release(info, 1);
    ck_assert_int_eq(tp_backend_info_get("after", &info), TP_ERR_NOT_FOUND);
    char *problems = NULL;
    ck_assert_int_eq(tp_backend_problems(&problems), TP_OK);
    char expected[4200];
    snprintf(expected, sizeof expected, "%s:5: syntax error", path);
    ck_assert_contains(problems, expected);
    tp_free(problems);
}
END_TEST

START_TEST(malformed_file_never_hides_a_good_file_next_to_it) {
    write_temp_file("d/10-broken.ini", "[oops\nlibrary\n");
    char text[8192];
    snprintf(text, sizeof text, "[good]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\n",
             fixture("fixture_good.so"));
    write_temp_file("d/20-good.ini", text);
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/d", tp_test_temp_dir());
    use_backend_files(folder);
    ck_assert_int_eq(backend_state("good", NULL, 0), TP_BACKEND_AVAILABLE);
    char *problems = NULL;
    ck_assert_int_eq(tp_backend_problems(&problems), TP_OK);
    ck_assert_contains(problems, "10-broken.ini:1: syntax error");
    tp_free(problems);
}
END_TEST

START_TEST(newer_manifest_format_is_refused) {
    const char *path = write_temp_file(
        "a.ini", "[tensorplay]\nformat = 2\n[b]\nlibrary = x.so\nentry = e\ncontract = 1\n");
    use_backend_files(path);
    char reason[1024];
    ck_assert_int_eq(backend_state("b", reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(reason, "manifest format 2 is newer than this TensorPlay reads (1)");
}
END_TEST

START_TEST(first_file_wins_a_name_and_later_claims_are_shadowed) {
    char first[4200], second[4200];
    snprintf(first, sizeof first, "%s", fixture("good.ini"));
    char text[8192];
    snprintf(text, sizeof text, "[good]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\n",
             fixture("fixture_good.so"));
    snprintf(second, sizeof second, "%s", write_temp_file("second.ini", text));
    char files[8500];
    snprintf(files, sizeof files, "%s:%s", first, second);
    use_backend_files(files);
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.include_shadowed = true;
    options.include_unavailable = true;
    tp_backend_info *infos = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_list(&options, &infos, &count), TP_OK);
    ck_assert_int_eq(count, 2);
    ck_assert_str_eq(infos[0].file, first);
    ck_assert_int_eq(infos[0].state, TP_BACKEND_AVAILABLE);
    ck_assert_str_eq(infos[1].file, second);
    ck_assert_int_eq(infos[1].state, TP_BACKEND_SHADOWED);
    char expected[4300];
    snprintf(expected, sizeof expected, "shadowed by %s:5", first);
    ck_assert_str_eq(infos[1].reason, expected);
    tp_backend_info_release(infos, count);
}
END_TEST

START_TEST(folder_gives_its_ini_files_in_name_order) {
    write_temp_file("d/b.ini", "[x]\nlibrary = b.so\nentry = e\ncontract = 1\n");
    write_temp_file("d/a.ini", "[x]\nlibrary = a.so\nentry = e\ncontract = 1\n");
    write_temp_file("d/c.txt", "[y]\nlibrary = c.so\nentry = e\ncontract = 1\n");
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/d", tp_test_temp_dir());
    use_backend_files(folder);
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("x", &info), TP_OK);
    ck_assert_contains(info->file, "/d/a.ini");
    tp_backend_info_release(info, 1);
    ck_assert_int_eq(tp_backend_info_get("y", &info), TP_ERR_NOT_FOUND);
}
END_TEST

static int priority_of(const char *name) {
    tp_backend_info *info = NULL;
    ck_assert_msg(tp_backend_info_get(name, &info) == TP_OK, "%s", tp_last_error());
    int priority = info->priority;
    tp_backend_info_release(info, 1);
    return priority;
}

/* `auto` ranks the in-tree backends cuda, opencl, stax, then eager (before any
 * probe lowers one: that needs loading, and info loads nothing). */
START_TEST(in_tree_backends_carry_their_auto_priorities) {
    use_backend_files(TP_BUILD_TREE_REGISTRY);
    ck_assert_int_eq(priority_of("cuda"), 300);
    ck_assert_int_eq(priority_of("opencl"), 200);
    ck_assert_int_eq(priority_of("stax"), 100);
    ck_assert_int_eq(priority_of("eager"), 0);
}
END_TEST

TP_TEST_SUITE(registry_manifest) {
    Suite *suite = suite_create("registry.manifest");
    TCase *tc = tcase_create("manifest");
    tcase_add_test(tc, relative_library_resolves_against_the_ini_folder);
    tcase_add_test(tc, in_tree_backends_carry_their_auto_priorities);
    tcase_add_test(tc, missing_required_key_makes_entry_unavailable_with_file_line_and_key);
    tcase_add_test(tc, malformed_contract_names_the_key_and_line);
    tcase_add_test(tc, unknown_key_is_a_warning_kept_in_info);
    tcase_add_test(tc, syntax_error_reports_line_and_keeps_entries_before_it);
    tcase_add_test(tc, malformed_file_never_hides_a_good_file_next_to_it);
    tcase_add_test(tc, newer_manifest_format_is_refused);
    tcase_add_test(tc, first_file_wins_a_name_and_later_claims_are_shadowed);
    tcase_add_test(tc, folder_gives_its_ini_files_in_name_order);
    suite_add_tcase(suite, tc);
    return suite;
}
