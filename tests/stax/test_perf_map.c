/* STAX_PERF_MAP=on names the JIT's code for perf: each function of an object
 * linked into the JIT gets a "START SIZE NAME" line (hex) in
 * /tmp/perf-PID.map. The cases compile a graph of a name no other suite
 * uses, so its kernel is linked here, and read this process's map. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stax_harness.h"

static void map_path(char *path, size_t size) {
    snprintf(path, size, "/tmp/perf-%ld.map", (long)getpid());
}

/* Compiles and runs relu(x + y) on [7, 13] under the graph name `name`. */
static tp_status run_pointwise_graph(const char *name) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create(name, &g), TP_OK);
    int64_t shape[2] = {7, 13};
    tp_value_id in[2] = {stax_test_input(g, "x", TP_F32, 2, shape),
                         stax_test_input(g, "y", TP_F32, 2, shape)};
    tp_value_id sum = stax_test_node(g, "add", in, 2, NULL);
    tp_value_id out = stax_test_node(g, "relu", &sum, 1, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &out, 1), TP_OK);
    tp_tensor *inputs[2] = {stax_test_random(TP_F32, 2, shape, 1),
                            stax_test_random(TP_F32, 2, shape, 2)};
    tp_tensor *got[1] = {NULL};
    tp_status status = stax_test_run("stax", g, inputs, 2, NULL, 0, got);
    if (got[0]) tp_tensor_release(got[0]);
    tp_tensor_release(inputs[0]);
    tp_tensor_release(inputs[1]);
    tp_graph_destroy(g);
    return status;
}

START_TEST(perf_map_names_a_compiled_kernel) {
    stax_test_cache_dir();
    char path[64];
    map_path(path, sizeof path);
    unlink(path);
    setenv("STAX_PERF_MAP", "on", 1);
    ck_assert_int_eq(run_pointwise_graph("perfmapgraph"), TP_OK);
    unsetenv("STAX_PERF_MAP");
    FILE *map = fopen(path, "r");
    ck_assert_msg(map != NULL, "no %s after a compile with STAX_PERF_MAP=on", path);
    char line[512];
    int lines = 0, named = 0;
    while (fgets(line, sizeof line, map)) {
        unsigned long long start = 0, size = 0;
        char name[400] = "";
        ck_assert_msg(sscanf(line, "%llx %llx %399s", &start, &size, name) == 3, "line: %s", line);
        ck_assert_msg(start != 0 && size != 0, "line: %s", line);
        lines++;
        /* the kernel's exported name: "k" + the module key, then the graph's kernel name */
        if (name[0] == 'k' && strstr(name, "_perfmapgraph_")) named++;
    }
    fclose(map);
    unlink(path);
    ck_assert_int_gt(lines, 0);
    ck_assert_msg(named > 0, "no line of %d in the map names the graph's kernel", lines);
}
END_TEST

START_TEST(perf_map_off_writes_no_map) {
    stax_test_cache_dir();
    char path[64];
    map_path(path, sizeof path);
    unlink(path);
    setenv("STAX_PERF_MAP", "off", 1);
    ck_assert_int_eq(run_pointwise_graph("perfmapoff"), TP_OK);
    unsetenv("STAX_PERF_MAP");
    struct stat st;
    ck_assert_msg(stat(path, &st) != 0, "%s exists with STAX_PERF_MAP=off", path);
}
END_TEST

START_TEST(bad_perf_map_setting_is_refused_with_the_choices) {
    stax_test_cache_dir();
    setenv("STAX_PERF_MAP", "yes", 1);
    tp_status status = run_pointwise_graph("perfmapbad");
    unsetenv("STAX_PERF_MAP");
    ck_assert_int_ne(status, TP_OK);
    ck_assert_msg(strstr(tp_last_error(), "STAX_PERF_MAP") && strstr(tp_last_error(), "off"),
                  "error: %s", tp_last_error());
}
END_TEST

TP_TEST_SUITE(stax_perf_map) {
    Suite *s = suite_create("stax_perf_map");
    TCase *c = tcase_create("perf_map");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, perf_map_names_a_compiled_kernel);
    tcase_add_test(c, perf_map_off_writes_no_map);
    tcase_add_test(c, bad_perf_map_setting_is_refused_with_the_choices);
    suite_add_tcase(s, c);
    return s;
}
