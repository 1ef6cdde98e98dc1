/* tp_tensor: creation, lifecycle, reference counts, accessors, versions and
 * in-place writes. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "tensor/tensor_internal.h"
#include "tp_test.h"

static tp_tensor *make(tp_dtype dtype, int ndim, const int64_t *shape) {
    tp_tensor *tensor = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &tensor), TP_OK);
    ck_assert_ptr_nonnull(tensor);
    return tensor;
}

START_TEST(create_reports_dtype_shape_and_sizes) {
    int64_t shape[] = {2, 3, 4};
    tp_tensor *t = make(TP_F64, 3, shape);
    ck_assert_int_eq(tp_tensor_dtype(t), TP_F64);
    ck_assert_int_eq(tp_tensor_ndim(t), 3);
    ck_assert_int_eq(tp_tensor_numel(t), 24);
    ck_assert_uint_eq(tp_tensor_nbytes(t), 24 * 8);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(tp_tensor_shape(t)[i], shape[i]);
    ck_assert_str_eq(tp_tensor_device(t), "cpu");
    tp_tensor_release(t);
}
END_TEST

START_TEST(create_zero_fills_every_dtype) {
    int64_t shape[] = {5, 7};
    for (int d = 0; d < TP_DTYPE_COUNT; d++) {
        tp_tensor *t = make((tp_dtype)d, 2, shape);
        const unsigned char *bytes = tp_tensor_data(t);
        for (size_t i = 0; i < tp_tensor_nbytes(t); i++) ck_assert_uint_eq(bytes[i], 0);
        tp_tensor_release(t);
    }
}
END_TEST

START_TEST(storage_is_64_byte_aligned) {
    for (int64_t n = 0; n < 70; n += 7) {
        tp_tensor *t = make(TP_BOOL, 1, &n);
        ck_assert_uint_eq((uintptr_t)tp_tensor_data(t) % TP_TENSOR_ALIGNMENT, 0);
        tp_tensor_release(t);
    }
}
END_TEST

START_TEST(large_storage_is_2_mib_aligned) {
    int64_t n = 1 << 20; /* 4 MiB of f32 */
    tp_tensor *t = make(TP_F32, 1, &n);
    ck_assert_uint_eq((uintptr_t)tp_tensor_data(t) % ((uintptr_t)2 << 20), 0);
    tp_tensor_release(t);
}
END_TEST

START_TEST(scalar_has_one_element_and_no_dims) {
    tp_tensor *t = make(TP_I32, 0, NULL);
    ck_assert_int_eq(tp_tensor_ndim(t), 0);
    ck_assert_int_eq(tp_tensor_numel(t), 1);
    ck_assert_uint_eq(tp_tensor_nbytes(t), 4);
    ck_assert_int_eq(tp_tensor_dim(t, 0), -1);
    char text[32];
    ck_assert_str_eq(tp_tensor_describe(t, text, sizeof text), "i32[]");
    tp_tensor_release(t);
}
END_TEST

START_TEST(size_zero_dimension_gives_empty_tensor) {
    int64_t shape[] = {3, 0, 5};
    tp_tensor *t = make(TP_F32, 3, shape);
    ck_assert_int_eq(tp_tensor_numel(t), 0);
    ck_assert_uint_eq(tp_tensor_nbytes(t), 0);
    ck_assert_ptr_nonnull(tp_tensor_data(t));
    ck_assert_int_eq(tp_tensor_dim(t, 1), 0);
    ck_assert_int_eq(tp_tensor_fill(t, 1.0), TP_OK);
    tp_tensor_release(t);
}
END_TEST

START_TEST(size_zero_dimension_does_not_hide_overflow_of_the_others) {
    /* Checked the same wherever the 0 sits. */
    int64_t first[] = {0, INT64_MAX / 2, 4}, last[] = {INT64_MAX / 2, 4, 0};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 3, first, &t), TP_ERR_SHAPE);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 3, last, &t), TP_ERR_SHAPE);
    ck_assert_ptr_null(t);
}
END_TEST

