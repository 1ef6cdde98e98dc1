/* Every op of the op table, in every dtype its rule accepts, generates CUDA
 * C that NVRTC compiles to PTX for compute_75 and compute_90 (no GPU
 * needed: target=ptx). A dtype the op's rule rejects is skipped (the core
 * never hands such a graph to a backend). Composites are decomposed by the
 * plugin; transpose/squeeze/unsqueeze/expand/slice/permute/reshape are
 * strided views and are checked both as outputs and read by a kernel. */
#include <stdio.h>
#include <string.h>

#include "cuda_harness.h"

static const tp_dtype all_dtypes[] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL};
#define NUM_DTYPES 5

static tp_type type_of(tp_dtype dtype, int ndim, const int64_t *dims) {
    tp_type type = {.dtype = dtype, .ndim = ndim};
    for (int d = 0; d < ndim; d++) type.dims[d] = dims[d];
    return type;
}

/* Builds graph(inputs) { %y = op(inputs) {attrs}; return %y }; NULL when
 * the op's rule rejects the input dtypes. Any other refusal (an unknown op
 * name, attributes or shapes the op rejects) fails the test: the case would
 * otherwise pass without compiling anything. */
static tp_graph *single_op(const char *op, const tp_type *inputs, int count,
                           const tp_attrs *attrs) {
    tp_graph *graph;
    ck_assert_int_eq(tp_graph_create(op, &graph), TP_OK);
    tp_value_id ids[4];
    for (int i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        ck_assert_int_eq(tp_graph_add_input(graph, name, &inputs[i], &ids[i]), TP_OK);
    }
    tp_value_id y;
    tp_status status = tp_graph_add_node(graph, op, ids, count, attrs, "y", &y);
    if (status != TP_OK) {
        ck_assert_msg(status == TP_ERR_DTYPE,
                      "the graph builder refused %s with '%s', not a dtype: %s", op,
                      tp_status_name(status), tp_last_error());
        tp_graph_destroy(graph);
        return NULL;
    }
    ck_assert_int_eq(tp_graph_set_outputs(graph, &y, 1), TP_OK);
    return graph;
}

/* Compiles op over each dtype; returns how many dtypes the rule accepted. */
static int compile_each_dtype(const char *op, int arity, const tp_attrs *attrs) {
    static const int64_t dims[][2] = {{3, 5}, {5, 0}, {3, 5}};
    static const int ranks[] = {2, 1, 2};
    int accepted = 0;
    for (int t = 0; t < NUM_DTYPES; t++) {
        tp_type inputs[3];
        for (int i = 0; i < arity; i++) inputs[i] = type_of(all_dtypes[t], ranks[i], dims[i]);
        if (arity == 3) inputs[0].dtype = TP_BOOL; /* where's condition */
        tp_graph *graph = single_op(op, inputs, arity, attrs);
        if (!graph) continue;
        cuda_compile_both(graph);
        tp_graph_destroy(graph);
        accepted++;
    }
    return accepted;
}

