/* The C side of python/bench/bench_call_overhead.py: a cache-hit tp_call of
 * add(x, y) on two 4-element f32 tensors, same tensors every call, on the
 * backend named by argv[1] (default stax). Prints nanoseconds per call;
 * asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "stax";
    long iterations = argc > 2 ? atol(argv[2]) : 200000;
    int64_t shape[] = {4};
    tp_tensor *x = NULL, *y = NULL;
    tp_tensor_create(TP_F32, 1, shape, &x);
    tp_tensor_create(TP_F32, 1, shape, &y);
    tp_compile_options options = TP_COMPILE_OPTIONS_INIT;
    options.backend = backend;
    tp_compiled *compiled = NULL;
    if (tp_compile(add_fn, &options, &compiled) != TP_OK) {
        fprintf(stderr, "%s\n", tp_last_error());
        return 1;
    }
    tp_arg args[] = {tp_arg_tensor(x), tp_arg_tensor(y)};
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double start = now_ns();
        for (long i = 0; i < iterations; i++) {
            tp_tensor *out = NULL;
            if (tp_call(compiled, args, 2, &out) != TP_OK) {
                fprintf(stderr, "%s\n", tp_last_error());
                return 1;
            }
            tp_tensor_release(out);
        }
        double per_call = (now_ns() - start) / (double)iterations;
        if (per_call < best) best = per_call;
    }
    printf("c_tp_call_ns %.1f\n", best);
    tp_compiled_free(compiled);
    tp_tensor_release(x);
    tp_tensor_release(y);
    return 0;
}