START_TEST(eight_dims_is_the_limit) {
    int64_t shape[9] = {1, 2, 1, 2, 1, 2, 1, 2, 1};
    tp_tensor *t = make(TP_I64, 8, shape);
    ck_assert_int_eq(tp_tensor_numel(t), 16);
    tp_tensor_release(t);
    t = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_I64, 9, shape, &t), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "ndim 9"));
    ck_assert_int_eq(tp_tensor_create(TP_I64, -1, shape, &t), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "ndim -1"));
}
END_TEST

START_TEST(negative_dimension_is_rejected_naming_the_shape) {
    int64_t shape[] = {2, -3};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, shape, &t), TP_ERR_SHAPE);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "f32[2, -3]"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "dimension 1"));
}
END_TEST

START_TEST(overflowing_size_is_rejected_naming_the_shape) {
    int64_t shape[] = {1LL << 32, 1LL << 30}; /* 2^62 elements: fits int64, not the bytes */
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F64, 2, shape, &t), TP_ERR_SHAPE);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "f64[4294967296, 1073741824]"));
}
END_TEST

START_TEST(invalid_dtype_and_null_arguments_are_rejected) {
    int64_t n = 2;
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_DTYPE_COUNT, 1, &n, &t), TP_ERR_DTYPE);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, NULL, &t), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 1, &n, NULL), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, &n, NULL, &t), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(tp_tensor_clone(NULL, &t), TP_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(create_uninit_has_shape_and_aligned_storage) {
    int64_t shape[] = {3, 3};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create_uninit(TP_F32, 2, shape, &t), TP_OK);
    ck_assert_int_eq(tp_tensor_numel(t), 9);
    ck_assert_uint_eq((uintptr_t)t->data % TP_TENSOR_ALIGNMENT, 0);
    ck_assert_int_eq(tp_tensor_version(t), 0);
    tp_tensor_release(t);
}
END_TEST

START_TEST(from_data_copies_the_caller_buffer) {
    int32_t values[] = {1, -2, 3, -4, 5, -6};
    int64_t shape[] = {3, 2};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_I32, 2, shape, values, &t), TP_OK);
    values[0] = 100;
    ck_assert_ptr_ne(tp_tensor_data(t), values);
    ck_assert_double_eq(tp_tensor_get_f64(t, 0), 1);
    ck_assert_double_eq(tp_tensor_get_f64(t, 5), -6);
    tp_tensor_release(t);
}
END_TEST

START_TEST(clone_copies_contents_and_resets_version) {
    double values[] = {0.5, 1.5, 2.5};
    int64_t n = 3;
    tp_tensor *t = NULL, *copy = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F64, 1, &n, values, &t), TP_OK);
    tp_tensor_bump_version(t);
    ck_assert_int_eq(tp_tensor_clone(t, &copy), TP_OK);
    ck_assert_ptr_ne(tp_tensor_data(copy), tp_tensor_data(t));
    ck_assert_int_eq(tp_tensor_version(copy), 0);
    ck_assert_int_eq(tp_tensor_dtype(copy), TP_F64);
    ck_assert_int_eq(tp_tensor_dim(copy, 0), 3);
    ck_assert_mem_eq(tp_tensor_data(copy), values, sizeof values);
    tp_tensor_release(t);
    ck_assert_double_eq(tp_tensor_get_f64(copy, 2), 2.5);
    tp_tensor_release(copy);
}
END_TEST

