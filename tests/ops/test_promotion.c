/* The type promotion rules of tensor.h's header comment, checked on the op
 * table's dtype rules (infer) for every category of op and every dtype pair
 * where the rule says something. */
#include "kernel_harness.h"

static const tp_dtype all_dtypes[] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL};
enum { NUM_DTYPES = 5 };

/* promote(a, b) spelled out from the rules: category bool < integer <
 * floating; inside a category the wider; integer meets float: the float. */
static tp_dtype expected_promote(tp_dtype a, tp_dtype b) {
    static const int rank[TP_DTYPE_COUNT] = {
        [TP_BOOL] = 0, [TP_I32] = 1, [TP_I64] = 2, [TP_F32] = 3, [TP_F64] = 4};
    return rank[a] >= rank[b] ? a : b;
}

/* Result dtype of `id` on inputs of these dtypes (shape [2]); -1 if refused
 * with TP_ERR_DTYPE. */
static int result_dtype(tp_op_id id, int num_inputs, const tp_dtype *dtypes,
                        const tp_attrs *attrs) {
    tp_type types[3], out;
    for (int i = 0; i < num_inputs; i++) types[i] = harness_type(dtypes[i], 1, DIMS(2));
    tp_status status = harness_infer(id, types, num_inputs, attrs, &out);
    if (status == TP_ERR_DTYPE) return -1;
    ck_assert_msg(status == TP_OK, "%s: %s", tp_op_get(id)->name, tp_last_error());
    return (int)out.dtype;
}

static int binary(tp_op_id id, tp_dtype a, tp_dtype b) {
    return result_dtype(id, 2, (tp_dtype[]){a, b}, NULL);
}

START_TEST(promote_matches_the_written_rule) {
    for (int i = 0; i < NUM_DTYPES; i++)
        for (int j = 0; j < NUM_DTYPES; j++)
            ck_assert_str_eq(tp_dtype_name(tp_dtype_promote(all_dtypes[i], all_dtypes[j])),
                             tp_dtype_name(expected_promote(all_dtypes[i], all_dtypes[j])));
    ck_assert_int_eq(tp_dtype_promote(TP_I64, TP_F32), TP_F32); /* as in PyTorch */
}
END_TEST

START_TEST(arithmetic_computes_in_promote_and_rejects_bool_pairs) {
    const tp_op_id ops[] = {TP_OP_ADD, TP_OP_SUB, TP_OP_MUL, TP_OP_POW, TP_OP_MATMUL};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int i = 0; i < NUM_DTYPES; i++)
            for (int j = 0; j < NUM_DTYPES; j++) {
                tp_dtype a = all_dtypes[i], b = all_dtypes[j];
                int want = a == TP_BOOL && b == TP_BOOL ? -1 : (int)expected_promote(a, b);
                ck_assert_msg(binary(ops[k], a, b) == want, "%s(%s, %s)", tp_op_get(ops[k])->name,
                              tp_dtype_name(a), tp_dtype_name(b));
            }
}
END_TEST

START_TEST(maximum_and_minimum_accept_bools) {
    for (int i = 0; i < NUM_DTYPES; i++)
        for (int j = 0; j < NUM_DTYPES; j++) {
            tp_dtype a = all_dtypes[i], b = all_dtypes[j];
            ck_assert_int_eq(binary(TP_OP_MAXIMUM, a, b), expected_promote(a, b));
            ck_assert_int_eq(binary(TP_OP_MINIMUM, a, b), expected_promote(a, b));
        }
}
END_TEST

START_TEST(div_is_true_division) {
    for (int i = 0; i < NUM_DTYPES; i++)
        for (int j = 0; j < NUM_DTYPES; j++) {
            tp_dtype a = all_dtypes[i], b = all_dtypes[j], p = expected_promote(a, b);
            int want = p == TP_F32 || p == TP_F64 ? (int)p : (int)TP_F32;
            ck_assert_int_eq(binary(TP_OP_DIV, a, b), want);
        }
}
END_TEST

