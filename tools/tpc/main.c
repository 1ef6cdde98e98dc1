/* tpc — the command line: `tpc run|print|check|dot|import G.tpir|M.onnx ...`,
 * --help, --version. Parses arguments, loads graphs (.onnx models through the
 * importer) and .npy/.npz files, prints results; the run itself is
 * tpc_run_graph (run.c). Uses only the public API.
 *
 * Exit status: 0 success, 1 failure (the library's message on stderr,
 * prefixed "tpc: "), 2 usage error (bad command line, or --arg names that do
 * not fit the graph's inputs). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensorplay/ops.h"
#include "tensorplay/onnx.h"
#include "tensorplay/backend.h"
#include "tensorplay/compile.h"
#include "tensorplay/profile.h"
#include "tpc.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: tpc run G.tpir|M.onnx [--arg NAME=FILE.npy ...] [--args FILE.npz] [--cast]\n"
    "               [--out DIR] [--backend NAME] [--option KEY=VALUE ...] [--mode NAME]\n"
    "               [--dynamic] [--fullgraph] [--isolate] [--profile] [--repeat N]\n"
    "               [--profile-json FILE]\n"
    "       tpc print [--passes] G.tpir|M.onnx\n"
    "       tpc print --partition [--backend NAME] [--fallback NAME] G.tpir|M.onnx\n"
    "       tpc dot [--passes] [--backend NAME] [--fallback NAME] [--max-nodes N]\n"
    "               [-o FILE.dot] [--png FILE.png] G.tpir|M.onnx\n"
    "       tpc check G.tpir|M.onnx\n"
    "       tpc import M.onnx -o G.tpir | tpc import --list-ops\n"
    "       tpc --help | --version\n"
    "\n"
    "  A file ending in .onnx is an ONNX model: its weights come from the model\n"
    "  and its graph inputs are the --arg NAMEs (an ONNX name works as it is,\n"
    "  or with every character outside [A-Za-z0-9_] written as '_').\n"
    "  run     compiles the graph with a backend (--backend NAME; default: the\n"
    "          default backend, see 'tp-backends list') and runs it. --option\n"
    "          passes KEY=VALUE to the backend; --mode NAME is tp_compile's mode\n"
    "          (default, max-autotune, ... as the backend knows them; not with\n"
    "          --option: pass --option mode=NAME then); --dynamic compiles for\n"
    "          any sizes of the inputs' ranks. Nodes the backend does not claim run on the\n"
    "          fallback backend (config fallback_backend); --fullgraph refuses\n"
    "          that split and lists them. --isolate runs it in a child process, so a\n"
    "          crashing backend is reported instead of ending tpc. A crash in\n"
    "          a backend names the backend, the phase and the graph. Every graph input\n"
    "          needs one --arg (NAME is the input's name, with or without '%'),\n"
    "          or an array of that name in --args FILE.npz (np.savez). An input\n"
    "          whose dtype differs from the graph's is an error unless --cast\n"
    "          converts it.\n"
    "          Prints, per output: name, dtype and shape, the sum of its elements\n"
    "          and the sum of their absolute values. With --out, writes each\n"
    "          output as DIR/NAME.npy (DIR is created if missing).\n"
    "          --profile prints on stderr where the time goes: parse, capture,\n"
    "          each pass, partition, each region's backend compile, the first\n"
    "          run (compile included), then N more runs (--repeat N, default\n"
    "          5; median and range), then the kernels the backend reported\n"
    "          (stax, opencl, cuda: the top 10 by total time, with calls and\n"
    "          mean). --profile-json FILE writes the same in Chrome's\n"
    "          trace-event format (chrome://tracing, Perfetto), every kernel\n"
    "          execution on a track of its own; both imply --profile.\n"
    "  print   parses the graph and prints its canonical text. With --passes,\n"
    "          also prints it after each pass of the pipeline.\n"
    "          With --partition, which node each backend runs and why (the\n"
    "          backend's reason for every node it does not claim; --backend auto\n"
    "          picks the highest-priority available backend).\n"
    "  dot     writes the graph in Graphviz's DOT language (-o FILE, default\n"
    "          stdout): a box per node with its op and type. With --passes, the\n"
    "          graph after the pass pipeline with each partition region as a\n"
    "          cluster coloured by backend (--backend/--fallback as for 'print\n"
    "          --partition', and imply --passes); tensors crossing between\n"
    "          regions are thick red edges. Above --max-nodes nodes (default\n"
    "          200) each region is one box with its node count. --png renders\n"
    "          it with Graphviz's dot. Fusion clusters are each backend's own\n"
    "          and are not drawn.\n"
    "  check   parses and verifies the graph; prints its size.\n"
    "  import  converts an ONNX model into a .tpir graph file (weights included);\n"
    "          --list-ops prints the ONNX op types the importer accepts.\n"
    "\n"
    "exit status: 0 success, 1 failure, 2 usage error\n";

static int usage_error(const char *format, const char *detail) {
    fprintf(stderr, "tpc: ");
    fprintf(stderr, format, detail);
    fprintf(stderr, "\n(run 'tpc --help' for usage)\n");
    return EXIT_USAGE;
}

static int failure(void) {
    fprintf(stderr, "tpc: %s\n", tp_last_error());
    return EXIT_FAILURE;
}

/* ---- print / check ---------------------------------------------------------- */

