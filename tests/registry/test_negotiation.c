/* Contract negotiation: which revision a plugin is loaded at given its INI
 * (`min_contract` .. `contract`) and the table its entry returns; the table
 * checks of revision 2; what a revision-2 plugin receives (host->getenv, a
 * revision-2 host table, its own context in every call). */
#include "registry_test.h"

static void expect_loaded_at(const char *name, int revision) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup(name, &backend) == TP_OK, "%s", tp_last_error());
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get(name, &info), TP_OK);
    ck_assert_int_eq(info->state, TP_BACKEND_LOADED);
    ck_assert_int_eq(info->revision, revision);
    tp_backend_info_release(info, 1);
}

static void expect_load_failure(const char *name, const char *message) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup(name, &backend), TP_ERR_BACKEND);
    ck_assert_contains(tp_last_error(), message);
    char reason[2048];
    ck_assert_int_eq(backend_state(name, reason, sizeof reason), TP_BACKEND_FAILED);
    ck_assert_contains(reason, message);
}

/* The fixture library `file`, already mapped by the registry. */
static void *loaded_fixture(const char *file) {
    void *handle = dlopen(fixture(file), RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(handle != NULL, "%s is not loaded", file);
    return handle;
}

START_TEST(revision_1_plugin_loads_as_revision_1) {
    expect_loaded_at("good", 1);
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("good", &info), TP_OK);
    ck_assert_int_eq(info->min_contract, 1);
    ck_assert_int_eq(info->contract, 1);
    ck_assert_int_eq(info->priority, 10); /* the INI sets none */
    tp_backend_info_release(info, 1);
}
END_TEST

START_TEST(plugin_speaking_1_to_2_loads_as_revision_2) {
    expect_loaded_at("speaks_1_2", 2);
    tp_backend_info *info = NULL;
    ck_assert_int_eq(tp_backend_info_get("speaks_1_2", &info), TP_OK);
    ck_assert_int_eq(info->min_contract, 1);
    ck_assert_int_eq(info->contract, 2);
    ck_assert_int_eq(info->priority, 40);
    tp_backend_info_release(info, 1);
    /* The same entry gives a revision-1 table to a core that asks for 1. */
    void *handle = loaded_fixture("fixture_speaks_1_2.so");
    tp_plugin_entry2_fn entry = (tp_plugin_entry2_fn)dlsym(handle, "tp_fixture2_backend");
    ck_assert_ptr_nonnull(entry);
    const tp_plugin_backend *old_table = entry(1), *new_table = entry(2);
    ck_assert_uint_eq(old_table->contract_version, 1);
    ck_assert_ptr_nonnull(old_table->compile);
    ck_assert_ptr_null(old_table->calls.compile);
    ck_assert_uint_eq(new_table->contract_version, 2);
    ck_assert_ptr_nonnull(new_table->calls.compile);
    ck_assert_ptr_null(new_table->compile);
    dlclose(handle);
}
END_TEST

START_TEST(plugin_speaking_1_to_3_loads_as_revision_2) {
    expect_loaded_at("speaks_1_3", 2);
}
END_TEST

START_TEST(plugin_speaking_only_3_is_refused_before_loading) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("speaks_3", &backend), TP_ERR_BACKEND);
    ck_assert_contains(tp_last_error(), "speaks contract revision 3");
    ck_assert_contains(tp_last_error(), "upgrade TensorPlay");
    ck_assert_int_eq(backend_state("speaks_3", NULL, 0), TP_BACKEND_UNAVAILABLE);
    ck_assert_int_eq(tp_registry_dlopen_count(), 0);
    ck_assert(!fixture_is_loaded("fixture_speaks_1_3.so"));
}
END_TEST

START_TEST(entry_returning_a_newer_revision_than_asked_fails) {
    expect_load_failure("returns_revision_3",
                        "was asked for contract revision 2 and returned a revision 3 table");
    ck_assert_contains(tp_last_error(), "fix the plugin");
}
END_TEST

START_TEST(revision_2_table_without_compile_fails_naming_calls_compile) {
    expect_load_failure("lacks_compile", "has no 'calls.compile' function");
}
END_TEST

START_TEST(revision_2_table_of_revision_1_size_fails) {
    expect_load_failure("small_struct_v2", "is smaller than a revision-2 table");
}
END_TEST

static void expect_ini_problem(const char *extra_line, const char *message) {
    char text[1024];
    snprintf(text, sizeof text, "[b]\nlibrary = x.so\nentry = e\ncontract = 2\n%s\n", extra_line);
    use_backend_files(write_temp_file("a.ini", text));
    ck_assert_int_eq(tp_backend_rescan(), TP_OK);
    char reason[1024];
    ck_assert_int_eq(backend_state("b", reason, sizeof reason), TP_BACKEND_UNAVAILABLE);
    ck_assert_contains(reason, "a.ini:5: ");
    ck_assert_contains(reason, message);
}

