/* tp_op_count / tp_op_describe: the public view of the op table agrees with
 * the generated plugin op list (ids, names, kinds, arities) and with the
 * attributes each op is documented to read in attrs.h. */
#include <stdio.h>
#include <string.h>

#include "tensorplay/ops.h"
#include "tensorplay/plugin_ops.h"
#include "tp_test.h"

START_TEST(count_matches_the_plugin_op_list) {
    ck_assert_int_eq(tp_op_count(), TP_PLUGIN_OP_COUNT);
}
END_TEST

#define CHECK_ONE(ID, NAME, KIND, MIN, MAX)                                                        \
    do {                                                                                           \
        tp_op_info info = TP_OP_INFO_INIT;                                                         \
        ck_assert_int_eq(tp_op_describe(TP_PLUGIN_OP_##ID, &info), TP_OK);                         \
        ck_assert_str_eq(info.name, NAME);                                                         \
        ck_assert_int_eq(info.min_arity, MIN);                                                     \
        ck_assert_int_eq(info.max_arity, MAX);                                                     \
        char kind[32];                                                                             \
        snprintf(kind, sizeof kind, "%s", #KIND);                                                  \
        for (char *c = kind; *c; c++) *c = (char)(*c - 'A' + 'a');                                 \
        ck_assert_str_eq(info.kind, kind);                                                         \
    } while (0);

START_TEST(every_op_has_the_id_name_kind_and_arity_of_the_plugin_list){
    TP_PLUGIN_OP_LIST(CHECK_ONE)} END_TEST

    START_TEST(attribute_masks_name_what_attrs_h_documents) {
    tp_op_info info = TP_OP_INFO_INIT;
    ck_assert_int_eq(tp_op_describe(TP_PLUGIN_OP_ADD, &info), TP_OK);
    ck_assert_uint_eq(info.attr_mask, 0);
    ck_assert_int_eq(tp_op_describe(TP_PLUGIN_OP_TRANSPOSE, &info), TP_OK);
    ck_assert_uint_eq(info.attr_mask, TP_ATTR_BIT(TP_ATTR_DIM0) | TP_ATTR_BIT(TP_ATTR_DIM1));
    ck_assert_int_eq(tp_op_describe(TP_PLUGIN_OP_SUM, &info), TP_OK);
    ck_assert_uint_eq(info.attr_mask, TP_ATTR_BIT(TP_ATTR_AXES) | TP_ATTR_BIT(TP_ATTR_KEEPDIM));
    ck_assert_int_eq(tp_op_describe(TP_PLUGIN_OP_SOFTPLUS, &info), TP_OK);
    ck_assert_uint_eq(info.attr_mask, TP_ATTR_BIT(TP_ATTR_BETA) | TP_ATTR_BIT(TP_ATTR_THRESHOLD));
    ck_assert(info.attr_mask_all == info.attr_mask);
}
END_TEST

START_TEST(keys_past_the_32nd_are_in_attr_mask_all_only) {
    tp_op_info info = TP_OP_INFO_INIT;
    ck_assert_int_eq(tp_op_describe(TP_PLUGIN_OP_RESIZE, &info), TP_OK);
    uint64_t expected = TP_ATTR_BIT(TP_ATTR_SHAPE) | TP_ATTR_BIT(TP_ATTR_MODE) |
                        TP_ATTR_BIT(TP_ATTR_COORDINATES) | TP_ATTR_BIT(TP_ATTR_ROUNDING) |
                        TP_ATTR_BIT(TP_ATTR_SCALE_H) | TP_ATTR_BIT(TP_ATTR_SCALE_W);
    ck_assert(info.attr_mask_all == expected);
    ck_assert_uint_eq(info.attr_mask, (uint32_t)expected);
}
END_TEST

START_TEST(out_of_range_ids_and_small_structs_are_rejected) {
    tp_op_info info = TP_OP_INFO_INIT;
    ck_assert_int_eq(tp_op_describe(-1, &info), TP_ERR_NOT_FOUND);
    ck_assert_int_eq(tp_op_describe(tp_op_count(), &info), TP_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "no op"));
    tp_op_info small = {.struct_size = 4};
    ck_assert_int_eq(tp_op_describe(0, &small), TP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(tp_op_describe(0, NULL), TP_ERR_INVALID_ARGUMENT);
}
END_TEST

TP_TEST_SUITE(op_info) {
    Suite *suite = suite_create("ops.op_info");
    TCase *table = tcase_create("table");
    tcase_add_test(table, keys_past_the_32nd_are_in_attr_mask_all_only);
    tcase_add_test(table, count_matches_the_plugin_op_list);
    tcase_add_test(table, every_op_has_the_id_name_kind_and_arity_of_the_plugin_list);
    tcase_add_test(table, attribute_masks_name_what_attrs_h_documents);
    tcase_add_test(table, out_of_range_ids_and_small_structs_are_rejected);
    suite_add_tcase(suite, table);
    return suite;
}