static int command_print(const char *path) {
    tp_graph *graph;
    if (tpc_load_graph(path, &graph) != TP_OK) return failure();
    char *text;
    tp_status status = tp_graph_print(graph, &text);
    tp_graph_destroy(graph);
    if (status != TP_OK) return failure();
    fputs(text, stdout);
    tp_free(text);
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int command_check(const char *path) {
    tp_graph *graph;
    if (tpc_load_graph(path, &graph) != TP_OK) return failure(); /* load verifies */
    int nodes = tp_graph_num_values(graph) - tp_graph_num_inputs(graph);
    printf("ok: %d inputs, %d nodes, %d outputs\n", tp_graph_num_inputs(graph), nodes,
           tp_graph_num_outputs(graph));
    tp_graph_destroy(graph);
    return EXIT_SUCCESS;
}

/* ---- run ------------------------------------------------------------------------ */

typedef struct run_request {
    const char *graph_path;
    const char *out_dir;
    const char **arg_names; /* as given, '%' stripped */
    const char **arg_files;
    int num_args;
    const char *npz_path; /* --args */
    bool cast;            /* --cast */
    tpc_run_options options;
    bool isolate;             /* --isolate: load, compile and run in a child process */
    bool profile;             /* --profile: phase table on stderr */
    const char *profile_json; /* --profile-json FILE: the same as trace events */
} run_request;

static void print_output(const char *name, const tp_tensor *tensor) {
    char type[256];
    double sum = 0.0, abs_sum = 0.0;
    int64_t count = tp_tensor_numel(tensor);
    for (int64_t i = 0; i < count; i++) {
        double value = tp_tensor_get_f64(tensor, i);
        sum += value;
        abs_sum += fabs(value);
    }
    printf("%s: %s sum=%.9g abs_sum=%.9g\n", name, tp_tensor_describe(tensor, type, sizeof type),
           sum, abs_sum);
}

static int write_outputs(const char *dir, const tp_graph *graph, tp_tensor *const *outputs) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tpc: cannot create output folder %s: %s\n", dir, strerror(errno));
        return EXIT_FAILURE;
    }
    for (int i = 0; i < tp_graph_num_outputs(graph); i++) {
        const char *name = tp_graph_value_name(graph, tp_graph_output(graph, i));
        size_t size = strlen(dir) + strlen(name) + 8;
        char *path = malloc(size);
        if (!path) return EXIT_FAILURE;
        snprintf(path, size, "%s/%s.npy", dir, name);
        tp_status status = tp_npy_save(path, outputs[i]);
        free(path);
        if (status != TP_OK) return failure();
    }
    return EXIT_SUCCESS;
}

/* An input whose dtype differs from the graph's: an error naming both, or
 * with --cast a converted copy. */
static int check_dtypes(const run_request *request, const tp_graph *graph, tp_tensor **inputs) {
    for (int i = 0; i < tp_graph_num_inputs(graph); i++) {
        tp_value_id id = tp_graph_input(graph, i);
        tp_dtype want = tp_graph_value_type(graph, id)->dtype, got = tp_tensor_dtype(inputs[i]);
        if (want == got) continue;
        if (!request->cast) {
            fprintf(stderr,
                    "tpc: input %%%s of graph '%s' is %s, the file gives %s (convert the file, or "
                    "pass --cast to convert it on load)\n",
                    tp_graph_value_name(graph, id), tp_graph_name(graph), tp_dtype_name(want),
                    tp_dtype_name(got));
            return EXIT_FAILURE;
        }
        tp_ctx *ctx = tp_ctx_create();
        if (!ctx) return EXIT_FAILURE;
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.dtype = want;
        tp_tensor *converted = tp_op(ctx, "cast", &inputs[i], 1, &attrs);
        if (converted) tp_tensor_retain(converted);
        if (!converted) fprintf(stderr, "tpc: --cast: %s\n", tp_ctx_error(ctx));
        tp_ctx_destroy(ctx);
        if (!converted) return EXIT_FAILURE;
        tp_tensor_release(inputs[i]);
        inputs[i] = converted;
    }
    return EXIT_SUCCESS;
}

