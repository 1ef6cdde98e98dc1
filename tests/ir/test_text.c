/* The .tpir printer and parser together (core/ir/print.c, parse.c):
 * canonical text survives parse -> print byte for byte, other spellings
 * print canonically, numbers round-trip, files save atomically. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_helpers.h"

static void expect_round_trip(const char *canonical) {
    tp_graph *graph = ir_parse_ok(canonical);
    char *text = ir_print_ok(graph);
    ck_assert_str_eq(text, canonical);
    tp_free(text);
    tp_graph_destroy(graph);
}

START_TEST(shape_and_creation_ops_round_trip) {
    expect_round_trip("graph shapes(%x: f32[2, 3, 4]) {\n"
                      "  %p: f32[4, 2, 3] = permute(%x) {perm=[2, 0, 1]}\n"
                      "  %r: f32[4, 6] = reshape(%p) {shape=[4, -1]}\n"
                      "  %s: f32[4, 3] = slice(%r) {axis=1, start=1, stop=end, step=2}\n"
                      "  %t: f32[4, 2] = slice(%r) {axis=-1, start=-3, stop=-1, step=1}\n"
                      "  %c: f32[4, 5] = concat(%s, %t) {axis=1}\n"
                      "  %u: f32[1, 4, 5] = unsqueeze(%c) {axis=0}\n"
                      "  %q: f32[4, 5] = squeeze(%u) {axes=[]}\n"
                      "  %e: f32[2, 4, 5] = expand(%q) {shape=[2, -1, 5]}\n"
                      "  %a: f64[4] = arange() {start=0.5, stop=4.5, step=1, dtype=f64}\n"
                      "  %f: i32[2, 2] = full() {shape=[2, 2], dtype=i32, value=-7}\n"
                      "  %k: i64[3] = constant() {value=[1, -2, 9223372036854775807]}\n"
                      "  %b: bool[2] = constant() {value=[1, 0]}\n"
                      "  %z: f32[0] = constant() {value=[]}\n"
                      "  %one: f64[] = constant() {value=[0.1]}\n"
                      "  return %e, %a, %f, %k, %b, %z, %one\n"
                      "}\n");
}
END_TEST

START_TEST(pointwise_reduction_and_matmul_ops_round_trip) {
    expect_round_trip("graph ops(%a: f32[4, 3], %b: f32[3, 5], %m: bool[4, 5]) {\n"
                      "  %mm: f32[4, 5] = matmul(%a, %b)\n"
                      "  %e: f32[4, 5] = exp(%mm)\n"
                      "  %w: f32[4, 5] = where(%m, %e, %mm)\n"
                      "  %s: f32[4] = sum(%w) {axes=[1], keepdim=false}\n"
                      "  %k: f32[1, 5] = mean(%w) {axes=[0], keepdim=true}\n"
                      "  %all: f32[] = max(%w) {axes=[], keepdim=false}\n"
                      "  %i: i64[5] = argmax(%w) {keepdim=false, axis=0}\n"
                      "  %c: f64[5] = cast(%i) {dtype=f64}\n"
                      "  %lt: bool[4, 5] = lt(%w, %k)\n"
                      "  return %s, %all, %c, %lt\n"
                      "}\n");
}
END_TEST

START_TEST(composite_ops_round_trip) {
    expect_round_trip("graph composites(%x: f32[n, 8], %w: f32[8], %b: f32[8], %lw: f32[4, 8]) {\n"
                      "  %ln: f32[n, 8] = layer_norm(%x, %w, %b) {axis=-1, eps=1e-05}\n"
                      "  %g: f32[n, 8] = gelu(%ln) {approximate=tanh}\n"
                      "  %g2: f32[n, 8] = gelu(%g) {approximate=none}\n"
                      "  %sp: f32[n, 8] = softplus(%g2) {beta=2, threshold=20}\n"
                      "  %si: f32[n, 8] = silu(%sp)\n"
                      "  %l: f32[n, 4] = linear(%si, %lw)\n"
                      "  %sm: f32[n, 4] = softmax(%l) {axis=1}\n"
                      "  %ls: f32[n, 4] = log_softmax(%l) {axis=-1}\n"
                      "  return %sm, %ls\n"
                      "}\n");
}
END_TEST

START_TEST(graph_without_inputs_round_trips) {
    expect_round_trip("graph empty() {\n"
                      "  %0: f32[2] = full() {shape=[2], dtype=f32, value=1}\n"
                      "  return %0, %0\n"
                      "}\n");
}
END_TEST

START_TEST(comments_and_spacing_print_canonically) {
    tp_graph *graph = ir_parse_ok("# leading comment\n"
                                  "graph   g ( %x :f32 [ 2,3 ] ) # trailing\n"
                                  "{\n"
                                  "\t%y:f32[2,3]=softmax( %x ){ axis = -1 }   # why not\n"
                                  "  return %y   }");
    char *text = ir_print_ok(graph);
    ck_assert_str_eq(text, "graph g(%x: f32[2, 3]) {\n"
                           "  %y: f32[2, 3] = softmax(%x) {axis=-1}\n"
                           "  return %y\n"
                           "}\n");
    tp_free(text);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(attributes_in_any_order_print_in_key_order) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[4]) {\n"
                                  "  %y: f32[2] = slice(%x) {step=2, stop=end, axis=0, start=0}\n"
                                  "  return %y\n"
                                  "}\n");
    char *text = ir_print_ok(graph);
    ck_assert_ptr_nonnull(strstr(text, "{axis=0, start=0, stop=end, step=2}"));
    tp_free(text);
    tp_graph_destroy(graph);
}
END_TEST

/* Builds full() {value=V} with a double attribute and checks its text. */
static void expect_value_text(double value, const char *text) {
    tp_graph *graph;
    ck_assert_int_eq(tp_graph_create("g", &graph), TP_OK);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.dtype = TP_F64;
    attrs.value = value;
    tp_value_id id;
    ck_assert_int_eq(tp_graph_add_node(graph, "full", NULL, 0, &attrs, "v", &id), TP_OK);
    tp_graph_set_outputs(graph, &id, 1);
    char *printed = ir_print_ok(graph);
    ck_assert_msg(strstr(printed, text), "'%s' lacks '%s'", printed, text);
    tp_graph *parsed = ir_parse_ok(printed);
    double back = tp_graph_value_attrs(parsed, 0)->value;
    ck_assert_msg(memcmp(&back, &value, sizeof back) == 0 || (isnan(back) && isnan(value)),
                  "%.17g read back as %.17g", value, back);
    tp_free(printed);
    tp_graph_destroy(parsed);
    tp_graph_destroy(graph);
}