START_TEST(malformed_min_contract_names_file_and_line) {
    expect_ini_problem("min_contract = two", "key 'min_contract' of entry 'b'");
    expect_ini_problem("min_contract = 3", "from 1 to 'contract' (2), got '3'");
    expect_ini_problem("min_contract = 0", "key 'min_contract' of entry 'b'");
}
END_TEST

START_TEST(malformed_priority_names_file_and_line) {
    expect_ini_problem("priority = high", "key 'priority' of entry 'b' must be a number");
    expect_ini_problem("priority = -5", "got '-5'");
    expect_ini_problem("priority = 12x", "got '12x'");
}
END_TEST

START_TEST(revision_2_plugin_receives_getenv_and_a_revision_2_host) {
    expect_loaded_at("speaks_1_2", 2);
    void *handle = loaded_fixture("fixture_speaks_1_2.so");
    atomic_uint *host_size = dlsym(handle, "tp_fixture2_host_size");
    atomic_int *has_getenv = dlsym(handle, "tp_fixture2_host_has_getenv");
    ck_assert_ptr_nonnull(host_size);
    ck_assert_ptr_nonnull(has_getenv);
    ck_assert_uint_ge(atomic_load(host_size), TP_PLUGIN_HOST_SIZE_V2);
    ck_assert_int_eq(atomic_load(has_getenv), 1);
    dlclose(handle);
}
END_TEST

/* x + y and (x + y) * x on f32[4], compiled and run on `backend`. */
static void compile_and_run_add_mul(tp_backend *backend) {
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {4}};
    tp_graph *graph = NULL;
    tp_value_id x, y, a, m;
    ck_assert_int_eq(tp_graph_create("add_mul", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "y", &type, &y), TP_OK);
    tp_value_id xy[2] = {x, y};
    ck_assert_int_eq(tp_graph_add_node(graph, "add", xy, 2, NULL, "a", &a), TP_OK);
    tp_value_id ax[2] = {a, x};
    ck_assert_int_eq(tp_graph_add_node(graph, "mul", ax, 2, NULL, "m", &m), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &m, 1), TP_OK);
    const float x_data[4] = {1, 2, 3, 4}, y_data[4] = {1, 1, 2, -4};
    const int64_t shape[1] = {4};
    tp_tensor *inputs[2];
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, x_data, &inputs[0]), TP_OK);
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, y_data, &inputs[1]), TP_OK);
    tp_executable *executable = NULL;
    ck_assert_msg(tp_backend_compile(backend, graph, inputs, 2, NULL, 0, &executable) == TP_OK,
                  "%s", tp_last_error());
    tp_tensor *output = NULL;
    ck_assert_msg(tp_executable_run(executable, inputs, 2, &output) == TP_OK, "%s",
                  tp_last_error());
    /* By hand: (x + y) * x = 2*1, 3*2, 5*3, 0*4. */
    const float want[4] = {2, 6, 15, 0};
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(((const float *)tp_tensor_data(output))[i], want[i]);
    tp_executable_destroy(executable);
    tp_tensor_release(output);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(graph);
}

START_TEST(every_call_receives_the_context_init_returned) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("speaks_1_2", &backend) == TP_OK, "%s", tp_last_error());
    compile_and_run_add_mul(backend);
    ck_assert_ptr_null(tp_backend_extension(backend, "fixture.no_such_extension"));
    void *handle = loaded_fixture("fixture_speaks_1_2.so");
    atomic_int *right = dlsym(handle, "tp_fixture2_context_calls");
    atomic_int *wrong = dlsym(handle, "tp_fixture2_wrong_context_calls");
    ck_assert_ptr_nonnull(right);
    ck_assert_ptr_nonnull(wrong);
    /* At least compile, run, release and get_extension. */
    ck_assert_int_ge(atomic_load(right), 4);
    ck_assert_int_eq(atomic_load(wrong), 0);
    dlclose(handle);
}
END_TEST

TP_TEST_SUITE(registry_negotiation) {
    Suite *suite = suite_create("registry.negotiation");
    TCase *tc = tcase_create("negotiation");
    tcase_add_test(tc, revision_1_plugin_loads_as_revision_1);
    tcase_add_test(tc, plugin_speaking_1_to_2_loads_as_revision_2);
    tcase_add_test(tc, plugin_speaking_1_to_3_loads_as_revision_2);
    tcase_add_test(tc, plugin_speaking_only_3_is_refused_before_loading);
    tcase_add_test(tc, entry_returning_a_newer_revision_than_asked_fails);
    tcase_add_test(tc, revision_2_table_without_compile_fails_naming_calls_compile);
    tcase_add_test(tc, revision_2_table_of_revision_1_size_fails);
    tcase_add_test(tc, malformed_min_contract_names_file_and_line);
    tcase_add_test(tc, malformed_priority_names_file_and_line);
    tcase_add_test(tc, revision_2_plugin_receives_getenv_and_a_revision_2_host);
    tcase_add_test(tc, every_call_receives_the_context_init_returned);
    suite_add_tcase(suite, tc);
    return suite;
}
