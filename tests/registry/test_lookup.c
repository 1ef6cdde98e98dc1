/* Lookup by name: "did you mean", run-time registration and precedence,
 * the default backend, reset, list filters. */
#include "registry_test.h"

START_TEST(unknown_name_suggests_close_names) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("godo", &backend), TP_ERR_NOT_FOUND);
    ck_assert_str_eq(tp_last_error(), "Invalid backend: 'godo', did you mean: 'good'? See "
                                      "`tp-backends list` for available backends.");
}
END_TEST

START_TEST(suggestions_include_hidden_and_unavailable_names) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("eagre", &backend), TP_ERR_NOT_FOUND); /* debug tag */
    ck_assert_contains(tp_last_error(), "did you mean: 'eager'?");
    ck_assert_int_eq(tp_backend_lookup("core_too_nwe", &backend), TP_ERR_NOT_FOUND);
    ck_assert_contains(tp_last_error(), "'core_too_new'");
}
END_TEST

START_TEST(unknown_name_without_close_names_has_no_suggestion) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("zzzzzzzz", &backend), TP_ERR_NOT_FOUND);
    ck_assert_str_eq(tp_last_error(),
                     "Invalid backend: 'zzzzzzzz'. See `tp-backends list` for available backends.");
}
END_TEST

static atomic_int registered_resets;
static int32_t registered_init(const tp_plugin_host *host) {
    (void)host;
    return TP_PLUGIN_OK;
}
static int32_t registered_compile(const tp_plugin_graph *graph, const tp_plugin_tensor_meta *inputs,
                                  int32_t num_inputs, const tp_plugin_option *options,
                                  int32_t num_options, tp_plugin_executable **out, char *error,
                                  size_t error_size) {
    (void)graph, (void)inputs, (void)num_inputs, (void)options, (void)num_options, (void)out;
    snprintf(error, error_size, "compiles nothing");
    return TP_PLUGIN_ERROR;
}
static int32_t registered_run(tp_plugin_executable *executable, const tp_plugin_buffer *inputs,
                              int32_t num_inputs, tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)executable, (void)inputs, (void)num_inputs, (void)outputs, (void)num_outputs;
    return TP_PLUGIN_ERROR;
}
static void registered_release(tp_plugin_executable *executable) {
    (void)executable;
}
static void registered_reset(void) {
    atomic_fetch_add(&registered_resets, 1);
}

static const tp_plugin_backend registered_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 1,
    .name = "good",
    .version = "in-process",
    .description = "registered in the test",
    .init = registered_init,
    .compile = registered_compile,
    .run = registered_run,
    .release = registered_release,
    .reset = registered_reset,
};

START_TEST(registered_backend_takes_precedence_over_ini) {
    use_backend_files(TP_FIXTURE_DIR);
    ck_assert_int_eq(tp_backend_register(&registered_table, "experimental"), TP_OK);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    ck_assert_str_eq(tp_backend_version(backend), "in-process");
    ck_assert(!fixture_is_loaded("fixture_good.so"));
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.exclude_tags = "";
    options.include_shadowed = true;
    tp_backend_info *infos = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_list(&options, &infos, &count), TP_OK);
    int shadowed = 0;
    for (int i = 0; i < count; i++)
        if (strcmp(infos[i].name, "good") == 0 && infos[i].state == TP_BACKEND_SHADOWED) {
            ck_assert_str_eq(infos[i].reason, "shadowed by a backend registered at run time");
            shadowed++;
        }
    ck_assert_int_eq(shadowed, 1);
    tp_backend_info_release(infos, count);
}
END_TEST

START_TEST(duplicate_registration_is_an_error) {
    use_backend_files(TP_FIXTURE_DIR);
    ck_assert_int_eq(tp_backend_register(&registered_table, NULL), TP_OK);
    ck_assert_int_eq(tp_backend_register(&registered_table, NULL), TP_ERR_STATE);
    ck_assert_contains(tp_last_error(), "backend 'good' is already registered");
}
END_TEST

START_TEST(unregistering_restores_the_ini_backend_and_unknown_names_are_fine) {
    use_backend_files(TP_FIXTURE_DIR);
    ck_assert_int_eq(tp_backend_unregister("never-registered"), TP_OK);
    ck_assert_int_eq(tp_backend_register(&registered_table, NULL), TP_OK);
    ck_assert_int_eq(tp_backend_unregister("good"), TP_OK);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    ck_assert_str_eq(tp_backend_version(backend), "1.2.3-fixture");
}
END_TEST

START_TEST(default_is_stax_and_its_error_says_why_and_names_available_ones) {
    use_backend_files(TP_FIXTURE_DIR);
    unsetenv("TP_DEFAULT_BACKEND");
    ck_assert_str_eq(tp_backend_get_default(), "stax");
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup(NULL, &backend), TP_ERR_NOT_FOUND);
    ck_assert_contains(tp_last_error(), "Invalid backend: 'stax'");
    ck_assert_contains(tp_last_error(), "available backends: ");
    ck_assert_contains(tp_last_error(), "eager");
    ck_assert_contains(tp_last_error(), "good");
}
END_TEST

