/* stax's own gather and gather_elements kernels: claimed for every dtype
 * (no fallback), results equal to a take / take_along_axis written out in
 * the test by coordinates (NumPy's definitions) for several ranks, axes
 * (negative ones too), data dtypes (f16/bf16 compared bit for bit, NaN
 * payloads included) and both index dtypes with negative indices; an index
 * out of range is a run error naming the node, the index, its position and
 * the valid range. */
#include "stax_harness.h"

static const tp_dtype data_dtypes[] = {TP_F32, TP_F64, TP_I32, TP_I64, TP_BOOL, TP_F16, TP_BF16};

static int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/* Data whose every element has distinct bits (bools: 0/1), the float
 * dtypes' bytes including NaNs and infinities: a copy that rounds or picks
 * the wrong element differs. */
static tp_tensor *distinct_data(tp_dtype dtype, int ndim, const int64_t *shape, uint64_t seed) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &t), TP_OK);
    uint8_t *bytes = tp_tensor_data_mut(t);
    size_t size = tp_dtype_size(dtype);
    uint64_t state = seed;
    for (int64_t i = 0; i < numel_of(ndim, shape); i++) {
        if (dtype == TP_BOOL) {
            bytes[i] = (uint8_t)(stax_test_next(&state) & 1);
            continue;
        }
        uint64_t bits = stax_test_next(&state) << 16 ^ (uint64_t)i; /* distinct low bits */
        memcpy(bytes + (size_t)i * size, &bits, size);
    }
    return t;
}

/* Indices spread over [-length, length) (negative ones included). */
static tp_tensor *indices_in_range(tp_dtype dtype, int ndim, const int64_t *shape, int64_t length,
                                   uint64_t seed) {
    tp_tensor *t = NULL;
    ck_assert_int_eq(tp_tensor_create(dtype, ndim, shape, &t), TP_OK);
    uint64_t state = seed;
    for (int64_t i = 0; i < numel_of(ndim, shape); i++) {
        int64_t index = (int64_t)(stax_test_next(&state) % (uint64_t)(2 * length)) - length;
        if (dtype == TP_I64)
            ((int64_t *)tp_tensor_data_mut(t))[i] = index;
        else
            ((int32_t *)tp_tensor_data_mut(t))[i] = (int32_t)index;
    }
    return t;
}

static int64_t index_value(const tp_tensor *indices, int64_t i) {
    return tp_tensor_dtype(indices) == TP_I64 ? ((const int64_t *)tp_tensor_data(indices))[i]
                                              : ((const int32_t *)tp_tensor_data(indices))[i];
}

/* Flat C-order position of coordinates `at` in `shape`. */
static int64_t flat_of(int ndim, const int64_t *shape, const int64_t *at) {
    int64_t flat = 0;
    for (int d = 0; d < ndim; d++) flat = flat * shape[d] + at[d];
    return flat;
}

static void coords_of(int64_t flat, int ndim, const int64_t *shape, int64_t *at) {
    for (int d = ndim - 1; d >= 0; d--) {
        at[d] = flat % shape[d];
        flat /= shape[d];
    }
}

/* NumPy's take(data, indices, axis): out[a.., i.., b..] = data[a.., idx[i..], b..]. */
static void take(const tp_tensor *data, const tp_tensor *indices, int axis, uint8_t *out) {
    int rank = tp_tensor_ndim(data), index_rank = tp_tensor_ndim(indices);
    int64_t shape[TP_MAX_DIMS], index_shape[TP_MAX_DIMS], out_shape[TP_MAX_DIMS];
    for (int d = 0; d < rank; d++) shape[d] = tp_tensor_dim(data, d);
    for (int d = 0; d < index_rank; d++) index_shape[d] = tp_tensor_dim(indices, d);
    int out_rank = 0;
    for (int d = 0; d < axis; d++) out_shape[out_rank++] = shape[d];
    for (int d = 0; d < index_rank; d++) out_shape[out_rank++] = index_shape[d];
    for (int d = axis + 1; d < rank; d++) out_shape[out_rank++] = shape[d];
    size_t size = tp_dtype_size(tp_tensor_dtype(data));
    const uint8_t *src = tp_tensor_data(data);
    for (int64_t flat = 0; flat < numel_of(out_rank, out_shape); flat++) {
        int64_t at[TP_MAX_DIMS], source[TP_MAX_DIMS];
        coords_of(flat, out_rank, out_shape, at);
        int64_t index = index_value(indices, flat_of(index_rank, index_shape, at + axis));
        for (int d = 0; d < rank; d++)
            source[d] = d < axis ? at[d] : d > axis ? at[d - 1 + index_rank] : 0;
        source[axis] = index < 0 ? index + shape[axis] : index;
        memcpy(out + (size_t)flat * size, src + (size_t)flat_of(rank, shape, source) * size, size);
    }
}

