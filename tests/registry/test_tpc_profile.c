/* `tpc run --profile --repeat N --profile-json FILE`: one table on stderr
 * with a row per phase (parse, backend load, capture, the six passes,
 * partition, the one region's compile, first run, the steady runs), and the
 * same events as Chrome trace events, read back by Python's json module.
 * Times are not checked, only which rows there are. */
#include <sys/wait.h>

#include "registry_test.h"
#include "tensorplay/backend.h"
#include "tensorplay/tensor.h"

static const char add_mul_graph[] = "graph addmul(%x: f32[4], %y: f32[4]) {\n"
                                    "  %a: f32[4] = add(%x, %y)\n"
                                    "  %m: f32[4] = mul(%a, %y)\n"
                                    "  return %m\n"
                                    "}\n";

static const char *save_input(const char *name) {
    static char paths[2][4200];
    static int next;
    char *path = paths[next++ % 2];
    snprintf(path, sizeof paths[0], "%s/%s.npy", tp_test_temp_dir(), name);
    const float values[4] = {1, 2, 3, 4};
    const int64_t shape[1] = {4};
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &tensor), TP_OK);
    ck_assert_int_eq(tp_npy_save(path, tensor), TP_OK);
    tp_tensor_release(tensor);
    return path;
}

/* Runs `command` through the shell; its output (stdout and stderr) in `out`. */
static int run_shell(const char *command, char *out, size_t size) {
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    size_t used = fread(out, 1, size - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *const phase_rows[] = {"parse",
                                         "load backend",
                                         "capture",
                                         "pass normalize",
                                         "pass constfold",
                                         "pass decompose",
                                         "pass cse",
                                         "pass dce",
                                         "pass shapeprop",
                                         "partition",
                                         "compile region 0 (speaks_1_2)",
                                         "first run"};
#define NUM_PHASE_ROWS ((int)(sizeof phase_rows / sizeof phase_rows[0]))

static void run_profiled(char *out, size_t size, char *json, size_t json_size) {
    const char *graph = write_temp_file("addmul.tpir", add_mul_graph);
    const char *x = save_input("x"), *y = save_input("y");
    snprintf(json, json_size, "%s/trace.json", tp_test_temp_dir());
    char command[20000];
    snprintf(command, sizeof command,
             "TP_BACKENDS_FILES='%s' '%s' run '%s' --arg x='%s' --arg y='%s' --backend "
             "speaks_1_2 --profile --repeat 3 --profile-json '%s' 2>&1",
             fixture("speaks_1_2.ini"), TP_TPC_TOOL, graph, x, y, json);
    ck_assert_msg(run_shell(command, out, size) == 0, "tpc run --profile failed: %s", out);
}

START_TEST(profile_prints_a_row_per_phase_and_the_steady_runs) {
    char out[16384], json[4200];
    run_profiled(out, sizeof out, json, sizeof json);
    ck_assert_contains(out, "m: f32[4] sum=60 abs_sum=60"); /* (x + y) * y = 2 y^2, y = 1..4 */
    for (int i = 0; i < NUM_PHASE_ROWS; i++) {
        char row[128];
        snprintf(row, sizeof row, "\n  %s ", phase_rows[i]);
        ck_assert_contains(out, row);
    }
    ck_assert_contains(out, "steady runs (3)");
    ck_assert_contains(out, " median, range ");
}
END_TEST

START_TEST(profile_json_is_chrome_trace_events_with_every_phase) {
    const char *python = getenv("TP_PYTHON");
    if (!python || !*python) {
        fprintf(stderr, "skipped: no python3 to read the trace (TP_PYTHON unset)\n");
        return;
    }
    char out[16384], json[4200];
    run_profiled(out, sizeof out, json, sizeof json);
    /* Names of the complete ("X") events with ts and dur, one per line. */
    char command[12000], names[16384];
    snprintf(command, sizeof command,
             "'%s' -c 'import json,sys\n"
             "t = json.load(open(sys.argv[1]))\n"
             "for e in t[\"traceEvents\"]:\n"
             "    assert e[\"ph\"] == \"X\" and e[\"dur\"] >= 0 and e[\"ts\"] >= 0\n"
             "    print(e[\"name\"])' '%s' 2>&1",
             python, json);
    ck_assert_msg(run_shell(command, names, sizeof names) == 0, "bad trace: %s", names);
    for (int i = 0; i < NUM_PHASE_ROWS; i++) {
        char line[128];
        snprintf(line, sizeof line, "%s\n", phase_rows[i]);
        ck_assert_contains(names, line);
    }
    ck_assert_contains(names, "steady run 3\n");
    int lines = 0;
    for (const char *c = names; *c; c++) lines += *c == '\n';
    ck_assert_int_eq(lines, NUM_PHASE_ROWS + 3);
}
END_TEST

/* A graph stax runs as more than one kernel: a matmul with its epilogue,
 * then a row reduction and a pointwise kernel after it. */
static const char stax_graph[] = "graph kernels(%x: f32[4, 8], %w: f32[8, 8]) {\n"
                                 "  %h: f32[4, 8] = matmul(%x, %w)\n"
                                 "  %r: f32[4, 8] = relu(%h)\n"
                                 "  %s: f32[4, 1] = sum(%r) {axes=[1], keepdim=true}\n"
                                 "  %e: f32[4, 1] = exp(%s)\n"
                                 "  return %r, %e\n"
                                 "}\n";

static const char *save_filled(const char *name, int64_t rows, int64_t columns, float value) {
    static char paths[2][4200];
    static int next;
    char *path = paths[next++ % 2];
    snprintf(path, sizeof paths[0], "%s/%s.npy", tp_test_temp_dir(), name);
    const int64_t shape[2] = {rows, columns};
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, shape, &tensor), TP_OK);
    float *data = tp_tensor_data_mut(tensor);
    for (int64_t i = 0; i < rows * columns; i++) data[i] = value;
    ck_assert_int_eq(tp_npy_save(path, tensor), TP_OK);
    tp_tensor_release(tensor);
    return path;
}

