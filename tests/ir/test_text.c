/* The .tpir printer and parser together (core/ir/print.c, parse.c):
 * canonical text survives parse -> print byte for byte, other spellings
 * print canonically, numbers round-trip, files save atomically. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_helpers.h"
#include "tensorplay/ops.h"

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

/* Parses `written`, prints it, compares with `canonical` (written by hand). */
static void expect_prints_as(const char *written, const char *canonical) {
    tp_graph *graph = ir_parse_ok(written);
    char *text = ir_print_ok(graph);
    ck_assert_str_eq(text, canonical);
    tp_free(text);
    tp_graph_destroy(graph);
    expect_round_trip(canonical);
}

START_TEST(omitted_attributes_take_the_op_tables_defaults) {
    expect_prints_as("graph g(%x: f32[2, 3], %i: i64[2]) {\n"
                     "  %s: f32[2, 3] = softmax(%x)\n"
                     "  %l: f32[2, 3] = log_softmax(%x) {}\n"
                     "  %t: f32[] = sum(%x)\n"
                     "  %m: f32[2, 1] = mean(%x) {axes=[1], keepdim=true}\n"
                     "  %k: f32[2, 2] = slice(%x) {axis=1, stop=2}\n"
                     "  %g: f32[2, 3] = gelu(%x)\n"
                     "  %p: f32[2, 3] = softplus(%x) {beta=2}\n"
                     "  %c: f64[2, 3] = cast(%x)\n"
                     "  %f: i32[2, 2] = full() {value=3}\n"
                     "  %a: f32[3] = arange() {stop=3}\n"
                     "  %r: f32[3, 2] = reshape(%x)\n"
                     "  %j: f32[4, 3] = concat(%x, %x)\n"
                     "  %q: f32[2, 3] = gather(%x, %i)\n"
                     "  return %s, %l, %t, %m, %k, %g, %p, %c, %f, %a, %r, %j, %q\n"
                     "}\n",
                     "graph g(%x: f32[2, 3], %i: i64[2]) {\n"
                     "  %s: f32[2, 3] = softmax(%x) {axis=-1}\n"
                     "  %l: f32[2, 3] = log_softmax(%x) {axis=-1}\n"
                     "  %t: f32[] = sum(%x) {axes=[], keepdim=false}\n"
                     "  %m: f32[2, 1] = mean(%x) {axes=[1], keepdim=true}\n"
                     "  %k: f32[2, 2] = slice(%x) {axis=1, start=0, stop=2, step=1}\n"
                     "  %g: f32[2, 3] = gelu(%x) {approximate=none}\n"
                     "  %p: f32[2, 3] = softplus(%x) {beta=2, threshold=20}\n"
                     "  %c: f64[2, 3] = cast(%x) {dtype=f64}\n"
                     "  %f: i32[2, 2] = full() {shape=[2, 2], dtype=i32, value=3}\n"
                     "  %a: f32[3] = arange() {start=0, stop=3, step=1, dtype=f32}\n"
                     "  %r: f32[3, 2] = reshape(%x) {shape=[3, 2]}\n"
                     "  %j: f32[4, 3] = concat(%x, %x) {axis=0}\n"
                     "  %q: f32[2, 3] = gather(%x, %i) {axis=0}\n"
                     "  return %s, %l, %t, %m, %k, %g, %p, %c, %f, %a, %r, %j, %q\n"
                     "}\n");
}
END_TEST

START_TEST(number_operands_become_constants_of_the_operands_dtype) {
    expect_prints_as("graph g(%x: f32[2], %n: i64[2], %m: bool[2]) {\n"
                     "  %y: f32[2] = mul(%x, 0.125)\n"
                     "  %z: f32[2] = where(%m, -inf, %y)\n"
                     "  %k: i64[2] = add(3, %n)\n"
                     "  return %z, %k\n"
                     "}\n",
                     "graph g(%x: f32[2], %n: i64[2], %m: bool[2]) {\n"
                     "  %y.literal1: f32[] = constant() {value=[0.125]}\n"
                     "  %y: f32[2] = mul(%x, %y.literal1)\n"
                     "  %z.literal1: f32[] = constant() {value=[-inf]}\n"
                     "  %z: f32[2] = where(%m, %z.literal1, %y)\n"
                     "  %k.literal0: i64[] = constant() {value=[3]}\n"
                     "  %k: i64[2] = add(%k.literal0, %n)\n"
                     "  return %z, %k\n"
                     "}\n");
}
END_TEST

START_TEST(dotted_value_names_round_trip) {
    expect_round_trip("graph g(%encoder.layer.0.weight: f32[4, 4], %0.bias: f32[4]) {\n"
                      "  %encoder.layer.0.out: f32[4, 4] = add(%encoder.layer.0.weight, %0.bias)\n"
                      "  return %encoder.layer.0.out\n"
                      "}\n");
}
END_TEST

/* A node of an op reading `key`, with every other attribute written out, for
 * checking `key`'s default of that op: "%s" stands for where key=value goes
 * (empty: left out). */
typedef struct default_carrier {
    const char *op;
    tp_attr_key key;
    const char *node; /* printf format taking the attribute text ("" or "key=value, ") */
} default_carrier;

