/* The core's profile events (tensorplay/profile.h) for a graph split between
 * fixture speaks_1_2 (claims only add and mul) and eager: capture, the six
 * passes of the documented pipeline in order, partition, then one backend
 * compile per region of the hand-derived split (speaks_1_2, eager,
 * speaks_1_2); and none once the handler is removed. */
#include "registry_test.h"
#include "tensorplay/compile.h"
#include "tensorplay/profile.h"

static const char split_graph[] = "graph split(%x: f32[4], %y: f32[4]) {\n"
                                  "  %a: f32[4] = add(%x, %y)\n"
                                  "  %e: f32[4] = exp(%a)\n"
                                  "  %m: f32[4] = mul(%e, %y)\n"
                                  "  return %m\n"
                                  "}\n";

typedef struct seen_events {
    char names[64][96];
    int count;
    bool ordered; /* every event ends after it starts */
} seen_events;

static void collect(const tp_profile_event *event, void *user) {
    seen_events *seen = user;
    if (event->end_ns < event->start_ns) seen->ordered = false;
    if (seen->count < 64)
        snprintf(seen->names[seen->count++], sizeof seen->names[0], "%s %s %d", event->phase,
                 event->detail, (int)event->region);
}

/* Compiles the split graph (not fullgraph) and calls it once. */
static void compile_and_call(void) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_parse(split_graph, sizeof split_graph - 1, NULL, &graph), TP_OK);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = "speaks_1_2";
    options.fallback_backend = "eager";
    tp_compiled *compiled = NULL;
    ck_assert_msg(tp_compile_graph(graph, &options, &compiled) == TP_OK, "%s", tp_last_error());
    const float values[4] = {0, 1, 2, 3};
    const int64_t shape[1] = {4};
    tp_tensor *x = NULL, *y = NULL, *out = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &x), TP_OK);
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &y), TP_OK);
    tp_arg args[2] = {tp_arg_tensor(x), tp_arg_tensor(y)};
    ck_assert_msg(tp_call(compiled, args, 2, &out) == TP_OK, "%s", tp_last_error());
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_compiled_free(compiled);
    tp_graph_destroy(graph);
}

START_TEST(a_split_compile_reports_capture_passes_partition_and_each_region) {
    use_backend_files(fixture("speaks_1_2.ini"));
    seen_events seen = {.ordered = true};
    tp_profile_set_handler(collect, &seen);
    compile_and_call();
    tp_profile_set_handler(NULL, NULL);
    const char *expected[] = {"capture split -1",
                              "pass normalize -1",
                              "pass constfold -1",
                              "pass decompose -1",
                              "pass cse -1",
                              "pass dce -1",
                              "pass shapeprop -1",
                              "partition  -1",
                              "backend_compile speaks_1_2 0",
                              "backend_compile eager 1",
                              "backend_compile speaks_1_2 2"};
    int count = (int)(sizeof expected / sizeof expected[0]);
    ck_assert_int_eq(seen.count, count);
    for (int i = 0; i < count; i++) ck_assert_str_eq(seen.names[i], expected[i]);
    ck_assert(seen.ordered);
}
END_TEST

START_TEST(no_events_once_the_handler_is_removed) {
    use_backend_files(fixture("speaks_1_2.ini"));
    seen_events seen = {.ordered = true};
    tp_profile_set_handler(collect, &seen);
    tp_profile_set_handler(NULL, NULL);
    compile_and_call();
    ck_assert_int_eq(seen.count, 0);
}
END_TEST

TP_TEST_SUITE(profile_events) {
    Suite *suite = suite_create("registry.profile_events");
    TCase *events = tcase_create("events");
    tcase_add_test(events, a_split_compile_reports_capture_passes_partition_and_each_region);
    tcase_add_test(events, no_events_once_the_handler_is_removed);
    suite_add_tcase(suite, events);
    return suite;
}
