/* One compiled function called from eight threads at once, each with its own
 * input shape, results checked against loops in the test. */
#include <math.h>
#include <pthread.h>

#include "compile_fixtures.h"

enum { THREADS = 8, CALLS = 200 };

/* y = tanh(x) * x + 1 */
static void thread_fn(tp_ctx *ctx, const tp_arg *args, int num_args, tp_tensor **outputs,
                      int num_outputs, void *user_data) {
    (void)num_args, (void)num_outputs, (void)user_data;
    tp_tensor *x = args[0].tensor;
    outputs[0] = tp_add(ctx, tp_mul(ctx, tp_tanh(ctx, x), x), tp_scalar(ctx, TP_F32, 1.0));
}

typedef struct worker {
    tp_compiled *compiled;
    tp_tensor *shared; /* every thread also passes this one */
    int index;
    int failures;
    char error[512];
} worker;

static void *work(void *context) {
    worker *self = context;
    int64_t n = 3 + self->index;
    tp_tensor *x = fixture_ramp(n, -1.0f + 0.1f * (float)self->index, 0.25f);
    for (int call = 0; call < CALLS; call++) {
        tp_tensor *input = (call % 3 == 2) ? self->shared : x;
        tp_arg args[] = {tp_arg_tensor(input)};
        tp_tensor *y = NULL;
        if (tp_call(self->compiled, args, 1, &y) != TP_OK) {
            snprintf(self->error, sizeof self->error, "%s", tp_last_error());
            self->failures++;
            continue;
        }
        const float *in = fixture_floats(input);
        for (int64_t i = 0; i < tp_tensor_numel(input); i++) {
            double expected = tanh((double)in[i]) * in[i] + 1.0;
            double got = fixture_floats(y)[i];
            if (fabs(got - expected) > 1e-5) self->failures++;
        }
        if (tp_tensor_numel(y) != tp_tensor_numel(input)) self->failures++;
        tp_tensor_release(y);
    }
    tp_tensor_release(x);
    return NULL;
}

static void run_threads(tp_dynamic dynamic) {
    static const char *const params[] = {"x"};
    tp_compile_options options = fixture_options("threaded", params, 1);
    options.dynamic = dynamic;
    options.recompile_limit = THREADS + 1;
    tp_compiled *compiled = NULL;
    ck_assert_int_eq(tp_compile(thread_fn, &options, &compiled), TP_OK);
    tp_tensor *shared = fixture_ramp(16, -2, 0.25f);
    worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){.compiled = compiled, .shared = shared, .index = i};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < THREADS; i++)
        ck_assert_msg(workers[i].failures == 0, "thread %d: %d failures (%s)", i,
                      workers[i].failures, workers[i].error);
    int expected_entries = dynamic == TP_DYNAMIC_DYNAMIC ? 1 : THREADS + 1;
    ck_assert_int_eq(tp_compiled_num_entries(compiled), expected_entries);
    tp_compiled_free(compiled);
    tp_tensor_release(shared);
}

START_TEST(test_threads_with_different_shapes_get_eager_results_static) {
    run_threads(TP_DYNAMIC_STATIC);
}
END_TEST

START_TEST(test_threads_with_different_shapes_get_eager_results_dynamic) {
    run_threads(TP_DYNAMIC_DYNAMIC);
}
END_TEST

TP_TEST_SUITE(compile_threads) {
    Suite *suite = suite_create("compile_threads");
    TCase *tc = tcase_create("threads");
    tcase_add_checked_fixture(tc, fixture_setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_threads_with_different_shapes_get_eager_results_static);
    tcase_add_test(tc, test_threads_with_different_shapes_get_eager_results_dynamic);
    suite_add_tcase(suite, tc);
    return suite;
}