START_TEST(retain_and_release_count_references) {
    int64_t n = 4;
    tp_tensor *t = make(TP_F32, 1, &n);
    ck_assert_ptr_eq(tp_tensor_retain(t), t);
    ck_assert_ptr_eq(tp_tensor_retain(t), t);
    ck_assert_int_eq(atomic_load(&t->refcount), 3);
    tp_tensor_release(t);
    tp_tensor_release(t);
    ck_assert_int_eq(atomic_load(&t->refcount), 1);
    tp_tensor_release(t); /* frees; the sanitizer build checks nothing leaks */
    ck_assert_ptr_null(tp_tensor_retain(NULL));
    tp_tensor_release(NULL);
}
END_TEST

enum { THREADS = 4, ROUNDS = 20000 };

static void *retain_release_and_bump(void *argument) {
    tp_tensor *t = argument;
    for (int i = 0; i < ROUNDS; i++) {
        tp_tensor_retain(t);
        tp_tensor_bump_version(t);
        tp_tensor_release(t);
    }
    return NULL;
}

START_TEST(refcount_and_version_are_exact_under_concurrent_use) {
    int64_t n = 8;
    tp_tensor *t = make(TP_F32, 1, &n);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, retain_release_and_bump, t), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    ck_assert_int_eq(atomic_load(&t->refcount), 1);
    ck_assert_int_eq(tp_tensor_version(t), THREADS * ROUNDS);
    tp_tensor_release(t);
}
END_TEST

START_TEST(dim_accepts_negative_axes) {
    int64_t shape[] = {2, 3, 5};
    tp_tensor *t = make(TP_F32, 3, shape);
    ck_assert_int_eq(tp_tensor_dim(t, 0), 2);
    ck_assert_int_eq(tp_tensor_dim(t, 2), 5);
    ck_assert_int_eq(tp_tensor_dim(t, -1), 5);
    ck_assert_int_eq(tp_tensor_dim(t, -3), 2);
    ck_assert_int_eq(tp_tensor_dim(t, 3), -1);
    ck_assert_int_eq(tp_tensor_dim(t, -4), -1);
    tp_tensor_release(t);
}
END_TEST

START_TEST(describe_formats_dtype_and_shape) {
    int64_t shape[] = {2, 3};
    tp_tensor *t = make(TP_F32, 2, shape);
    char text[64];
    ck_assert_str_eq(tp_tensor_describe(t, text, sizeof text), "f32[2, 3]");
    tp_tensor_release(t);
    int64_t one = 7;
    t = make(TP_BOOL, 1, &one);
    ck_assert_str_eq(tp_tensor_describe(t, text, sizeof text), "bool[7]");
    tp_tensor_release(t);
}
END_TEST

START_TEST(describe_always_terminates_a_short_buffer) {
    int64_t shape[] = {1000000, 0, 3000000};
    tp_tensor *t = make(TP_I64, 3, shape);
    char text[8];
    memset(text, 'x', sizeof text);
    tp_tensor_describe(t, text, sizeof text);
    ck_assert_uint_lt(strlen(text), sizeof text);
    tp_tensor_release(t);
}
END_TEST

START_TEST(new_tensor_has_version_zero) {
    int64_t n = 1;
    tp_tensor *t = make(TP_F32, 1, &n);
    ck_assert_int_eq(tp_tensor_version(t), 0);
    tp_tensor_data(t); /* reading does not count */
    ck_assert_int_eq(tp_tensor_version(t), 0);
    tp_tensor_release(t);
}
END_TEST

START_TEST(data_mut_bumps_version) {
    int64_t n = 2;
    tp_tensor *t = make(TP_F32, 1, &n);
    float *p = tp_tensor_data_mut(t);
    ck_assert_ptr_eq(p, tp_tensor_data(t));
    ck_assert_int_eq(tp_tensor_version(t), 1);
    tp_tensor_data_mut(t);
    ck_assert_int_eq(tp_tensor_version(t), 2);
    tp_tensor_release(t);
}
END_TEST

START_TEST(bump_version_bumps_version) {
    int64_t n = 2;
    tp_tensor *t = make(TP_F32, 1, &n);
    tp_tensor_bump_version(t);
    ck_assert_int_eq(tp_tensor_version(t), 1);
    tp_tensor_release(t);
}
END_TEST

