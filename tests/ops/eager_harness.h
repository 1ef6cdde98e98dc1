/* Test helpers for the eager suites (pointwise, reductions, matmul, ctx):
 * a fresh tp_ctx per test, tensors from literal values, and assertions on
 * the ctx's sticky error. Builds on kernel_harness.h. Header-only. */
#ifndef TP_TESTS_OPS_EAGER_HARNESS_H
#define TP_TESTS_OPS_EAGER_HARNESS_H

#include "kernel_harness.h"
#include "tensorplay/ops.h"

/* The ctx of the running test (created in eager_setup, destroyed in
 * eager_teardown: add both as a checked fixture). */
static tp_ctx *ctx;

static inline void eager_setup(void) {
    ctx = tp_ctx_create();
}
static inline void eager_teardown(void) {
    tp_ctx_destroy(ctx);
    ctx = NULL;
}

/* A ctx-owned tensor of `dtype` and `shape` from double values. */
static inline tp_tensor *eager_values(tp_dtype dtype, int ndim, const int64_t *shape,
                                      const double *values) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &tensor), TP_OK);
    for (int64_t i = 0; i < tensor->numel; i++) {
        char *slot = (char *)tensor->data + i * (int64_t)tp_dtype_size(dtype);
        switch (dtype) {
        case TP_F32:
            *(float *)slot = (float)values[i];
            break;
        case TP_F64:
            *(double *)slot = values[i];
            break;
        case TP_I32:
            *(int32_t *)slot = (int32_t)values[i];
            break;
        case TP_I64:
            *(int64_t *)slot = (int64_t)values[i];
            break;
        default:
            *(uint8_t *)slot = values[i] != 0;
            break;
        }
    }
    return tp_ctx_adopt(ctx, tensor);
}

/* T(TP_F32, DIMS(2), 1, 2): a 1-D f32 tensor [1, 2]. The shape literal must
 * come from DIMS; its rank is given separately with TN. */
#define T(dtype, dims, ...)                                                                        \
    eager_values(dtype, (int)(sizeof(dims) / sizeof(int64_t)), dims, VALUES(__VA_ARGS__))
#define SCALAR(dtype, value) eager_values(dtype, 0, NULL, VALUES(value))

/* The op succeeded: non-NULL result and no stored error. */
static inline tp_tensor *eager_ok(tp_tensor *result) {
    ck_assert_msg(result != NULL && tp_ctx_status(ctx) == TP_OK, "op failed: %s",
                  tp_ctx_error(ctx));
    return result;
}

/* The op failed with `status`; the ctx's message contains every needle. */
static inline void eager_assert_error(tp_tensor *result, tp_status status, const char *needle,
                                      const char *needle2) {
    ck_assert_ptr_null(result);
    ck_assert_msg(tp_ctx_status(ctx) == status, "status %s, expected %s (%s)",
                  tp_status_name(tp_ctx_status(ctx)), tp_status_name(status), tp_ctx_error(ctx));
    ck_assert_msg(strstr(tp_ctx_error(ctx), needle), "message \"%s\" lacks \"%s\"",
                  tp_ctx_error(ctx), needle);
    if (needle2)
        ck_assert_msg(strstr(tp_ctx_error(ctx), needle2), "message \"%s\" lacks \"%s\"",
                      tp_ctx_error(ctx), needle2);
}

static inline TCase *eager_tcase(const char *name) {
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, eager_setup, eager_teardown);
    return tc;
}

#endif
