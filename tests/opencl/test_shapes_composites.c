/* Shape ops (as index remapping), creation ops and the composites (softmax,
 * log_softmax, layer_norm as row kernels; gelu, silu, softplus lowered to
 * pointwise code; linear as a tiled matmul), compared with eager. */
#include <check.h>

#include "ocl_harness.h"
#include "tp_test.h"

START_TEST(shape_ops_match_eager) {
    tp_graph *graph = oclt_graph("shapes");
    const int64_t dims[] = {4, 1, 6}, other[] = {4, 3, 6};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 3, dims);
    tp_value_id z = oclt_input(graph, "z", TP_I32, 3, other);
    tp_attrs reshape = TP_ATTRS_INIT, permute = TP_ATTRS_INIT, transpose = TP_ATTRS_INIT;
    tp_attrs expand = TP_ATTRS_INIT, slice = TP_ATTRS_INIT, concat = TP_ATTRS_INIT;
    tp_attrs squeeze = TP_ATTRS_INIT, unsqueeze = TP_ATTRS_INIT, slice_neg = TP_ATTRS_INIT;
    reshape.shape_ndim = 2, reshape.shape[0] = 3, reshape.shape[1] = -1;
    permute.nperm = 3, permute.perm[0] = 2, permute.perm[1] = 0, permute.perm[2] = 1;
    transpose.dim0 = 0, transpose.dim1 = -1;
    expand.shape_ndim = 4, expand.shape[0] = 2, expand.shape[1] = 4, expand.shape[2] = 5,
    expand.shape[3] = -1;
    slice.axis = 2, slice.start = 1, slice.stop = TP_SLICE_END, slice.step = 2;
    slice_neg.axis = 0, slice_neg.start = -3, slice_neg.stop = -1, slice_neg.step = 1;
    concat.axis = 1;
    squeeze.naxes = 1, squeeze.axes[0] = 1;
    unsqueeze.axis = -1;
    tp_value_id scaled = oclt_unary(graph, "exp", x);
    tp_value_id cast_z = oclt_unary(graph, "neg", z);
    tp_attrs to_f32 = TP_ATTRS_INIT;
    to_f32.dtype = TP_F32;
    tp_value_id zf = oclt_node(graph, "cast", &cast_z, 1, &to_f32);
    tp_value_id parts[3] = {x, zf, scaled};
    tp_value_id outputs[] = {
        oclt_node(graph, "reshape", &scaled, 1, &reshape),
        oclt_node(graph, "permute", &z, 1, &permute),
        oclt_node(graph, "transpose", &scaled, 1, &transpose),
        oclt_node(graph, "expand", &x, 1, &expand),
        oclt_node(graph, "slice", &z, 1, &slice),
        oclt_node(graph, "slice", &x, 1, &slice_neg),
        oclt_node(graph, "concat", parts, 3, &concat),
        oclt_node(graph, "squeeze", &x, 1, &squeeze),
        oclt_node(graph, "unsqueeze", &z, 1, &unsqueeze),
    };
    /* A shape op feeding pointwise math: the remapped index is used inline. */
    tp_value_id tail = oclt_binary(graph, "mul", outputs[2], outputs[2]);
    tp_value_id all[10];
    for (int i = 0; i < 9; i++) all[i] = outputs[i];
    all[9] = tail;
    oclt_outputs(graph, all, 10);
    oclt_check_graph(graph, 77);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(creation_ops_match_eager) {
    tp_graph *graph = oclt_graph("creation");
    const int64_t dims[] = {2, 3};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 2, dims);
    tp_attrs full = TP_ATTRS_INIT, range_f = TP_ATTRS_INIT, range_i = TP_ATTRS_INIT;
    tp_attrs range_d = TP_ATTRS_INIT, range_l = TP_ATTRS_INIT, constant = TP_ATTRS_INIT;
    full.shape_ndim = 2, full.shape[0] = 2, full.shape[1] = 3, full.value = -7.5,
    full.dtype = TP_F64;
    range_f.range_start = 0.5, range_f.range_stop = 7.25, range_f.range_step = 0.75,
    range_f.dtype = TP_F32;
    range_i.range_start = -3, range_i.range_stop = 20, range_i.range_step = 2.5,
    range_i.dtype = TP_I32;
    range_d.range_start = 1, range_d.range_stop = -2, range_d.range_step = -0.3,
    range_d.dtype = TP_F64;
    range_l.range_start = 5, range_l.range_stop = 1e6, range_l.range_step = 997,
    range_l.dtype = TP_I64;
    const float payload[6] = {1.5f, -2.f, 3.25f, 0.f, 8.f, -1.f};
    tp_tensor *data = NULL;
    ck_assert_int_eq(tp_tensor_from_data(TP_F32, 2, dims, payload, &data), TP_OK);
    constant.data = data;
    constant.dtype = TP_F32;
    tp_value_id c = oclt_node(graph, "constant", NULL, 0, &constant);
    tp_value_id outputs[] = {
        oclt_node(graph, "full", NULL, 0, &full),
        oclt_node(graph, "arange", NULL, 0, &range_f),
        oclt_node(graph, "arange", NULL, 0, &range_i),
        oclt_node(graph, "arange", NULL, 0, &range_d),
        oclt_node(graph, "arange", NULL, 0, &range_l),
        c,
        oclt_binary(graph, "add", x, c),
    };
    oclt_outputs(graph, outputs, 7);
    oclt_check_graph(graph, 2);
    tp_tensor_release(data);
    tp_graph_destroy(graph);
}
END_TEST