/* NumPy's take_along_axis: out[p] = data[p with p[axis] = idx[p]]. */
static void take_along_axis(const tp_tensor *data, const tp_tensor *indices, int axis,
                            uint8_t *out) {
    int rank = tp_tensor_ndim(data);
    int64_t shape[TP_MAX_DIMS], index_shape[TP_MAX_DIMS];
    for (int d = 0; d < rank; d++) {
        shape[d] = tp_tensor_dim(data, d);
        index_shape[d] = tp_tensor_dim(indices, d);
    }
    size_t size = tp_dtype_size(tp_tensor_dtype(data));
    const uint8_t *src = tp_tensor_data(data);
    for (int64_t flat = 0; flat < numel_of(rank, index_shape); flat++) {
        int64_t at[TP_MAX_DIMS];
        coords_of(flat, rank, index_shape, at);
        int64_t index = index_value(indices, flat);
        at[axis] = index < 0 ? index + shape[axis] : index;
        memcpy(out + (size_t)flat * size, src + (size_t)flat_of(rank, shape, at) * size, size);
    }
}

/* graph(x0: data, x1: indices) { y = op(x0, x1) {axis} }. */
static tp_graph *indexing_graph(const char *op, const tp_tensor *data, const tp_tensor *indices,
                                int64_t axis) {
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("indexing", &g), TP_OK);
    tp_type types[2];
    const tp_tensor *operands[2] = {data, indices};
    tp_value_id ids[2];
    for (int i = 0; i < 2; i++) {
        types[i].dtype = tp_tensor_dtype(operands[i]);
        types[i].ndim = tp_tensor_ndim(operands[i]);
        for (int d = 0; d < types[i].ndim; d++) types[i].dims[d] = tp_tensor_dim(operands[i], d);
        ck_assert_int_eq(tp_graph_add_input(g, i ? "ids" : "table", &types[i], &ids[i]), TP_OK);
    }
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.axis = axis;
    tp_value_id result;
    ck_assert_msg(tp_graph_add_node(g, op, ids, 2, &attrs, "picked", &result) == TP_OK, "%s: %s",
                  op, tp_last_error());
    ck_assert_int_eq(tp_graph_set_outputs(g, &result, 1), TP_OK);
    return g;
}

/* Runs op on stax (asserting stax claims it) and compares bit for bit with
 * the oracle's bytes. */
static void expect_stax_gives(const char *op, tp_tensor *data, tp_tensor *indices, int64_t axis,
                              const uint8_t *expected, const char *what) {
    tp_graph *g = indexing_graph(op, data, indices, axis);
    bool claimed[4] = {false};
    ck_assert_int_eq(tp_backend_claims(stax_test_backend("stax"), g, claimed, NULL), TP_OK);
    ck_assert_msg(claimed[tp_graph_output(g, 0)], "%s: stax does not claim it", what);
    tp_tensor *inputs[2] = {data, indices}, *out = NULL;
    ck_assert_msg(stax_test_run("stax", g, inputs, 2, NULL, 0, &out) == TP_OK, "%s: %s", what,
                  tp_last_error());
    size_t bytes = (size_t)tp_tensor_numel(out) * tp_dtype_size(tp_tensor_dtype(out));
    ck_assert_int_eq(tp_tensor_dtype(out), tp_tensor_dtype(data));
    const uint8_t *got = tp_tensor_data(out);
    for (size_t b = 0; b < bytes; b++)
        ck_assert_msg(got[b] == expected[b], "%s: byte %zu is %u, take gives %u", what, b, got[b],
                      expected[b]);
    tp_tensor_release(out);
    tp_graph_destroy(g);
}

