/* tp-backends check NAME: does a backend honour the contract? In a forked
 * child (so a crashing plugin is reported, not fatal): look it up (dlopen,
 * entry, table checks, probe, init), compile and run a small graph, and
 * compare every output with the `eager` reference. The child tells the
 * parent which step it is in through a pipe; a crash is reported with the
 * signal name and that step.
 * With --conformance, the conformance kit (conformance.c) runs instead. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance.h"
#include "tp_backends.h"

#define CHECK_TIMEOUT_SECONDS 60

static int step_pipe = -1;

static void enter_step(const char *step) {
    char line[128];
    int length = snprintf(line, sizeof line, "%s\n", step);
    if (step_pipe >= 0 && write(step_pipe, line, (size_t)length) < 0) step_pipe = -1;
}

static int child_fail(const char *step, const char *detail) {
    printf("  %-8s FAILED: %s\n", step, detail);
    fflush(stdout);
    return EXIT_FAILED;
}

/* The check graph: a = add(x, y), m = mul(a, x); returns a and m. */
static tp_status build_graph(tp_graph **out) {
    tp_type type = {.dtype = TP_F32, .ndim = 2, .dims = {2, 3}};
    tp_graph *graph = NULL;
    tp_value_id x = TP_NO_VALUE, y = TP_NO_VALUE, a = TP_NO_VALUE, m = TP_NO_VALUE;
    tp_status status = tp_graph_create("check", &graph);
    if (status == TP_OK) status = tp_graph_add_input(graph, "x", &type, &x);
    if (status == TP_OK) status = tp_graph_add_input(graph, "y", &type, &y);
    tp_value_id xy[2] = {x, y};
    if (status == TP_OK) status = tp_graph_add_node(graph, "add", xy, 2, NULL, "a", &a);
    tp_value_id ax[2] = {a, x};
    if (status == TP_OK) status = tp_graph_add_node(graph, "mul", ax, 2, NULL, "m", &m);
    tp_value_id results[2] = {a, m};
    if (status == TP_OK) status = tp_graph_set_outputs(graph, results, 2);
    if (status != TP_OK) {
        tp_graph_destroy(graph);
        return status;
    }
    *out = graph;
    return TP_OK;
}

static tp_status run_on(tp_backend *backend, const tp_graph *graph, tp_tensor *const *inputs,
                        tp_tensor **outputs) {
    tp_executable *executable = NULL;
    tp_status status = tp_backend_compile(backend, graph, inputs, 2, NULL, 0, &executable);
    if (status != TP_OK) return status;
    status = tp_executable_run(executable, inputs, 2, outputs);
    tp_executable_destroy(executable);
    return status;
}

static bool compare(const tp_tensor *got, const tp_tensor *want, char *detail, size_t size) {
    char got_text[64], want_text[64];
    tp_tensor_describe(got, got_text, sizeof got_text);
    tp_tensor_describe(want, want_text, sizeof want_text);
    if (strcmp(got_text, want_text) != 0) {
        snprintf(detail, size, "type %s, eager gives %s", got_text, want_text);
        return false;
    }
    for (int64_t i = 0; i < tp_tensor_numel(want); i++) {
        double g = tp_tensor_get_f64(got, i), w = tp_tensor_get_f64(want, i);
        if (!(fabs(g - w) <= 1e-5 * (1.0 + fabs(w)))) {
            snprintf(detail, size, "element %lld is %.9g, eager gives %.9g", (long long)i, g, w);
            return false;
        }
    }
    return true;
}

static int child_main(const char *name) {
    enter_step("load");
    tp_backend *backend = NULL;
    if (tp_backend_lookup(name, &backend) != TP_OK) return child_fail("load", tp_last_error());
    tp_backend_info *info = NULL;
    if (tp_backend_info_get(name, &info) != TP_OK) return child_fail("load", tp_last_error());
    printf("  %-8s ok: dlopen, entry, table, probe, init; contract revision %d (negotiated; "
           "this TensorPlay implements 1 to %d); version %s\n",
           "load", info->revision, TP_BACKEND_CONTRACT_VERSION, tp_backend_version(backend));
    tp_backend_info_release(info, 1);
    tp_backend *eager = NULL;
    if (tp_backend_lookup("eager", &eager) != TP_OK) return child_fail("eager", tp_last_error());
    tp_graph *graph = NULL;
    if (build_graph(&graph) != TP_OK) return child_fail("graph", tp_last_error());
    const float x_data[6] = {1, 2, 3, 4, 5, 6}, y_data[6] = {0.5f, -1, 2, 0, 3, -2.5f};
    const int64_t shape[2] = {2, 3};
    tp_tensor *inputs[2] = {NULL, NULL};
    tp_tensor_from_data(TP_F32, 2, shape, x_data, &inputs[0]);
    tp_tensor_from_data(TP_F32, 2, shape, y_data, &inputs[1]);
    tp_tensor *got[2] = {NULL, NULL}, *want[2] = {NULL, NULL};
    int result = EXIT_OK;
    enter_step("compile and run");
    if (run_on(backend, graph, inputs, got) != TP_OK) {
        result = child_fail("run", tp_last_error());
    } else {
        printf("  %-8s ok: compiled and ran graph 'check' (add, mul on f32[2, 3])\n", "run");
        enter_step("eager reference");
        if (run_on(eager, graph, inputs, want) != TP_OK)
            result = child_fail("eager", tp_last_error());
    }
    for (int i = 0; i < 2 && result == EXIT_OK; i++) {
        char detail[256];
        if (!compare(got[i], want[i], detail, sizeof detail)) {
            char text[320];
            snprintf(text, sizeof text, "output %d differs from eager: %s", i, detail);
            result = child_fail("compare", text);
        }
    }
    if (result == EXIT_OK) printf("  %-8s ok: outputs equal eager's\n", "compare");
    for (int i = 0; i < 2; i++) {
        tp_tensor_release(inputs[i]);
        tp_tensor_release(got[i]);
        tp_tensor_release(want[i]);
    }
    tp_graph_destroy(graph);
    fflush(stdout);
    return result;
}