START_TEST(copy_from_overwrites_and_bumps_version) {
    int64_t shape[] = {2, 2};
    tp_tensor *t = make(TP_I64, 2, shape);
    int64_t values[] = {9, 8, 7, 6};
    ck_assert_int_eq(tp_tensor_copy_from(t, values, sizeof values), TP_OK);
    ck_assert_mem_eq(tp_tensor_data(t), values, sizeof values);
    ck_assert_int_eq(tp_tensor_version(t), 1);
    tp_tensor_release(t);
}
END_TEST

START_TEST(copy_from_wrong_size_names_both_sizes_and_keeps_version) {
    int64_t shape[] = {2, 3};
    tp_tensor *t = make(TP_F32, 2, shape);
    float values[5] = {0};
    ck_assert_int_eq(tp_tensor_copy_from(t, values, sizeof values), TP_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "24"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "20"));
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "f32[2, 3]"));
    ck_assert_int_eq(tp_tensor_version(t), 0);
    tp_tensor_release(t);
}
END_TEST

START_TEST(fill_sets_every_element_and_bumps_version) {
    int64_t shape[] = {3, 4};
    for (int d = 0; d < TP_DTYPE_COUNT; d++) {
        tp_tensor *t = make((tp_dtype)d, 2, shape);
        ck_assert_int_eq(tp_tensor_fill(t, 3.0), TP_OK);
        ck_assert_int_eq(tp_tensor_version(t), 1);
        double expected = d == TP_BOOL ? 1.0 : 3.0;
        for (int64_t i = 0; i < 12; i++) ck_assert_double_eq(tp_tensor_get_f64(t, i), expected);
        tp_tensor_release(t);
    }
}
END_TEST

START_TEST(fill_converts_like_a_c_cast) {
    int64_t n = 1;
    tp_tensor *i32 = make(TP_I32, 1, &n), *f32 = make(TP_F32, 1, &n), *b = make(TP_BOOL, 1, &n);
    ck_assert_int_eq(tp_tensor_fill(i32, -2.75), TP_OK);
    ck_assert_int_eq(((const int32_t *)tp_tensor_data(i32))[0], -2);
    ck_assert_int_eq(tp_tensor_fill(f32, 0.1), TP_OK);
    ck_assert_float_eq(((const float *)tp_tensor_data(f32))[0], 0.1f);
    ck_assert_int_eq(tp_tensor_fill(b, 0.0), TP_OK);
    ck_assert_uint_eq(((const uint8_t *)tp_tensor_data(b))[0], 0);
    ck_assert_int_eq(tp_tensor_fill(b, -0.5), TP_OK);
    ck_assert_uint_eq(((const uint8_t *)tp_tensor_data(b))[0], 1);
    tp_tensor_release(i32);
    tp_tensor_release(f32);
    tp_tensor_release(b);
}
END_TEST

START_TEST(fill_rejects_values_an_integer_dtype_cannot_hold) {
    int64_t n = 1;
    tp_tensor *i32 = make(TP_I32, 1, &n), *i64 = make(TP_I64, 1, &n);
    ck_assert_int_eq(tp_tensor_fill(i32, 3e9), TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "i32[1]"));
    ck_assert_int_eq(tp_tensor_fill(i32, NAN), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_tensor_fill(i64, INFINITY), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_tensor_fill(i64, 9223372036854775808.0), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_tensor_version(i32), 0);
    ck_assert_int_eq(tp_tensor_fill(i64, -9223372036854775808.0), TP_OK);
    ck_assert(((const int64_t *)tp_tensor_data(i64))[0] == INT64_MIN);
    ck_assert_int_eq(tp_tensor_fill(i32, -2147483648.0), TP_OK);
    ck_assert_int_eq(((const int32_t *)tp_tensor_data(i32))[0], INT32_MIN);
    tp_tensor_release(i32);
    tp_tensor_release(i64);
}
END_TEST

