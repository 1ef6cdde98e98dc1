/* stax compiles a graph's kernels in parts, each on a thread of its own
 * (stax_ir_split.c splits the module's IR, stax_jit.c compiles the parts):
 * the split on hand-made IR text (each kernel in one part with the internal
 * functions it calls, balanced, the same every time, one part when it is
 * small or holds what cannot be divided), then a graph of many kernels
 * (pointwise, reductions, softmax, log_softmax, a matmul and a conv with
 * epilogues) giving bitwise the same results with STAX_COMPILE_THREADS=1, 2
 * and 3, each checked against a double-precision oracle computed here; the
 * disk cache serving every part of the second compile, and a part missing
 * from it compiled alone; and a bad STAX_COMPILE_THREADS refused with a
 * message naming it. */
#include <dirent.h>

#include "stax_harness.h"
#include "stax_ir_split.h"

/* ---- the split ---- */

/* `lines` comment lines: a function's body grown to a chosen size. */
static void append_padding(char *text, size_t size, int lines) {
    for (int i = 0; i < lines; i++)
        strncat(text, "  ; padding padding padding padding\n", size - strlen(text) - 1);
}

/* A module of kernels k0..k(count-1): k0 and k1 call the shared body
 * @STAXKEY_body0, which calls @stax_helper; each other kernel calls nothing.
 * Each kernel is `lines` comment lines long. Caller frees. */
static char *hand_module(int count, int lines) {
    size_t size = (size_t)(count + 2) * ((size_t)lines * 40 + 400) + 1000;
    char *text = calloc(1, size);
    ck_assert_ptr_nonnull(text);
    strcat(text, "declare float @llvm.fabs.f32(float)\n\n");
    strcat(text, "define internal float @stax_helper(float %x) #1 {\n"
                 "  %r = call float @llvm.fabs.f32(float %x)\n  ret float %r\n}\n\n");
    strcat(text, "define internal void @STAXKEY_body0(ptr %p) #2 {\n"
                 "  %v = call float @stax_helper(float 1.0)\n  store float %v, ptr %p\n");
    append_padding(text, size, lines);
    strcat(text, "  ret void\n}\n\n");
    for (int k = 0; k < count; k++) {
        char line[200];
        snprintf(line, sizeof line,
                 "define void @STAXKEY_k%d(ptr %%slots, i64 %%begin, i64 %%end) #0 {\n", k);
        strcat(text, line);
        if (k < 2) strcat(text, "  call void @STAXKEY_body0(ptr %slots)\n");
        append_padding(text, size, lines);
        strcat(text, "  ret void\n}\n\n");
    }
    strcat(text, "attributes #0 = { nounwind }\nattributes #1 = { alwaysinline nounwind }\n"
                 "attributes #2 = { noinline nounwind }\n");
    return text;
}

static void kernel_names(int count, char names[][32], const char **pointers) {
    for (int k = 0; k < count; k++) {
        snprintf(names[k], 32, "STAXKEY_k%d", k);
        pointers[k] = names[k];
    }
}

static bool defines(const char *ir, const char *name) {
    char wanted[200];
    snprintf(wanted, sizeof wanted, "@%s(", name);
    for (const char *p = strstr(ir, "define "); p; p = strstr(p + 1, "\ndefine ")) {
        const char *end = strchr(p + 1, '\n');
        const char *at = strstr(p, wanted);
        if (at && (!end || at < end)) return true;
    }
    return false;
}