START_TEST(composites_match_eager) {
    tp_graph *graph = oclt_graph("composites");
    const int64_t dims[] = {3, 7, 130}, row[] = {7, 130}, ints[] = {5, 9};
    tp_value_id x = oclt_input(graph, "x", TP_F32, 3, dims);
    tp_value_id w = oclt_input(graph, "w", TP_F32, 2, row);
    tp_value_id b = oclt_input(graph, "b", TP_F32, 2, row);
    tp_value_id n = oclt_input(graph, "n", TP_I32, 2, ints);
    tp_attrs last = TP_ATTRS_INIT, first = TP_ATTRS_INIT, norm = TP_ATTRS_INIT;
    tp_attrs norm_last = TP_ATTRS_INIT, softplus = TP_ATTRS_INIT;
    last.axis = -1;
    first.axis = 0;
    norm.axis = 1, norm.eps = 1e-3;
    norm_last.axis = -1;
    softplus.beta = 2.0, softplus.threshold = 1.5;
    tp_value_id with_weight[2] = {x, w}, with_both[3] = {x, w, b};
    tp_value_id shifted = oclt_unary(graph, "sin", x); /* fused into the row kernel */
    tp_value_id outputs[] = {
        oclt_node(graph, "softmax", &shifted, 1, &last),
        oclt_node(graph, "softmax", &x, 1, &first),
        oclt_node(graph, "log_softmax", &x, 1, &last),
        oclt_node(graph, "log_softmax", &n, 1, &first),
        oclt_node(graph, "layer_norm", with_both, 3, &norm),
        oclt_node(graph, "layer_norm", with_weight, 2, &norm),
        oclt_node(graph, "layer_norm", &x, 1, &norm_last),
        oclt_node(graph, "softplus", &x, 1, &softplus),
        oclt_node(graph, "silu", &n, 1, NULL),
    };
    oclt_outputs(graph, outputs, (int)(sizeof outputs / sizeof outputs[0]));
    oclt_check_graph(graph, 61);
    tp_graph_destroy(graph);
}
END_TEST

TP_TEST_SUITE(opencl_shapes_composites) {
    oclt_environment();
    Suite *suite = suite_create("opencl_shapes_composites");
    TCase *tc = tcase_create("shapes_composites");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, shape_ops_match_eager);
    tcase_add_test(tc, creation_ops_match_eager);
    tcase_add_test(tc, composites_match_eager);
    suite_add_tcase(suite, tc);
    return suite;
}
