/* Test helpers for the shape, creation and composite suites: build small
 * tensors, run one op's shape rule and reference kernel straight from the op
 * table, and compare results element by element. Header-only (static
 * functions) so each test file of tests/ops can include it. */
#ifndef TP_TESTS_OPS_KERNEL_HARNESS_H
#define TP_TESTS_OPS_KERNEL_HARNESS_H

#include <math.h>
#include <string.h>

#include "ops/element.h"
#include "ops/op_table.h"
#include "tensor/tensor_internal.h"
#include "tp_test.h"

/* Shape literal and its rank: DIMS(2, 3), RANK(2, 3). */
#define DIMS(...)  ((const int64_t[]){__VA_ARGS__})
#define RANK(...)  ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define SHAPE(...) RANK(__VA_ARGS__), DIMS(__VA_ARGS__)

static inline tp_tensor *harness_tensor(tp_dtype dtype, int ndim, const int64_t *shape,
                                        const void *values) {
    tp_tensor *tensor = NULL;
    ck_assert_msg(tp_tensor_from_data(dtype, ndim, shape, values, &tensor) == TP_OK, "%s",
                  tp_last_error());
    return tensor;
}

/* A zero tensor whose element i is then set to value(i, user). */
static inline tp_tensor *harness_generate(tp_dtype dtype, int ndim, const int64_t *shape,
                                          double (*value)(int64_t index, void *user), void *user) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &tensor), TP_OK);
    for (int64_t i = 0; i < tensor->numel; i++)
        tp_element_store_f64(tensor->data, dtype, i, value(i, user));
    return tensor;
}

static inline double harness_index_value(int64_t index, void *user) {
    return *(tp_dtype *)user == TP_BOOL ? (double)(index % 2) : (double)index;
}

/* A tensor whose element i is i (bool: i % 2). */
static inline tp_tensor *harness_iota(tp_dtype dtype, int ndim, const int64_t *shape) {
    return harness_generate(dtype, ndim, shape, harness_index_value, &dtype);
}

/* Attributes with `shape` set (reshape, expand, full). */
static inline tp_attrs harness_shape_attrs(int ndim, const int64_t *shape) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = ndim;
    for (int i = 0; i < ndim; i++) attrs.shape[i] = shape[i];
    return attrs;
}

static inline tp_type harness_type(tp_dtype dtype, int ndim, const int64_t *dims) {
    tp_type type = {.dtype = dtype, .ndim = ndim};
    for (int i = 0; i < ndim; i++) type.dims[i] = dims[i];
    return type;
}

static inline tp_type harness_type_of(const tp_tensor *tensor) {
    return harness_type(tensor->dtype, tensor->ndim, tensor->shape);
}

/* Runs op `id`'s rule and kernel; *out gets a new tensor on success. */
static inline tp_status harness_run(tp_op_id id, tp_tensor *const *inputs, int num_inputs,
                                    const tp_attrs *attrs, tp_tensor **out) {
    const tp_op_def *op = tp_op_get(id);
    tp_type types[64] = {{0}}, type;
    for (int i = 0; i < num_inputs; i++) types[i] = harness_type_of(inputs[i]);
    *out = NULL;
    tp_status status = tp_op_infer(op, types, num_inputs, attrs, &type);
    if (status != TP_OK) return status;
    ck_assert_msg(op->kernel != NULL, "%s has no kernel", op->name);
    status = tp_tensor_create(type.dtype, type.ndim, type.dims, out);
    if (status != TP_OK) return status;
    static const tp_attrs defaults = TP_ATTRS_INIT;
    status = op->kernel(inputs, num_inputs, attrs ? attrs : &defaults, *out);
    if (status != TP_OK) {
        tp_tensor_release(*out);
        *out = NULL;
    }
    return status;
}

/* Like harness_run but the run must succeed. */
static inline tp_tensor *harness_run_ok(tp_op_id id, tp_tensor *const *inputs, int num_inputs,
                                        const tp_attrs *attrs) {
    tp_tensor *out = NULL;
    tp_status status = harness_run(id, inputs, num_inputs, attrs, &out);
    ck_assert_msg(status == TP_OK, "%s failed: %s", tp_op_get(id)->name, tp_last_error());
    return out;
}

/* The rule alone on types. */
static inline tp_status harness_infer(tp_op_id id, const tp_type *inputs, int num_inputs,
                                      const tp_attrs *attrs, tp_type *out) {
    return tp_op_infer(tp_op_get(id), inputs, num_inputs, attrs, out);
}

/* The run (or rule) failed with `status` and a message containing `needle`. */
static inline void harness_assert_error(tp_status got, tp_status expected, const char *needle) {
    ck_assert_msg(got == expected, "status %s, expected %s (%s)", tp_status_name(got),
                  tp_status_name(expected), tp_last_error());
    ck_assert_msg(strstr(tp_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"",
                  tp_last_error(), needle);
}

static inline void harness_assert_shape(const tp_tensor *tensor, tp_dtype dtype, int ndim,
                                        const int64_t *shape) {
    ck_assert_str_eq(tp_dtype_name(tensor->dtype), tp_dtype_name(dtype));
    ck_assert_int_eq(tensor->ndim, ndim);
    for (int i = 0; i < ndim; i++) ck_assert_int_eq(tensor->shape[i], shape[i]);
}

static inline void harness_assert_type(const tp_type *type, tp_dtype dtype, int ndim,
                                       const int64_t *dims) {
    ck_assert_str_eq(tp_dtype_name(type->dtype), tp_dtype_name(dtype));
    ck_assert_int_eq(type->ndim, ndim);
    for (int i = 0; i < ndim; i++) ck_assert_int_eq(type->dims[i], dims[i]);
}

/* Every element equals expected[i] (given as doubles) within `tolerance`
 * (absolute + relative); 0 asks for exact equality. */
static inline void harness_assert_values(const tp_tensor *tensor, const double *expected,
                                         int64_t count, double tolerance) {
    ck_assert_int_eq(tensor->numel, count);
    for (int64_t i = 0; i < count; i++) {
        double got = tp_tensor_get_f64(tensor, i);
        bool same = tolerance == 0 ? got == expected[i]
                                   : fabs(got - expected[i]) <= tolerance * (1 + fabs(expected[i]));
        ck_assert_msg(same || (isnan(got) && isnan(expected[i])),
                      "element %lld: %.17g, expected %.17g", (long long)i, got, expected[i]);
    }
}

#define VALUES(...) ((const double[]){__VA_ARGS__})
#define COUNT(...)  ((int64_t)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)))
/* ASSERT_VALUES(tensor, tolerance, 1, 2, 3) */
#define ASSERT_VALUES(tensor, tolerance, ...)                                                      \
    harness_assert_values(tensor, VALUES(__VA_ARGS__), COUNT(__VA_ARGS__), tolerance)

#endif
