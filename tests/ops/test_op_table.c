/* The op table itself: every op has its shape/dtype rule and reference
 * kernel, every composite its decomposition (a missing function links as
 * NULL, see op_table.c), names are unique and found by name. */
#include <stdio.h>

#include "kernel_harness.h"

START_TEST(every_op_has_infer_and_kernel_and_composites_decompose) {
    char missing[2048] = "";
    size_t used = 0;
    for (int i = 0; i < TP_OP_COUNT; i++) {
        const tp_op_def *op = &tp_op_table[i];
        const char *lacks[3] = {op->infer ? NULL : "infer", op->kernel ? NULL : "kernel",
                                op->kind == TP_KIND_COMPOSITE && !op->decompose ? "decompose"
                                                                                : NULL};
        for (int k = 0; k < 3; k++)
            if (lacks[k] && used < sizeof missing)
                used += (size_t)snprintf(missing + used, sizeof missing - used, " %s.%s", op->name,
                                         lacks[k]);
    }
    ck_assert_msg(missing[0] == '\0', "missing op functions:%s", missing);
}
END_TEST

START_TEST(only_composites_have_a_decomposition) {
    for (int i = 0; i < TP_OP_COUNT; i++)
        if (tp_op_table[i].kind != TP_KIND_COMPOSITE)
            ck_assert_msg(tp_op_table[i].decompose == NULL, "%s is not a composite",
                          tp_op_table[i].name);
}
END_TEST

START_TEST(names_are_unique_and_found) {
    for (int i = 0; i < TP_OP_COUNT; i++) {
        ck_assert_int_eq(tp_op_table[i].id, i);
        ck_assert_ptr_eq(tp_op_find(tp_op_table[i].name), &tp_op_table[i]);
    }
    ck_assert_ptr_null(tp_op_find("no_such_op"));
    ck_assert_ptr_null(tp_op_find(NULL));
}
END_TEST

START_TEST(arities_are_consistent_with_kinds) {
    for (int i = 0; i < TP_OP_COUNT; i++) {
        const tp_op_def *op = &tp_op_table[i];
        ck_assert_int_le(op->min_arity, op->max_arity);
        if (op->kind == TP_KIND_CREATION) ck_assert_int_eq(op->max_arity, 0);
        if (op->kind == TP_KIND_REDUCTION) ck_assert_int_eq(op->max_arity, 1);
    }
}
END_TEST

TP_TEST_SUITE(op_table) {
    Suite *suite = suite_create("ops.table");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, every_op_has_infer_and_kernel_and_composites_decompose);
    tcase_add_test(tc, only_composites_have_a_decomposition);
    tcase_add_test(tc, names_are_unique_and_found);
    tcase_add_test(tc, arities_are_consistent_with_kinds);
    suite_add_tcase(suite, tc);
    return suite;
}
