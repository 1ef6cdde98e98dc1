/* stax's reshape, squeeze and unsqueeze of a strided input (a permute, a
 * slice): a view where the strides allow it (no copy kernel runs), a copy
 * where they do not, and the right elements either way. The oracle is index
 * arithmetic done here: x holds its own flat index, so every element of the
 * result names the element of x it must be. */
#include "stax_harness.h"
#include "tensorplay/profile.h"

/* x[i] = i for a tensor of `dims`. */
static tp_tensor *iota(int ndim, const int64_t *dims) {
    tp_tensor *x = stax_test_random(TP_F32, ndim, dims, 1);
    float *data = tp_tensor_data_mut(x);
    for (int64_t i = 0; i < tp_tensor_numel(x); i++) data[i] = (float)i;
    return x;
}

static void count_copies(const tp_profile_event *event, void *user) {
    int *copies = user;
    if (!strcmp(event->phase, "kernel") && strstr(event->detail, "_copy")) (*copies)++;
}

/* Runs out = add(r, r) on stax where r is built from the graph's input x;
 * returns the result and stores in *copies how many copy kernels ran. */
static tp_tensor *run_doubled(tp_graph *g, tp_value_id r, tp_tensor *x, int *copies) {
    tp_value_id twice[2] = {r, r};
    tp_value_id out = stax_test_node(g, "add", twice, 2, NULL);
    ck_assert_int_eq(tp_graph_set_outputs(g, &out, 1), TP_OK);
    tp_tensor *got[1] = {NULL};
    *copies = 0;
    tp_profile_set_handler(count_copies, copies);
    tp_status status = stax_test_run("stax", g, &x, 1, NULL, 0, got);
    tp_profile_set_handler(NULL, NULL);
    ck_assert_msg(status == TP_OK, "%s", tp_last_error());
    return got[0];
}

/* got[j] == 2 * source[j] for every j. */
static void expect_doubled(const tp_tensor *got, const int64_t *source, int64_t count,
                           const char *what) {
    ck_assert_int_eq(tp_tensor_numel(got), count);
    for (int64_t j = 0; j < count; j++)
        ck_assert_msg(tp_tensor_get_f64(got, j) == 2.0 * (double)source[j],
                      "%s: element %lld is %g, want 2 * x[%lld] = %g", what, (long long)j,
                      tp_tensor_get_f64(got, j), (long long)source[j], 2.0 * (double)source[j]);
}

static tp_value_id permute3(tp_graph *g, tp_value_id x, int a, int b, int c) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.nperm = 3, attrs.perm[0] = a, attrs.perm[1] = b, attrs.perm[2] = c;
    return stax_test_node(g, "permute", &x, 1, &attrs);
}

static tp_value_id reshape(tp_graph *g, tp_value_id x, int ndim, const int64_t *shape) {
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.shape_ndim = ndim;
    for (int d = 0; d < ndim; d++) attrs.shape[d] = shape[d];
    return stax_test_node(g, "reshape", &x, 1, &attrs);
}

/* x [4, 6, 10] permuted to [6, 4, 10], its last dim split into [2, 5]:
 * attention's heads split off a permuted projection. A view. */
START_TEST(a_split_of_a_permuted_dim_is_a_view) {
    stax_test_cache_dir();
    int64_t dims[3] = {4, 6, 10}, shape[4] = {6, 4, 2, 5};
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("split_view", &g), TP_OK);
    tp_value_id x = stax_test_input(g, "x", TP_F32, 3, dims);
    tp_value_id r = reshape(g, permute3(g, x, 1, 0, 2), 4, shape);
    tp_tensor *input = iota(3, dims);
    int copies = 0;
    tp_tensor *got = run_doubled(g, r, input, &copies);
    int64_t source[240];
    for (int64_t i = 0; i < 6; i++)     /* permuted dim 0: x's dim 1 */
        for (int64_t j = 0; j < 4; j++) /* permuted dim 1: x's dim 0 */
            for (int64_t k = 0; k < 10; k++) source[(i * 4 + j) * 10 + k] = (j * 6 + i) * 10 + k;
    expect_doubled(got, source, 240, "permute then split");
    ck_assert_msg(copies == 0, "the split ran %d copy kernels", copies);
    tp_tensor_release(got);
    tp_tensor_release(input);
    tp_graph_destroy(g);
}
END_TEST