static int run_loaded(const run_request *request, const tp_graph *graph, const tpc_input_set *given,
                      tp_tensor **inputs, tp_tensor **outputs) {
    int code = tpc_inputs_bind(given, graph, inputs);
    if (code == EXIT_SUCCESS) code = check_dtypes(request, graph, inputs);
    if (code != EXIT_SUCCESS) return code;
    if (tpc_run_graph(&request->options, graph, inputs, tp_graph_num_inputs(graph), outputs) !=
        TP_OK)
        return failure();
    for (int i = 0; i < tp_graph_num_outputs(graph); i++)
        print_output(tp_graph_value_name(graph, tp_graph_output(graph, i)), outputs[i]);
    if (request->out_dir) return write_outputs(request->out_dir, graph, outputs);
    return EXIT_SUCCESS;
}

/* Reads every input file first: an ONNX model may need some at import. */
static int read_inputs(const run_request *request, tpc_input_set *given) {
    int code = EXIT_SUCCESS;
    if (request->npz_path) code = tpc_inputs_add_npz(given, request->npz_path);
    for (int a = 0; code == EXIT_SUCCESS && a < request->num_args; a++)
        code = tpc_inputs_add_file(given, request->arg_names[a], request->arg_files[a]);
    return code;
}

static int command_run_loaded(const run_request *request, tp_graph *graph, tpc_input_set *given);

static int command_run(const run_request *request) {
    run_request profiled = *request;
    if (request->profile) {
        profiled.options.profile = tpc_profile_begin();
        if (!profiled.options.profile) return EXIT_FAILURE;
    }
    tpc_input_set given = {0};
    int code = read_inputs(request, &given);
    tp_graph *graph = NULL;
    uint64_t start = tp_profile_now_ns();
    if (code == EXIT_SUCCESS &&
        tpc_load_graph_with_inputs(request->graph_path, &given, &graph) != TP_OK)
        code = failure();
    if (code == EXIT_SUCCESS && request->profile)
        tpc_profile_add(profiled.options.profile, "parse", start, tp_profile_now_ns());
    if (code == EXIT_SUCCESS) code = command_run_loaded(&profiled, graph, &given);
    tpc_inputs_free(&given);
    if (request->profile) {
        int written = tpc_profile_finish(profiled.options.profile,
                                         code == EXIT_SUCCESS ? request->profile_json : NULL);
        if (code == EXIT_SUCCESS) code = written;
    }
    return code;
}

/* Runs a loaded graph and destroys it. */
static int command_run_loaded(const run_request *request, tp_graph *graph, tpc_input_set *given) {
    int code;
    int num_inputs = tp_graph_num_inputs(graph), num_outputs = tp_graph_num_outputs(graph);
    tp_tensor **inputs = calloc((size_t)num_inputs + 1, sizeof *inputs);
    tp_tensor **outputs = calloc((size_t)num_outputs + 1, sizeof *outputs);
    code = inputs && outputs ? run_loaded(request, graph, given, inputs, outputs) : EXIT_FAILURE;
    for (int i = 0; inputs && i < num_inputs; i++) tp_tensor_release(inputs[i]);
    for (int i = 0; outputs && i < num_outputs; i++) tp_tensor_release(outputs[i]);
    free(inputs);
    free(outputs);
    tp_graph_destroy(graph);
    return code;
}

/* --isolate: the whole run (load, compile, run, printing) happens in a
 * child, as `tp-backends check` does, so a backend that crashes is reported
 * by this process with a normal failure status instead of killing it. */

static int command_run_isolated(const run_request *request) {
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "tpc: --isolate: cannot start a child process: %s\n", strerror(errno));
        return EXIT_FAILURE;
    }
    if (child == 0) {
        int code = command_run(request);
        fflush(stdout);
        _exit(code);
    }
    int wait_status = 0;
    while (waitpid(child, &wait_status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "tpc: --isolate: waiting for the child failed: %s\n", strerror(errno));
            return EXIT_FAILURE;
        }
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    int number = WTERMSIG(wait_status);
    const char *abbrev = sigabbrev_np(number);
    fprintf(stderr,
            "tpc: the isolated run of %s died with SIG%s (%s); the backend is at fault (run "
            "'tp-backends check %s' for details)\n",
            request->graph_path, abbrev ? abbrev : "?", strsignal(number),
            request->options.backend ? request->options.backend : tp_backend_get_default());
    return EXIT_FAILURE;
}

