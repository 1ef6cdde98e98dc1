/* Part of the normalize pass: reshape -> permute -> reshape chains whose
 * first reshape merges dimensions that the second splits apart again, as
 * attention heads are cut out of a projection:
 *
 *   q: [128, 8, 256] -> reshape [128, 32, 64] -> permute [1, 0, 2]
 *                    -> reshape [8, 4, 128, 64]
 *
 * The middle shape [128, 32, 64] merges the batch (8) with the heads (4),
 * and when q is itself a strided slice that merge is no view: a backend
 * copies there, only for the last reshape to split the 32 again. The chain
 * is rewritten over the finest shape both ends agree on:
 *
 *   q -> reshape [128, 8, 4, 64] -> permute [1, 2, 0, 3]    (= [8, 4, 128, 64])
 *
 * which only splits dimensions (a view of any strided tensor) and permutes
 * them. In general: the permuted shape S2 and the final shape S3 are cut
 * into the common refinement F (each dimension of either is a run of
 * consecutive factors of F; none exists when, say, [4, 6] meets [3, 8]);
 * each factor belongs to one dimension of S2, that is to one dimension of
 * the middle shape S1 through the permutation; the first reshape then goes
 * to S1 with each dimension cut into its factors, the permutation moves
 * factors, and a last reshape merges runs of F into S3 when F is not S3
 * already. The rewrite is exact (the same elements in the same order) and
 * applies only to static shapes, and only when it cuts some dimension of
 * S1: otherwise the chain is already in this form. */
#include "pass_internal.h"

#include "base/error.h"

typedef struct refinement {
    int count;                 /* factors of F, size-1 dimensions left out */
    int64_t size[TP_MAX_DIMS]; /* F */
    int owner[TP_MAX_DIMS];    /* the dimension of S2 each factor cuts */
} refinement;

/* The common refinement of a and b (same element count); false when none. */
static bool refine(const tp_type *a, const tp_type *b, refinement *out) {
    out->count = 0;
    int32_t i = 0, j = 0;
    int64_t left_a = 1, left_b = 1; /* what remains of a's dimension i and b's j */
    for (;;) {
        while (left_a == 1 && i < a->ndim) left_a = a->dims[i++];
        while (left_b == 1 && j < b->ndim) left_b = b->dims[j++];
        if (left_a == 1 || left_b == 1) return left_a == left_b;
        int64_t factor = left_a < left_b ? left_a : left_b;
        int64_t other = left_a < left_b ? left_b : left_a;
        if (other % factor != 0 || out->count == TP_MAX_DIMS) return false;
        out->size[out->count] = factor;
        out->owner[out->count++] = i - 1;
        left_a /= factor;
        left_b /= factor;
    }
}

static tp_status add_node(tp_rewrite *rewrite, const char *op, tp_value_id operand,
                          const tp_attrs *attrs, const char *name, tp_value_id *out) {
    return tp_graph_add_node(rewrite->out, op, &operand, 1, attrs, name, out);
}

tp_status tp_normalize_reshape_chain(tp_rewrite *rewrite, tp_value_id old, bool *rewritten) {
    *rewritten = false;
    const tp_graph *in = rewrite->in;
    const tp_op_def *op = tp_pass_value_op(in, old);
    if (!op || op->id != TP_OP_RESHAPE) return TP_OK;
    tp_value_id permuted = tp_graph_value_operand(in, old, 0);
    const tp_op_def *middle = tp_pass_value_op(in, permuted);
    if (!middle || middle->id != TP_OP_PERMUTE) return TP_OK;
    tp_value_id merged = tp_graph_value_operand(in, permuted, 0);
    const tp_op_def *first = tp_pass_value_op(in, merged);
    if (!first || first->id != TP_OP_RESHAPE) return TP_OK;
    tp_value_id source = tp_graph_value_operand(in, merged, 0);
    const tp_type *s0 = tp_graph_value_type(in, source), *s1 = tp_graph_value_type(in, merged);
    const tp_type *s2 = tp_graph_value_type(in, permuted), *s3 = tp_graph_value_type(in, old);
    const tp_attrs *perm_attrs = tp_graph_value_attrs(in, permuted);
    /* tp_type_numel: -1 with a symbol among the dims */
    if (tp_type_numel(s0) < 0 || tp_type_numel(s1) < 0 || tp_type_numel(s3) <= 0 || !perm_attrs ||
        perm_attrs->nperm != s1->ndim)
        return TP_OK;
    for (int32_t d = 0; d < s1->ndim; d++)
        if (perm_attrs->perm[d] < 0 || perm_attrs->perm[d] >= s1->ndim) return TP_OK;
    refinement f;
    if (!refine(s2, s3, &f)) return TP_OK;
    /* the factors of each dimension of S1 (S2's dimension i is S1's perm[i]), in order */
    int32_t start[TP_MAX_DIMS + 1] = {0}, count_of[TP_MAX_DIMS] = {0};
    for (int k = 0; k < f.count; k++) count_of[perm_attrs->perm[f.owner[k]]]++;
    for (int32_t d = 0; d < s1->ndim; d++) start[d + 1] = start[d] + count_of[d];
    bool cuts = false;
    for (int32_t d = 0; d < s1->ndim; d++) cuts |= count_of[d] > 1;
    if (!cuts) return TP_OK;
    tp_attrs cut = TP_ATTRS_INIT, moved = TP_ATTRS_INIT;
    int32_t placed[TP_MAX_DIMS] = {0};
    cut.shape_ndim = moved.nperm = f.count;
    for (int k = 0; k < f.count; k++) {
        int32_t d = (int32_t)perm_attrs->perm[f.owner[k]];
        int32_t position = start[d] + placed[d]++;
        cut.shape[position] = f.size[k];
        moved.perm[k] = position;
    }
    bool last_reshape = f.count != s3->ndim;
    for (int32_t d = 0; !last_reshape && d < s3->ndim; d++) last_reshape = f.size[d] != s3->dims[d];
    const char *name = tp_rewrite_kept_name(in, old);
    tp_value_id cut_value, moved_value, result;
    TP_TRY(add_node(rewrite, "reshape", rewrite->map[source], &cut, NULL, &cut_value));
    TP_TRY(
        add_node(rewrite, "permute", cut_value, &moved, last_reshape ? NULL : name, &moved_value));
    result = moved_value;
    if (last_reshape) {
        tp_attrs final = TP_ATTRS_INIT;
        final.shape_ndim = s3->ndim;
        for (int32_t d = 0; d < s3->ndim; d++) final.shape[d] = s3->dims[d];
        TP_TRY(add_node(rewrite, "reshape", moved_value, &final, name, &result));
    }
    if (!tp_type_equal(tp_graph_value_type(rewrite->out, result), s3))
        return tp_error_set(TP_ERR_INTERNAL,
                            "the reshape chain ending in %%%s changed its type (a TensorPlay "
                            "bug: please report it)",
                            tp_graph_value_name(in, old));
    rewrite->map[old] = result;
    *rewritten = true;
    return TP_OK;
}
