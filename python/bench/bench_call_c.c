/* The C side of python/bench/bench_call_overhead.py: cache-hit calls of
 * add(x, y) on two 4-element f32 tensors on the backend named by argv[1]
 * (default stax), `rounds` rounds of `iterations` calls (argv[2], argv[3]).
 * Prints the median nanoseconds per call of each way of calling:
 *   c_tp_call_ns           tp_call, same tensors every call (the memo hit)
 *   c_prepared_array_ns    tp_prepared_call_run with array records (what the
 *                          bindings do for NumPy arrays: guards re-checked)
 *   c_prepared_tensor_ns   tp_prepared_call_run with tensor handles
 * Asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorplay/compile.h"

static void add_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                   int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    outputs[0] = tp_add(ctx, args[0].tensor, args[1].tensor);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void check(tp_status status) {
    if (status != TP_OK) {
        fprintf(stderr, "%s\n", tp_last_error());
        exit(1);
    }
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct bench {
    tp_compiled *compiled;
    tp_arg args[2];
    tp_prepared_call *prepared;
    tp_prepared_arg arrays[2], handles[2];
} bench;

enum way { WAY_TP_CALL, WAY_PREPARED_ARRAY, WAY_PREPARED_TENSOR, NUM_WAYS };
static const char *const way_names[] = {"c_tp_call_ns", "c_prepared_array_ns",
                                        "c_prepared_tensor_ns"};

static double round_ns(bench *b, enum way way, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        tp_tensor *out = NULL;
        if (way == WAY_TP_CALL)
            check(tp_call(b->compiled, b->args, 2, &out));
        else
            check(tp_prepared_call_run(b->prepared,
                                       way == WAY_PREPARED_ARRAY ? b->arrays : b->handles, &out));
        if (!out) {
            fprintf(stderr, "prepared call did not run (not a cache hit)\n");
            exit(1);
        }
        tp_tensor_release(out);
    }
    return (now_ns() - start) / (double)iterations;
}

int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "stax";
    long iterations = argc > 2 ? atol(argv[2]) : 100000;
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    if (rounds < 1 || rounds > 64) rounds = 7;
    int64_t shape[] = {4};
    tp_tensor *x = NULL, *y = NULL;
    check(tp_tensor_create(TP_F32, 1, shape, &x));
    check(tp_tensor_create(TP_F32, 1, shape, &y));
    static float x_memory[4], y_memory[4];
    bench b = {.args = {tp_arg_tensor(x), tp_arg_tensor(y)}};
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend;
    check(tp_compile(add_fn, &options, &b.compiled));
    tp_tensor *out = NULL;
    check(tp_call(b.compiled, b.args, 2, &out)); /* compiles */
    tp_tensor_release(out);
    check(tp_prepared_call_create(b.compiled, 2, &b.prepared));
    float *memory[2] = {x_memory, y_memory};
    tp_tensor *handles[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        b.arrays[i] = (tp_prepared_arg){.kind = TP_PREPARED_ARRAY, .dtype = TP_F32, .ndim = 1};
        b.arrays[i].value.data = memory[i];
        b.arrays[i].shape[0] = 4;
        b.handles[i] = (tp_prepared_arg){.kind = TP_ARG_TENSOR};
        b.handles[i].value.tensor = handles[i];
    }
    double samples[NUM_WAYS][64];
    for (int round = 0; round < rounds; round++) /* interleaved */
        for (int way = 0; way < NUM_WAYS; way++)
            samples[way][round] = round_ns(&b, (enum way)way, iterations);
    for (int way = 0; way < NUM_WAYS; way++) {
        qsort(samples[way], (size_t)rounds, sizeof samples[way][0], compare_double);
        printf("%s %.1f\n", way_names[way], samples[way][rounds / 2]);
    }
    tp_prepared_call_free(b.prepared);
    tp_compiled_free(b.compiled);
    tp_tensor_release(x);
    tp_tensor_release(y);
    return 0;
}