static int parse_run(int argc, char **argv, run_request *request) {
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--dynamic") == 0) {
            request->options.dynamic = true;
        } else if (strcmp(arg, "--fullgraph") == 0) {
            request->options.fullgraph = true;
        } else if (strcmp(arg, "--cast") == 0) {
            request->cast = true;
        } else if (strcmp(arg, "--args") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a value", arg);
            if (request->npz_path) return usage_error("%s", "--args is given twice");
            request->npz_path = argv[++i];
        } else if (strcmp(arg, "--isolate") == 0) {
            request->isolate = true;
        } else if (strcmp(arg, "--profile") == 0) {
            request->profile = true;
        } else if (strcmp(arg, "--repeat") == 0 || strcmp(arg, "--profile-json") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a value", arg);
            const char *value = argv[++i];
            request->profile = true;
            if (strcmp(arg, "--profile-json") == 0) {
                request->profile_json = value;
                continue;
            }
            char *end = NULL;
            long count = strtol(value, &end, 10);
            if (!*value || *end || count < 0 || count > 1000000)
                return usage_error("--repeat takes a number of runs (0 to 1000000), got '%s'",
                                   value);
            request->options.repeat = (int)count;
        } else if (strcmp(arg, "--arg") == 0 || strcmp(arg, "--out") == 0 ||
                   strcmp(arg, "--backend") == 0 || strcmp(arg, "--option") == 0 ||
                   strcmp(arg, "--mode") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a value", arg);
            const char *value = argv[++i];
            if (strcmp(arg, "--out") == 0) {
                request->out_dir = value;
                continue;
            }
            if (strcmp(arg, "--backend") == 0) {
                request->options.backend = value;
                continue;
            }
            if (strcmp(arg, "--mode") == 0) {
                request->options.mode = value;
                continue;
            }
            if (strcmp(arg, "--option") == 0) {
                if (!strchr(value, '='))
                    return usage_error("--option takes KEY=VALUE, got '%s'", value);
                request->options.options[request->options.num_options++] = value;
                continue;
            }
            const char *equals = strchr(value, '=');
            if (!equals || equals == value || !equals[1])
                return usage_error("--arg takes NAME=FILE.npy, got '%s'", value);
            char *name = (char *)value; /* argv is writable: split NAME=FILE in place */
            name[equals - value] = '\0';
            request->arg_names[request->num_args] = name[0] == '%' ? name + 1 : name;
            request->arg_files[request->num_args++] = equals + 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("unknown option '%s' for 'run'", arg);
        } else if (!request->graph_path) {
            request->graph_path = arg;
        } else {
            return usage_error("unexpected argument '%s' (one graph per run)", arg);
        }
    }
    if (!request->graph_path) return usage_error("%s", "run needs a graph file");
    if (request->options.mode && request->options.num_options > 0)
        return usage_error("--mode cannot be combined with --option; pass --option mode=%s instead",
                           request->options.mode);
    return EXIT_SUCCESS;
}

static int main_run(int argc, char **argv) {
    run_request request = {.options.repeat = 5}; /* steady runs under --profile */
    request.arg_names = calloc((size_t)argc + 1, sizeof *request.arg_names);
    request.arg_files = calloc((size_t)argc + 1, sizeof *request.arg_files);
    request.options.options = calloc((size_t)argc + 1, sizeof *request.options.options);
    int code = EXIT_FAILURE;
    if (request.arg_names && request.arg_files && request.options.options) {
        code = parse_run(argc, argv, &request);
        if (code == EXIT_SUCCESS)
            code = request.isolate ? command_run_isolated(&request) : command_run(&request);
    }
    free(request.arg_names);
    free(request.arg_files);
    free(request.options.options);
    return code;
}

/* tpc import M.onnx -o G.tpir */
static int main_import(int argc, char **argv) {
    const char *model = NULL, *output = NULL;
    if (argc == 1 && strcmp(argv[0], "--list-ops") == 0) {
        for (int i = 0; tp_onnx_supported_op(i); i++) printf("%s\n", tp_onnx_supported_op(i));
        return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a file name", argv[i]);
            output = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return usage_error("unknown option '%s' for 'import'", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return usage_error("unexpected argument '%s' (one model per import)", argv[i]);
        }
    }
    if (!model) return usage_error("%s", "import needs an ONNX model file");
    if (!output) return usage_error("%s", "import needs -o G.tpir");
    tp_graph *graph;
    if (tp_graph_load_onnx(model, &graph) != TP_OK) return failure();
    tp_status status = tp_graph_save(graph, output);
    tp_graph_destroy(graph);
    return status == TP_OK ? EXIT_SUCCESS : failure();
}

