/* stax-llvm — finding the attention pattern in a graph, for the fused
 * attention step (stax_attention.c runs it; stax_plan.c plans it):
 *
 *   scores  = matmul(q', k_t')      q' = q or mul(q, s), k_t' likewise
 *   scaled  = scores (* s | / s)... s: f32 scalars (one element)
 *   masked  = scaled + mask         optional, either operand order
 *   weights = softmax(masked, axis = last)
 *   output  = matmul(weights, v)
 *
 * as the ONNX importer gives PyTorch's exports (the encoder scales q and
 * k_t by sqrt(scale) each; GPT-2 multiplies the scores, then adds its causal
 * mask) and as a user writes it. Every node but the output must have one use
 * and not be a graph output, everything f32, and the fusion regions of the
 * nodes must hold nothing else (a pointwise producer inlined into one of them
 * keeps the unfused path). Only reads the graph and the planner's types. */
#include <stdlib.h>
#include <string.h>

#include "stax_internal.h"

typedef struct matcher {
    const tp_plugin_graph *graph;
    const tpcommon_fusion *fusion;
    const stax_value *values;
    const int32_t *uses;
} matcher;

static int32_t op_of(const matcher *m, int32_t v) {
    return m->graph->values[v].op ? tpcommon_op_of(m->graph, &m->graph->values[v]) : -1;
}

static bool is_f32(const matcher *m, int32_t v) {
    return m->values[v].type.dtype == TP_PLUGIN_F32 &&
           (!m->graph->values[v].op || m->values[v].compute == TP_PLUGIN_F32);
}

/* A node the fused step computes in place of its own kernel. */
static bool is_private(const matcher *m, int32_t v) {
    return m->graph->values[v].op && m->uses[v] == 1 && !tpcommon_is_output(m->graph, v) &&
           is_f32(m, v);
}

static bool is_scalar(const matcher *m, int32_t v) {
    const tp_plugin_type *t = &m->values[v].type;
    return is_f32(m, v) && tpcommon_numel(t) == 1 && !tpcommon_fusion_is_inlined(m->fusion, v);
}

static bool add_member(stax_attention_match *match, int32_t v) {
    if (match->num_members == STAX_ATTENTION_MAX_MEMBERS) return false;
    match->members[match->num_members++] = v;
    return true;
}

static bool add_scale(stax_attention_match *match, int32_t v, bool divides) {
    if (match->num_scales == STAX_ATTENTION_MAX_SCALES) return false;
    match->scale_divides[match->num_scales] = divides;
    match->scales[match->num_scales++] = v;
    return true;
}

/* v when it is not a private mul by a scalar, else the mul's other operand
 * (the mul joins the match and its scalar the scales). */
static int32_t strip_scalar_mul(const matcher *m, int32_t v, stax_attention_match *match) {
    const tp_plugin_value *node = &m->graph->values[v];
    if (op_of(m, v) != TP_PLUGIN_OP_MUL || !is_private(m, v) || node->num_operands != 2) return v;
    for (int32_t side = 1; side >= 0; side--) { /* the scalar second first */
        int32_t scalar = node->operands[side], other = node->operands[1 - side];
        if (is_scalar(m, scalar) &&
            tpcommon_same_shape(&m->values[other].type, &m->values[v].type) &&
            match->num_scales < STAX_ATTENTION_MAX_SCALES && add_member(match, v)) {
            add_scale(match, scalar, false);
            return other;
        }
    }
    return v;
}

/* Whether a matrix operand of the pattern: f32, 2-D at least, stored. */
static bool is_matrix(const matcher *m, int32_t v) {
    return is_f32(m, v) && m->values[v].type.ndim >= 2 && !tpcommon_fusion_is_inlined(m->fusion, v);
}

/* Parses `v` as scores (* s | / s)*: the score matmul and its operands.
 * Either operand of a mul may be the scalar (both, for one-element scores):
 * each reading is tried. */
static bool match_scores(const matcher *m, int32_t v, stax_attention_match *match) {
    if (!is_private(m, v)) return false;
    const tp_plugin_value *node = &m->graph->values[v];
    int32_t op = op_of(m, v);
    if (op == TP_PLUGIN_OP_MATMUL && node->num_operands == 2) {
        if (!add_member(match, v)) return false;
        match->q = strip_scalar_mul(m, node->operands[0], match);
        match->k_t = strip_scalar_mul(m, node->operands[1], match);
        return is_matrix(m, match->q) && is_matrix(m, match->k_t);
    }
    if ((op != TP_PLUGIN_OP_MUL && op != TP_PLUGIN_OP_DIV) || node->num_operands != 2) return false;
    for (int32_t side = 1; side >= (op == TP_PLUGIN_OP_MUL ? 0 : 1); side--) {
        int32_t scalar = node->operands[side], rest = node->operands[1 - side];
        stax_attention_match attempt = *match;
        if (is_scalar(m, scalar) &&
            tpcommon_same_shape(&m->values[rest].type, &m->values[v].type) &&
            add_member(&attempt, v) && add_scale(&attempt, scalar, op == TP_PLUGIN_OP_DIV) &&
            match_scores(m, rest, &attempt)) {
            *match = attempt;
            return true;
        }
    }
    return false;
}

