/* The ONNX ops the test models need beyond the first importer's (Split,
 * TopK, Clip with constant bounds, Pad, Resize, CumSum, BatchNormalization,
 * Trilu): which table ops each becomes and its values on hand-worked
 * inputs, and the refusals that name the attribute value. */
#include <stdio.h>
#include <string.h>

#include "onnx_model_builder.h"
#include "tensorplay/graph.h"
#include "tensorplay/onnx.h"
#include "tp_test.h"

#ifdef TP_WITH_ONNX
#include "onnx_test_import.h"

static const char *import_error(onnx_test_model *m) {
    size_t size;
    uint8_t *bytes = onnx_test_pack(m, &size);
    tp_graph *graph = NULL;
    tp_status status = tp_graph_load_onnx_buffer(bytes, size, "m.onnx", NULL, NULL, 0, &graph);
    ck_assert_msg(status != TP_OK, "the import succeeded");
    ck_assert_ptr_null(graph);
    return tp_last_error();
}

static void assert_contains(const char *text, const char *part) {
    ck_assert_msg(strstr(text, part), "'%s' does not contain '%s'", text, part);
}

/* Runs `graph` on one f32 input; returns its outputs (count given). */
static void run(tp_graph *graph, int ndim, const int64_t *shape, const float *data,
                tp_tensor **outputs, int count) {
    tp_tensor *x;
    ck_assert(tp_tensor_from_data(TP_F32, ndim, shape, data, &x) == TP_OK);
    ck_assert_int_eq(tp_graph_num_outputs(graph), count);
    ck_assert_msg(tp_graph_run(graph, &x, 1, outputs) == TP_OK, "%s", tp_last_error());
    tp_tensor_release(x);
}

static void assert_floats(tp_tensor *t, const float *expected, int64_t count) {
    ck_assert_int_eq(tp_tensor_numel(t), count);
    const float *got = tp_tensor_data(t);
    for (int64_t i = 0; i < count; i++)
        ck_assert_msg(got[i] == expected[i], "element %lld is %g, expected %g", (long long)i,
                      got[i], expected[i]);
}

static const char *output_op(tp_graph *graph, int index) {
    return tp_graph_value_op(graph, tp_graph_output(graph, index));
}