/* print --partition [--backend NAME] [--fallback NAME] G.tpir */
static int main_print_partition(int argc, char **argv) {
    const char *backend = NULL, *fallback = NULL, *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 || strcmp(argv[i], "--fallback") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a value", argv[i]);
            *(strcmp(argv[i], "--backend") == 0 ? &backend : &fallback) = argv[i + 1];
            i++;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return usage_error("unknown option '%s' for 'print --partition'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return usage_error("unexpected argument '%s' (one graph)", argv[i]);
        }
    }
    if (!path) return usage_error("%s", "print --partition needs a graph file");
    tp_graph *graph = NULL;
    char *text = NULL;
    tp_status status = tpc_load_graph(path, &graph);
    if (status == TP_OK) status = tp_partition_describe(graph, backend, fallback, &text);
    tp_graph_destroy(graph);
    if (status != TP_OK) {
        fprintf(stderr, "tpc: %s\n", tp_last_error());
        return EXIT_FAILURE;
    }
    fputs(text, stdout);
    tp_free(text);
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* dot [--passes] [--backend NAME] [--fallback NAME] [--max-nodes N] [-o FILE]
 * [--png FILE] G.tpir */
static int main_dot(int argc, char **argv) {
    tpc_dot_request request = {.max_nodes = 200};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--passes") == 0) {
            request.passes = true;
        } else if (strcmp(arg, "--backend") == 0 || strcmp(arg, "--fallback") == 0 ||
                   strcmp(arg, "-o") == 0 || strcmp(arg, "--png") == 0 ||
                   strcmp(arg, "--max-nodes") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a value", arg);
            const char *value = argv[++i];
            if (strcmp(arg, "--max-nodes") == 0) {
                char *end = NULL;
                long count = strtol(value, &end, 10);
                if (!*value || *end || count < 0 || count > 1000000000)
                    return usage_error("--max-nodes takes a node count, got '%s'", value);
                request.max_nodes = (int)count;
            } else {
                *(strcmp(arg, "--backend") == 0    ? &request.backend
                  : strcmp(arg, "--fallback") == 0 ? &request.fallback
                  : strcmp(arg, "-o") == 0         ? &request.out_path
                                                   : &request.png_path) = value;
            }
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("unknown option '%s' for 'dot'", arg);
        } else if (!request.graph_path) {
            request.graph_path = arg;
        } else {
            return usage_error("unexpected argument '%s' (one graph)", arg);
        }
    }
    if (!request.graph_path) return usage_error("%s", "dot needs a graph file");
    return tpc_dot(&request);
}

/* print / check take exactly one graph file. */
static int main_single(const char *command, int argc, char **argv) {
    if (strcmp(command, "print") == 0 && argc == 2 && strcmp(argv[0], "--passes") == 0)
        return tpc_print_passes(argv[1]);
    if (strcmp(command, "print") == 0 && argc >= 1 && strcmp(argv[0], "--partition") == 0)
        return main_print_partition(argc - 1, argv + 1);
    if (argc != 1 || (argv[0][0] == '-' && argv[0][1] != '\0'))
        return usage_error("'%s' takes exactly one graph file", command);
    return strcmp(command, "print") == 0 ? command_print(argv[0]) : command_check(argv[0]);
}

int main(int argc, char **argv) {
    if (argc < 2) return usage_error("%s", "no command given");
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0) {
        fputs(usage_text, stdout);
        return EXIT_SUCCESS;
    }
    if (strcmp(command, "--version") == 0) {
        printf("tpc (TensorPlay) %s\n", tp_version());
        return EXIT_SUCCESS;
    }
    tpc_crash_report_install();
    if (strcmp(command, "run") == 0) return main_run(argc - 2, argv + 2);
    if (strcmp(command, "print") == 0 || strcmp(command, "check") == 0)
        return main_single(command, argc - 2, argv + 2);
    if (strcmp(command, "dot") == 0) return main_dot(argc - 2, argv + 2);
    if (strcmp(command, "import") == 0) return main_import(argc - 2, argv + 2);
    return usage_error("unknown command '%s' (run, print, check, dot, import)", command);
}