START_TEST(gather_equals_take_for_ranks_axes_dtypes_and_index_dtypes) {
    stax_test_cache_dir();
    static const int64_t shapes[][3] = {{7, 0, 0}, {5, 4, 0}, {3, 4, 5}};
    static const int64_t index_shape[2] = {2, 3};
    for (int s = 0; s < 3; s++)
        for (int axis = -(s + 1); axis <= s; axis++)
            for (size_t t = 0; t < sizeof data_dtypes / sizeof data_dtypes[0]; t++)
                for (int wide = 0; wide < 2; wide++) {
                    int rank = s + 1, normalized = axis < 0 ? axis + rank : axis;
                    tp_tensor *data = distinct_data(data_dtypes[t], rank, shapes[s], 3 + t);
                    /* rank-0, 1-D and 2-D indices, in turn */
                    int index_rank = (s + (int)t) % 3;
                    tp_tensor *indices =
                        indices_in_range(wide ? TP_I64 : TP_I32, index_rank, index_shape,
                                         shapes[s][normalized], 5 + (uint64_t)axis);
                    uint8_t expected[1024];
                    take(data, indices, normalized, expected);
                    char what[128];
                    snprintf(what, sizeof what, "gather(%s[rank %d], %s[rank %d]) axis %d",
                             tp_dtype_name(data_dtypes[t]), rank, wide ? "i64" : "i32", index_rank,
                             axis);
                    expect_stax_gives("gather", data, indices, axis, expected, what);
                    tp_tensor_release(data);
                    tp_tensor_release(indices);
                }
}
END_TEST

START_TEST(gather_elements_equals_take_along_axis_for_ranks_axes_and_dtypes) {
    stax_test_cache_dir();
    static const int64_t shapes[][3] = {{7, 0, 0}, {5, 4, 0}, {3, 4, 5}};
    static const int64_t index_shapes[][3] = {{9, 0, 0}, {3, 6, 0}, {2, 3, 4}};
    for (int s = 0; s < 3; s++)
        for (int axis = -(s + 1); axis <= s; axis++)
            for (size_t t = 0; t < sizeof data_dtypes / sizeof data_dtypes[0]; t++)
                for (int wide = 0; wide < 2; wide++) {
                    int rank = s + 1, normalized = axis < 0 ? axis + rank : axis;
                    int64_t index_shape[3];
                    for (int d = 0; d < rank; d++) /* longer than the data along the axis */
                        index_shape[d] =
                            d == normalized ? index_shapes[s][d] : shapes[s][d] - (d & 1);
                    tp_tensor *data = distinct_data(data_dtypes[t], rank, shapes[s], 9 + t);
                    tp_tensor *indices = indices_in_range(wide ? TP_I64 : TP_I32, rank, index_shape,
                                                          shapes[s][normalized], 13 + (uint64_t)s);
                    uint8_t expected[2048];
                    take_along_axis(data, indices, normalized, expected);
                    char what[128];
                    snprintf(what, sizeof what, "gather_elements(%s[rank %d], %s) axis %d",
                             tp_dtype_name(data_dtypes[t]), rank, wide ? "i64" : "i32", axis);
                    expect_stax_gives("gather_elements", data, indices, axis, expected, what);
                    tp_tensor_release(data);
                    tp_tensor_release(indices);
                }
}
END_TEST

/* A hand-checkable embedding lookup: rows 2, 0 and -1 (the last) of a 4x3
 * table, picked by a [1, 3] batch of ids. */