START_TEST(each_kernel_is_in_one_part_with_what_it_calls) {
    enum { count = 8 };
    char *ir = hand_module(count, 120); /* ~4.8 KB a kernel: 8 kernels, ~40 KB */
    char names[count][32];
    const char *pointers[count];
    kernel_names(count, names, pointers);
    stax_ir_parts parts;
    ck_assert_int_eq(stax_ir_split(ir, pointers, count, 3, &parts), 0);
    ck_assert_int_eq(parts.count, 3);
    size_t lightest = (size_t)-1, heaviest = 0;
    for (int q = 0; q < parts.count; q++) {
        const char *text = parts.parts[q].ir;
        /* every declaration and attribute group, in every part */
        ck_assert_ptr_nonnull(strstr(text, "declare float @llvm.fabs.f32(float)\n"));
        ck_assert_ptr_nonnull(strstr(text, "attributes #2 = { noinline nounwind }\n"));
        bool calls_body = defines(text, "STAXKEY_k0") || defines(text, "STAXKEY_k1");
        ck_assert_int_eq(defines(text, "STAXKEY_body0"), calls_body);
        ck_assert_int_eq(defines(text, "stax_helper"), calls_body);
        if (parts.parts[q].weight < lightest) lightest = parts.parts[q].weight;
        if (parts.parts[q].weight > heaviest) heaviest = parts.parts[q].weight;
    }
    for (int k = 0; k < count; k++) {
        int holding = 0;
        for (int q = 0; q < parts.count; q++) holding += defines(parts.parts[q].ir, names[k]);
        ck_assert_msg(holding == 1, "%s is in %d parts", names[k], holding);
        ck_assert_msg(defines(parts.parts[parts.part_of_name[k]].ir, names[k]),
                      "%s is not in the part part_of_name gives", names[k]);
    }
    /* balanced by size: 9 units of ~4.8 KB (8 kernels and the body) in 3 parts */
    ck_assert_msg(heaviest <= lightest * 3 / 2, "parts of %zu to %zu bytes", lightest, heaviest);
    /* k0 and k1 share their body: one part holds both (it is not copied) */
    ck_assert_int_eq(parts.part_of_name[0], parts.part_of_name[1]);
    stax_ir_parts_free(&parts);
    free(ir);
}
END_TEST

START_TEST(the_same_module_splits_the_same_way) {
    enum { count = 8 };
    char *ir = hand_module(count, 120);
    char names[count][32];
    const char *pointers[count];
    kernel_names(count, names, pointers);
    stax_ir_parts first, second;
    ck_assert_int_eq(stax_ir_split(ir, pointers, count, 2, &first), 0);
    ck_assert_int_eq(stax_ir_split(ir, pointers, count, 2, &second), 0);
    ck_assert_int_eq(first.count, 2);
    ck_assert_int_eq(second.count, first.count);
    for (int q = 0; q < first.count; q++) ck_assert_str_eq(first.parts[q].ir, second.parts[q].ir);
    for (int k = 0; k < count; k++) ck_assert_int_eq(first.part_of_name[k], second.part_of_name[k]);
    stax_ir_parts_free(&first);
    stax_ir_parts_free(&second);
    free(ir);
}
END_TEST

START_TEST(a_small_module_or_one_thread_is_one_part_as_given) {
    enum { count = 4 };
    char names[count][32];
    const char *pointers[count];
    kernel_names(count, names, pointers);
    char *small = hand_module(count, 10), *large = hand_module(count, 400);
    stax_ir_parts parts;
    ck_assert_int_eq(stax_ir_split(small, pointers, count, 8, &parts), 0);
    ck_assert_int_eq(parts.count, 1);
    ck_assert_str_eq(parts.parts[0].ir, small);
    stax_ir_parts_free(&parts);
    ck_assert_int_eq(stax_ir_split(large, pointers, count, 1, &parts), 0);
    ck_assert_int_eq(parts.count, 1);
    ck_assert_str_eq(parts.parts[0].ir, large);
    for (int k = 0; k < count; k++) ck_assert_int_eq(parts.part_of_name[k], 0);
    stax_ir_parts_free(&parts);
    /* more threads than kernels: no part without a kernel */
    ck_assert_int_eq(stax_ir_split(large, pointers, count, 8, &parts), 0);
    ck_assert_int_ge(parts.count, 2);
    ck_assert_int_le(parts.count, count);
    for (int q = 0; q < parts.count; q++) {
        bool any = false;
        for (int k = 0; k < count; k++) any = any || defines(parts.parts[q].ir, names[k]);
        ck_assert_msg(any, "part %d holds no kernel", q);
    }
    stax_ir_parts_free(&parts);
    free(small);
    free(large);
}
END_TEST

