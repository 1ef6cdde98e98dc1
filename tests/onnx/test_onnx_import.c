/* The ONNX importer on models built field by field in the test
 * (onnx_model_builder.c): what a model becomes (inputs, constants, symbols,
 * values computed by the reference interpreter against hand-worked numbers)
 * and what every malformed file is told. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_model_builder.h"
#include "tensorplay/graph.h"
#include "tensorplay/onnx.h"
#include "tp_test.h"

#ifdef TP_WITH_ONNX
#include "onnx_test_import.h"

/* The importer's message for a model that must fail with `expected`. */
static const char *import_error(onnx_test_model *m, tp_status expected) {
    size_t size;
    uint8_t *bytes = onnx_test_pack(m, &size);
    tp_graph *graph = NULL;
    tp_status status = tp_graph_load_onnx_buffer(bytes, size, "m.onnx", NULL, NULL, 0, &graph);
    ck_assert_msg(status == expected, "status %s, expected %s (%s)", tp_status_name(status),
                  tp_status_name(expected), tp_last_error());
    ck_assert_ptr_null(graph);
    return tp_last_error();
}

static void assert_contains(const char *text, const char *part) {
    ck_assert_msg(strstr(text, part), "'%s' does not contain '%s'", text, part);
}

static tp_tensor *run_one(tp_graph *graph, tp_tensor *input) {
    tp_tensor *output = NULL;
    ck_assert_msg(tp_graph_run(graph, &input, 1, &output) == TP_OK, "%s", tp_last_error());
    return output;
}

static tp_tensor *floats(int ndim, const int64_t *shape, const float *data) {
    tp_tensor *tensor;
    ck_assert(tp_tensor_from_data(TP_F32, ndim, shape, data, &tensor) == TP_OK);
    return tensor;
}

/* y = relu(x @ W^T + b) with W [2, 3]: worked by hand below. */
static void build_dense(onnx_test_model *m) {
    static const float weight[6] = {1, 0, -1, 2, 1, 0}, bias[2] = {0.5f, -10};
    onnx_test_model_init(m, 17);
    onnx_test_value(m, 0, "x", FLOAT, 2, (int64_t[]){1, 3}, NULL);
    onnx_test_initializer(m, "fc.weight", 2, (int64_t[]){2, 3}, weight, sizeof weight);
    onnx_test_initializer(m, "fc.bias", 1, (int64_t[]){2}, bias, sizeof bias);
    Onnx__NodeProto *gemm =
        onnx_test_node(m, "Gemm", "fc", NAMES("x", "fc.weight", "fc.bias"), NAMES("h"));
    onnx_test_int_attr(m, gemm, "transB", 1);
    onnx_test_node(m, "Relu", "act", NAMES("h"), NAMES("y"));
    onnx_test_value(m, 1, "y", FLOAT, 0, NULL, NULL);
}

