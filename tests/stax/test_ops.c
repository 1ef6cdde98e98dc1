/* stax vs eager on every op of the op table, for every dtype combination the
 * op accepts (dtype combinations the graph builder rejects are skipped: the
 * core never hands them to a backend; every op must be compared at least
 * once), with NumPy broadcasting. */
#include "stax_harness.h"

static const tp_dtype all_dtypes[] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL};

static const char *const unary_ops[] = {
    "neg",  "abs", "exp",   "log",  "sqrt", "rsqrt",       "sin",  "cos",  "tanh",    "sigmoid",
    "relu", "erf", "floor", "ceil", "sign", "logical_not", "gelu", "silu", "softplus"};
static const char *const binary_ops[] = {"add",     "sub",     "mul", "div",         "pow",
                                         "maximum", "minimum", "lt",  "le",          "gt",
                                         "ge",      "eq",      "ne",  "logical_and", "logical_or"};

/* Builds graph(x: a, y: b...) { op(x, y...) }; false when the op's rule
 * refuses the input dtypes. Any other refusal (an unknown op name, attributes
 * or shapes the op rejects) fails the test: the case it meant to check would
 * otherwise pass without checking anything. */
static bool build(tp_graph **out, const char *op, const tp_type *types, int n,
                  const tp_attrs *attrs) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("ops", &g), TP_OK);
    tp_value_id ids[4];
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        ck_assert_int_eq(tp_graph_add_input(g, name, &types[i], &ids[i]), TP_OK);
    }
    tp_value_id result;
    tp_status status = tp_graph_add_node(g, op, ids, n, attrs, "y", &result);
    if (status != TP_OK) {
        ck_assert_msg(status == TP_ERR_DTYPE,
                      "the graph builder refused %s with '%s', not a dtype: %s", op,
                      tp_status_name(status), tp_last_error());
        tp_graph_destroy(g);
        return false;
    }
    ck_assert_int_eq(tp_graph_set_outputs(g, &result, 1), TP_OK);
    *out = g;
    return true;
}

/* How many cases of each op the running test compared (each check test runs
 * in its own process, so the tally starts empty). */
static struct {
    const char *op;
    int tried, compared;
} tally[64];

static void count_case(const char *op, bool compared) {
    int i = 0;
    while (i < 64 && tally[i].op && strcmp(tally[i].op, op) != 0) i++;
    ck_assert_msg(i < 64, "tally full");
    tally[i].op = op;
    tally[i].tried++;
    tally[i].compared += compared;
}

/* Fails unless every op the test tried was compared at least once: an op
 * whose every dtype is refused has not been tested. */
static void assert_every_op_compared(void) {
    for (int i = 0; i < 64 && tally[i].op; i++)
        ck_assert_msg(tally[i].compared > 0, "%s: all %d cases refused by the graph builder",
                      tally[i].op, tally[i].tried);
}

static void check_op(const char *op, const tp_type *types, int n, const tp_attrs *attrs,
                     double rtol_scale) {
    tp_graph *g = NULL;
    bool built = build(&g, op, types, n, attrs);
    count_case(op, built);
    if (!built) return;
    tp_tensor *inputs[4];
    for (int i = 0; i < n; i++)
        inputs[i] = stax_test_random(types[i].dtype, types[i].ndim, types[i].dims, 7 + (uint64_t)i);
    tp_dtype result = tp_graph_value_type(g, tp_graph_output(g, 0))->dtype;
    char what[160];
    snprintf(what, sizeof what, "%s(%s%s%s)", op, n > 0 ? tp_dtype_name(types[0].dtype) : "",
             n > 1 ? ", " : "", n > 1 ? tp_dtype_name(types[1].dtype) : "");
    stax_test_compare(g, inputs, n, stax_test_rtol(result) * rtol_scale,
                      stax_test_atol(result) * rtol_scale, what);
    for (int i = 0; i < n; i++) tp_tensor_release(inputs[i]);
    tp_graph_destroy(g);
}

START_TEST(unary_ops_match_eager_for_every_dtype) {
    stax_test_cache_dir();
    for (size_t o = 0; o < sizeof unary_ops / sizeof *unary_ops; o++)
        for (int d = 0; d < 5; d++) {
            tp_type t = {.dtype = all_dtypes[d], .ndim = 2, .dims = {3, 37}};
            check_op(unary_ops[o], &t, 1, NULL, 1.0);
        }
    assert_every_op_compared();
}
END_TEST