START_TEST(comparisons_and_logic_give_bool_for_every_pair) {
    const tp_op_id ops[] = {TP_OP_LT, TP_OP_LE, TP_OP_GT,          TP_OP_GE,
                            TP_OP_EQ, TP_OP_NE, TP_OP_LOGICAL_AND, TP_OP_LOGICAL_OR};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int i = 0; i < NUM_DTYPES; i++)
            for (int j = 0; j < NUM_DTYPES; j++)
                ck_assert_int_eq(binary(ops[k], all_dtypes[i], all_dtypes[j]), TP_BOOL);
}
END_TEST

START_TEST(where_takes_any_condition_and_promotes_the_branches) {
    for (int c = 0; c < NUM_DTYPES; c++)
        for (int i = 0; i < NUM_DTYPES; i++)
            for (int j = 0; j < NUM_DTYPES; j++) {
                tp_dtype dtypes[3] = {all_dtypes[c], all_dtypes[i], all_dtypes[j]};
                ck_assert_int_eq(result_dtype(TP_OP_WHERE, 3, dtypes, NULL),
                                 expected_promote(all_dtypes[i], all_dtypes[j]));
            }
}
END_TEST

START_TEST(unary_rules) {
    const tp_op_id float_only[] = {TP_OP_EXP, TP_OP_LOG,  TP_OP_SQRT,    TP_OP_RSQRT, TP_OP_SIN,
                                   TP_OP_COS, TP_OP_TANH, TP_OP_SIGMOID, TP_OP_ERF};
    const tp_op_id keep[] = {TP_OP_NEG, TP_OP_ABS, TP_OP_SIGN, TP_OP_RELU, TP_OP_FLOOR, TP_OP_CEIL};
    for (int i = 0; i < NUM_DTYPES; i++) {
        tp_dtype d = all_dtypes[i];
        bool is_float = d == TP_F32 || d == TP_F64;
        for (size_t k = 0; k < sizeof float_only / sizeof float_only[0]; k++)
            ck_assert_int_eq(result_dtype(float_only[k], 1, &d, NULL), is_float ? d : TP_F32);
        for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
            bool rejects_bool =
                keep[k] == TP_OP_NEG || keep[k] == TP_OP_ABS || keep[k] == TP_OP_SIGN;
            ck_assert_int_eq(result_dtype(keep[k], 1, &d, NULL),
                             d == TP_BOOL && rejects_bool ? -1 : (int)d);
        }
        ck_assert_int_eq(result_dtype(TP_OP_LOGICAL_NOT, 1, &d, NULL), TP_BOOL);
        for (int j = 0; j < NUM_DTYPES; j++) {
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.dtype = all_dtypes[j];
            ck_assert_int_eq(result_dtype(TP_OP_CAST, 1, &d, &attrs), all_dtypes[j]);
        }
    }
}
END_TEST

START_TEST(reduction_rules) {
    for (int i = 0; i < NUM_DTYPES; i++) {
        tp_dtype d = all_dtypes[i];
        bool is_float = d == TP_F32 || d == TP_F64;
        ck_assert_int_eq(result_dtype(TP_OP_SUM, 1, &d, NULL), is_float ? d : TP_I64);
        ck_assert_int_eq(result_dtype(TP_OP_MEAN, 1, &d, NULL), is_float ? d : TP_F32);
        ck_assert_int_eq(result_dtype(TP_OP_MAX, 1, &d, NULL), d);
        ck_assert_int_eq(result_dtype(TP_OP_MIN, 1, &d, NULL), d);
        ck_assert_int_eq(result_dtype(TP_OP_ARGMAX, 1, &d, NULL), TP_I64);
    }
}
END_TEST

TP_TEST_SUITE(promotion) {
    Suite *suite = suite_create("ops.promotion");
    TCase *tc = tcase_create("promotion");
    tcase_add_test(tc, promote_matches_the_written_rule);
    tcase_add_test(tc, arithmetic_computes_in_promote_and_rejects_bool_pairs);
    tcase_add_test(tc, maximum_and_minimum_accept_bools);
    tcase_add_test(tc, div_is_true_division);
    tcase_add_test(tc, comparisons_and_logic_give_bool_for_every_pair);
    tcase_add_test(tc, where_takes_any_condition_and_promotes_the_branches);
    tcase_add_test(tc, unary_rules);
    tcase_add_test(tc, reduction_rules);
    suite_add_tcase(suite, tc);
    return suite;
}