/* Parses the softmax's input: scores chain, plus an optional mask. */
static bool match_logits(const matcher *m, int32_t x, stax_attention_match *match) {
    const tp_plugin_value *node = &m->graph->values[x];
    if (op_of(m, x) == TP_PLUGIN_OP_ADD && node->num_operands == 2 && is_private(m, x)) {
        for (int32_t side = 0; side < 2; side++) {
            stax_attention_match attempt = *match;
            int32_t mask = node->operands[1 - side];
            const tp_plugin_type *mt = &m->values[mask].type, *xt = &m->values[x].type;
            /* the kernel reads a row of the mask per row of scores */
            if (mt->ndim < 1 || mt->dims[mt->ndim - 1] != xt->dims[xt->ndim - 1] ||
                !add_member(&attempt, x) || !is_f32(m, mask) ||
                tpcommon_fusion_is_inlined(m->fusion, mask) ||
                !match_scores(m, node->operands[side], &attempt))
                continue;
            attempt.mask = mask;
            *match = attempt;
            return true;
        }
        return false;
    }
    return match_scores(m, x, match);
}

static bool is_member(const stax_attention_match *match, int32_t v) {
    for (int32_t i = 0; i < match->num_members; i++)
        if (match->members[i] == v) return true;
    return false;
}

/* The regions of the members hold only members; the output's region is the
 * bare matmul. */
static bool regions_are_private(const matcher *m, const stax_attention_match *match) {
    for (int32_t i = 0; i < match->num_members; i++) {
        int32_t r = m->fusion->region_of[match->members[i]];
        if (r < 0) return false;
        const tpcommon_region *region = &m->fusion->regions[r];
        if (match->members[i] == match->output) {
            if (region->kind != TPCOMMON_REGION_MATMUL || region->root != match->output ||
                region->num_members != 1)
                return false;
            continue;
        }
        for (int32_t k = 0; k < region->num_members; k++)
            if (!is_member(match, region->members[k]) || region->members[k] == match->output)
                return false;
    }
    return true;
}

/* The pattern ending at matmul `v`, when it is one. */
static bool match_at(const matcher *m, int32_t v, stax_attention_match *match) {
    memset(match, 0, sizeof *match);
    match->mask = -1;
    match->output = v;
    const tp_plugin_value *node = &m->graph->values[v];
    if (op_of(m, v) != TP_PLUGIN_OP_MATMUL || node->num_operands != 2 || !is_f32(m, v) ||
        m->values[v].type.ndim < 2)
        return false;
    int32_t weights = node->operands[0];
    match->v = node->operands[1];
    if (op_of(m, weights) != TP_PLUGIN_OP_SOFTMAX || !is_private(m, weights) ||
        !is_matrix(m, match->v))
        return false;
    const tp_plugin_value *softmax = &m->graph->values[weights];
    int32_t ndim = m->values[weights].type.ndim;
    int64_t axis = tpcommon_attr_int(softmax, "axis", -1);
    if (axis < 0) axis += ndim;
    if (axis != ndim - 1 || !add_member(match, weights)) return false;
    if (!match_logits(m, softmax->operands[0], match) || !add_member(match, v)) return false;
    /* empty shapes keep the unfused path */
    if (tpcommon_numel(&m->values[match->q].type) <= 0 ||
        tpcommon_numel(&m->values[match->k_t].type) <= 0 ||
        tpcommon_numel(&m->values[match->v].type) <= 0 || tpcommon_numel(&m->values[v].type) <= 0)
        return false;
    return regions_are_private(m, match);
}

int32_t stax_attention_find(const tp_plugin_graph *graph, const tpcommon_fusion *fusion,
                            const stax_value *values, stax_attention_match **matches) {
    *matches = NULL;
    int32_t *uses = tpcommon_count_uses(graph);
    if (!uses) return -1;
    matcher m = {graph, fusion, values, uses};
    int32_t count = 0, capacity = 0;
    for (int32_t v = 0; v < graph->num_values; v++) {
        stax_attention_match match;
        if (!match_at(&m, v, &match)) continue;
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 4;
            stax_attention_match *grown = realloc(*matches, sizeof *grown * (size_t)capacity);
            if (!grown) {
                free(uses);
                free(*matches);
                *matches = NULL;
                return -1;
            }
            *matches = grown;
        }
        (*matches)[count++] = match;
    }
    free(uses);
    return count;
}