START_TEST(cast_matches_eager_for_every_dtype_pair) {
    stax_test_cache_dir();
    for (int from = 0; from < 5; from++)
        for (int to = 0; to < 5; to++) {
            tp_type t = {.dtype = all_dtypes[from], .ndim = 1, .dims = {29}};
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.dtype = all_dtypes[to];
            check_op("cast", &t, 1, &attrs, 1.0);
        }
    assert_every_op_compared();
}
END_TEST

START_TEST(binary_ops_match_eager_for_every_dtype_pair_with_broadcasting) {
    stax_test_cache_dir();
    for (size_t o = 0; o < sizeof binary_ops / sizeof *binary_ops; o++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                tp_type types[2] = {{.dtype = all_dtypes[a], .ndim = 3, .dims = {2, 1, 17}},
                                    {.dtype = all_dtypes[b], .ndim = 2, .dims = {3, 17}}};
                check_op(binary_ops[o], types, 2, NULL, 1.0);
            }
    assert_every_op_compared();
}
END_TEST

START_TEST(where_matches_eager_for_every_dtype) {
    stax_test_cache_dir();
    for (int c = 0; c < 5; c++)
        for (int a = 0; a < 5; a++) {
            tp_type types[3] = {{.dtype = all_dtypes[c], .ndim = 2, .dims = {4, 5}},
                                {.dtype = all_dtypes[a], .ndim = 1, .dims = {5}},
                                {.dtype = TP_F64, .ndim = 0}};
            check_op("where", types, 3, NULL, 1.0);
        }
    assert_every_op_compared();
}
END_TEST

START_TEST(reductions_match_eager_for_every_dtype_and_axes) {
    stax_test_cache_dir();
    static const char *const ops[] = {"sum", "mean", "max", "min"};
    static const int64_t axes_sets[][3] = {{0, 0, 0}, {1, 1, 0}, {1, -1, 0}, {2, 0, 2}, {1, 0, 0}};
    for (int o = 0; o < 4; o++)
        for (int d = 0; d < 5; d++)
            for (int s = 0; s < 5; s++)
                for (int keep = 0; keep < 2; keep++) {
                    tp_type t = {.dtype = all_dtypes[d], .ndim = 3, .dims = {3, 4, 19}};
                    tp_attrs attrs = TP_ATTRS_INIT;
                    attrs.naxes = (int32_t)axes_sets[s][0];
                    for (int i = 0; i < attrs.naxes; i++) attrs.axes[i] = axes_sets[s][1 + i];
                    attrs.keepdim = keep;
                    check_op(ops[o], &t, 1, &attrs, 1.0);
                }
    for (int d = 0; d < 5; d++)
        for (int axis = -3; axis < 3; axis++) {
            tp_type t = {.dtype = all_dtypes[d], .ndim = 3, .dims = {3, 4, 5}};
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.axis = axis;
            attrs.keepdim = axis == 1;
            check_op("argmax", &t, 1, &attrs, 1.0);
        }
    assert_every_op_compared();
}
END_TEST

START_TEST(matmul_matches_eager_for_dtypes_and_shapes) {
    stax_test_cache_dir();
    static const tp_type shapes[][2] = {
        {{.ndim = 2, .dims = {5, 7}}, {.ndim = 2, .dims = {7, 3}}},
        {{.ndim = 1, .dims = {7}}, {.ndim = 2, .dims = {7, 3}}},
        {{.ndim = 2, .dims = {5, 7}}, {.ndim = 1, .dims = {7}}},
        {{.ndim = 1, .dims = {7}}, {.ndim = 1, .dims = {7}}},
        {{.ndim = 3, .dims = {2, 5, 7}}, {.ndim = 2, .dims = {7, 19}}},
        {{.ndim = 4, .dims = {2, 1, 13, 7}}, {.ndim = 3, .dims = {3, 7, 33}}},
        {{.ndim = 2, .dims = {23, 300}}, {.ndim = 2, .dims = {300, 37}}},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                tp_type types[2] = {shapes[s][0], shapes[s][1]};
                types[0].dtype = all_dtypes[a];
                types[1].dtype = all_dtypes[b];
                check_op("matmul", types, 2, NULL, 10.0);
            }
    assert_every_op_compared();
}
END_TEST