START_TEST(unavailable_default_says_why) {
    use_backend_files(TP_FIXTURE_DIR);
    setenv("TP_DEFAULT_BACKEND", "core_too_old", 1);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup(NULL, &backend), TP_ERR_BACKEND);
    ck_assert_contains(tp_last_error(), "default backend: backend 'core_too_old' is unavailable: "
                                        "backend 'core_too_old' requires TensorPlay >= 9.0.0");
    ck_assert_contains(tp_last_error(), "; available backends: ");
}
END_TEST

START_TEST(set_default_wins_over_environment_and_null_restores) {
    use_backend_files(TP_FIXTURE_DIR);
    setenv("TP_DEFAULT_BACKEND", "eager", 1);
    ck_assert_str_eq(tp_backend_get_default(), "eager");
    ck_assert_int_eq(tp_backend_set_default("good"), TP_OK);
    ck_assert_str_eq(tp_backend_get_default(), "good");
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup(NULL, &backend), TP_OK);
    ck_assert_str_eq(tp_backend_name(backend), "good");
    ck_assert_int_eq(tp_backend_set_default("goood"), TP_ERR_NOT_FOUND);
    ck_assert_str_eq(tp_backend_get_default(), "good");
    ck_assert_int_eq(tp_backend_set_default(NULL), TP_OK);
    ck_assert_str_eq(tp_backend_get_default(), "eager");
}
END_TEST

START_TEST(reset_calls_each_loaded_backend_once) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    ck_assert_int_eq(tp_backend_register(&registered_table, NULL), TP_OK);
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK); /* the registered one */
    tp_backend_reset_all();
    void *handle = dlopen(fixture("fixture_good.so"), RTLD_NOW | RTLD_NOLOAD);
    atomic_int *plugin_resets = dlsym(handle, "tp_fixture_reset_calls");
    ck_assert_int_eq(atomic_load(plugin_resets), 1);
    ck_assert_int_eq(atomic_load(&registered_resets), 1);
    dlclose(handle);
}
END_TEST

START_TEST(list_hides_debug_and_unavailable_by_default) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend_info *infos = NULL;
    int count = 0;
    ck_assert_int_eq(tp_backend_list(NULL, &infos, &count), TP_OK);
    for (int i = 0; i < count; i++) {
        ck_assert_str_ne(infos[i].name, "eager");
        ck_assert_int_eq(infos[i].state, TP_BACKEND_AVAILABLE);
    }
    /* 10 revision-1 and 5 revision-2 fixtures, not_a_library, missing_entry */
    ck_assert_int_eq(count, 17);
    tp_backend_info_release(infos, count);
    tp_backend_list_options options = TP_BACKEND_LIST_OPTIONS_INIT;
    options.exclude_tags = "";
    ck_assert_int_eq(tp_backend_list(&options, &infos, &count), TP_OK);
    int eager = 0;
    for (int i = 0; i < count; i++) eager += strcmp(infos[i].name, "eager") == 0;
    ck_assert_int_eq(eager, 1);
    tp_backend_info_release(infos, count);
}
END_TEST

START_TEST(rescan_reads_new_files_and_keeps_loaded_backends) {
    use_backend_files(fixture("good.ini"));
    tp_backend *first = NULL, *second = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &first), TP_OK);
    char files[8500];
    snprintf(files, sizeof files, "%s:%s", fixture("good.ini"), fixture("wrong_answer.ini"));
    use_backend_files(files);
    ck_assert_int_eq(tp_backend_rescan(), TP_OK);
    ck_assert_int_eq(tp_backend_lookup("good", &second), TP_OK);
    ck_assert_ptr_eq(first, second);
    ck_assert_int_eq(backend_state("wrong_answer", NULL, 0), TP_BACKEND_AVAILABLE);
    ck_assert_int_eq(tp_registry_dlopen_count(), 1);
}
END_TEST

TP_TEST_SUITE(registry_lookup) {
    Suite *suite = suite_create("registry.lookup");
    TCase *tc = tcase_create("lookup");
    tcase_add_test(tc, unknown_name_suggests_close_names);
    tcase_add_test(tc, suggestions_include_hidden_and_unavailable_names);
    tcase_add_test(tc, unknown_name_without_close_names_has_no_suggestion);
    tcase_add_test(tc, registered_backend_takes_precedence_over_ini);
    tcase_add_test(tc, duplicate_registration_is_an_error);
    tcase_add_test(tc, unregistering_restores_the_ini_backend_and_unknown_names_are_fine);
    tcase_add_test(tc, default_is_stax_and_its_error_says_why_and_names_available_ones);
    tcase_add_test(tc, unavailable_default_says_why);
    tcase_add_test(tc, set_default_wins_over_environment_and_null_restores);
    tcase_add_test(tc, reset_calls_each_loaded_backend_once);
    tcase_add_test(tc, list_hides_debug_and_unavailable_by_default);
    tcase_add_test(tc, rescan_reads_new_files_and_keeps_loaded_backends);
    suite_add_tcase(suite, tc);
    return suite;
}