START_TEST(get_f64_reads_every_dtype_and_nan_out_of_range) {
    int64_t n = 2;
    float f[] = {1.5f, -2.0f};
    int64_t big[] = {INT64_C(1) << 40, -7};
    uint8_t b[] = {0, 1};
    tp_tensor *tf = NULL, *ti = NULL, *tb = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, &n, f, &tf), TP_OK);
    ck_assert_int_eq(tp_tensor_from_data(TP_I64, 1, &n, big, &ti), TP_OK);
    ck_assert_int_eq(tp_tensor_from_data(TP_BOOL, 1, &n, b, &tb), TP_OK);
    ck_assert_double_eq(tp_tensor_get_f64(tf, 0), 1.5);
    ck_assert_double_eq(tp_tensor_get_f64(ti, 0), 1099511627776.0);
    ck_assert_double_eq(tp_tensor_get_f64(ti, 1), -7.0);
    ck_assert_double_eq(tp_tensor_get_f64(tb, 1), 1.0);
    ck_assert(isnan(tp_tensor_get_f64(tf, 2)));
    ck_assert(isnan(tp_tensor_get_f64(tf, -1)));
    tp_tensor_release(tf);
    tp_tensor_release(ti);
    tp_tensor_release(tb);
}
END_TEST

TP_TEST_SUITE(tensor) {
    Suite *suite = suite_create("tensor.tensor");
    TCase *create = tcase_create("create");
    tcase_add_test(create, create_reports_dtype_shape_and_sizes);
    tcase_add_test(create, create_zero_fills_every_dtype);
    tcase_add_test(create, storage_is_64_byte_aligned);
    tcase_add_test(create, large_storage_is_2_mib_aligned);
    tcase_add_test(create, scalar_has_one_element_and_no_dims);
    tcase_add_test(create, size_zero_dimension_gives_empty_tensor);
    tcase_add_test(create, size_zero_dimension_does_not_hide_overflow_of_the_others);
    tcase_add_test(create, eight_dims_is_the_limit);
    tcase_add_test(create, negative_dimension_is_rejected_naming_the_shape);
    tcase_add_test(create, overflowing_size_is_rejected_naming_the_shape);
    tcase_add_test(create, invalid_dtype_and_null_arguments_are_rejected);
    tcase_add_test(create, create_uninit_has_shape_and_aligned_storage);
    tcase_add_test(create, from_data_copies_the_caller_buffer);
    tcase_add_test(create, clone_copies_contents_and_resets_version);
    suite_add_tcase(suite, create);
    TCase *access = tcase_create("access");
    tcase_add_test(access, retain_and_release_count_references);
    tcase_add_test(access, refcount_and_version_are_exact_under_concurrent_use);
    tcase_add_test(access, dim_accepts_negative_axes);
    tcase_add_test(access, describe_formats_dtype_and_shape);
    tcase_add_test(access, describe_always_terminates_a_short_buffer);
    tcase_add_test(access, get_f64_reads_every_dtype_and_nan_out_of_range);
    suite_add_tcase(suite, access);
    TCase *writes = tcase_create("writes");
    tcase_add_test(writes, new_tensor_has_version_zero);
    tcase_add_test(writes, data_mut_bumps_version);
    tcase_add_test(writes, bump_version_bumps_version);
    tcase_add_test(writes, copy_from_overwrites_and_bumps_version);
    tcase_add_test(writes, copy_from_wrong_size_names_both_sizes_and_keeps_version);
    tcase_add_test(writes, fill_sets_every_element_and_bumps_version);
    tcase_add_test(writes, fill_converts_like_a_c_cast);
    tcase_add_test(writes, fill_rejects_values_an_integer_dtype_cannot_hold);
    suite_add_tcase(suite, writes);
    return suite;
}