START_TEST(gemm_with_transposed_weight_and_relu_compute_by_hand) {
    onnx_test_model m;
    build_dense(&m);
    tp_graph *graph = import(&m);
    ck_assert_int_eq(tp_graph_num_inputs(graph), 1); /* the weights are constants */
    /* x = [1, 2, 3]: row 0 = 1 - 3 + 0.5 = -1.5 -> 0; row 1 = 2 + 2 - 10 = -6 -> 0 */
    /* x = [4, 1, 0]: row 0 = 4 + 0.5 = 4.5; row 1 = 8 + 1 - 10 = -1 -> 0 */
    tp_tensor *x = floats(2, (int64_t[]){1, 3}, (float[]){4, 1, 0});
    tp_tensor *y = run_one(graph, x);
    ck_assert_int_eq(tp_tensor_numel(y), 2);
    ck_assert_float_eq(((const float *)tp_tensor_data(y))[0], 4.5f);
    ck_assert_float_eq(((const float *)tp_tensor_data(y))[1], 0.0f);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(dim_param_becomes_a_symbol_of_that_name) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "tokens", FLOAT, 2, (int64_t[]){-1, 8}, NAMES("batch"));
    onnx_test_node(&m, "Tanh", NULL, NAMES("tokens"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    const tp_type *type = tp_graph_value_type(graph, tp_graph_input(graph, 0));
    ck_assert(TP_DIM_IS_SYMBOL(type->dims[0]));
    ck_assert_str_eq(tp_graph_symbol_name(graph, type->dims[0]), "batch");
    ck_assert_int_eq(type->dims[1], 8);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(shape_and_reshape_fold_at_import_time) {
    /* y = Reshape(x, Concat(Shape(x)[1:], [-1])): x [2, 3] -> [3, 2] */
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){2, 3}, NULL);
    onnx_test_int64_initializer(&m, "one", 1, (int64_t[]){1});
    onnx_test_int64_initializer(&m, "big", 1, (int64_t[]){INT64_MAX});
    onnx_test_int64_initializer(&m, "minus_one", 1, (int64_t[]){-1});
    onnx_test_node(&m, "Shape", NULL, NAMES("x"), NAMES("s"));
    onnx_test_node(&m, "Slice", NULL, NAMES("s", "one", "big"), NAMES("tail"));
    Onnx__NodeProto *concat =
        onnx_test_node(&m, "Concat", NULL, NAMES("tail", "minus_one"), NAMES("shape"));
    onnx_test_int_attr(&m, concat, "axis", 0);
    onnx_test_node(&m, "Reshape", NULL, NAMES("x", "shape"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    const tp_type *type = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    ck_assert_int_eq(type->ndim, 2);
    ck_assert_int_eq(type->dims[0], 3);
    ck_assert_int_eq(type->dims[1], 2);
    /* Only the reshape is left: the shape arithmetic was folded away. */
    ck_assert_str_eq(tp_graph_value_op(graph, tp_graph_output(graph, 0)), "reshape");
    ck_assert_int_eq(tp_graph_num_values(graph), 2);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(shape_input_given_at_import_is_read) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){2, 3}, NULL);
    onnx_test_value(&m, 0, "shape", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (int64_t[]){1}, NULL);
    onnx_test_node(&m, "Reshape", NULL, NAMES("x", "shape"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    size_t size;
    uint8_t *bytes = onnx_test_pack(&m, &size);
    tp_graph *graph = NULL;
    ck_assert(tp_graph_load_onnx_buffer(bytes, size, "m.onnx", NULL, NULL, 0, &graph) ==
              TP_ERR_UNSUPPORTED);
    assert_contains(tp_last_error(), "input 1 ('shape', the shape) must be known at import time");
    tp_tensor *shape;
    ck_assert(tp_tensor_from_data(TP_I64, 1, (int64_t[]){1}, (int64_t[]){6}, &shape) == TP_OK);
    tp_onnx_known_input known = {"shape", shape};
    ck_assert(tp_graph_load_onnx_buffer(bytes, size, "m.onnx", NULL, &known, 1, &graph) == TP_OK);
    const tp_type *type = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    ck_assert_int_eq(type->ndim, 1);
    ck_assert_int_eq(type->dims[0], 6);
    tp_tensor_release(shape);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(every_unsupported_op_is_listed_at_once) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){4}, NULL);
    onnx_test_node(&m, "Frobnicate", "first", NAMES("x"), NAMES("a"));
    onnx_test_node(&m, "Relu", "fine", NAMES("a"), NAMES("b"));
    Onnx__NodeProto *custom = onnx_test_node(&m, "Relu", "second", NAMES("b"), NAMES("y"));
    custom->domain = "com.example";
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    const char *message = import_error(&m, TP_ERR_UNSUPPORTED);
    assert_contains(message, "2 nodes with ops the ONNX importer does not support "
                             "(Frobnicate x1, com.example.Relu x1):");
    assert_contains(message, "node 'first' (Frobnicate), domain 'ai.onnx'");
    assert_contains(message, "node 'second' (Relu), domain 'com.example'");
    ck_assert_ptr_null(strstr(message, "'fine'"));
    onnx_test_model_free(&m);
}
END_TEST