START_TEST(gather_picks_embedding_rows_by_hand) {
    stax_test_cache_dir();
    static const char text[] = "graph embed(%table: f32[4, 3], %ids: i64[1, 3]) {\n"
                               "  %rows: f32[1, 3, 3] = gather(%table, %ids) {axis=0}\n"
                               "  return %rows\n"
                               "}\n";
    tp_graph *g = NULL;
    ck_assert_msg(tp_graph_parse(text, sizeof text - 1, "embed.tpir", &g) == TP_OK, "%s",
                  tp_last_error());
    int64_t table_shape[2] = {4, 3}, ids_shape[2] = {1, 3};
    tp_tensor *table = NULL, *ids = NULL, *out = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, table_shape, &table), TP_OK);
    ck_assert_int_eq(tp_tensor_create(TP_I64, 2, ids_shape, &ids), TP_OK);
    float *t = tp_tensor_data_mut(table);
    for (int i = 0; i < 12; i++)
        t[i] = (float)(10 * (i / 3) + i % 3); /* row r: 10r, 10r+1, 10r+2 */
    int64_t *id = tp_tensor_data_mut(ids);
    id[0] = 2, id[1] = 0, id[2] = -1;
    tp_tensor *inputs[2] = {table, ids};
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 2, NULL, 0, &out), TP_OK);
    static const float want[9] = {20, 21, 22, 0, 1, 2, 30, 31, 32};
    const float *got = tp_tensor_data(out);
    for (int i = 0; i < 9; i++) ck_assert_float_eq(got[i], want[i]);
    tp_tensor_release(out);
    tp_tensor_release(table);
    tp_tensor_release(ids);
    tp_graph_destroy(g);
}
END_TEST

/* gather along axis 0 of a permuted view (stax does not copy it): the rows
 * are not contiguous, out[j, a, b] = x[ids[j], b, a]. */
START_TEST(gather_reads_a_permuted_table_through_its_strides) {
    stax_test_cache_dir();
    static const char text[] = "graph strided(%x: f32[4, 3, 5], %ids: i64[2]) {\n"
                               "  %t: f32[4, 5, 3] = permute(%x) {perm=[0, 2, 1]}\n"
                               "  %rows: f32[2, 5, 3] = gather(%t, %ids) {axis=0}\n"
                               "  return %rows\n"
                               "}\n";
    tp_graph *g = NULL;
    ck_assert_msg(tp_graph_parse(text, sizeof text - 1, "strided.tpir", &g) == TP_OK, "%s",
                  tp_last_error());
    int64_t shape[3] = {4, 3, 5}, ids_shape[1] = {2};
    tp_tensor *x = distinct_data(TP_F32, 3, shape, 6), *ids = NULL, *out = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_I64, 1, ids_shape, &ids), TP_OK);
    int64_t *id = tp_tensor_data_mut(ids);
    id[0] = -1, id[1] = 1;
    tp_tensor *inputs[2] = {x, ids};
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 2, NULL, 0, &out), TP_OK);
    const uint32_t *got = tp_tensor_data(out), *table = tp_tensor_data(x);
    for (int j = 0; j < 2; j++)
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 3; b++) {
                int64_t row = id[j] < 0 ? id[j] + 4 : id[j];
                ck_assert_uint_eq(got[(j * 5 + a) * 3 + b], table[(row * 3 + b) * 5 + a]);
            }
    tp_tensor_release(out);
    tp_tensor_release(x);
    tp_tensor_release(ids);
    tp_graph_destroy(g);
}
END_TEST

static void serial_parallel_for(int64_t n, int64_t grain, tp_plugin_range_fn fn, void *ctx) {
    for (int64_t begin = 0; begin < n; begin += grain)
        fn(ctx, begin, begin + grain < n ? begin + grain : n);
}
static int32_t three_threads(void) {
    return 3;
}

/* %rows: f32[n, 2, 5] = gather(%table: f32[6, 5], %ids: i32[n, 2]) {axis=0}
 * as a graph view with the symbol n (the registry's executables take one
 * size; stax's dynamic path serves every n from one object). One compile
 * serves every batch size, the bounds check included. */