/* x [6, 4, 10] sliced to its first 5 columns ([6, 4, 5], rows 10 floats
 * apart): merging the two leading dims keeps one stride (a view), merging
 * the last two cannot (a copy), and both give the right elements. */
START_TEST(merging_strided_dims_is_a_view_only_where_they_are_adjacent_in_memory) {
    stax_test_cache_dir();
    int64_t dims[3] = {6, 4, 10};
    for (int merge_last = 0; merge_last < 2; merge_last++) {
        tp_graph *g = NULL;
        ck_assert_int_eq(tp_graph_create("merge_view", &g), TP_OK);
        tp_value_id x = stax_test_input(g, "x", TP_F32, 3, dims);
        tp_attrs attrs = TP_ATTRS_INIT;
        attrs.axis = 2, attrs.start = 0, attrs.stop = 5, attrs.step = 1;
        tp_value_id sliced = stax_test_node(g, "slice", &x, 1, &attrs);
        int64_t leading[2] = {24, 5}, trailing[2] = {6, 20};
        tp_value_id r = reshape(g, sliced, 2, merge_last ? trailing : leading);
        tp_tensor *input = iota(3, dims);
        int copies = 0;
        tp_tensor *got = run_doubled(g, r, input, &copies);
        int64_t source[120];
        for (int64_t i = 0; i < 6; i++)
            for (int64_t j = 0; j < 4; j++)
                for (int64_t k = 0; k < 5; k++) source[(i * 4 + j) * 5 + k] = (i * 4 + j) * 10 + k;
        expect_doubled(got, source, 120, merge_last ? "slice then [6, 20]" : "slice then [24, 5]");
        if (merge_last)
            ck_assert_msg(copies == 1, "[6, 20] needs one copy, ran %d", copies);
        else
            ck_assert_msg(copies == 0, "[24, 5] ran %d copy kernels", copies);
        tp_tensor_release(got);
        tp_tensor_release(input);
        tp_graph_destroy(g);
    }
}
END_TEST

/* x [3, 1, 5] permuted to [5, 1, 3]: squeezing the 1 and unsqueezing a new
 * one are views of the permute; the unsqueeze of a size-1 dim anywhere too. */
START_TEST(squeeze_and_unsqueeze_of_a_permute_are_views) {
    stax_test_cache_dir();
    int64_t dims[3] = {3, 1, 5};
    tp_graph *g = NULL;
    ck_assert_int_eq(tp_graph_create("squeeze_view", &g), TP_OK);
    tp_value_id x = stax_test_input(g, "x", TP_F32, 3, dims);
    tp_value_id p = permute3(g, x, 2, 1, 0);
    tp_attrs attrs = TP_ATTRS_INIT;
    attrs.naxes = 1, attrs.axes[0] = 1;
    tp_value_id s = stax_test_node(g, "squeeze", &p, 1, &attrs);
    attrs = (tp_attrs)TP_ATTRS_INIT;
    attrs.axis = 2;
    tp_value_id u = stax_test_node(g, "unsqueeze", &s, 1, &attrs);
    tp_tensor *input = iota(3, dims);
    int copies = 0;
    tp_tensor *got = run_doubled(g, u, input, &copies);
    ck_assert_int_eq(tp_tensor_ndim(got), 3);
    ck_assert_int_eq(tp_tensor_dim(got, 0), 5);
    ck_assert_int_eq(tp_tensor_dim(got, 1), 3);
    ck_assert_int_eq(tp_tensor_dim(got, 2), 1);
    int64_t source[15];
    for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 3; j++) source[i * 3 + j] = j * 5 + i;
    expect_doubled(got, source, 15, "permute, squeeze, unsqueeze");
    ck_assert_msg(copies == 0, "ran %d copy kernels", copies);
    tp_tensor_release(got);
    tp_tensor_release(input);
    tp_graph_destroy(g);
}
END_TEST

TP_TEST_SUITE(stax_views) {
    Suite *s = suite_create("stax_views");
    TCase *c = tcase_create("views");
    tcase_set_timeout(c, 120);
    tcase_add_test(c, a_split_of_a_permuted_dim_is_a_view);
    tcase_add_test(c, merging_strided_dims_is_a_view_only_where_they_are_adjacent_in_memory);
    tcase_add_test(c, squeeze_and_unsqueeze_of_a_permute_are_views);
    suite_add_tcase(s, c);
    return s;
}
