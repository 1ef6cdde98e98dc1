/* The importer's sliding-window ops: auto_pad resolved to explicit pads
 * (worked by hand: SAME makes out = ceil(in / stride), the odd pad at the
 * end for SAME_UPPER, at the beginning for SAME_LOWER), ConvTranspose's
 * output_shape turned into pads and output_padding, GlobalAveragePool as a
 * mean over the spatial axes, and 3-D windows refused as unsupported,
 * naming the node. */
#include <stdio.h>
#include <string.h>

#include "onnx_model_builder.h"
#include "tensorplay/graph.h"
#include "tensorplay/onnx.h"
#include "tp_test.h"

#ifdef TP_WITH_ONNX
#include "onnx_test_import.h"

/* The first node of `op` in the graph. */
static tp_value_id find_op(const tp_graph *graph, const char *op) {
    for (int v = 0; v < tp_graph_num_values(graph); v++) {
        const char *name = tp_graph_value_op(graph, v);
        if (name && strcmp(name, op) == 0) return v;
    }
    ck_abort_msg("no %s node in the imported graph", op);
    return TP_NO_VALUE;
}

static void assert_ints(const int64_t *got, int count, const int64_t *want, int want_count,
                        const char *what) {
    ck_assert_msg(count == want_count, "%s: %d entries, expected %d", what, count, want_count);
    for (int i = 0; i < count; i++)
        ck_assert_msg(got[i] == want[i], "%s[%d] = %lld, expected %lld", what, i, (long long)got[i],
                      (long long)want[i]);
}

/* MaxPool kernel 2, stride 1 on 4 x 5: SAME keeps 4 x 5, one pad per axis. */
static tp_graph *pool_with_auto_pad(onnx_test_model *m, const char *auto_pad) {
    onnx_test_model_init(m, 17);
    onnx_test_value(m, 0, "x", FLOAT, 4, (int64_t[]){1, 1, 4, 5}, NULL);
    Onnx__NodeProto *pool = onnx_test_node(m, "MaxPool", "pool", NAMES("x"), NAMES("y"));
    onnx_test_ints_attr(m, pool, "kernel_shape", (int64_t[]){2, 2}, 2);
    onnx_test_string_attr(m, pool, "auto_pad", auto_pad);
    onnx_test_value(m, 1, "y", FLOAT, 0, NULL, NULL);
    return import(m);
}