START_TEST(gather_with_a_symbolic_batch_serves_every_batch_size) {
    stax_test_cache_dir();
    stax_direct d;
    stax_open_direct(&d, serial_parallel_for, three_threads);
    static const int32_t operands[2] = {0, 1}, inputs[2] = {0, 1}, outputs[1] = {2};
    static const tp_plugin_attr axis[1] = {{.name = "axis", .type = TP_PLUGIN_ATTR_INT, .i = 0}};
    static const char *const symbols[1] = {"n"};
    tp_plugin_value values[3] = {
        {.name = "table", .type = {.dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {6, 5}}},
        {.name = "ids", .type = {.dtype = TP_PLUGIN_I32, .ndim = 2, .dims = {-1, 2}}},
        {.name = "rows",
         .op = "gather",
         .type = {.dtype = TP_PLUGIN_F32, .ndim = 3, .dims = {-1, 2, 5}},
         .num_operands = 2,
         .operands = operands,
         .num_attrs = 1,
         .attrs = axis}};
    for (int v = 0; v < 3; v++) values[v].fusion_region = -1;
    tp_plugin_node nodes[3];
    stax_direct_fill_nodes(values, 3, nodes);
    tp_plugin_graph graph = {.struct_size = sizeof graph,
                             .name = "embed",
                             .num_values = 3,
                             .values = values,
                             .num_inputs = 2,
                             .inputs = inputs,
                             .num_outputs = 1,
                             .outputs = outputs,
                             .num_symbols = 1,
                             .symbols = symbols,
                             .nodes = nodes};
    tp_plugin_tensor_meta meta[2] = {{.dtype = TP_PLUGIN_F32, .ndim = 2, .dims = {6, 5}},
                                     {.dtype = TP_PLUGIN_I32, .ndim = 2, .dims = {3, 2}}};
    tp_plugin_executable *exe = NULL;
    char error[512] = "";
    ck_assert_msg(stax_direct_compile(&d, &graph, meta, 2, &exe, error, sizeof error) ==
                      TP_PLUGIN_OK,
                  "%s", error);
    int64_t table_shape[2] = {6, 5};
    tp_tensor *table = distinct_data(TP_F32, 2, table_shape, 4);
    static const int64_t batches[] = {3, 7, 1, 4};
    for (int b = 0; b < 4; b++) {
        int64_t shape[2] = {batches[b], 2}, out_shape[3] = {batches[b], 2, 5};
        tp_tensor *ids = indices_in_range(TP_I32, 2, shape, 6, 20 + (uint64_t)b), *out = NULL;
        if (b == 3) ((int32_t *)tp_tensor_data_mut(ids))[5] = 6; /* past the end */
        ck_assert_int_eq(tp_tensor_create(TP_F32, 3, out_shape, &out), TP_OK);
        tp_plugin_buffer in[2] = {stax_test_buffer(table), stax_test_buffer(ids)},
                         result = stax_test_buffer(out);
        int32_t status = stax_direct_run(&d, exe, in, 2, &result, 1);
        if (b == 3) {
            ck_assert_msg(status != TP_PLUGIN_OK &&
                              strstr(stax_direct_error, "index 6 (at position 5") &&
                              strstr(stax_direct_error, "-6 to 5"),
                          "%s", stax_direct_error);
        } else {
            ck_assert_msg(status == TP_PLUGIN_OK, "batch %lld: %s", (long long)batches[b],
                          stax_direct_error);
            uint8_t expected[7 * 2 * 5 * 4];
            take(table, ids, 0, expected);
            ck_assert_msg(!memcmp(tp_tensor_data(out), expected, result.nbytes),
                          "batch %lld differs from take", (long long)batches[b]);
        }
        tp_tensor_release(out);
        tp_tensor_release(ids);
    }
    stax_direct_release(&d, exe);
    stax_close_direct(&d);
    tp_tensor_release(table);
}
END_TEST

/* Runs `g` on stax expecting the run to fail; returns the error text. */
static const char *stax_run_error(const tp_graph *g, tp_tensor *const *inputs, int num_inputs) {
    tp_executable *exe = NULL;
    ck_assert_msg(tp_backend_compile(stax_test_backend("stax"), g, inputs, num_inputs, NULL, 0,
                                     &exe) == TP_OK,
                  "%s", tp_last_error());
    tp_tensor *out = NULL;
    tp_status status = tp_executable_run(exe, inputs, num_inputs, &out);
    ck_assert_msg(status != TP_OK, "an out-of-range index ran without error");
    static char error[1024];
    snprintf(error, sizeof error, "%s", tp_last_error());
    tp_executable_destroy(exe);
    return error;
}