/* The kernel names stax logs at debug level when it compiles ("graph
 * 'kernels': N kernels: a b c"), one per line into `names`; returns N. */
static int logged_kernels(const char *out, char *names, size_t size) {
    const char *line = strstr(out, "graph 'kernels': ");
    ck_assert_msg(line != NULL, "stax logged no kernel list: %s", out);
    int count = 0;
    ck_assert_int_eq(sscanf(line, "graph 'kernels': %d kernels:", &count), 1);
    const char *list = strstr(line, "kernels:") + strlen("kernels:");
    size_t used = 0;
    for (int k = 0; k < count; k++) {
        while (*list == ' ') list++;
        size_t length = strcspn(list, " \n");
        ck_assert(used + length + 2 < size);
        memcpy(names + used, list, length);
        used += length;
        names[used++] = '\n';
        list += length;
    }
    names[used] = '\0';
    return count;
}

START_TEST(profile_json_has_a_kernel_event_per_stax_kernel_and_run) {
    const char *python = getenv("TP_PYTHON");
    if (!python || !*python) {
        fprintf(stderr, "skipped: no python3 to read the trace (TP_PYTHON unset)\n");
        return;
    }
    tp_backend_info *info = NULL;
    if (tp_backend_info_get("stax", &info) != TP_OK ||
        (info->state != TP_BACKEND_AVAILABLE && info->state != TP_BACKEND_LOADED)) {
        fprintf(stderr, "skipped: stax is not available in this build\n");
        tp_backend_info_release(info, 1);
        return;
    }
    tp_backend_info_release(info, 1);
    const char *graph = write_temp_file("kernels.tpir", stax_graph);
    const char *x = save_filled("kx", 4, 8, 0.25f), *w = save_filled("kw", 8, 8, -0.5f);
    char json[4200], command[20000], out[32768];
    snprintf(json, sizeof json, "%s/kernels.json", tp_test_temp_dir());
    snprintf(command, sizeof command,
             "TP_LOG=debug '%s' run '%s' --arg x='%s' --arg w='%s' --backend stax --profile "
             "--repeat 2 --profile-json '%s' 2>&1",
             TP_TPC_TOOL, graph, x, w, json);
    ck_assert_msg(run_shell(command, out, sizeof out) == 0, "tpc run --profile failed: %s", out);
    ck_assert_contains(out, "kernels (");
    char names[4096];
    int kernels = logged_kernels(out, names, sizeof names);
    ck_assert_int_ge(kernels, 2);
    /* Kernel events, one line each: "NAME BACKEND", durations checked. */
    char events[32768];
    snprintf(command, sizeof command,
             "'%s' -c 'import json,sys\n"
             "t = json.load(open(sys.argv[1]))\n"
             "for e in t[\"traceEvents\"]:\n"
             "    assert e[\"ph\"] == \"X\" and e[\"dur\"] >= 0 and e[\"ts\"] >= 0\n"
             "    if e[\"cat\"] == \"kernel\":\n"
             "        print(e[\"name\"], e[\"args\"][\"backend\"])' '%s' 2>&1",
             python, json);
    ck_assert_msg(run_shell(command, events, sizeof events) == 0, "bad trace: %s", events);
    int lines = 0;
    for (const char *c = events; *c; c++) lines += *c == '\n';
    ck_assert_int_eq(lines, kernels * 3); /* the first run and 2 steady runs */
    for (const char *name = names; *name;) {
        size_t length = strcspn(name, "\n");
        char expected[512];
        snprintf(expected, sizeof expected, "%.*s stax\n", (int)length, name);
        ck_assert_msg(strstr(events, expected), "no event for kernel %s in %s", expected, events);
        name += length + 1;
    }
}
END_TEST

TP_TEST_SUITE(tpc_profile) {
    Suite *suite = suite_create("registry.tpc_profile");
    TCase *profile = tcase_create("profile");
    tcase_add_test(profile, profile_prints_a_row_per_phase_and_the_steady_runs);
    tcase_add_test(profile, profile_json_is_chrome_trace_events_with_every_phase);
    tcase_add_test(profile, profile_json_has_a_kernel_event_per_stax_kernel_and_run);
    suite_add_tcase(suite, profile);
    return suite;
}
