/* `auto`: the available backend of highest priority, the probe lowering a
 * priority, failures skipped and named in the reason. */
#include "registry_test.h"

/* One INI entry for fixture `name` (the .so of the same name) at `priority`. */
static void append_entry(char *text, size_t size, const char *section, const char *library,
                         int priority) {
    size_t used = strlen(text);
    snprintf(text + used, size - used,
             "[%s]\nlibrary = %s\nentry = tp_fixture_backend\ncontract = 1\npriority = %d\n\n",
             section, fixture(library), priority);
}

static void use_entries(const char *body) {
    char text[8192];
    snprintf(text, sizeof text, "[tensorplay]\nformat = 1\n\n%s", body);
    use_backend_files(write_temp_file("auto.ini", text));
}

START_TEST(auto_picks_the_highest_priority_and_loads_nothing_below_it) {
    char body[4096] = "";
    append_entry(body, sizeof body, "good", "fixture_good.so", 20);
    append_entry(body, sizeof body, "wrong_answer", "fixture_wrong_answer.so", 30);
    use_entries(body);
    tp_backend *backend = NULL;
    char *why = NULL;
    ck_assert_msg(tp_backend_resolve_auto(&backend, &why) == TP_OK, "%s", tp_last_error());
    ck_assert_str_eq(tp_backend_name(backend), "wrong_answer");
    ck_assert_msg(strstr(why, "(30)") != NULL, "%s", why);
    free(why);
    ck_assert_int_eq(backend_state("good", NULL, 0), TP_BACKEND_AVAILABLE);
    tp_backend *looked_up = NULL;
    ck_assert_int_eq(tp_backend_lookup("auto", &looked_up), TP_OK);
    ck_assert_ptr_eq(looked_up, backend);
}
END_TEST

START_TEST(auto_skips_a_backend_whose_probe_fails_and_says_so) {
    char body[4096] = "";
    append_entry(body, sizeof body, "good", "fixture_good.so", 20);
    append_entry(body, sizeof body, "probe_fails", "fixture_probe_fails.so", 90);
    use_entries(body);
    tp_backend *backend = NULL;
    char *why = NULL;
    ck_assert_msg(tp_backend_resolve_auto(&backend, &why) == TP_OK, "%s", tp_last_error());
    ck_assert_str_eq(tp_backend_name(backend), "good");
    ck_assert_msg(strstr(why, "'probe_fails' (priority 90) failed to load") != NULL, "%s", why);
    free(why);
}
END_TEST

static int32_t lowering_probe(const tp_plugin_host *host, tp_plugin_probe_info *info) {
    (void)host;
    info->priority = 3;
    return TP_PLUGIN_OK;
}
static int32_t lowering_init(const tp_plugin_host *host, void **context) {
    (void)host;
    *context = NULL;
    return TP_PLUGIN_OK;
}
static int32_t lowering_compile(void *context, const tp_plugin_graph *graph,
                                const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                                const tp_plugin_option *options, int32_t num_options,
                                tp_plugin_executable **executable) {
    (void)context, (void)graph, (void)inputs, (void)num_inputs, (void)options, (void)num_options;
    (void)executable;
    return TP_PLUGIN_ERROR;
}
static int32_t lowering_run(void *context, tp_plugin_executable *executable,
                            const tp_plugin_buffer *inputs, int32_t num_inputs,
                            tp_plugin_buffer *outputs, int32_t num_outputs) {
    (void)context, (void)executable, (void)inputs, (void)num_inputs, (void)outputs;
    (void)num_outputs;
    return TP_PLUGIN_ERROR;
}
static void lowering_release(void *context, tp_plugin_executable *executable) {
    (void)context, (void)executable;
}

static const tp_plugin_backend lowering_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2,
    .name = "lowers_itself",
    .version = "test",
    .description = "registered in the test; its probe lowers its priority to 3",
    .calls = {.probe = lowering_probe,
              .init = lowering_init,
              .compile = lowering_compile,
              .run = lowering_run,
              .release = lowering_release},
};

START_TEST(a_probe_that_lowers_the_priority_loses_to_a_lower_listed_backend) {
    char body[4096] = "";
    append_entry(body, sizeof body, "good", "fixture_good.so", 5); /* below registered 10 */
    use_entries(body);
    ck_assert_int_eq(tp_backend_register(&lowering_table, NULL), TP_OK);
    tp_backend *backend = NULL;
    char *why = NULL;
    ck_assert_msg(tp_backend_resolve_auto(&backend, &why) == TP_OK, "%s", tp_last_error());
    ck_assert_str_eq(tp_backend_name(backend), "good");
    ck_assert_msg(strstr(why, "'lowers_itself' lowered its priority from 10 to 3") != NULL, "%s",
                  why);
    free(why);
}
END_TEST

START_TEST(auto_falls_back_to_eager_when_nothing_else_is_there) {
    use_entries("");
    tp_backend *backend = NULL;
    ck_assert_msg(tp_backend_resolve_auto(&backend, NULL) == TP_OK, "%s", tp_last_error());
    ck_assert_str_eq(tp_backend_name(backend), "eager");
}
END_TEST

TP_TEST_SUITE(registry_auto) {
    Suite *suite = suite_create("registry.auto");
    TCase *tc = tcase_create("auto");
    tcase_add_test(tc, auto_picks_the_highest_priority_and_loads_nothing_below_it);
    tcase_add_test(tc, auto_skips_a_backend_whose_probe_fails_and_says_so);
    tcase_add_test(tc, a_probe_that_lowers_the_priority_loses_to_a_lower_listed_backend);
    tcase_add_test(tc, auto_falls_back_to_eager_when_nothing_else_is_there);
    suite_add_tcase(suite, tc);
    return suite;
}