/* The first bad position in C order is reported, whichever thread meets it:
 * positions 5 (index 9) and 7 (index -10) are both out of [-4, 4). */
START_TEST(gather_index_out_of_range_is_a_run_error_naming_node_index_and_range) {
    stax_test_cache_dir();
    int64_t table_shape[2] = {4, 2000}, ids_shape[1] = {8};
    tp_tensor *table = distinct_data(TP_F32, 2, table_shape, 1);
    tp_tensor *ids = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_I32, 1, ids_shape, &ids), TP_OK);
    static const int32_t values[8] = {0, 1, -1, 3, 2, 9, 0, -10};
    memcpy(tp_tensor_data_mut(ids), values, sizeof values);
    tp_graph *g = indexing_graph("gather", table, ids, 0);
    tp_tensor *inputs[2] = {table, ids};
    const char *error = stax_run_error(g, inputs, 2);
    ck_assert_msg(strstr(error, "%picked (gather)") && strstr(error, "index 9 (at position 5") &&
                      strstr(error, "axis 0 of size 4") && strstr(error, "-4 to 3"),
                  "%s", error);
    /* a later run with good indices succeeds (the status word is re-armed) */
    int32_t *id = tp_tensor_data_mut(ids);
    id[5] = -4, id[7] = 3;
    tp_tensor *out = NULL;
    ck_assert_int_eq(stax_test_run("stax", g, inputs, 2, NULL, 0, &out), TP_OK);
    tp_tensor_release(out);
    tp_graph_destroy(g);
    tp_tensor_release(table);
    tp_tensor_release(ids);
}
END_TEST

START_TEST(gather_elements_index_out_of_range_is_a_run_error_naming_node_index_and_range) {
    stax_test_cache_dir();
    int64_t shape[2] = {3, 5};
    tp_tensor *data = distinct_data(TP_BF16, 2, shape, 2);
    tp_tensor *indices = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_I64, 2, shape, &indices), TP_OK);
    int64_t *index = tp_tensor_data_mut(indices);
    for (int i = 0; i < 15; i++) index[i] = i % 5 - 2; /* -2..2: valid along axis 1 (size 5) */
    index[11] = -6;                                    /* position 11: [2, 1] */
    tp_graph *g = indexing_graph("gather_elements", data, indices, -1);
    tp_tensor *inputs[2] = {data, indices};
    const char *error = stax_run_error(g, inputs, 2);
    ck_assert_msg(strstr(error, "%picked (gather_elements)") &&
                      strstr(error, "index -6 (at position 11") &&
                      strstr(error, "axis 1 of size 5") && strstr(error, "-5 to 4"),
                  "%s", error);
    tp_graph_destroy(g);
    tp_tensor_release(data);
    tp_tensor_release(indices);
}
END_TEST

TP_TEST_SUITE(stax_gather) {
    Suite *s = suite_create("stax_gather");
    TCase *c = tcase_create("gather");
    tcase_set_timeout(c, 600);
    tcase_add_test(c, gather_equals_take_for_ranks_axes_dtypes_and_index_dtypes);
    tcase_add_test(c, gather_elements_equals_take_along_axis_for_ranks_axes_and_dtypes);
    tcase_add_test(c, gather_picks_embedding_rows_by_hand);
    tcase_add_test(c, gather_reads_a_permuted_table_through_its_strides);
    tcase_add_test(c, gather_with_a_symbolic_batch_serves_every_batch_size);
    tcase_add_test(c, gather_index_out_of_range_is_a_run_error_naming_node_index_and_range);
    tcase_add_test(c,
                   gather_elements_index_out_of_range_is_a_run_error_naming_node_index_and_range);
    suite_add_tcase(s, c);
    return s;
}