START_TEST(same_upper_pads_the_end_and_same_lower_the_beginning) {
    onnx_test_model m;
    tp_graph *graph = pool_with_auto_pad(&m, "SAME_UPPER");
    const tp_attrs *attrs = tp_graph_value_attrs(graph, find_op(graph, "max_pool"));
    assert_ints(attrs->pads, attrs->npads, (int64_t[]){0, 0, 1, 1}, 4, "SAME_UPPER pads");
    const tp_type *y = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    ck_assert_int_eq(y->dims[2], 4);
    ck_assert_int_eq(y->dims[3], 5);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
    graph = pool_with_auto_pad(&m, "SAME_LOWER");
    attrs = tp_graph_value_attrs(graph, find_op(graph, "max_pool"));
    assert_ints(attrs->pads, attrs->npads, (int64_t[]){1, 1, 0, 0}, 4, "SAME_LOWER pads");
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* Conv 3x3, stride 2 on 7 x 8: SAME gives ceil(7/2) = 4 and ceil(8/2) = 4;
 * total pad (4 - 1) * 2 + 3 - 7 = 2 (1 + 1) and (4 - 1) * 2 + 3 - 8 = 1
 * (0 + 1 for SAME_UPPER). */
START_TEST(conv_same_upper_with_stride_computes_the_pads_by_hand) {
    static const float weight[9] = {0};
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 4, (int64_t[]){1, 1, 7, 8}, NULL);
    onnx_test_initializer(&m, "w", 4, (int64_t[]){1, 1, 3, 3}, weight, sizeof weight);
    Onnx__NodeProto *conv = onnx_test_node(&m, "Conv", "conv", NAMES("x", "w"), NAMES("y"));
    onnx_test_ints_attr(&m, conv, "strides", (int64_t[]){2, 2}, 2);
    onnx_test_string_attr(&m, conv, "auto_pad", "SAME_UPPER");
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    const tp_attrs *attrs = tp_graph_value_attrs(graph, find_op(graph, "conv"));
    assert_ints(attrs->pads, attrs->npads, (int64_t[]){1, 0, 1, 1}, 4, "pads");
    const tp_type *y = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    ck_assert_int_eq(y->dims[2], 4);
    ck_assert_int_eq(y->dims[3], 4);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* ConvTranspose 3x3, stride 2 on 3 x 3 (natural size 2 * 2 + 3 = 7) asked
 * for 6 x 8: a total pad of 1 (auto_pad NOTSET: the larger half first, 1
 * begin + 0 end, as the ONNX spec says) and a negative one (-1) that becomes
 * output_padding 1. */
START_TEST(conv_transpose_output_shape_becomes_pads_and_output_padding) {
    static const float weight[9] = {0};
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 4, (int64_t[]){1, 1, 3, 3}, NULL);
    onnx_test_initializer(&m, "w", 4, (int64_t[]){1, 1, 3, 3}, weight, sizeof weight);
    Onnx__NodeProto *node = onnx_test_node(&m, "ConvTranspose", "up", NAMES("x", "w"), NAMES("y"));
    onnx_test_ints_attr(&m, node, "strides", (int64_t[]){2, 2}, 2);
    onnx_test_ints_attr(&m, node, "output_shape", (int64_t[]){6, 8}, 2);
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    const tp_attrs *attrs = tp_graph_value_attrs(graph, find_op(graph, "conv_transpose"));
    assert_ints(attrs->pads, attrs->npads, (int64_t[]){1, 0, 0, 0}, 4, "pads");
    assert_ints(attrs->output_padding, attrs->noutput_padding, (int64_t[]){0, 1}, 2,
                "output_padding");
    const tp_type *y = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    ck_assert_int_eq(y->dims[2], 6);
    ck_assert_int_eq(y->dims[3], 8);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(global_average_pool_is_a_mean_over_the_spatial_axes) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 4, (int64_t[]){2, 3, 4, 5}, NULL);
    onnx_test_node(&m, "GlobalAveragePool", "gap", NAMES("x"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    const tp_attrs *attrs = tp_graph_value_attrs(graph, find_op(graph, "mean"));
    assert_ints(attrs->axes, attrs->naxes, (int64_t[]){2, 3}, 2, "axes");
    ck_assert(attrs->keepdim);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(a_3d_conv_is_unsupported_naming_the_node) {
    static const float weight[8] = {0};
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 5, (int64_t[]){1, 1, 4, 4, 4}, NULL);
    onnx_test_initializer(&m, "w", 5, (int64_t[]){1, 1, 2, 2, 2}, weight, sizeof weight);
    onnx_test_node(&m, "Conv", "volume", NAMES("x", "w"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    size_t size;
    uint8_t *bytes = onnx_test_pack(&m, &size);
    tp_graph *graph = NULL;
    tp_status status = tp_graph_load_onnx_buffer(bytes, size, "m.onnx", NULL, NULL, 0, &graph);
    ck_assert_int_eq(status, TP_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(tp_last_error(), "volume") && strstr(tp_last_error(), "3-D"), "%s",
                  tp_last_error());
    onnx_test_model_free(&m);
}
END_TEST

TP_TEST_SUITE(onnx_windows) {
    Suite *suite = suite_create("onnx.windows");
    TCase *tc = tcase_create("windows");
    tcase_add_test(tc, same_upper_pads_the_end_and_same_lower_the_beginning);
    tcase_add_test(tc, conv_same_upper_with_stride_computes_the_pads_by_hand);
    tcase_add_test(tc, conv_transpose_output_shape_becomes_pads_and_output_padding);
    tcase_add_test(tc, global_average_pool_is_a_mean_over_the_spatial_axes);
    tcase_add_test(tc, a_3d_conv_is_unsupported_naming_the_node);
    suite_add_tcase(suite, tc);
    return suite;
}

#endif /* TP_WITH_ONNX: tests/onnx/test_onnx_import.c covers the build without */