START_TEST(one_part_leaves_out_what_no_kernel_calls) {
    enum { count = 2 };
    char names[count][32];
    const char *pointers[count];
    kernel_names(count, names, pointers);
    /* k0 and k1 call the body and through it the helper; an internal
     * function nothing calls is put first */
    char *ir = hand_module(count, 10);
    size_t length = strlen(ir);
    const char *unused = "define internal float @stax_unused(float %x) #1 {\n"
                         "  ret float %x\n}\n";
    char *with_unused = malloc(length + strlen(unused) + 1);
    snprintf(with_unused, length + strlen(unused) + 1, "%s%s", unused, ir);
    for (int threads = 1; threads <= 4; threads *= 4) {
        stax_ir_parts parts;
        ck_assert_int_eq(stax_ir_split(with_unused, pointers, count, threads, &parts), 0);
        ck_assert_int_eq(parts.count, 1);
        ck_assert_str_eq(parts.parts[0].ir, ir); /* all of it but the unused function */
        ck_assert(!defines(parts.parts[0].ir, "stax_unused"));
        ck_assert(defines(parts.parts[0].ir, "stax_helper"));
        stax_ir_parts_free(&parts);
    }
    free(with_unused);
    free(ir);
}
END_TEST

START_TEST(a_global_variable_or_a_kernel_calling_a_kernel_keeps_one_part) {
    enum { count = 6 };
    char names[count][32];
    const char *pointers[count];
    kernel_names(count, names, pointers);
    char *ir = hand_module(count, 200);
    size_t length = strlen(ir);
    char *with_global = malloc(length + 64), *with_call = malloc(length + 64);
    snprintf(with_global, length + 64, "@table = global [4 x float] zeroinitializer\n%s", ir);
    snprintf(with_call, length + 64, "%s", ir);
    char *k3 = strstr(with_call, "@STAXKEY_k3(");
    char *body = strchr(k3, '\n') + 1;
    const char *call = "  call void @STAXKEY_k4(ptr %slots, i64 0, i64 1)\n";
    memmove(body + strlen(call), body, strlen(body) + 1);
    memcpy(body, call, strlen(call));
    const char *texts[] = {with_global, with_call};
    for (int t = 0; t < 2; t++) {
        stax_ir_parts parts;
        ck_assert_int_eq(stax_ir_split(texts[t], pointers, count, 4, &parts), 0);
        ck_assert_int_eq(parts.count, 1);
        ck_assert_str_eq(parts.parts[0].ir, texts[t]);
        stax_ir_parts_free(&parts);
    }
    free(with_global);
    free(with_call);
    free(ir);
}
END_TEST

/* ---- a graph of many kernels ---- */

enum { ROWS = 16, COLS = 96, OUT_COLS = 40, CHANNELS = 3, SIDE = 12, FILTERS = 6 };
enum { NUM_OUTPUTS = 15 };

static tp_value_id unary(tp_graph *g, const char *op, tp_value_id x) {
    return stax_test_node(g, op, &x, 1, NULL);
}

static tp_value_id binary(tp_graph *g, const char *op, tp_value_id a, tp_value_id b) {
    return stax_test_node(g, op, (tp_value_id[]){a, b}, 2, NULL);
}

static tp_value_id reduce(tp_graph *g, const char *op, tp_value_id x, int64_t axis) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = 1;
    attrs.axes[0] = axis;
    return stax_test_node(g, op, &x, 1, &attrs);
}

static tp_value_id rows_op(tp_graph *g, const char *op, tp_value_id x) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = 1;
    return stax_test_node(g, op, &x, 1, &attrs);
}