START_TEST(shape_ops_match_eager) {
    stax_test_cache_dir();
    for (int d = 0; d < 5; d++) {
        tp_type t = {.dtype = all_dtypes[d], .ndim = 3, .dims = {2, 3, 4}};
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.shape_ndim = 2, attrs.shape[0] = 4, attrs.shape[1] = -1;
        check_op("reshape", &t, 1, &attrs, 1.0);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.nperm = 3, attrs.perm[0] = 2, attrs.perm[1] = 0, attrs.perm[2] = 1;
        check_op("permute", &t, 1, &attrs, 1.0);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.dim0 = 0, attrs.dim1 = 2;
        check_op("transpose", &t, 1, &attrs, 1.0);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.axis = 2, attrs.start = -3, attrs.stop = TP_SLICE_END, attrs.step = 2;
        check_op("slice", &t, 1, &attrs, 1.0);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.axis = 1;
        check_op("unsqueeze", &t, 1, &attrs, 1.0);
        tp_type one = {.dtype = all_dtypes[d], .ndim = 3, .dims = {2, 1, 4}};
        attrs = (tp_attrs)TP_ATTRS_INIT;
        check_op("squeeze", &one, 1, &attrs, 1.0);
        attrs.shape_ndim = 4, attrs.shape[0] = 5, attrs.shape[1] = 2, attrs.shape[2] = 3,
        attrs.shape[3] = 4;
        check_op("expand", &one, 1, &attrs, 1.0);
        tp_type parts[3] = {t, t, t};
        parts[1].dims[1] = 1;
        parts[2].dims[1] = 5;
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.axis = 1;
        check_op("concat", parts, 3, &attrs, 1.0);
    }
    assert_every_op_compared();
}
END_TEST

START_TEST(creation_ops_match_eager) {
    stax_test_cache_dir();
    for (int d = 0; d < 5; d++) {
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.dtype = all_dtypes[d];
        attrs.shape_ndim = 2, attrs.shape[0] = 3, attrs.shape[1] = 4;
        attrs.value = 1.0;
        check_op("full", NULL, 0, &attrs, 1.0);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.dtype = all_dtypes[d];
        attrs.range_start = 1.5, attrs.range_stop = 17.0, attrs.range_step = 0.75;
        check_op("arange", NULL, 0, &attrs, 1.0);
        int64_t shape[2] = {2, 3};
        tp_tensor *payload = stax_test_random(all_dtypes[d], 2, shape, 3);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.dtype = all_dtypes[d];
        attrs.data = payload;
        check_op("constant", NULL, 0, &attrs, 1.0);
        tp_tensor_release(payload);
    }
    assert_every_op_compared();
}
END_TEST

START_TEST(composites_match_eager) {
    stax_test_cache_dir();
    for (int d = 0; d < 5; d++) {
        tp_type t = {.dtype = all_dtypes[d], .ndim = 3, .dims = {3, 5, 33}};
        for (int axis = -1; axis < 3; axis++) {
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.axis = axis;
            check_op("softmax", &t, 1, &attrs, 1.0);
            check_op("log_softmax", &t, 1, &attrs, 1.0);
            tp_type ln[3] = {t, t, t};
            int a = axis < 0 ? axis + 3 : axis;
            for (int k = 1; k < 3; k++) {
                ln[k].ndim = 3 - a;
                for (int i = 0; i < ln[k].ndim; i++) ln[k].dims[i] = t.dims[a + i];
            }
            for (int n = 1; n <= 3; n++) check_op("layer_norm", ln, n, &attrs, 5.0);
        }
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.approximate = TP_GELU_TANH;
        check_op("gelu", &t, 1, &attrs, 1.0);
        attrs = (tp_attrs)TP_ATTRS_INIT;
        attrs.beta = 2.0, attrs.threshold = 1.5;
        check_op("softplus", &t, 1, &attrs, 1.0);
        tp_type lin[3] = {t,
                          {.dtype = all_dtypes[d], .ndim = 2, .dims = {9, 33}},
                          {.dtype = all_dtypes[d], .ndim = 1, .dims = {9}}};
        check_op("linear", lin, 2, NULL, 10.0);
        check_op("linear", lin, 3, NULL, 10.0);
    }
    assert_every_op_compared();
}
END_TEST

/* pad, clip, cumsum, topk, topk_indices and resize: stax's own kernels
 * (stax_emit_dedicated.c and the clip expression) against the reference. */