static const char *signal_name(int signal_number) {
    const char *name = sigabbrev_np(signal_number);
    static char text[32];
    snprintf(text, sizeof text, "SIG%s", name ? name : "?");
    return text;
}

static const char check_usage[] =
    "usage: tp-backends check NAME [--conformance [--json FILE] [--corpus DIR] [--filter TEXT]\n"
    "                                            [--min-coverage PERCENT] [--verbose]]\n";

/* Parses `check NAME [options]`; returns EXIT_OK or the exit code to stop with. */
static int parse_check(int argc, char **argv, const char **name, bool *conformance,
                       conformance_options *options) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char **value = strcmp(arg, "--json") == 0     ? &options->json_path
                             : strcmp(arg, "--corpus") == 0 ? &options->corpus_dir
                             : strcmp(arg, "--filter") == 0 ? &options->filter
                                                            : NULL;
        if (strcmp(arg, "--min-coverage") == 0) {
            char *end = NULL;
            double percent = i + 1 < argc ? strtod(argv[i + 1], &end) : -1;
            if (i + 1 >= argc || end == argv[i + 1] || *end || percent < 0 || percent > 100) {
                fprintf(stderr,
                        "tp-backends check: --min-coverage takes a percentage 0..100%s%s\n%s",
                        i + 1 < argc ? ", got " : "", i + 1 < argc ? argv[i + 1] : "", check_usage);
                return EXIT_USAGE;
            }
            options->min_coverage = percent;
            i++;
        } else if (value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tp-backends check: %s needs a value\n%s", arg, check_usage);
                return EXIT_USAGE;
            }
            *value = argv[++i];
        } else if (strcmp(arg, "--conformance") == 0) {
            *conformance = true;
        } else if (strcmp(arg, "--verbose") == 0) {
            options->verbose = true;
        } else if (strcmp(arg, "--help") == 0) {
            fputs(check_usage, stdout);
            return -1;
        } else if (arg[0] != '-' && !*name) {
            *name = arg;
        } else {
            fprintf(stderr, "tp-backends check: unexpected argument '%s'\n%s", arg, check_usage);
            return EXIT_USAGE;
        }
    }
    if (!*name) {
        fputs(check_usage, stderr);
        return EXIT_USAGE;
    }
    if (!*conformance && (options->json_path || options->corpus_dir || options->filter ||
                          options->min_coverage > 0)) {
        fprintf(stderr, "tp-backends check: --json, --corpus, --filter and --min-coverage need "
                        "--conformance\n");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int command_check(int argc, char **argv) {
    const char *name = NULL;
    bool conformance = false;
    conformance_options options = {0};
    int parsed = parse_check(argc, argv, &name, &conformance, &options);
    if (parsed != EXIT_OK) return parsed < 0 ? EXIT_OK : parsed;
    tp_backend_info *info = NULL;
    if (tp_backend_info_get(name, &info) != TP_OK) { /* unknown: say so before forking */
        fprintf(stderr, "tp-backends: %s\n", tp_last_error());
        return EXIT_FAILED;
    }
    tp_backend_info_release(info, 1);
    if (conformance) return conformance_main(name, &options);
    printf("checking backend '%s'\n", name);
    fflush(stdout);
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) {
        perror("tp-backends check: pipe");
        return EXIT_FAILED;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("tp-backends check: fork");
        return EXIT_FAILED;
    }
    if (child == 0) {
        close(pipe_ends[0]);
        step_pipe = pipe_ends[1];
        alarm(CHECK_TIMEOUT_SECONDS);
        int code = child_main(name);
        fflush(stdout);
        _exit(code);
    }
    close(pipe_ends[1]);
    char steps[4096] = "";
    size_t used = 0;
    ssize_t got;
    while ((got = read(pipe_ends[0], steps + used, sizeof steps - 1 - used)) > 0) {
        used += (size_t)got;
        if (used >= sizeof steps - 1) used = 0; /* keep only recent steps */
    }
    steps[used] = '\0';
    close(pipe_ends[0]);
    int wait_status = 0;
    while (waitpid(child, &wait_status, 0) < 0) {
    }
    char *last = steps;
    for (char *line = strtok(steps, "\n"); line; line = strtok(NULL, "\n")) last = line;
    if (WIFSIGNALED(wait_status)) {
        int number = WTERMSIG(wait_status);
        if (number == SIGALRM)
            printf("FAILED: backend '%s' did not finish within %d s (during %s)\n", name,
                   CHECK_TIMEOUT_SECONDS, *last ? last : "start-up");
        else
            printf("FAILED: backend '%s' crashed with %s (%s) during %s\n", name,
                   signal_name(number), strsignal(number), *last ? last : "start-up");
        return EXIT_FAILED;
    }
    int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : EXIT_FAILED;
    if (code != EXIT_OK) {
        printf("FAILED: backend '%s' does not pass the check (child exit status %d)\n", name, code);
        return EXIT_FAILED;
    }
    printf("ok: backend '%s' passes the check\n", name);
    return EXIT_OK;
}
