/* Claims and extensions (contract revision 2): which nodes a backend says it
 * takes, with its reasons, through tp_backend_claims; a revision-1 table
 * claims every node; extensions by name through tp_backend_extension. */
#include "registry_test.h"

/* x, y inputs; a = add(x, y); m = mul(a, x); n = neg(m): values 0 .. 4. */
static tp_graph *add_mul_neg_graph(void) {
    tp_type type = {.dtype = TP_F32, .ndim = 1, .dims = {3}};
    tp_graph *graph = NULL;
    tp_value_id x, y, a, m, n;
    ck_assert_int_eq(tp_graph_create("add_mul_neg", &graph), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    ck_assert_int_eq(tp_graph_add_input(graph, "y", &type, &y), TP_OK);
    tp_value_id xy[2] = {x, y};
    ck_assert_int_eq(tp_graph_add_node(graph, "add", xy, 2, NULL, "a", &a), TP_OK);
    tp_value_id ax[2] = {a, x};
    ck_assert_int_eq(tp_graph_add_node(graph, "mul", ax, 2, NULL, "m", &m), TP_OK);
    ck_assert_int_eq(tp_graph_add_node(graph, "neg", &m, 1, NULL, "n", &n), TP_OK);
    ck_assert_int_eq(tp_graph_set_outputs(graph, &n, 1), TP_OK);
    ck_assert_int_eq(tp_graph_num_values(graph), 5);
    return graph;
}

/* Registers the revision-2 table of fixture_speaks_1_2.so, opened here (the
 * registry never dlopens a registered table). */
static tp_backend *register_revision_2_fixture(void) {
    use_backend_files(fixture("good.ini"));
    void *handle = dlopen(fixture("fixture_speaks_1_2.so"), RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "%s", dlerror());
    tp_plugin_entry2_fn entry = (tp_plugin_entry2_fn)dlsym(handle, "tp_fixture2_backend");
    ck_assert_ptr_nonnull(entry);
    ck_assert_int_eq(tp_backend_register(entry(2), NULL), TP_OK);
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_lookup("speaks_1_2", &backend) == TP_OK, "%s", tp_last_error());
    return backend;
}

START_TEST(revision_2_table_claims_what_its_supports_call_says) {
    tp_backend *backend = register_revision_2_fixture();
    tp_graph *graph = add_mul_neg_graph();
    bool claimed[5];
    char *reasons[5];
    ck_assert_msg(tp_backend_claims(backend, graph, claimed, reasons) == TP_OK, "%s",
                  tp_last_error());
    const bool want[5] = {true, true, true, true, false}; /* x, y, add, mul claimed; neg not */
    for (int v = 0; v < 5; v++) ck_assert_msg(claimed[v] == want[v], "value %d", v);
    for (int v = 0; v < 4; v++) ck_assert_ptr_null(reasons[v]);
    ck_assert_ptr_nonnull(reasons[4]);
    ck_assert_contains(reasons[4], "op 'neg' (%n)");
    ck_assert_contains(reasons[4], "claims only add and mul");
    free(reasons[4]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(claims_without_reasons_array_still_fill_claimed) {
    tp_backend *backend = register_revision_2_fixture();
    tp_graph *graph = add_mul_neg_graph();
    bool claimed[5];
    ck_assert_int_eq(tp_backend_claims(backend, graph, claimed, NULL), TP_OK);
    ck_assert(claimed[2] && claimed[3] && !claimed[4]);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(revision_1_table_claims_every_node) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    tp_graph *graph = add_mul_neg_graph();
    bool claimed[5] = {false};
    char *reasons[5];
    ck_assert_int_eq(tp_backend_claims(backend, graph, claimed, reasons), TP_OK);
    for (int v = 0; v < 5; v++) {
        ck_assert_msg(claimed[v], "value %d", v);
        ck_assert_ptr_null(reasons[v]);
    }
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(extension_is_returned_by_name_and_unknown_names_give_null) {
    tp_backend *backend = register_revision_2_fixture();
    const tp_plugin_extension *extension = tp_backend_extension(backend, "fixture.counters");
    ck_assert_ptr_nonnull(extension);
    ck_assert_uint_eq(extension->version, 1);
    ck_assert_uint_gt(extension->struct_size, sizeof(tp_plugin_extension));
    /* The fixture's struct: the header, then a pointer to its count of calls. */
    atomic_int *const *context_calls =
        (atomic_int *const *)((const char *)extension + sizeof(tp_plugin_extension));
    ck_assert_int_ge(atomic_load(*context_calls), 1);
    ck_assert_ptr_null(tp_backend_extension(backend, "fixture.no_such_extension"));
}
END_TEST

START_TEST(revision_1_table_has_no_extensions) {
    use_backend_files(TP_FIXTURE_DIR);
    tp_backend *backend = NULL;
    ck_assert_int_eq(tp_backend_lookup("good", &backend), TP_OK);
    ck_assert_ptr_null(tp_backend_extension(backend, "fixture.counters"));
}
END_TEST

TP_TEST_SUITE(registry_claims) {
    Suite *suite = suite_create("registry.claims");
    TCase *tc = tcase_create("claims");
    tcase_add_test(tc, revision_2_table_claims_what_its_supports_call_says);
    tcase_add_test(tc, claims_without_reasons_array_still_fill_claimed);
    tcase_add_test(tc, revision_1_table_claims_every_node);
    tcase_add_test(tc, extension_is_returned_by_name_and_unknown_names_give_null);
    tcase_add_test(tc, revision_1_table_has_no_extensions);
    suite_add_tcase(suite, tc);
    return suite;
}