START_TEST(dedicated_kernels_match_eager) {
    stax_test_cache_dir();
    for (int d = 0; d < 5; d++) {
        tp_type t = {.dtype = all_dtypes[d], .ndim = 3, .dims = {2, 5, 4}};
        for (int mode = TP_MODE_CONSTANT; mode <= TP_MODE_WRAP; mode++) {
            if (mode == TP_MODE_NEAREST || mode == TP_MODE_LINEAR) continue;
            tp_attrs attrs = TP_ATTRS_INIT;
            attrs.mode = (tp_mode)mode;
            attrs.value = 1.5;
            attrs.npad_before = attrs.npad_after = 3;
            attrs.pad_before[1] = 2, attrs.pad_after[1] = 3, attrs.pad_before[2] = 3;
            attrs.pad_after[0] = mode == TP_MODE_CONSTANT ? -1 : 1;
            check_op("pad", &t, 1, &attrs, 1.0);
        }
        tp_attrs clip = TP_ATTRS_INIT;
        clip.min = -1.5, clip.max = 2.25;
        check_op("clip", &t, 1, &clip, 1.0);
        clip.min = -HUGE_VAL;
        check_op("clip", &t, 1, &clip, 1.0);
        for (int axis = -1; axis < 3; axis++)
            for (int flags = 0; flags < 4; flags++) {
                tp_attrs attrs = TP_ATTRS_INIT;
                attrs.axis = axis, attrs.exclusive = flags & 1, attrs.reverse = flags & 2;
                check_op("cumsum", &t, 1, &attrs, 10.0);
                attrs = (tp_attrs)TP_ATTRS_INIT;
                attrs.axis = axis, attrs.largest = flags & 1;
                attrs.k = axis == 0 ? 2 : flags + 1;
                check_op("topk", &t, 1, &attrs, 1.0);
                check_op("topk_indices", &t, 1, &attrs, 1.0);
            }
        tp_type image = {.dtype = all_dtypes[d], .ndim = 4, .dims = {2, 3, 5, 4}};
        for (int rule = 0; rule <= TP_COORDINATES_TF_HALF_PIXEL_FOR_NN; rule++)
            for (int mode = TP_MODE_NEAREST; mode <= TP_MODE_LINEAR; mode++) {
                tp_attrs attrs = TP_ATTRS_INIT;
                attrs.mode = (tp_mode)mode;
                attrs.coordinates = (tp_coordinates)rule;
                attrs.rounding = (tp_rounding)(rule % 4);
                attrs.shape_ndim = 4;
                attrs.shape[0] = attrs.shape[1] = -1, attrs.shape[2] = 9, attrs.shape[3] = 3;
                if (rule == TP_COORDINATES_ALIGN_CORNERS) attrs.scale_h = 1.9, attrs.scale_w = 0.8;
                check_op("resize", &image, 1, &attrs, 10.0);
            }
    }
    assert_every_op_compared();
}
END_TEST

/* The dedicated kernels read their operand through a strided view (here a
 * transpose, which stax does not copy). */
START_TEST(dedicated_kernels_read_strided_operands) {
    stax_test_cache_dir();
    static const char text[] =
        "graph strided(%x: f32[4, 6]) {\n"
        "  %t: f32[6, 4] = transpose(%x) {dim0=0, dim1=1}\n"
        "  %p: f32[9, 5] = pad(%t) {before=[2, 0], after=[1, 1], mode=reflect}\n"
        "  %c: f32[6, 4] = cumsum(%t) {axis=1, reverse=true}\n"
        "  %k: i64[6, 2] = topk_indices(%t) {axis=1, k=2}\n"
        "  %u: f32[1, 6, 4] = unsqueeze(%t) {axis=0}\n"
        "  %r: f32[1, 12, 3] = resize(%u) {shape=[-1, 12, 3], mode=linear}\n"
        "  return %p, %c, %k, %r\n"
        "}\n";
    tp_graph *g = NULL;
    ck_assert_msg(tp_graph_parse(text, sizeof text - 1, "strided.tpir", &g) == TP_OK, "%s",
                  tp_last_error());
    int64_t shape[2] = {4, 6};
    tp_tensor *x = stax_test_random(TP_F32, 2, shape, 11);
    stax_test_compare(g, &x, 1, 1e-5, 1e-6, "strided dedicated kernels");
    tp_tensor_release(x);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_ops) {
    Suite *s = suite_create("stax_ops");
    TCase *c = tcase_create("ops");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, unary_ops_match_eager_for_every_dtype);
    tcase_add_test(c, cast_matches_eager_for_every_dtype_pair);
    tcase_add_test(c, binary_ops_match_eager_for_every_dtype_pair_with_broadcasting);
    tcase_add_test(c, where_matches_eager_for_every_dtype);
    tcase_add_test(c, reductions_match_eager_for_every_dtype_and_axes);
    tcase_add_test(c, matmul_matches_eager_for_dtypes_and_shapes);
    tcase_add_test(c, shape_ops_match_eager);
    tcase_add_test(c, creation_ops_match_eager);
    tcase_add_test(c, composites_match_eager);
    tcase_add_test(c, dedicated_kernels_match_eager);
    tcase_add_test(c, dedicated_kernels_read_strided_operands);
    suite_add_tcase(s, c);
    return s;
}