/* Fifteen outputs computed from x [16, 96] (and w [96, 40], b [40], img
 * [1, 3, 12, 12], k [6, 3, 3, 3], kb [6]), none sharing a value, so each is
 * a kernel (or a step) of its own. */
static tp_graph *many_kernels_graph(void) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("many_kernels", &g), TP_OK);
    tp_value_id x = stax_test_input(g, "x", TP_F32, 2, (int64_t[]){ROWS, COLS});
    tp_value_id w = stax_test_input(g, "w", TP_F32, 2, (int64_t[]){COLS, OUT_COLS});
    tp_value_id b = stax_test_input(g, "b", TP_F32, 1, (int64_t[]){OUT_COLS});
    tp_value_id img = stax_test_input(g, "img", TP_F32, 4, (int64_t[]){1, CHANNELS, SIDE, SIDE});
    tp_value_id k = stax_test_input(g, "k", TP_F32, 4, (int64_t[]){FILTERS, CHANNELS, 3, 3});
    tp_value_id kb = stax_test_input(g, "kb", TP_F32, 1, (int64_t[]){FILTERS});
    tp_value_id out[NUM_OUTPUTS];
    out[0] = binary(g, "sub", unary(g, "exp", x), x);
    out[1] = binary(g, "mul", unary(g, "tanh", x), unary(g, "sigmoid", x));
    out[2] = reduce(g, "sum", binary(g, "mul", x, x), 1);
    out[3] = reduce(g, "max", x, 0);
    out[4] = rows_op(g, "softmax", x);
    out[5] = rows_op(g, "log_softmax", x);
    out[6] = unary(g, "relu", binary(g, "add", binary(g, "matmul", x, w), b));
    tp_attrs conv = TP_ATTRS_INIT;
    conv.group = 1;
    conv.strides[0] = conv.strides[1] = 1;
    conv.dilations[0] = conv.dilations[1] = 1;
    conv.nstrides = conv.ndilations = 2;
    conv.npads = 4;
    for (int i = 0; i < 4; i++) conv.pads[i] = 1;
    out[7] = unary(g, "relu", stax_test_node(g, "conv", (tp_value_id[]){img, k, kb}, 3, &conv));
    out[8] = binary(g, "add", unary(g, "sin", x), unary(g, "cos", x));
    out[9] = binary(g, "mul", unary(g, "erf", x), x);
    out[10] =
        unary(g, "log", binary(g, "add", unary(g, "exp", x), unary(g, "exp", unary(g, "neg", x))));
    out[11] = binary(g, "mul", unary(g, "sqrt", unary(g, "abs", x)), x);
    out[12] = reduce(g, "mean", unary(g, "tanh", x), 1);
    out[13] = unary(g, "silu", x);
    out[14] = binary(g, "div", x, binary(g, "add", unary(g, "abs", x), unary(g, "sigmoid", x)));
    ck_assert_int_eq(tp_graph_set_outputs(g, out, NUM_OUTPUTS), TP_OK);
    return g;
}

static double sigmoid(double v) {
    return 1.0 / (1.0 + exp(-v));
}