/* More unsupported nodes than the message can list (MobileNetV2: 52 Conv,
 * then one GlobalAveragePool): the summary still counts every op type. */
START_TEST(unsupported_op_after_many_others_is_still_named) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){4}, NULL);
    char names[61][16];
    for (int i = 0; i < 60; i++) {
        snprintf(names[i + 1], sizeof names[i + 1], "v%d", i + 1);
        snprintf(names[i], sizeof names[i], i ? "v%d" : "x", i);
        onnx_test_node(&m, "Frobnicate", NULL, (const char *const[]){names[i], NULL},
                       (const char *const[]){names[i + 1], NULL});
    }
    onnx_test_node(&m, "Pool", "last", NAMES("v60"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    const char *message = import_error(&m, TP_ERR_UNSUPPORTED);
    assert_contains(message, "61 nodes with ops the ONNX importer does not support "
                             "(Frobnicate x60, Pool x1):");
    assert_contains(message, "... and the others counted above");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(truncated_file_is_a_parse_error) {
    onnx_test_model m;
    build_dense(&m);
    size_t size;
    uint8_t *bytes = onnx_test_pack(&m, &size);
    tp_graph *graph = NULL;
    ck_assert(tp_graph_load_onnx_buffer(bytes, size / 2, "m.onnx", NULL, NULL, 0, &graph) ==
              TP_ERR_PARSE);
    assert_contains(tp_last_error(), "m.onnx: not a valid ONNX model");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(wrong_wire_type_is_a_parse_error) {
    /* Field 7 (graph) must be a length-delimited message; here it is a varint. */
    const uint8_t bytes[] = {0x08, 0x08, 0x38, 0x01};
    tp_graph *graph = NULL;
    ck_assert(tp_graph_load_onnx_buffer(bytes, sizeof bytes, "m.onnx", NULL, NULL, 0, &graph) ==
              TP_ERR_PARSE);
    assert_contains(tp_last_error(), "not a valid ONNX model");
}
END_TEST

START_TEST(attribute_of_the_wrong_type_names_node_and_attribute) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){2, 2}, NULL);
    Onnx__NodeProto *softmax = onnx_test_node(&m, "Softmax", "probs", NAMES("x"), NAMES("y"));
    onnx_test_float_attr(&m, softmax, "axis", 1.0f);
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    ck_assert_str_eq(import_error(&m, TP_ERR_PARSE),
                     "m.onnx: node 'probs' (Softmax): attribute 'axis' must be INT, is FLOAT");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(tensor_claiming_data_it_lacks_names_the_initializer) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){4}, NULL);
    /* 2^29 floats = 2 GiB claimed, 4 bytes present */
    onnx_test_initializer(&m, "huge", 1, (int64_t[]){INT64_C(1) << 29}, (float[]){1}, 4);
    onnx_test_node(&m, "Add", NULL, NAMES("x", "huge"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    ck_assert_str_eq(import_error(&m, TP_ERR_PARSE),
                     "m.onnx: initializer 'huge': claims f32 with 536870912 elements (2147483648 "
                     "bytes) but its raw_data has 4 bytes");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(missing_initializer_names_the_node_and_the_value) {
    onnx_test_model m;
    build_dense(&m);
    m.graph.n_initializer = 1; /* fc.bias is gone */
    ck_assert_str_eq(import_error(&m, TP_ERR_INVALID_GRAPH),
                     "m.onnx: node 'fc' (Gemm): input 'fc.bias' is not a graph input, an "
                     "initializer or the output of any node");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(cycle_names_its_nodes) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){4}, NULL);
    onnx_test_node(&m, "Add", "a", NAMES("x", "d"), NAMES("c"));
    onnx_test_node(&m, "Relu", "b", NAMES("c"), NAMES("d"));
    onnx_test_value(&m, 1, "d", FLOAT, 0, NULL, NULL);
    const char *message = import_error(&m, TP_ERR_INVALID_GRAPH);
    assert_contains(message, "the nodes form a cycle");
    assert_contains(message, "node 'a' (Add)");
    assert_contains(message, "node 'b' (Relu)");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(nodes_out_of_order_are_imported_in_dependency_order) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){1}, NULL);
    onnx_test_node(&m, "Neg", "second", NAMES("a"), NAMES("y"));
    onnx_test_node(&m, "Abs", "first", NAMES("x"), NAMES("a"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *x = floats(1, (int64_t[]){1}, (float[]){-3});
    tp_tensor *y = run_one(graph, x);
    ck_assert_float_eq(((const float *)tp_tensor_data(y))[0], -3.0f); /* -|-3| */
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(unproduced_output_used_later_names_its_node) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 2, (int64_t[]){2, 2}, NULL);
    onnx_test_value(&m, 0, "w", FLOAT, 1, (int64_t[]){2}, NULL);
    onnx_test_node(&m, "ArgMax", "pick", NAMES("x"), NAMES("i", "extra"));
    onnx_test_node(&m, "Identity", "use", NAMES("extra"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    const char *message = import_error(&m, TP_ERR_UNSUPPORTED);
    assert_contains(message, "node 'use' (Identity)");
    assert_contains(message, "an output of node 'pick' (ArgMax) that is not supported");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(external_data_is_read_from_the_model_folder) {
    const char *dir = tp_test_temp_dir();
    char path[1024];
    snprintf(path, sizeof path, "%s/weights.bin", dir);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    const float payload[4] = {99, 1.5f, -2, 4}; /* the tensor is the last three */
    fwrite(payload, sizeof payload, 1, file);
    fclose(file);
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){3}, NULL);
    Onnx__TensorProto *w = onnx_test_initializer(&m, "w", 1, (int64_t[]){3}, NULL, 0);
    w->has_raw_data = 0;
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    Onnx__StringStringEntryProto entries[3], *list[3];
    const char *pairs[3][2] = {{"location", "weights.bin"}, {"offset", "4"}, {"length", "12"}};
    for (int i = 0; i < 3; i++) {
        onnx__string_string_entry_proto__init(&entries[i]);
        entries[i].key = (char *)pairs[i][0];
        entries[i].value = (char *)pairs[i][1];
        list[i] = &entries[i];
    }
    w->n_external_data = 3;
    w->external_data = list;
    onnx_test_node(&m, "Mul", NULL, NAMES("x", "w"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    size_t size;
    uint8_t *bytes = onnx_test_pack(&m, &size);
    tp_graph *graph = NULL;
    ck_assert_msg(tp_graph_load_onnx_buffer(bytes, size, "m.onnx", dir, NULL, 0, &graph) == TP_OK,
                  "%s", tp_last_error());
    tp_tensor *x = floats(1, (int64_t[]){3}, (float[]){2, 2, 2});
    tp_tensor *y = run_one(graph, x);
    const float *values = tp_tensor_data(y);
    ck_assert_float_eq(values[0], 3.0f);
    ck_assert_float_eq(values[1], -4.0f);
    ck_assert_float_eq(values[2], 8.0f);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    /* A location outside the model's folder is refused. */
    pairs[0][1] = "../weights.bin";
    entries[0].value = (char *)pairs[0][1];
    bytes = onnx_test_pack(&m, &size);
    ck_assert(tp_graph_load_onnx_buffer(bytes, size, "m.onnx", dir, NULL, 0, &graph) ==
              TP_ERR_PARSE);
    assert_contains(tp_last_error(), "initializer 'w': external data location '../weights.bin' "
                                     "must be a relative path inside the model's folder");
    onnx_test_model_free(&m);
}
END_TEST

START_TEST(onnx_names_map_to_value_names) {
    char buffer[64];
    ck_assert_str_eq(tp_onnx_value_name("encoder.layer.0/attn:0", buffer, sizeof buffer),
                     "encoder.layer.0_attn_0");
    ck_assert_str_eq(tp_onnx_value_name(".a..b.", buffer, sizeof buffer), "_a_.b_");
    ck_assert_str_eq(tp_onnx_value_name("0", buffer, sizeof buffer), "_0");
    ck_assert_str_eq(tp_onnx_value_name("input_ids", buffer, sizeof buffer), "input_ids");
}
END_TEST

START_TEST(file_that_does_not_exist_names_the_path) {
    tp_graph *graph = NULL;
    ck_assert(tp_graph_load_onnx("/nonexistent/model.onnx", &graph) == TP_ERR_IO);
    assert_contains(tp_last_error(), "cannot open /nonexistent/model.onnx");
}
END_TEST

/* y = Mod(x, [2, 2, -2]) with fmod = 1: C's fmod, the sign of x. */
START_TEST(float_mod_with_fmod_keeps_the_sign_of_the_dividend) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){3}, NULL);
    onnx_test_initializer(&m, "d", 1, (int64_t[]){3}, (float[]){2, 2, -2}, 3 * sizeof(float));
    Onnx__NodeProto *mod = onnx_test_node(&m, "Mod", NULL, NAMES("x", "d"), NAMES("y"));
    onnx_test_int_attr(&m, mod, "fmod", 1);
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *x = floats(1, (int64_t[]){3}, (float[]){-7.5f, 7.5f, 7.5f});
    tp_tensor *y = run_one(graph, x);
    const float *r = tp_tensor_data(y);
    /* fmod(-7.5, 2) = -1.5, fmod(7.5, 2) = 1.5, fmod(7.5, -2) = 1.5 */
    ck_assert_float_eq(r[0], -1.5f);
    ck_assert_float_eq(r[1], 1.5f);
    ck_assert_float_eq(r[2], 1.5f);
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* Float Mod with fmod = 0 is NumPy's mod: the divisor's sign, zeros too. */
START_TEST(float_mod_without_fmod_takes_the_sign_of_the_divisor) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){3}, NULL);
    onnx_test_initializer(&m, "d", 1, (int64_t[]){3}, (float[]){2, -2, -2}, 3 * sizeof(float));
    onnx_test_node(&m, "Mod", NULL, NAMES("x", "d"), NAMES("y"));
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *x = floats(1, (int64_t[]){3}, (float[]){-7.5f, 7.5f, 4.0f});
    tp_tensor *y = run_one(graph, x);
    const float *r = tp_tensor_data(y);
    /* -7.5 mod 2 = 0.5, 7.5 mod -2 = -0.5, 4 mod -2 = -0.0 */
    ck_assert_float_eq(r[0], 0.5f);
    ck_assert_float_eq(r[1], -0.5f);
    ck_assert_float_eq(r[2], 0.0f);
    ck_assert(signbit(r[2]));
    tp_tensor_release(x);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* Integer Mod (fmod = 0, the default) takes the divisor's sign, as Python's
 * %: -7 % 3 = 2, 7 % 3 = 1, 7 % -3 = -2. */