START_TEST(floats_print_in_the_shortest_form_that_round_trips) {
    expect_value_text(0.1, "value=0.1}");
    expect_value_text(1.0, "value=1}");
    expect_value_text(1e-5, "value=1e-05}");
    expect_value_text(1.0 / 3.0, "value=0.3333333333333333}");
    expect_value_text(-0.0, "value=-0}");
    expect_value_text(1e300, "value=1e+300}");
    expect_value_text(20.0, "value=20}");
    expect_value_text(123456.0, "value=123456}");
    expect_value_text(1e17, "value=1e+17}");
    expect_value_text(-2.5e-7, "value=-2.5e-07}");
    expect_value_text(5e-324, "value=5e-324}");
    expect_value_text(INFINITY, "value=inf}");
    expect_value_text(-INFINITY, "value=-inf}");
    expect_value_text(NAN, "value=nan}");
}
END_TEST

START_TEST(f32_payload_prints_the_shortest_float_form) {
    float values[4] = {0.1f, 1.0f / 3.0f, 16777216.0f, -2.5f};
    int64_t shape[1] = {4};
    tp_tensor *data;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 1, shape, values, &data), TP_OK);
    tp_graph *graph;
    tp_graph_create("g", &graph);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.data = data;
    tp_value_id id;
    ck_assert_int_eq(tp_graph_add_node(graph, "constant", NULL, 0, &attrs, "c", &id), TP_OK);
    tp_tensor_release(data);
    tp_graph_set_outputs(graph, &id, 1);
    char *printed = ir_print_ok(graph);
    ck_assert_ptr_nonnull(strstr(printed, "{value=[0.1, 0.33333334, 16777216, -2.5]}"));
    tp_graph *parsed = ir_parse_ok(printed);
    const float *back = tp_tensor_data(tp_graph_value_attrs(parsed, 0)->data);
    ck_assert_int_eq(memcmp(back, values, sizeof values), 0);
    tp_free(printed);
    tp_graph_destroy(parsed);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(printed_builder_graph_parses_and_prints_the_same) {
    tp_graph *graph;
    tp_graph_create("built", &graph);
    int64_t batch;
    tp_graph_symbol(graph, "batch", &batch);
    tp_type type = ir_type(TP_F32, 2, batch, IR_T(5));
    tp_value_id x, y, z;
    tp_graph_add_input(graph, "x", &type, &x);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = -1;
    attrs.eps = 1e-6;
    ck_assert_int_eq(tp_graph_add_node(graph, "layer_norm", &x, 1, &attrs, NULL, &y), TP_OK);
    tp_attrs gelu = TP_ATTRS_INIT;
    gelu.approximate = TP_GELU_TANH;
    ck_assert_int_eq(tp_graph_add_node(graph, "gelu", &y, 1, &gelu, NULL, &z), TP_OK);
    tp_value_id outputs[2] = {z, x};
    tp_graph_set_outputs(graph, outputs, 2);
    char *first = ir_print_ok(graph);
    tp_graph *parsed = ir_parse_ok(first);
    char *second = ir_print_ok(parsed);
    ck_assert_str_eq(first, second);
    ck_assert_str_eq(first, "graph built(%x: f32[batch, 5]) {\n"
                            "  %1: f32[batch, 5] = layer_norm(%x) {axis=-1, eps=1e-06}\n"
                            "  %2: f32[batch, 5] = gelu(%1) {approximate=tanh}\n"
                            "  return %2, %x\n"
                            "}\n");
    tp_free(first);
    tp_free(second);
    tp_graph_destroy(parsed);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(type_describe_writes_symbols_and_truncates) {
    tp_graph *graph;
    tp_graph_create("g", &graph);
    int64_t n;
    tp_graph_symbol(graph, "n", &n);
    tp_type type = ir_type(TP_I64, 3, n, IR_T(2), IR_T(0));
    char buffer[32];
    ck_assert_str_eq(tp_type_describe(graph, &type, buffer, sizeof buffer), "i64[n, 2, 0]");
    ck_assert_str_eq(tp_type_describe(NULL, &type, buffer, sizeof buffer), "i64[?, 2, 0]");
    tp_type scalar = ir_type(TP_BOOL, 0);
    ck_assert_str_eq(tp_type_describe(graph, &scalar, buffer, sizeof buffer), "bool[]");
    char tiny[5];
    tp_type_describe(graph, &type, tiny, sizeof tiny);
    ck_assert_uint_lt(strlen(tiny), sizeof tiny);
    tp_graph_destroy(graph);
}
END_TEST

static int count_entries(const char *dir) {
    DIR *handle = opendir(dir);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(handle));) count += entry->d_name[0] != '.';
    closedir(handle);
    return count;
}