/* Output `o` element `i` in double precision, from the f32 inputs. */
static double oracle(int o, int64_t i, tp_tensor *const *in) {
    const float *x = tp_tensor_data(in[0]), *w = tp_tensor_data(in[1]), *b = tp_tensor_data(in[2]);
    const float *img = tp_tensor_data(in[3]), *k = tp_tensor_data(in[4]),
                *kb = tp_tensor_data(in[5]);
    double v = o == 2 || o == 3 || o == 6 || o == 7 || o == 12 ? 0 : x[i], acc = 0;
    int64_t row = i / COLS;
    switch (o) {
    case 0:
        return exp(v) - v;
    case 1:
        return tanh(v) * sigmoid(v);
    case 2:
        for (int j = 0; j < COLS; j++) acc += (double)x[i * COLS + j] * x[i * COLS + j];
        return acc;
    case 3:
        acc = -INFINITY;
        for (int r = 0; r < ROWS; r++) acc = fmax(acc, x[r * COLS + i]);
        return acc;
    case 4:
    case 5: {
        double top = -INFINITY, sum = 0;
        for (int j = 0; j < COLS; j++) top = fmax(top, x[row * COLS + j]);
        for (int j = 0; j < COLS; j++) sum += exp(x[row * COLS + j] - top);
        return o == 4 ? exp(v - top) / sum : v - top - log(sum);
    }
    case 6: {
        int64_t r = i / OUT_COLS, c = i % OUT_COLS;
        acc = b[c];
        for (int j = 0; j < COLS; j++) acc += (double)x[r * COLS + j] * w[j * OUT_COLS + c];
        return acc > 0 ? acc : 0;
    }
    case 7: {
        int64_t f = i / (SIDE * SIDE), y = i / SIDE % SIDE, xx = i % SIDE;
        acc = kb[f];
        for (int c = 0; c < CHANNELS; c++)
            for (int dy = 0; dy < 3; dy++)
                for (int dx = 0; dx < 3; dx++) {
                    int64_t sy = y + dy - 1, sx = xx + dx - 1;
                    if (sy < 0 || sy >= SIDE || sx < 0 || sx >= SIDE) continue;
                    acc += (double)img[(c * SIDE + sy) * SIDE + sx] *
                           k[((f * CHANNELS + c) * 3 + dy) * 3 + dx];
                }
        return acc > 0 ? acc : 0;
    }
    case 8:
        return sin(v) + cos(v);
    case 9:
        return erf(v) * v;
    case 10:
        return log(exp(v) + exp(-v));
    case 11:
        return sqrt(fabs(v)) * v;
    case 12:
        for (int j = 0; j < COLS; j++) acc += tanh(x[i * COLS + j]);
        return acc / COLS;
    case 13:
        return v * sigmoid(v);
    default:
        return v / (fabs(v) + sigmoid(v));
    }
}

static tp_tensor **make_inputs(void) {
    static const int64_t shapes[6][4] = {{ROWS, COLS},
                                         {COLS, OUT_COLS},
                                         {OUT_COLS},
                                         {1, CHANNELS, SIDE, SIDE},
                                         {FILTERS, CHANNELS, 3, 3},
                                         {FILTERS}};
    static const int ranks[6] = {2, 2, 1, 4, 4, 1};
    tp_tensor **inputs = calloc(6, sizeof *inputs);
    for (int i = 0; i < 6; i++)
        inputs[i] = stax_test_random(TP_F32, ranks[i], shapes[i], 300 + (uint64_t)i);
    return inputs;
}

/* Every output against the double oracle: a few f32 roundings of the result
 * (and of the terms of a sum). */
static void check_with_oracle(tp_tensor *const *got, tp_tensor *const *inputs, const char *what) {
    for (int o = 0; o < NUM_OUTPUTS; o++) {
        const float *y = tp_tensor_data(got[o]);
        double scale = o == 2 || o == 6 || o == 7 ? 50.0 : 4.0;
        for (int64_t i = 0; i < tp_tensor_numel(got[o]); i++) {
            double want = oracle(o, i, inputs);
            ck_assert_msg(fabs(y[i] - want) <= 3e-6 * fabs(want) + 2e-6 * scale,
                          "%s: output %d element %lld is %.9g, the double oracle %.9g", what, o,
                          (long long)i, y[i], want);
        }
    }
}

/* Runs the graph with STAX_COMPILE_THREADS=threads in a cache folder of its
 * own; *lines counts the compile's log lines containing `needle`. */