START_TEST(unary_ops_compile_in_every_accepted_dtype) {
    static const char *const ops[] = {"neg",   "abs",  "exp",  "log",        "sqrt", "rsqrt",
                                      "sin",   "cos",  "tanh", "sigmoid",    "relu", "erf",
                                      "floor", "ceil", "sign", "logical_not"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        ck_assert_msg(compile_each_dtype(ops[i], 1, NULL) >= 4, "%s accepted too few dtypes",
                      ops[i]);
}
END_TEST

START_TEST(binary_ops_compile_in_every_accepted_dtype_with_broadcasting) {
    static const char *const ops[] = {"add",     "sub",     "mul", "div",         "pow",
                                      "maximum", "minimum", "lt",  "le",          "gt",
                                      "ge",      "eq",      "ne",  "logical_and", "logical_or"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        ck_assert_msg(compile_each_dtype(ops[i], 2, NULL) >= 4, "%s accepted too few dtypes",
                      ops[i]);
}
END_TEST

START_TEST(where_compiles_in_every_dtype) {
    ck_assert_int_eq(compile_each_dtype("where", 3, NULL), NUM_DTYPES);
}
END_TEST

START_TEST(binary_ops_with_mixed_dtypes_promote_and_compile) {
    static const int64_t dims[] = {4, 3};
    static const char *const ops[] = {"add", "div", "pow", "maximum", "lt", "logical_and"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        int accepted = 0;
        for (int a = 0; a < NUM_DTYPES; a++)
            for (int b = 0; b < NUM_DTYPES; b++) {
                if (a == b) continue;
                tp_type inputs[2] = {type_of(all_dtypes[a], 2, dims),
                                     type_of(all_dtypes[b], 1, dims + 1)};
                tp_graph *graph = single_op(ops[o], inputs, 2, NULL);
                if (!graph) continue;
                cuda_compile_ptx(graph, "compute_75");
                tp_graph_destroy(graph);
                accepted++;
            }
        ck_assert_msg(accepted > 0, "%s: every mixed dtype pair was refused", ops[o]);
    }
}
END_TEST

START_TEST(cast_compiles_between_every_pair_of_dtypes) {
    static const int64_t dims[] = {7};
    for (int from = 0; from < NUM_DTYPES; from++)
        for (int to = 0; to < NUM_DTYPES; to++) {
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.dtype = all_dtypes[to];
            tp_type input = type_of(all_dtypes[from], 1, dims);
            tp_graph *graph = single_op("cast", &input, 1, &attrs);
            ck_assert_ptr_nonnull(graph);
            cuda_compile_both(graph);
            tp_graph_destroy(graph);
        }
}
END_TEST

START_TEST(reductions_compile_over_inner_outer_and_all_axes) {
    static const char *const ops[] = {"sum", "mean", "max", "min"};
    static const int64_t dims[] = {6, 5, 4};
    static const int64_t axes[][2] = {{2, 0}, {0, 0}, {0, 2}, {1, 0}};
    static const int naxes[] = {1, 1, 2, 0};
    for (size_t o = 0; o < 4; o++)
        for (int t = 0; t < NUM_DTYPES; t++)
            for (int a = 0; a < 4; a++) {
                tp_attrs attrs = TP_ATTRS_INIT;
                attrs.naxes = naxes[a];
                for (int k = 0; k < naxes[a]; k++) attrs.axes[k] = axes[a][k];
                attrs.keepdim = a & 1;
                tp_type input = type_of(all_dtypes[t], 3, dims);
                tp_graph *graph = single_op(ops[o], &input, 1, &attrs);
                ck_assert_msg(graph != NULL, "%s rejected %d", ops[o], t);
                cuda_compile_both(graph);
                tp_graph_destroy(graph);
            }
}
END_TEST

START_TEST(argmax_compiles_along_each_axis_in_every_dtype) {
    static const int64_t dims[] = {5, 9};
    for (int t = 0; t < NUM_DTYPES; t++)
        for (int axis = -1; axis < 2; axis++) {
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.axis = axis;
            attrs.keepdim = axis == 0;
            tp_type input = type_of(all_dtypes[t], 2, dims);
            tp_graph *graph = single_op("argmax", &input, 1, &attrs);
            ck_assert_ptr_nonnull(graph);
            cuda_compile_both(graph);
            tp_graph_destroy(graph);
        }
}
END_TEST

START_TEST(matmul_compiles_for_every_numeric_dtype_and_operand_rank) {
    static const int64_t shapes[][2][3] = {
        {{4, 6}, {6, 5}}, {{2, 4, 6}, {6, 5}}, {{6}, {6, 5}}, {{4, 6}, {6}}, {{6}, {6}}};
    static const int ranks[][2] = {{2, 2}, {3, 2}, {1, 2}, {2, 1}, {1, 1}};
    int accepted = 0;
    for (int t = 0; t < NUM_DTYPES; t++)
        for (int s = 0; s < 5; s++) {
            tp_type inputs[2] = {type_of(all_dtypes[t], ranks[s][0], shapes[s][0]),
                                 type_of(all_dtypes[t], ranks[s][1], shapes[s][1])};
            tp_graph *graph = single_op("matmul", inputs, 2, NULL);
            if (!graph) continue;
            ck_assert_int_eq(cuda_compile_ptx(graph, "compute_75"), 1);
            cuda_compile_ptx(graph, "compute_90");
            tp_graph_destroy(graph);
            accepted++;
        }
    ck_assert_int_eq(accepted, 4 * 5); /* bool @ bool is refused by the rule */
}
END_TEST

/* y = op(x) as an output (a copy of a view) and z = y + y (a view read by a kernel). */
static void compile_shape_op(const char *op, tp_dtype dtype, const tp_attrs *attrs) {
    static const int64_t dims[] = {4, 1, 6};
    tp_graph *graph;
    ck_assert_int_eq(tp_graph_create(op, &graph), TP_OK);
    tp_type type = type_of(dtype, 3, dims);
    tp_value_id x, y, z = TP_NO_VALUE;
    ck_assert_int_eq(tp_graph_add_input(graph, "x", &type, &x), TP_OK);
    tp_value_id pair[2] = {x, x};
    int count = strcmp(op, "concat") == 0 ? 2 : 1;
    ck_assert_int_eq(tp_graph_add_node(graph, op, pair, count, attrs, "y", &y), TP_OK);
    tp_value_id sum_in[2] = {y, y};
    tp_value_id outputs[2] = {y, y};
    if (tp_graph_add_node(graph, dtype == TP_BOOL ? "logical_or" : "add", sum_in, 2, NULL, "z",
                          &z) == TP_OK)
        outputs[1] = z;
    ck_assert_int_eq(tp_graph_set_outputs(graph, outputs, 2), TP_OK);
    cuda_compile_both(graph);
    tp_graph_destroy(graph);
}

START_TEST(shape_ops_compile_as_views_in_every_dtype) {
    for (int t = 0; t < NUM_DTYPES; t++) {
        tp_dtype dtype = all_dtypes[t];
        tp_attrs a = TP_ATTRS_INIT;
        a.shape_ndim = 2;
        a.shape[0] = 6;
        a.shape[1] = -1;
        compile_shape_op("reshape", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.nperm = 3;
        a.perm[0] = 2, a.perm[1] = 0, a.perm[2] = 1;
        compile_shape_op("permute", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.dim0 = 0, a.dim1 = -1;
        compile_shape_op("transpose", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.shape_ndim = 4;
        a.shape[0] = 2, a.shape[1] = 4, a.shape[2] = 3, a.shape[3] = 6;
        compile_shape_op("expand", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.axis = 2, a.start = -5, a.stop = TP_SLICE_END, a.step = 2;
        compile_shape_op("slice", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.axis = 1;
        compile_shape_op("concat", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        compile_shape_op("squeeze", dtype, &a);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.axis = -1;
        compile_shape_op("unsqueeze", dtype, &a);
    }
}
END_TEST

START_TEST(reshape_of_a_transposed_view_is_copied_and_compiles) {
    static const char text[] = "graph g(%x: f32[4, 6]) {\n"
                               "  %t: f32[6, 4] = transpose(%x) {dim0=0, dim1=1}\n"
                               "  %r: f32[24] = reshape(%t) {shape=[24]}\n"
                               "  %e: f32[24] = exp(%r)\n"
                               "  return %e\n"
                               "}\n";
    tp_graph *graph;
    ck_assert_int_eq(tp_graph_parse(text, sizeof text - 1, NULL, &graph), TP_OK);
    ck_assert_int_eq(cuda_compile_ptx(graph, "compute_75"), 2); /* copy + exp */
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(creation_ops_compile_in_every_dtype) {
    for (int t = 0; t < NUM_DTYPES; t++) {
        tp_dtype dtype = all_dtypes[t];
        tp_attrs a = TP_ATTRS_INIT;
        a.dtype = dtype;
        a.shape_ndim = 2;
        a.shape[0] = 3, a.shape[1] = 2;
        a.value = dtype == TP_BOOL ? 1 : 3;
        tp_graph *graph = single_op("full", NULL, 0, &a);
        ck_assert_ptr_nonnull(graph);
        cuda_compile_both(graph);
        tp_graph_destroy(graph);
        if (dtype != TP_BOOL) {
            a = (tp_attrs)TP_ATTRS_INIT;
            a.dtype = dtype;
            a.range_start = 1, a.range_stop = 9, a.range_step = 2;
            graph = single_op("arange", NULL, 0, &a);
            ck_assert_ptr_nonnull(graph);
            cuda_compile_both(graph);
            tp_graph_destroy(graph);
        }
        unsigned char payload[6 * 8] = {1};
        int64_t dims[] = {2, 3};
        tp_tensor *data;
        ck_assert_int_eq(tp_tensor_from_data(dtype, 2, dims, payload, &data), TP_OK);
        a = (tp_attrs)TP_ATTRS_INIT;
        a.data = data;
        graph = single_op("constant", NULL, 0, &a);
        tp_tensor_release(data);
        ck_assert_ptr_nonnull(graph);
        cuda_compile_both(graph);
        tp_graph_destroy(graph);
    }
}
END_TEST

START_TEST(composites_compile_for_float_and_integer_inputs) {
    static const tp_dtype dtypes[] = {TP_F32, TP_F64, TP_I32};
    static const int64_t dims[] = {3, 8}, weight_dims[] = {8}, linear_dims[] = {5, 8};
    for (int t = 0; t < 3; t++) {
        tp_type x = type_of(dtypes[t], 2, dims);
        tp_attrs a = TP_ATTRS_INIT;
        a.axis = -1;
        static const char *const unary_ops[] = {"softmax", "log_softmax", "gelu", "silu",
                                                "softplus"};
        for (int o = 0; o < 5; o++) {
            tp_attrs attrs = a;
            if (!strcmp(unary_ops[o], "gelu"))
                attrs.approximate = t == 1 ? TP_GELU_TANH : TP_GELU_NONE;
            tp_graph *graph = single_op(unary_ops[o], &x, 1, &attrs);
            ck_assert_msg(graph != NULL, "%s rejected", unary_ops[o]);
            cuda_compile_both(graph);
            tp_graph_destroy(graph);
        }
        tp_type ln[3] = {x, type_of(dtypes[t], 1, weight_dims), type_of(TP_F32, 1, weight_dims)};
        for (int count = 1; count <= 3; count++) {
            tp_graph *graph = single_op("layer_norm", ln, count, &a);
            ck_assert_ptr_nonnull(graph);
            cuda_compile_both(graph);
            tp_graph_destroy(graph);
        }
        tp_type lin[3] = {x, type_of(dtypes[t], 2, linear_dims),
                          type_of(dtypes[t], 1, linear_dims)};
        for (int count = 2; count <= 3; count++) {
            tp_graph *graph = single_op("linear", lin, count, NULL);
            ck_assert_ptr_nonnull(graph);
            cuda_compile_both(graph);
            tp_graph_destroy(graph);
        }
    }
}
END_TEST

TP_TEST_SUITE(cuda_ptx_ops) {
    Suite *suite = suite_create("cuda_ptx_ops");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 600);
    tcase_add_test(ops, unary_ops_compile_in_every_accepted_dtype);
    tcase_add_test(ops, binary_ops_compile_in_every_accepted_dtype_with_broadcasting);
    tcase_add_test(ops, where_compiles_in_every_dtype);
    tcase_add_test(ops, binary_ops_with_mixed_dtypes_promote_and_compile);
    tcase_add_test(ops, cast_compiles_between_every_pair_of_dtypes);
    tcase_add_test(ops, reductions_compile_over_inner_outer_and_all_axes);
    tcase_add_test(ops, argmax_compiles_along_each_axis_in_every_dtype);
    tcase_add_test(ops, matmul_compiles_for_every_numeric_dtype_and_operand_rank);
    tcase_add_test(ops, shape_ops_compile_as_views_in_every_dtype);
    tcase_add_test(ops, reshape_of_a_transposed_view_is_copied_and_compiles);
    tcase_add_test(ops, creation_ops_compile_in_every_dtype);
    tcase_add_test(ops, composites_compile_for_float_and_integer_inputs);
    suite_add_tcase(suite, ops);
    return suite;
}