START_TEST(save_then_load_gives_the_same_text) {
    const char *canonical = "graph g(%x: f32[3]) {\n"
                            "  %y: f32[3] = softmax(%x) {axis=0}\n"
                            "  return %y\n"
                            "}\n";
    tp_graph *graph = ir_parse_ok(canonical);
    char path[4096];
    snprintf(path, sizeof path, "%s/saved.tpir", tp_test_temp_dir());
    ck_assert_int_eq(tp_graph_save(graph, path), TP_OK);
    ck_assert_int_eq(count_entries(tp_test_temp_dir()), 1); /* no temp file left */
    tp_graph *loaded = NULL;
    ck_assert_int_eq(tp_graph_load(path, &loaded), TP_OK);
    char *text = ir_print_ok(loaded);
    ck_assert_str_eq(text, canonical);
    tp_free(text);
    tp_graph_destroy(loaded);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(load_of_a_missing_file_names_it) {
    tp_graph *graph = NULL;
    ck_assert_int_eq(tp_graph_load("/nonexistent/g.tpir", &graph), TP_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tp_last_error(), "/nonexistent/g.tpir"));
}
END_TEST

START_TEST(save_into_a_missing_folder_fails_cleanly) {
    tp_graph *graph = ir_parse_ok("graph g(%x: f32[3]) {\n  return %x\n}\n");
    ck_assert_int_eq(tp_graph_save(graph, "/nonexistent/dir/g.tpir"), TP_ERR_IO);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(ir_text) {
    Suite *suite = suite_create("ir.text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, shape_and_creation_ops_round_trip);
    tcase_add_test(tc, pointwise_reduction_and_matmul_ops_round_trip);
    tcase_add_test(tc, composite_ops_round_trip);
    tcase_add_test(tc, graph_without_inputs_round_trips);
    tcase_add_test(tc, comments_and_spacing_print_canonically);
    tcase_add_test(tc, attributes_in_any_order_print_in_key_order);
    tcase_add_test(tc, floats_print_in_the_shortest_form_that_round_trips);
    tcase_add_test(tc, f32_payload_prints_the_shortest_float_form);
    tcase_add_test(tc, printed_builder_graph_parses_and_prints_the_same);
    tcase_add_test(tc, type_describe_writes_symbols_and_truncates);
    tcase_add_test(tc, save_then_load_gives_the_same_text);
    tcase_add_test(tc, load_of_a_missing_file_names_it);
    tcase_add_test(tc, save_into_a_missing_folder_fails_cleanly);
    suite_add_tcase(suite, tc);
    return suite;
}