static void run_with_threads(const char *threads, const char *needle, tp_tensor **outputs,
                             tp_tensor *const *inputs, int *lines) {
    char cache[4300];
    snprintf(cache, sizeof cache, "%s/parts-cache-%s", tp_test_temp_dir(), threads);
    setenv("TP_CACHE_DIR", cache, 1);
    setenv("STAX_COMPILE_THREADS", threads, 1);
    tp_graph *g = many_kernels_graph();
    tp_status status = stax_test_run_counting(needle, g, inputs, 6, NULL, 0, outputs, lines);
    ck_assert_msg(status == TP_OK, "STAX_COMPILE_THREADS=%s: %s", threads, tp_last_error());
    unsetenv("STAX_COMPILE_THREADS");
    tp_graph_destroy(g);
}

START_TEST(results_are_bitwise_the_same_on_one_two_and_three_threads) {
    tp_tensor **inputs = make_inputs();
    tp_tensor *single[NUM_OUTPUTS] = {0};
    int lines = 0;
    run_with_threads("1", "kernels", single, inputs, &lines);
    check_with_oracle(single, inputs, "one thread");
    static const char *const settings[] = {"2", "3"};
    static const char *const expected[] = {"(compiled in 2 parts on 2 threads)",
                                           "(compiled in 3 parts on 3 threads)"};
    for (int s = 0; s < 2; s++) {
        tp_tensor *parts[NUM_OUTPUTS] = {0};
        run_with_threads(settings[s], expected[s], parts, inputs, &lines);
        ck_assert_msg(lines == 1, "STAX_COMPILE_THREADS=%s: no debug line saying %s", settings[s],
                      expected[s]);
        check_with_oracle(parts, inputs, settings[s]);
        for (int o = 0; o < NUM_OUTPUTS; o++) {
            size_t bytes = (size_t)tp_tensor_numel(single[o]) * sizeof(float);
            ck_assert_msg(memcmp(tp_tensor_data(single[o]), tp_tensor_data(parts[o]), bytes) == 0,
                          "output %d differs between 1 and %s threads", o, settings[s]);
            tp_tensor_release(parts[o]);
        }
    }
    for (int o = 0; o < NUM_OUTPUTS; o++) tp_tensor_release(single[o]);
    for (int i = 0; i < 6; i++) tp_tensor_release(inputs[i]);
    free(inputs);
}
END_TEST

START_TEST(a_second_compile_takes_every_part_from_the_disk_cache) {
    tp_tensor **inputs = make_inputs();
    tp_tensor *first[NUM_OUTPUTS] = {0}, *second[NUM_OUTPUTS] = {0};
    int lines = 0;
    run_with_threads("2", "(compiled in 2 parts on 2 threads)", first, inputs, &lines);
    ck_assert_int_eq(lines, 1);
    /* the first executable is gone, so is its module: the parts come from disk */
    run_with_threads("2", "(from the disk cache, 2 parts)", second, inputs, &lines);
    ck_assert_msg(lines == 1, "the second compile did not take both parts from the disk cache");
    check_with_oracle(second, inputs, "from the disk cache");
    for (int o = 0; o < NUM_OUTPUTS; o++) {
        size_t bytes = (size_t)tp_tensor_numel(first[o]) * sizeof(float);
        ck_assert(memcmp(tp_tensor_data(first[o]), tp_tensor_data(second[o]), bytes) == 0);
        tp_tensor_release(first[o]);
        tp_tensor_release(second[o]);
    }
    for (int i = 0; i < 6; i++) tp_tensor_release(inputs[i]);
    free(inputs);
}
END_TEST

/* Each entry of the disk cache's stax folder moved away in turn: an entry
 * holding one part's object makes the next compile compile that part alone
 * and take the other from the cache. */