static const default_carrier carriers[] = {
    {"sum", TP_ATTR_AXES, "  %%y: f32[] = sum(%%x) {%skeepdim=false}\n"},
    {"sum", TP_ATTR_KEEPDIM, "  %%y: f32[] = sum(%%x) {%saxes=[]}\n"},
    {"slice", TP_ATTR_START, "  %%y: f32[2, 3] = slice(%%x) {%saxis=1, stop=end, step=1}\n"},
    {"slice", TP_ATTR_STOP, "  %%y: f32[2, 3] = slice(%%x) {%saxis=1, start=0, step=1}\n"},
    {"slice", TP_ATTR_STEP, "  %%y: f32[2, 3] = slice(%%x) {%saxis=1, start=0, stop=end}\n"},
    {"arange", TP_ATTR_RANGE_START, "  %%y: f32[3] = arange() {%sstop=3, step=1, dtype=f32}\n"},
    {"arange", TP_ATTR_RANGE_STEP, "  %%y: f32[3] = arange() {%sstart=0, stop=3, dtype=f32}\n"},
    {"layer_norm", TP_ATTR_EPS, "  %%y: f32[2, 3] = layer_norm(%%x) {%saxis=-1}\n"},
    {"gelu", TP_ATTR_APPROXIMATE, "  %%y: f32[2, 3] = gelu(%%x) {%s}\n"},
    {"softplus", TP_ATTR_BETA, "  %%y: f32[2, 3] = softplus(%%x) {%sthreshold=20}\n"},
    {"softplus", TP_ATTR_THRESHOLD, "  %%y: f32[2, 3] = softplus(%%x) {%sbeta=1}\n"},
    {"softmax", TP_ATTR_AXIS, "  %%y: f32[2, 3] = softmax(%%x) {%s}\n"},
    {"concat", TP_ATTR_AXIS, "  %%y: f32[2, 3] = concat(%%x) {%s}\n"},
};

/* The graph text with the carrier's node, `attribute` in its block. */
static char *carrier_text(const default_carrier *carrier, const char *attribute) {
    static char text[512];
    char node[256];
    snprintf(node, sizeof node, carrier->node, attribute);
    /* A trailing ", " before '}' is not .tpir: drop it. */
    char *tail = strstr(node, ", }");
    if (tail) memmove(tail, tail + 2, strlen(tail + 2) + 1);
    snprintf(text, sizeof text, "graph g(%%x: f32[2, 3]) {\n%s  return %%y\n}\n", node);
    return text;
}

START_TEST(each_default_reads_like_the_written_value) {
    for (size_t i = 0; i < sizeof carriers / sizeof carriers[0]; i++) {
        const default_carrier *carrier = &carriers[i];
        int op = 0;
        tp_op_info info = TP_OP_INFO_INIT;
        for (; op < tp_op_count(); op++)
            if (tp_op_describe(op, &info) == TP_OK && strcmp(info.name, carrier->op) == 0) break;
        ck_assert_int_lt(op, tp_op_count());
        const char *fallback = tp_op_attribute_default(op, carrier->key);
        ck_assert_msg(fallback, "%s.%s has no default", carrier->op,
                      tp_attr_key_name(carrier->key));
        tp_graph *implicit = ir_parse_ok(carrier_text(carrier, ""));
        char attribute[128];
        snprintf(attribute, sizeof attribute, "%s=%s, ", tp_attr_key_name(carrier->key), fallback);
        tp_graph *written = ir_parse_ok(carrier_text(carrier, attribute));
        char *a = ir_print_ok(implicit), *b = ir_print_ok(written);
        ck_assert_str_eq(a, b);
        tp_free(a);
        tp_free(b);
        tp_graph_destroy(implicit);
        tp_graph_destroy(written);
    }
}
END_TEST

START_TEST(defaults_exist_only_for_attributes_an_op_reads) {
    for (int op = 0; op < tp_op_count(); op++) {
        tp_op_info info = TP_OP_INFO_INIT;
        ck_assert_int_eq(tp_op_describe(op, &info), TP_OK);
        for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
            const char *text = tp_op_attribute_default(op, (tp_attr_key)key);
            if (!(info.attr_mask & TP_ATTR_BIT(key)))
                ck_assert_msg(!text, "%s: default for attribute %s it does not read", info.name,
                              tp_attr_key_name((tp_attr_key)key));
            else if (text)
                ck_assert_msg(text[0] != '\0', "%s.%s: empty default", info.name,
                              tp_attr_key_name((tp_attr_key)key));
        }
    }
    ck_assert_ptr_null(tp_op_attribute_default(-1, TP_ATTR_AXIS));
    ck_assert_ptr_null(tp_op_attribute_default(tp_op_count(), TP_ATTR_AXIS));
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
    tcase_add_test(tc, omitted_attributes_take_the_op_tables_defaults);
    tcase_add_test(tc, number_operands_become_constants_of_the_operands_dtype);
    tcase_add_test(tc, dotted_value_names_round_trip);
    tcase_add_test(tc, each_default_reads_like_the_written_value);
    tcase_add_test(tc, defaults_exist_only_for_attributes_an_op_reads);
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