START_TEST(split_with_sizes_becomes_one_slice_per_output) {
    onnx_test_model m;
    onnx_test_model_init(&m, 13);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){6}, NULL);
    onnx_test_int64_initializer(&m, "sizes", 2, (int64_t[]){2, 4});
    onnx_test_node(&m, "Split", NULL, NAMES("x", "sizes"), NAMES("a", "b"));
    onnx_test_value(&m, 1, "a", FLOAT, 0, NULL, NULL);
    onnx_test_value(&m, 1, "b", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    ck_assert_str_eq(output_op(graph, 0), "slice");
    ck_assert_str_eq(output_op(graph, 1), "slice");
    tp_tensor *out[2];
    run(graph, 1, (int64_t[]){6}, (float[]){0, 1, 2, 3, 4, 5}, out, 2);
    assert_floats(out[0], (float[]){0, 1}, 2);
    assert_floats(out[1], (float[]){2, 3, 4, 5}, 4);
    tp_tensor_release(out[0]);
    tp_tensor_release(out[1]);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(split_by_num_outputs_makes_the_last_part_smaller) {
    /* opset 18: 5 elements in 3 parts of ceil(5 / 3) = 2: [2, 2, 1] */
    onnx_test_model m;
    onnx_test_model_init(&m, 18);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){5}, NULL);
    Onnx__NodeProto *split = onnx_test_node(&m, "Split", NULL, NAMES("x"), NAMES("a", "b", "c"));
    onnx_test_int_attr(&m, split, "num_outputs", 3);
    onnx_test_value(&m, 1, "a", FLOAT, 0, NULL, NULL);
    onnx_test_value(&m, 1, "b", FLOAT, 0, NULL, NULL);
    onnx_test_value(&m, 1, "c", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *out[3];
    run(graph, 1, (int64_t[]){5}, (float[]){9, 8, 7, 6, 5}, out, 3);
    assert_floats(out[0], (float[]){9, 8}, 2);
    assert_floats(out[1], (float[]){7, 6}, 2);
    assert_floats(out[2], (float[]){5}, 1);
    for (int i = 0; i < 3; i++) tp_tensor_release(out[i]);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(topk_outputs_are_topk_and_topk_indices_with_ties_to_the_lower_index) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){1, 5}, NULL);
    onnx_test_int64_initializer(&m, "k", 1, (int64_t[]){3});
    onnx_test_node(&m, "TopK", NULL, NAMES("x", "k"), NAMES("values", "indices"));
    onnx_test_value(&m, 1, "values", FLOAT, 0, NULL, NULL);
    onnx_test_value(&m, 1, "indices", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    ck_assert_str_eq(output_op(graph, 0), "topk");
    ck_assert_str_eq(output_op(graph, 1), "topk_indices");
    tp_tensor *out[2];
    /* 5 is largest (position 4), then the two 3s at positions 0 and 2 */
    run(graph, 2, (int64_t[]){1, 5}, (float[]){3, 1, 3, 2, 5}, out, 2);
    assert_floats(out[0], (float[]){5, 3, 3}, 3);
    const int64_t *indices = tp_tensor_data(out[1]);
    ck_assert_int_eq(indices[0], 4);
    ck_assert_int_eq(indices[1], 0);
    ck_assert_int_eq(indices[2], 2);
    tp_tensor_release(out[0]);
    tp_tensor_release(out[1]);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(clip_with_constant_bounds_is_one_clip_node) {
    /* relu6 as torchvision exports it: Clip(x, 0, 6) */
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){4}, NULL);
    onnx_test_initializer(&m, "low", 0, NULL, (float[]){0}, sizeof(float));
    onnx_test_initializer(&m, "high", 0, NULL, (float[]){6}, sizeof(float));
    onnx_test_node(&m, "Clip", NULL, NAMES("x", "low", "high"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    ck_assert_str_eq(output_op(graph, 0), "clip");
    tp_tensor *y;
    run(graph, 1, (int64_t[]){4}, (float[]){-1, 3, 6.5f, 7}, &y, 1);
    assert_floats(y, (float[]){0, 3, 6, 6}, 4);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(pad_reflect_reads_pads_from_its_input) {
    /* [1, 2, 3] reflected by 2 before and 1 after: [3, 2, | 1, 2, 3, | 2] */
    onnx_test_model m;
    onnx_test_model_init(&m, 18);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){3}, NULL);
    onnx_test_int64_initializer(&m, "pads", 2, (int64_t[]){2, 1});
    Onnx__NodeProto *pad = onnx_test_node(&m, "Pad", NULL, NAMES("x", "pads"), NAMES("y"));
    onnx_test_string_attr(&m, pad, "mode", "reflect");
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    ck_assert_str_eq(output_op(graph, 0), "pad");
    tp_tensor *y;
    run(graph, 1, (int64_t[]){3}, (float[]){1, 2, 3}, &y, 1);
    assert_floats(y, (float[]){3, 2, 1, 2, 3, 2}, 6);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(resize_by_scales_repeats_nearest_elements) {
    /* torch's nearest upsampling x2: asymmetric coordinates, floor */
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 4, (int64_t[]){1, 1, 1, 2}, NULL);
    onnx_test_initializer(&m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2},
                          4 * sizeof(float));
    Onnx__NodeProto *resize =
        onnx_test_node(&m, "Resize", NULL, NAMES("x", "", "scales"), NAMES("y"));
    onnx_test_string_attr(&m, resize, "coordinate_transformation_mode", "asymmetric");
    onnx_test_string_attr(&m, resize, "nearest_mode", "floor");
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    ck_assert_str_eq(output_op(graph, 0), "resize");
    tp_tensor *y;
    run(graph, 4, (int64_t[]){1, 1, 1, 2}, (float[]){1, 2}, &y, 1);
    assert_floats(y, (float[]){1, 1, 2, 2, 1, 1, 2, 2}, 8);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(resize_cubic_is_refused_naming_the_mode) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 4, (int64_t[]){1, 1, 2, 2}, NULL);
    onnx_test_initializer(&m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2},
                          4 * sizeof(float));
    Onnx__NodeProto *resize =
        onnx_test_node(&m, "Resize", "up", NAMES("x", "", "scales"), NAMES("y"));
    onnx_test_string_attr(&m, resize, "mode", "cubic");
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    const char *message = import_error(&m);
    assert_contains(message, "'up'");
    assert_contains(message, "mode 'cubic' is not supported");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(cumsum_exclusive_reverse_sums_what_follows) {
    /* [1, 2, 3] reversed exclusive: [2 + 3, 3, 0] */
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){3}, NULL);
    onnx_test_int64_initializer(&m, "axis", 1, (int64_t[]){0});
    Onnx__NodeProto *cumsum = onnx_test_node(&m, "CumSum", NULL, NAMES("x", "axis"), NAMES("y"));
    onnx_test_int_attr(&m, cumsum, "exclusive", 1);
    onnx_test_int_attr(&m, cumsum, "reverse", 1);
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *y;
    run(graph, 1, (int64_t[]){3}, (float[]){1, 2, 3}, &y, 1);
    assert_floats(y, (float[]){5, 3, 0}, 3);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(batch_norm_in_training_mode_is_refused) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){1, 2}, NULL);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        onnx_test_initializer(&m, name, 1, (int64_t[]){2}, (float[]){1, 1}, 2 * sizeof(float));
    }
    Onnx__NodeProto *bn = onnx_test_node(&m, "BatchNormalization", "bn",
                                         NAMES("x", "p0", "p1", "p2", "p3"), NAMES("y"));
    onnx_test_int_attr(&m, bn, "training_mode", 1);
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    assert_contains(import_error(&m), "training mode");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(trilu_upper_keeps_the_diagonal_k_and_above) {
    /* [[1, 2, 3], [4, 5, 6]] with k = 1: column - row >= 1 stays */
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){2, 3}, NULL);
    onnx_test_int64_initializer(&m, "k", 1, (int64_t[]){1});
    onnx_test_node(&m, "Trilu", NULL, NAMES("x", "k"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *y;
    run(graph, 2, (int64_t[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6}, &y, 1);
    assert_floats(y, (float[]){0, 2, 3, 0, 0, 6}, 6);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

TP_TEST_SUITE(onnx_model_ops) {
    Suite *suite = suite_create("onnx.model_ops");
    TCase *tc = tcase_create("model_ops");
    tcase_add_test(tc, split_with_sizes_becomes_one_slice_per_output);
    tcase_add_test(tc, split_by_num_outputs_makes_the_last_part_smaller);
    tcase_add_test(tc, topk_outputs_are_topk_and_topk_indices_with_ties_to_the_lower_index);
    tcase_add_test(tc, clip_with_constant_bounds_is_one_clip_node);
    tcase_add_test(tc, pad_reflect_reads_pads_from_its_input);
    tcase_add_test(tc, resize_by_scales_repeats_nearest_elements);
    tcase_add_test(tc, resize_cubic_is_refused_naming_the_mode);
    tcase_add_test(tc, cumsum_exclusive_reverse_sums_what_follows);
    tcase_add_test(tc, batch_norm_in_training_mode_is_refused);
    tcase_add_test(tc, trilu_upper_keeps_the_diagonal_k_and_above);
    suite_add_tcase(suite, tc);
    return suite;
}

#endif