START_TEST(a_part_missing_from_the_disk_cache_is_compiled_alone) {
    tp_tensor **inputs = make_inputs();
    tp_tensor *outputs[NUM_OUTPUTS] = {0};
    int lines = 0;
    run_with_threads("2", "(compiled in 2 parts on 2 threads)", outputs, inputs, &lines);
    ck_assert_int_eq(lines, 1);
    for (int o = 0; o < NUM_OUTPUTS; o++) tp_tensor_release(outputs[o]);
    char folder[4400];
    snprintf(folder, sizeof folder, "%s/parts-cache-2/stax", tp_test_temp_dir());
    char names[16][256];
    int count = 0;
    DIR *dir = opendir(folder);
    ck_assert_msg(dir != NULL, "no cache folder %s", folder);
    for (struct dirent *entry; (entry = readdir(dir)) != NULL && count < 16;)
        if (entry->d_name[0] != '.') snprintf(names[count++], sizeof names[0], "%s", entry->d_name);
    closedir(dir);
    int partial = 0;
    for (int e = 0; e < count; e++) {
        char path[8800], moved[8800];
        snprintf(path, sizeof path, "%s/%s", folder, names[e]);
        snprintf(moved, sizeof moved, "%s/../moved", folder);
        ck_assert_int_eq(rename(path, moved), 0);
        run_with_threads("2", "(1 of 2 parts compiled on 1 thread, the others cached)", outputs,
                         inputs, &lines);
        partial += lines;
        check_with_oracle(outputs, inputs, "one part from the disk cache");
        for (int o = 0; o < NUM_OUTPUTS; o++) tp_tensor_release(outputs[o]);
        ck_assert_int_eq(rename(moved, path), 0);
    }
    ck_assert_msg(partial == 2, "%d of the %d cache entries held one part's object", partial,
                  count);
    for (int i = 0; i < 6; i++) tp_tensor_release(inputs[i]);
    free(inputs);
}
END_TEST

START_TEST(a_bad_compile_thread_count_is_refused_naming_the_variable) {
    stax_test_cache_dir();
    static const char *const bad[] = {"0", "-2", "two", "2x", " 2", "99999"};
    tp_tensor **inputs = make_inputs();
    tp_graph *g = many_kernels_graph();
    tp_backend *backend = stax_test_backend("stax");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("STAX_COMPILE_THREADS", bad[i], 1);
        tp_executable *exe = NULL;
        tp_status status = tp_backend_compile(backend, g, inputs, 6, NULL, 0, &exe);
        ck_assert_msg(status != TP_OK, "STAX_COMPILE_THREADS='%s' was accepted", bad[i]);
        ck_assert_msg(strstr(tp_last_error(), "STAX_COMPILE_THREADS") != NULL, "'%s': %s", bad[i],
                      tp_last_error());
        ck_assert_ptr_null(exe);
    }
    unsetenv("STAX_COMPILE_THREADS");
    tp_graph_destroy(g);
    for (int i = 0; i < 6; i++) tp_tensor_release(inputs[i]);
    free(inputs);
}
END_TEST

TP_TEST_SUITE(stax_compile_parts) {
    Suite *s = suite_create("stax_compile_parts");
    TCase *split = tcase_create("split");
    tcase_add_test(split, each_kernel_is_in_one_part_with_what_it_calls);
    tcase_add_test(split, the_same_module_splits_the_same_way);
    tcase_add_test(split, a_small_module_or_one_thread_is_one_part_as_given);
    tcase_add_test(split, one_part_leaves_out_what_no_kernel_calls);
    tcase_add_test(split, a_global_variable_or_a_kernel_calling_a_kernel_keeps_one_part);
    suite_add_tcase(s, split);
    TCase *c = tcase_create("compile_parts");
    tcase_set_timeout(c, 300);
    tcase_add_test(c, results_are_bitwise_the_same_on_one_two_and_three_threads);
    tcase_add_test(c, a_second_compile_takes_every_part_from_the_disk_cache);
    tcase_add_test(c, a_part_missing_from_the_disk_cache_is_compiled_alone);
    tcase_add_test(c, a_bad_compile_thread_count_is_refused_naming_the_variable);
    suite_add_tcase(s, c);
    return s;
}
