/* Loading: each way a plugin can fail ends "failed" with the right reason;
 * a good plugin loads exactly once, even with 16 threads looking it up;
 * listing loads nothing. */
#include <pthread.h>

#include "registry_test.h"

static void expect_failed(const char *name, const char *message) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup(name, &backend), TP_ERR_BACKEND);
    ck_assert_ptr_null(backend);
    char expected_prefix[256];
    snprintf(expected_prefix, sizeof expected_prefix, "backend '%s' failed to load: ", name);
    ck_assert_contains(tp_last_error(), expected_prefix);
    ck_assert_contains(tp_last_error(), message);
    char reason[2048];
    ck_assert_int_eq(backend_state(name, reason, sizeof reason), TP_BACKEND_FAILED);
    ck_assert_contains(reason, message);
}

START_TEST(good_plugin_loads_and_reports_its_version) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    ck_assert_str_eq(tp_backend_name(backend), "good");
    ck_assert_str_eq(tp_backend_version(backend), "1.2.3-fixture");
    ck_assert_int_eq(backend_state("good", NULL, 0), TP_BACKEND_LOADED);
}
END_TEST

START_TEST(file_that_is_not_a_shared_object_fails_with_dlopen_text) {
    expect_failed("not_a_library", "dlopen: ");
    ck_assert_contains(tp_last_error(), "not_a_library.so");
}
END_TEST

START_TEST(missing_entry_symbol_names_file_and_symbol) {
    expect_failed("missing_entry", "has no symbol 'tp_no_such_entry'");
    ck_assert_contains(tp_last_error(), "fixture_good.so");
}
END_TEST

START_TEST(entry_returning_null_fails) {
    expect_failed("entry_null", "tp_fixture_backend() in ");
    ck_assert_contains(tp_last_error(), "returned NULL");
}
END_TEST

START_TEST(struct_size_smaller_than_revision_1_fails) {
    expect_failed("small_struct", "has struct_size 16, smaller than a revision-1 table");
}
END_TEST

START_TEST(contract_mismatch_between_ini_and_table_fails) {
    expect_failed("contract_mismatch", "declares contract revision 2 but the INI entry");
}
END_TEST

START_TEST(init_failure_keeps_the_plugin_message) {
    expect_failed("init_fails", "init: fixture license file /nonexistent/license not found");
}
END_TEST

START_TEST(probe_without_device_fails_with_its_reason) {
    expect_failed("probe_fails", "probe: the backend cannot run here: no fixture device found");
}
END_TEST

START_TEST(failure_is_remembered_without_loading_again) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("init_fails", &backend), TP_ERR_BACKEND);
    int dlopens = tp_registry_dlopen_count();
    ck_assert_int_eq(tp_backend_lookup("init_fails", &backend), TP_ERR_BACKEND);
    ck_assert_contains(tp_last_error(), "license");
    ck_assert_int_eq(tp_registry_dlopen_count(), dlopens);
}
END_TEST

START_TEST(a_failed_backend_never_hides_the_others) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("not_a_library", &backend), TP_ERR_BACKEND);
    ck_assert_int_eq(tp_backend_lookup("init_fails", &backend), TP_ERR_BACKEND);
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    ck_assert_int_eq(tp_backend_lookup("eager", &backend), TP_OK);
}
END_TEST

static void *look_up_good(void *unused) {
    (void)unused;
    tp_backend *backend = NULL;
    return (void *)(intptr_t)tp_backend_lookup("good", &backend);
}

START_TEST(sixteen_threads_cause_one_dlopen_and_one_init) {
    use_backend_files(TP_FIXTURE_DIR);
    pthread_t threads[16];
    for (int i = 0; i < 16; i++) pthread_create(&threads[i], NULL, look_up_good, NULL);
    for (int i = 0; i < 16; i++) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        ck_assert_int_eq((int)(intptr_t)result, TP_OK);
    }
    ck_assert_int_eq(tp_registry_dlopen_count(), 1);
    void *handle = dlopen(fixture("fixture_good.so"), RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(handle);
    atomic_int *init_calls = dlsym(handle, "tp_fixture_init_calls");
    ck_assert_ptr_nonnull(init_calls);
    ck_assert_int_eq(atomic_load(init_calls), 1);
    dlclose(handle);
}
END_TEST

START_TEST(listing_and_info_load_nothing) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.exclude_tags = "";
    options.include_unavailable = true;
    options.include_shadowed = true;
    tp_backend_info *infos = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_list(&options, &infos, &count), TP_OK);
    ck_assert_int_ge(count, 18);
    for (int i = 0; i < count; i++) ck_assert_int_ne(infos[i].state, TP_BACKEND_LOADED);
    tp_backend_info_release(infos, count);
    ck_assert_int_eq(backend_state("good", NULL, 0), TP_BACKEND_AVAILABLE);
    ck_assert_int_eq(tp_registry_dlopen_count(), 0);
    const char *libraries[] = {"fixture_good.so", "fixture_init_crashes.so",
                               "fixture_init_fails.so", "fixture_wrong_answer.so"};
    for (int i = 0; i < 4; i++) ck_assert_msg(!fixture_is_loaded(libraries[i]), "%s", libraries[i]);
}
END_TEST

TP_TEST_SUITE(registry_loader) {
    Suite *suite = suite_create("registry.loader");
    TCase *tc = tcase_create("loader");
    tcase_add_test(tc, good_plugin_loads_and_reports_its_version);
    tcase_add_test(tc, file_that_is_not_a_shared_object_fails_with_dlopen_text);
    tcase_add_test(tc, missing_entry_symbol_names_file_and_symbol);
    tcase_add_test(tc, entry_returning_null_fails);
    tcase_add_test(tc, struct_size_smaller_than_revision_1_fails);
    tcase_add_test(tc, contract_mismatch_between_ini_and_table_fails);
    tcase_add_test(tc, init_failure_keeps_the_plugin_message);
    tcase_add_test(tc, probe_without_device_fails_with_its_reason);
    tcase_add_test(tc, failure_is_remembered_without_loading_again);
    tcase_add_test(tc, a_failed_backend_never_hides_the_others);
    tcase_add_test(tc, sixteen_threads_cause_one_dlopen_and_one_init);
    tcase_add_test(tc, listing_and_info_load_nothing);
    suite_add_tcase(suite, tc);
    return suite;
}