START_TEST(integer_mod_takes_the_sign_of_the_divisor) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "a", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (int64_t[]){3}, NULL);
    onnx_test_int64_initializer(&m, "b", 3, (int64_t[]){3, 3, -3});
    onnx_test_node(&m, "Mod", NULL, NAMES("a", "b"), NAMES("y"));
    onnx_test_value(&m, 1, "y", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    tp_tensor *a;
    ck_assert(tp_tensor_from_data(TP_I64, 1, (int64_t[]){3}, (int64_t[]){-7, 7, 7}, &a) == TP_OK);
    tp_tensor *y = run_one(graph, a);
    ck_assert_int_eq(tp_tensor_dtype(y), TP_I64);
    const int64_t *r = tp_tensor_data(y);
    ck_assert_int_eq(r[0], 2);
    ck_assert_int_eq(r[1], 1);
    ck_assert_int_eq(r[2], -2);
    tp_tensor_release(a);
    tp_tensor_release(y);
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

/* Shape arithmetic with Mod (nn.MultiheadAttention exports one) folds away. */
START_TEST(mod_of_constants_folds_at_import_time) {
    onnx_test_model m;
    onnx_test_model_init(&m, 17);
    onnx_test_value(&m, 0, "x", FLOAT, 1, (int64_t[]){4}, NULL);
    onnx_test_int64_initializer(&m, "seven", 1, (int64_t[]){7});
    onnx_test_int64_initializer(&m, "five", 1, (int64_t[]){5});
    onnx_test_node(&m, "Mod", NULL, NAMES("seven", "five"), NAMES("two"));
    onnx_test_node(&m, "Reshape", NULL, NAMES("x", "two_by"), NAMES("y"));
    onnx_test_int64_initializer(&m, "minus_one", 1, (int64_t[]){-1});
    Onnx__NodeProto *concat =
        onnx_test_node(&m, "Concat", NULL, NAMES("two", "minus_one"), NAMES("two_by"));
    onnx_test_int_attr(&m, concat, "axis", 0);
    onnx_test_value(&m, 1, "y", FLOAT, 0, NULL, NULL);
    tp_graph *graph = import(&m);
    const tp_type *type = tp_graph_value_type(graph, tp_graph_output(graph, 0));
    ck_assert_int_eq(type->ndim, 2);
    ck_assert_int_eq(type->dims[0], 2); /* 7 mod 5 */
    ck_assert_int_eq(type->dims[1], 2);
    ck_assert_int_eq(tp_graph_num_values(graph), 2); /* x and the reshape */
    tp_graph_destroy(graph);
    onnx_test_model_free(&m);
}
END_TEST

TP_TEST_SUITE(onnx_import) {
    Suite *suite = suite_create("onnx.import");
    TCase *tc = tcase_create("import");
    tcase_add_test(tc, float_mod_with_fmod_keeps_the_sign_of_the_dividend);
    tcase_add_test(tc, float_mod_without_fmod_takes_the_sign_of_the_divisor);
    tcase_add_test(tc, integer_mod_takes_the_sign_of_the_divisor);
    tcase_add_test(tc, mod_of_constants_folds_at_import_time);
    tcase_add_test(tc, gemm_with_transposed_weight_and_relu_compute_by_hand);
    tcase_add_test(tc, dim_param_becomes_a_symbol_of_that_name);
    tcase_add_test(tc, shape_and_reshape_fold_at_import_time);
    tcase_add_test(tc, shape_input_given_at_import_is_read);
    tcase_add_test(tc, every_unsupported_op_is_listed_at_once);
    tcase_add_test(tc, unsupported_op_after_many_others_is_still_named);
    tcase_add_test(tc, truncated_file_is_a_parse_error);
    tcase_add_test(tc, wrong_wire_type_is_a_parse_error);
    tcase_add_test(tc, attribute_of_the_wrong_type_names_node_and_attribute);
    tcase_add_test(tc, tensor_claiming_data_it_lacks_names_the_initializer);
    tcase_add_test(tc, missing_initializer_names_the_node_and_the_value);
    tcase_add_test(tc, cycle_names_its_nodes);
    tcase_add_test(tc, nodes_out_of_order_are_imported_in_dependency_order);
    tcase_add_test(tc, unproduced_output_used_later_names_its_node);
    tcase_add_test(tc, external_data_is_read_from_the_model_folder);
    tcase_add_test(tc, onnx_names_map_to_value_names);
    tcase_add_test(tc, file_that_does_not_exist_names_the_path);
    suite_add_tcase(suite, tc);
    return suite;
}

#else /* a build without the importer says so */

START_TEST(build_without_importer_says_how_to_get_one) {
    tp_graph *graph = NULL;
    ck_assert(!tp_onnx_available());
    ck_assert(tp_graph_load_onnx("m.onnx", &graph) == TP_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "-DTP_WITH_ONNX=ON"));
}
END_TEST

TP_TEST_SUITE(onnx_import) {
    Suite *suite = suite_create("onnx.import");
    TCase *tc = tcase_create("unavailable");
    tcase_add_test(tc, build_without_importer_says_how_to_get_one);
    suite_add_tcase(suite, tc);
    return suite;
}
#endif
