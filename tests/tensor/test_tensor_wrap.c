/* tp_tensor_wrap: tensors over caller memory share it without a copy and
 * hand it back exactly once, when the last reference goes. */
#include <stdint.h>
#include <string.h>

#include "tensorplay/ops.h"
#include "tp_test.h"

static int release_calls;
static void *released_data;

static void count_release(void *release_data) {
    release_calls++;
    released_data = release_data;
}

START_TEST(wrap_shares_the_caller_memory) {
    float storage[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[] = {2, 3};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_wrap(TP_F32, 2, shape, storage, NULL, NULL, &t), TP_OK);
    ck_assert_ptr_eq(tp_tensor_data(t), storage);
    ck_assert_int_eq(tp_tensor_numel(t), 6);
    ck_assert_int_eq(tp_tensor_dim(t, 1), 3);
    storage[4] = 50;
    ck_assert_double_eq(tp_tensor_get_f64(t, 4), 50.0);
    tp_tensor_release(t);
    ck_assert_float_eq(storage[0], 1.0f); /* not freed, not touched */
}
END_TEST

START_TEST(release_runs_once_when_the_last_reference_goes) {
    release_calls = 0;
    int64_t storage[4] = {0};
    int64_t shape[] = {4};
    int token = 7;
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_wrap(TP_I64, 1, shape, storage, count_release, &token, &t), TP_OK);
    tp_tensor_retain(t);
    tp_tensor_release(t);
    ck_assert_int_eq(release_calls, 0);
    tp_tensor_release(t);
    ck_assert_int_eq(release_calls, 1);
    ck_assert_ptr_eq(released_data, &token);
}
END_TEST

START_TEST(wrapped_tensor_feeds_eager_ops) {
    double a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    int64_t shape[] = {3};
    tp_tensor *ta = NULL, *tb = NULL;
    ck_assert_int_eq(tp_tensor_wrap(TP_F64, 1, shape, a, NULL, NULL, &ta), TP_OK);
    ck_assert_int_eq(tp_tensor_wrap(TP_F64, 1, shape, b, NULL, NULL, &tb), TP_OK);
    tp_ctx *ctx = tp_ctx_create();
    tp_tensor *sum = tp_add(ctx, ta, tb);
    ck_assert_ptr_nonnull(sum);
    ck_assert_double_eq(tp_tensor_get_f64(sum, 2), 33.0);
    tp_ctx_destroy(ctx);
    tp_tensor_release(ta);
    tp_tensor_release(tb);
}
END_TEST

START_TEST(misaligned_or_missing_data_is_rejected) {
    _Alignas(8) unsigned char bytes[16] = {0};
    int64_t shape[] = {2};
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_wrap(TP_F32, 1, shape, bytes + 1, NULL, NULL, &t),
                     TP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "not aligned to the f32 element size"));
    ck_assert_int_eq(tp_tensor_wrap(TP_F32, 1, shape, NULL, NULL, NULL, &t),
                     TP_ERR_INVALID_ARGUMENT);
    int64_t empty[] = {0};
    ck_assert_int_eq(tp_tensor_wrap(TP_F32, 1, empty, NULL, NULL, NULL, &t), TP_OK);
    ck_assert_int_eq(tp_tensor_numel(t), 0);
    tp_tensor_release(t);
}
END_TEST

TP_TEST_SUITE(tensor_wrap) {
    Suite *suite = suite_create("tensor.wrap");
    TCase *wrap = tcase_create("wrap");
    tcase_add_test(wrap, wrap_shares_the_caller_memory);
    tcase_add_test(wrap, release_runs_once_when_the_last_reference_goes);
    tcase_add_test(wrap, wrapped_tensor_feeds_eager_ops);
    tcase_add_test(wrap, misaligned_or_missing_data_is_rejected);
    suite_add_tcase(suite, wrap);
    return suite;
}
