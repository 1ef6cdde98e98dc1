/* stax-llvm — planning a compile: binds the graph's symbols to the input
 * metadata, gives every value a concrete type, groups nodes into fusion
 * regions (plugins/common), decides where each value lives (input, output or
 * scratch buffer, a constant, or a strided view of another value for the
 * shape ops, which then cost nothing), and emits one kernel per region into
 * one LLVM module. Composites are lowered directly (softmax, log_softmax and
 * layer_norm as row kernels, gelu/silu/softplus as pointwise expressions,
 * linear as a matmul with a transposed weight view and a bias epilogue), so
 * the pass pipeline's decomposition is not needed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stax_emit_core.h"
#include "stax_gemv.h"
#include "stax_kernel_bodies.h"

typedef struct planner {
    const tp_plugin_graph *graph;
    const stax_build_mode *mode; /* NULL: static */
    tpcommon_fusion fusion;
    stax_value *values;
    stax_gemm *gemms;                            /* per value (matmul/linear) */
    const stax_gemm_family *gemm_family;         /* NULL: the 6x16 pair (STAX_GEMM_KERNEL=legacy) */
    const stax_gemm_family *storage_gemm_family; /* f16/bf16 matmuls: always a packed family */
    int32_t *out_position;
    stax_attention_match *attention; /* the fused attention patterns */
    int32_t *attention_of;           /* per value: its pattern, or -1 */
    stax_program *program;
    int32_t slot_capacity, step_capacity, kernel_capacity;
    tpcommon_buf module;
    stax_kernel_bodies bodies; /* the kernels' bodies, equal ones shared (static builds) */
    stax_emit_graph eg;
    int64_t threads; /* the executable's limit, for the work done at compile (packing weights) */
    char *error;
    size_t error_size;
} planner;

const stax_gemm *stax_plan_gemm_of(const stax_emit_graph *g, int32_t value) {
    const planner *p = (const planner *)((const char *)g - offsetof(planner, eg));
    return &p->gemms[value];
}

static int32_t oom(planner *p) {
    return tpcommon_error(p->error, p->error_size, "stax: out of memory while compiling graph '%s'",
                          p->graph->name ? p->graph->name : "?");
}

/* A new slot; a constant's buffer is allocated, and zeroed unless
 * `overwritten` (the caller then writes every byte of it), or with `borrow`
 * not allocated: the slot reads that memory in place (a graph constant's
 * payload, which lives while the graph is compiled) until
 * keep_read_constants copies it or lets it go. */
static int32_t add_slot_with(planner *p, stax_slot_kind kind, int32_t index, size_t bytes,
                             bool overwritten, const void *borrow) {
    stax_program *prog = p->program;
    if (prog->num_slots == p->slot_capacity) {
        int32_t capacity = p->slot_capacity ? p->slot_capacity * 2 : 16;
        stax_slot *slots = realloc(prog->slots, sizeof *slots * (size_t)capacity);
        if (!slots) return -1;
        prog->slots = slots;
        p->slot_capacity = capacity;
        p->eg.slots = slots;
    }
    stax_slot *slot = &prog->slots[prog->num_slots];
    memset(slot, 0, sizeof *slot);
    slot->kind = kind;
    slot->index = index;
    slot->bytes = bytes ? bytes : 1;
    slot->arena_offset = -1;
    if (kind == STAX_SLOT_CONST && borrow) {
        slot->data = (void *)borrow; /* never written: constants are read-only to every step */
        slot->borrowed = true;
    } else if (kind == STAX_SLOT_CONST) { /* scratch: placed after planning (stax_arena.c) */
        slot->data = stax_alloc_aligned(prog->host, slot->bytes);
        if (!slot->data) return -1;
        if (!overwritten) memset(slot->data, 0, slot->bytes);
    }
    p->eg.num_slots = prog->num_slots + 1;
    return prog->num_slots++;
}

static int32_t add_slot_for(planner *p, stax_slot_kind kind, int32_t index, size_t bytes,
                            bool overwritten) {
    return add_slot_with(p, kind, index, bytes, overwritten, NULL);
}

static int32_t add_slot(planner *p, stax_slot_kind kind, int32_t index, size_t bytes) {
    return add_slot_for(p, kind, index, bytes, false);
}

static stax_step *add_step(planner *p) {
    stax_program *prog = p->program;
    if (prog->num_steps == p->step_capacity) {
        int32_t capacity = p->step_capacity ? p->step_capacity * 2 : 16;
        stax_step *steps = realloc(prog->steps, sizeof *steps * (size_t)capacity);
        if (!steps) return NULL;
        prog->steps = steps;
        p->step_capacity = capacity;
    }
    stax_step *step = &prog->steps[prog->num_steps++];
    memset(step, 0, sizeof *step);
    step->kernel = -1;
    return step;
}

/* A new kernel name; returns its index, or -1. */
static int32_t add_kernel(planner *p, int32_t region, const char *suffix) {
    stax_program *prog = p->program;
    if (prog->num_kernels == p->kernel_capacity) {
        int32_t capacity = p->kernel_capacity ? p->kernel_capacity * 2 : 16;
        char **names = realloc(prog->kernel_names, sizeof *names * (size_t)capacity);
        if (names) prog->kernel_names = names;
        stax_slot_list *lists = realloc(prog->kernel_slots, sizeof *lists * (size_t)capacity);
        if (lists) prog->kernel_slots = lists;
        if (!names || !lists) return -1;
        p->kernel_capacity = capacity;
    }
    prog->kernel_slots[prog->num_kernels] = (stax_slot_list){0};
    p->eg.emitting = &prog->kernel_slots[prog->num_kernels]; /* emitted next */
    const char *ops[8];
    int32_t num_ops = 0;
    if (region >= 0) {
        const tpcommon_region *r = &p->fusion.regions[region];
        for (int32_t i = 0; i < r->num_members && num_ops < 6; i++)
            ops[num_ops++] = p->graph->values[r->members[i]].op;
    }
    if (suffix) ops[num_ops++] = suffix;
    char name[128], unique[160];
    tpcommon_kernel_name(p->graph->name, region, ops, num_ops, name, sizeof name);
    snprintf(unique, sizeof unique, "STAXKEY_%s_k%d", name, (int)prog->num_kernels);
    prog->kernel_names[prog->num_kernels] = strdup(unique);
    if (!prog->kernel_names[prog->num_kernels]) return -1;
    return prog->num_kernels++;
}

static stax_view contiguous_view(int32_t slot, int64_t offset, const tp_plugin_type *type) {
    stax_view view = {.slot = slot, .offset = offset, .ndim = type->ndim};
    int64_t stride = 1;
    for (int32_t d = type->ndim - 1; d >= 0; d--) {
        view.dims[d] = type->dims[d];
        view.strides[d] = stride;
        stride *= type->dims[d];
    }
    return view;
}

/* `in` seen with `type`'s dims without moving an element, where its
 * strides allow: the input dims that the reshape merges into one dim, or
 * splits one dim from, must lie one after another in memory (a dim's
 * stride the next one's extent times its stride; dims of size 1 aside).
 * So [128, 8, 256] read through a permute splits into [128, 8, 4, 64] as a
 * view. False where only a copy gives that shape (and for no elements). */
static bool reshaped_view(const stax_view *in, const tp_plugin_type *type, stax_view *out) {
    int64_t dims[STAX_MAX_DIMS], strides[STAX_MAX_DIMS];
    int32_t n = 0;
    for (int32_t d = 0; d < in->ndim; d++) {
        if (in->dims[d] == 0) return false;
        if (in->dims[d] != 1) dims[n] = in->dims[d], strides[n++] = in->strides[d];
    }
    *out = (stax_view){.slot = in->slot, .offset = in->offset, .ndim = type->ndim};
    for (int32_t d = 0; d < type->ndim; d++) out->dims[d] = type->dims[d], out->strides[d] = 1;
    int32_t oi = 0, ni = 0;
    while (ni < type->ndim) {
        if (type->dims[ni] == 1) { /* any stride reads the one element */
            ni++;
            continue;
        }
        if (oi >= n) return false;
        int32_t nj = ni + 1, oj = oi + 1;
        int64_t new_extent = type->dims[ni], old_extent = dims[oi];
        while (new_extent != old_extent) {
            if (new_extent < old_extent) {
                if (nj >= type->ndim) return false;
                new_extent *= type->dims[nj++];
            } else {
                if (oj >= n) return false;
                old_extent *= dims[oj++];
            }
        }
        for (int32_t k = oi; k + 1 < oj; k++)
            if (strides[k] != dims[k + 1] * strides[k + 1]) return false;
        out->strides[nj - 1] = strides[oj - 1];
        for (int32_t k = nj - 1; k > ni; k--) out->strides[k - 1] = out->strides[k] * type->dims[k];
        ni = nj, oi = oj;
    }
    return oi == n;
}

static size_t type_bytes(const tp_plugin_type *type) {
    int64_t n = tpcommon_numel(type);
    return (size_t)(n < 0 ? 0 : n) * tpcommon_dtype_size(type->dtype);
}

/* ---- binding symbols and checking ops ---- */

static int32_t bind_types(planner *p, const tp_plugin_tensor_meta *inputs, int32_t num_inputs) {
    const tp_plugin_graph *graph = p->graph;
    int64_t bound[64];
    for (int i = 0; i < 64; i++) bound[i] = -1;
    if (p->mode) {
        for (int32_t s = 0; s < graph->num_symbols && s < 64; s++) bound[s] = p->mode->symbols[s];
        num_inputs = 0; /* the caller checked the inputs against these symbols */
    } else if (num_inputs != graph->num_inputs)
        return tpcommon_error(p->error, p->error_size,
                              "stax: graph '%s' has %d inputs, got metadata for %d", graph->name,
                              (int)graph->num_inputs, (int)num_inputs);
    for (int32_t i = 0; i < num_inputs; i++) {
        const tp_plugin_type *declared = &graph->values[graph->inputs[i]].type;
        const tp_plugin_tensor_meta *meta = &inputs[i];
        char text[128];
        bool ok = meta->dtype == declared->dtype && meta->ndim == declared->ndim;
        for (int32_t d = 0; ok && d < declared->ndim; d++) {
            int64_t dim = declared->dims[d];
            if (dim >= 0) {
                ok = dim == meta->dims[d];
            } else {
                int64_t symbol = -dim - 1;
                if (symbol >= 64)
                    ok = false;
                else if (bound[symbol] < 0)
                    bound[symbol] = meta->dims[d];
                else
                    ok = bound[symbol] == meta->dims[d];
            }
        }
        if (!ok)
            return tpcommon_error(
                p->error, p->error_size,
                "stax: input %d (%%%s) is declared %s but the metadata says %s[%d dims]", (int)i,
                graph->values[graph->inputs[i]].name,
                tpcommon_type_text(graph, declared, text, sizeof text),
                tpcommon_dtype_name(meta->dtype), (int)meta->ndim);
    }
    for (int32_t v = 0; v < graph->num_values; v++) {
        tp_plugin_type type = graph->values[v].type;
        for (int32_t d = 0; d < type.ndim; d++) {
            if (type.dims[d] >= 0) continue;
            int64_t symbol = -type.dims[d] - 1;
            if (symbol >= 64 || bound[symbol] < 0)
                return tpcommon_error(p->error, p->error_size,
                                      "stax: %%%s has a dimension symbol no input binds",
                                      graph->values[v].name);
            type.dims[d] = bound[symbol];
        }
        p->values[v].type = type;
        p->values[v].view.slot = -1;
        p->values[v].raw.slot = -1;
        p->values[v].compute = tpcommon_compute_dtype(graph, &graph->values[v]);
    }
    return TP_PLUGIN_OK;
}

static int32_t check_ops(planner *p) {
    for (int32_t v = 0; v < p->graph->num_values; v++) {
        if (!p->graph->values[v].op) continue;
        int32_t status = stax_node_supported(p->graph, v, p->error, p->error_size);
        if (status != TP_PLUGIN_OK) return status;
    }
    return TP_PLUGIN_OK;
}

/* ---- storage ---- */

/* A fresh contiguous home for a materialized value: its output buffer when it
 * is returned (first position), else scratch. */
static int32_t home_for(planner *p, int32_t v, stax_view *out) {
    const tp_plugin_type *type = &p->values[v].type;
    int32_t position = p->out_position[v];
    int32_t slot;
    if (position >= 0) {
        slot = add_slot(p, STAX_SLOT_OUTPUT, position, type_bytes(type));
        p->out_position[v] = -2; /* stored: the output is written */
    } else {
        slot = add_slot(p, STAX_SLOT_SCRATCH, -1, type_bytes(type));
    }
    if (slot < 0) return oom(p);
    *out = contiguous_view(slot, 0, type);
    return TP_PLUGIN_OK;
}

static int32_t kernel_step(planner *p, int32_t kernel, int64_t count, int64_t grain) {
    stax_step *step = add_step(p);
    if (!step) return oom(p);
    step->kind = STAX_STEP_KERNEL;
    step->kernel = kernel;
    step->count = count;
    step->grain = grain;
    return TP_PLUGIN_OK;
}

/* Copies value v (any view) into `target` with a pointwise kernel. */
static int32_t copy_into(planner *p, int32_t region, int32_t v, const stax_view *target) {
    int64_t numel = 1;
    for (int32_t d = 0; d < target->ndim; d++) numel *= target->dims[d];
    if (stax_decide(&p->eg, numel == 0)) return TP_PLUGIN_OK;
    int32_t kernel = add_kernel(p, region, "copy");
    if (kernel < 0) return oom(p);
    stax_value saved = p->values[v];
    int64_t count = 0;
    /* the copy's expression is "load v": emit with v as an already stored root */
    int32_t status =
        stax_emit_pointwise(&p->eg, p->program->kernel_names[kernel], -1 - v, target, &count);
    p->values[v] = saved;
    if (status != TP_PLUGIN_OK) return status;
    return kernel_step(p, kernel, count, 16384);
}

static int64_t slice_start(int64_t start, int64_t length) {
    if (start < 0) start = start + length < 0 ? 0 : start + length;
    return start > length ? length : start;
}

/* pad, cumsum, topk, topk_indices, resize: a home and the op's own kernel. */
static int32_t plan_dedicated(planner *p, int32_t region, int32_t v) {
    int32_t status = home_for(p, v, &p->values[v].view);
    if (status != TP_PLUGIN_OK) return status;
    if (stax_decide(&p->eg, tpcommon_numel(&p->values[v].type) == 0)) return TP_PLUGIN_OK;
    int32_t kernel = add_kernel(p, region, NULL);
    if (kernel < 0) return oom(p);
    int64_t count = 0;
    status = stax_emit_dedicated(&p->eg, p->program->kernel_names[kernel], v, &count);
    if (status != TP_PLUGIN_OK) return status;
    return stax_decide(&p->eg, count > 0) ? kernel_step(p, kernel, count, 1024) : TP_PLUGIN_OK;
}

/* gather, gather_elements: a home, the op's kernel, and a status word the
 * kernel lowers when an index is out of range (reported by run). */
static int32_t plan_indexing(planner *p, int32_t region, int32_t v) {
    const tp_plugin_value *value = &p->graph->values[v];
    int32_t status = home_for(p, v, &p->values[v].view);
    if (status != TP_PLUGIN_OK) return status;
    if (stax_decide(&p->eg, tpcommon_numel(&p->values[v].type) == 0)) return TP_PLUGIN_OK;
    int32_t status_slot = add_slot(p, STAX_SLOT_SCRATCH, -1, sizeof(uint64_t));
    int32_t kernel = status_slot < 0 ? -1 : add_kernel(p, region, NULL);
    if (kernel < 0) return oom(p);
    int64_t count = 0;
    status = stax_emit_gather(&p->eg, p->program->kernel_names[kernel], v, status_slot, &count);
    if (status != TP_PLUGIN_OK) return status;
    const stax_value *data = &p->values[value->operands[0]];
    int64_t per_index = count > 0 ? tpcommon_numel(&p->values[v].type) / count : 1;
    status = kernel_step(p, kernel, count, per_index >= 4096 ? 1 : 4096 / per_index);
    if (status != TP_PLUGIN_OK) return status;
    stax_index_check *check = &p->program->steps[p->program->num_steps - 1].check;
    int64_t axis = tpcommon_attr_int(value, "axis", 0);
    check->axis = axis < 0 ? axis + data->type.ndim : axis;
    check->length = data->type.dims[check->axis];
    check->status_slot = status_slot;
    check->indices = p->values[value->operands[1]].view;
    check->indices_dtype = p->values[value->operands[1]].type.dtype;
    char where[512];
    snprintf(where, sizeof where, "graph '%s', %%%s (%s)", p->graph->name ? p->graph->name : "?",
             value->name ? value->name : "?", value->op);
    check->where = strdup(where);
    return check->where ? TP_PLUGIN_OK : oom(p);
}

/* Views of the shape ops (concat copies). */
static int32_t plan_shape(planner *p, int32_t region, int32_t v) {
    const tp_plugin_value *value = &p->graph->values[v];
    stax_value *info = &p->values[v];
    int32_t op = tpcommon_op_of(p->graph, value);
    if (tpcommon_op_kind(op) == TPCOMMON_KIND_DEDICATED) return plan_dedicated(p, region, v);
    if (tpcommon_op_kind(op) == TPCOMMON_KIND_INDEXING) return plan_indexing(p, region, v);
    int32_t x = value->operands[0];
    stax_view in = p->values[x].view;
    const tp_plugin_type *type = &info->type;
    stax_view view = {.slot = in.slot, .offset = in.offset, .ndim = type->ndim};
    for (int32_t d = 0; d < type->ndim; d++) view.dims[d] = type->dims[d];
    switch (op) {
    case TP_PLUGIN_OP_RESHAPE:
    case TP_PLUGIN_OP_SQUEEZE:
    case TP_PLUGIN_OP_UNSQUEEZE: {
        bool contiguous = true;
        int64_t expect = 1;
        for (int32_t d = in.ndim - 1; d >= 0; d--) {
            if (in.dims[d] != 1 && in.strides[d] != expect) contiguous = false;
            expect *= in.dims[d];
        }
        stax_view strided;
        if (!stax_decide(&p->eg, contiguous)) {
            /* a strided input: a view still, where its strides allow */
            bool viewable = reshaped_view(&in, type, &strided);
            if (stax_decide(&p->eg, viewable) && viewable) {
                view = strided;
                break;
            }
            int32_t slot = add_slot(p, STAX_SLOT_SCRATCH, -1, type_bytes(&p->values[x].type));
            if (slot < 0) return oom(p);
            stax_view copy = contiguous_view(slot, 0, &p->values[x].type);
            int32_t status = copy_into(p, region, x, &copy);
            if (status != TP_PLUGIN_OK) return status;
            in = copy;
        }
        view = contiguous_view(in.slot, in.offset, type);
        break;
    }
    case TP_PLUGIN_OP_PERMUTE:
    case TP_PLUGIN_OP_TRANSPOSE: {
        int64_t perm[STAX_MAX_DIMS];
        for (int32_t d = 0; d < in.ndim; d++) perm[d] = d;
        if (op == TP_PLUGIN_OP_PERMUTE) {
            int32_t count = 0;
            const int64_t *given = tpcommon_attr_ints(value, "perm", &count);
            for (int32_t d = 0; d < count && d < in.ndim; d++)
                perm[d] = given[d] < 0 ? given[d] + in.ndim : given[d];
        } else {
            int64_t a = tpcommon_attr_int(value, "dim0", 0),
                    b = tpcommon_attr_int(value, "dim1", 0);
            if (a < 0) a += in.ndim;
            if (b < 0) b += in.ndim;
            if (a >= 0 && b >= 0 && a < in.ndim && b < in.ndim) {
                perm[a] = b;
                perm[b] = a;
            }
        }
        for (int32_t d = 0; d < type->ndim; d++) view.strides[d] = in.strides[perm[d]];
        break;
    }
    case TP_PLUGIN_OP_EXPAND: {
        int32_t shift = type->ndim - in.ndim;
        for (int32_t d = 0; d < type->ndim; d++) {
            int32_t src = d - shift;
            view.strides[d] =
                stax_decide(&p->eg, src < 0 || (in.dims[src] == 1 && type->dims[d] != 1))
                    ? 0
                    : in.strides[src];
        }
        break;
    }
    case TP_PLUGIN_OP_SLICE: {
        int64_t axis = tpcommon_attr_int(value, "axis", 0);
        if (axis < 0) axis += in.ndim;
        int64_t step = tpcommon_attr_int(value, "step", 1);
        int64_t start = slice_start(tpcommon_attr_int(value, "start", 0), in.dims[axis]);
        for (int32_t d = 0; d < type->ndim; d++) view.strides[d] = in.strides[d];
        view.offset += start * in.strides[axis];
        view.strides[axis] = in.strides[axis] * step;
        break;
    }
    case TP_PLUGIN_OP_CONCAT: {
        int32_t status = home_for(p, v, &view);
        if (status != TP_PLUGIN_OK) return status;
        int64_t axis = tpcommon_attr_int(value, "axis", 0);
        if (axis < 0) axis += type->ndim;
        int64_t position = 0;
        for (int32_t k = 0; k < value->num_operands; k++) {
            int32_t operand = value->operands[k];
            stax_view part = view;
            part.dims[axis] = p->values[operand].type.dims[axis];
            part.offset += position * view.strides[axis];
            position += part.dims[axis];
            status = copy_into(p, region, operand, &part);
            if (status != TP_PLUGIN_OK) return status;
        }
        break;
    }
    default:
        break;
    }
    info->view = view;
    return TP_PLUGIN_OK;
}

/* arange with the reference's element rules (creation.c in the core). */
static void fill_arange(const tp_plugin_value *value, int32_t dtype, int64_t length, void *data) {
    double start = tpcommon_attr_float(value, "start", 0.0),
           step = tpcommon_attr_float(value, "step", 1.0);
    if (dtype == TP_PLUGIN_F32) {
        float first = (float)start, second = (float)(start + step), delta = second - first;
        float *out = data;
        for (int64_t i = 0; i < length; i++) out[i] = first + (float)i * delta;
        if (length > 1) out[1] = second;
    } else if (dtype == TP_PLUGIN_F64) {
        double first = start, second = start + step, delta = second - first;
        double *out = data;
        for (int64_t i = 0; i < length; i++) out[i] = first + (double)i * delta;
        if (length > 1) out[1] = second;
    } else {
        int64_t first = (int64_t)start, delta = (int64_t)(start + step) - first;
        for (int64_t i = 0; i < length; i++) {
            int64_t x = first + i * delta;
            if (dtype == TP_PLUGIN_I32)
                ((int32_t *)data)[i] = (int32_t)x;
            else
                ((int64_t *)data)[i] = x;
        }
    }
}

static void store_scalar(void *data, int32_t dtype, double value) {
    switch (dtype) {
    case TP_PLUGIN_F32:
        *(float *)data = (float)value;
        break;
    case TP_PLUGIN_F64:
        *(double *)data = value;
        break;
    case TP_PLUGIN_I32:
        *(int32_t *)data = (int32_t)value;
        break;
    case TP_PLUGIN_I64:
        *(int64_t *)data = (int64_t)value;
        break;
    default:
        *(uint8_t *)data = value != 0;
        break;
    }
}

static int32_t plan_creation(planner *p, int32_t v) {
    const tp_plugin_value *value = &p->graph->values[v];
    stax_value *info = &p->values[v];
    int32_t op = tpcommon_op_of(p->graph, value);
    size_t bytes =
        op == TP_PLUGIN_OP_FULL ? tpcommon_dtype_size(info->type.dtype) : type_bytes(&info->type);
    if (op == TP_PLUGIN_OP_CONSTANT) {
        const tp_plugin_attr *attr = tpcommon_attr_find(value, "value");
        if (!attr || attr->type != TP_PLUGIN_ATTR_TENSOR) attr = NULL;
        for (int32_t i = 0; !attr && i < value->num_attrs; i++)
            if (value->attrs[i].type == TP_PLUGIN_ATTR_TENSOR) attr = &value->attrs[i];
        if (!attr || !attr->data || attr->nbytes != type_bytes(&info->type))
            return tpcommon_error(p->error, p->error_size,
                                  "stax: constant %%%s has no payload of %zu bytes", value->name,
                                  type_bytes(&info->type));
        /* read in place while planning; copied after it only if a run reads it */
        int32_t slot = bytes > 0 ? add_slot_with(p, STAX_SLOT_CONST, -1, bytes, true, attr->data)
                                 : add_slot(p, STAX_SLOT_CONST, -1, bytes);
        if (slot < 0) return oom(p);
        info->view = contiguous_view(slot, 0, &info->type);
        return TP_PLUGIN_OK;
    }
    int32_t slot = add_slot(p, STAX_SLOT_CONST, -1, bytes);
    if (slot < 0) return oom(p);
    void *data = p->program->slots[slot].data;
    if (op == TP_PLUGIN_OP_FULL) {
        store_scalar(data, info->type.dtype, tpcommon_attr_float(value, "value", 0.0));
        info->view = contiguous_view(slot, 0, &info->type);
        for (int32_t d = 0; d < info->view.ndim; d++) info->view.strides[d] = 0;
    } else {
        fill_arange(value, info->type.dtype, info->type.ndim ? info->type.dims[0] : 1, data);
        info->view = contiguous_view(slot, 0, &info->type);
    }
    return TP_PLUGIN_OK;
}

/* ---- matmul ---- */

/* A batch of products that share one B (a [seq, batch, in] activation times
 * a 2-D weight, as ONNX exports of PyTorch's layers write it) is one product
 * with batch * m rows when A's rows continue from one batch to the next:
 * the weight is then packed once instead of once per batch. Innermost batch
 * axes first; C is [batch, m, n] row-major either way. */
static void fold_broadcast_batches(stax_gemm *gm) {
    while (gm->batch_ndim > 0) {
        int32_t d = gm->batch_ndim - 1;
        if (gm->batch_dims[d] == 1) { /* a size-1 axis: nothing to fold */
            gm->batch_ndim--;
            continue;
        }
        bool shares_b = gm->b_batch_strides[d] == 0;
        bool rows_continue = gm->a_rs != 0 && gm->a_batch_strides[d] == gm->m * gm->a_rs;
        if (!shares_b || !rows_continue) break;
        gm->m *= gm->batch_dims[d];
        gm->batch_ndim--;
    }
    gm->batch = 1;
    for (int32_t d = 0; d < gm->batch_ndim; d++) gm->batch *= gm->batch_dims[d];
}

static void describe_gemm(planner *p, int32_t v) {
    const tp_plugin_value *value = &p->graph->values[v];
    stax_gemm *gm = &p->gemms[v];
    memset(gm, 0, sizeof *gm);
    stax_view a = p->values[value->operands[0]].view, b = p->values[value->operands[1]].view;
    if (tpcommon_op_of(p->graph, value) == TP_PLUGIN_OP_LINEAR &&
        b.ndim == 2) { /* weight [out, in] -> [in, out] */
        int64_t d0 = b.dims[0], s0 = b.strides[0];
        b.dims[0] = b.dims[1];
        b.strides[0] = b.strides[1];
        b.dims[1] = d0;
        b.strides[1] = s0;
    }
    int32_t a_batch = a.ndim > 2 ? a.ndim - 2 : 0, b_batch = b.ndim > 2 ? b.ndim - 2 : 0;
    if (a.ndim == 1) {
        gm->m = 1, gm->k = a.dims[0], gm->a_rs = 0, gm->a_cs = a.strides[0];
    } else {
        gm->m = a.dims[a.ndim - 2], gm->k = a.dims[a.ndim - 1];
        gm->a_rs = a.strides[a.ndim - 2], gm->a_cs = a.strides[a.ndim - 1];
    }
    if (b.ndim == 1) {
        gm->n = 1, gm->b_rs = b.strides[0], gm->b_cs = 0;
    } else {
        gm->n = b.dims[b.ndim - 1];
        gm->b_rs = b.strides[b.ndim - 2], gm->b_cs = b.strides[b.ndim - 1];
    }
    int32_t batch_ndim = a_batch > b_batch ? a_batch : b_batch;
    gm->batch_ndim = batch_ndim;
    gm->batch = 1;
    for (int32_t d = 0; d < batch_ndim; d++) {
        int32_t da = d - (batch_ndim - a_batch), db = d - (batch_ndim - b_batch);
        int64_t size_a = da >= 0 ? a.dims[da] : 1, size_b = db >= 0 ? b.dims[db] : 1;
        gm->batch_dims[d] = size_a > size_b ? size_a : size_b;
        gm->a_batch_strides[d] = da >= 0 && size_a != 1 ? a.strides[da] : 0;
        gm->b_batch_strides[d] = db >= 0 && size_b != 1 ? b.strides[db] : 0;
        gm->batch *= gm->batch_dims[d];
    }
    fold_broadcast_batches(gm);
    gm->a_slot = a.slot, gm->a_offset = a.offset;
    gm->b_slot = b.slot, gm->b_offset = b.offset;
    gm->c_slot = p->values[v].raw.slot, gm->c_offset = p->values[v].raw.offset;
    gm->epilogue = -1;
    gm->a_dtype = p->values[value->operands[0]].type.dtype;
    gm->b_dtype = p->values[value->operands[1]].type.dtype;
}

/* f16/bf16 in a matmul: the packing widens the operands, the product is
 * written as f32 (the raw view) and the epilogue rounds it once into the
 * home (with the bias and any fused ops, as the core computes it in f32). */
static bool is_packable_float(int32_t dtype) {
    return dtype == TP_PLUGIN_F32 || tpcommon_dtype_is_storage_float(dtype);
}

static size_t raw_product_bytes(const stax_value *mm) {
    if (!tpcommon_dtype_is_storage_float(mm->type.dtype)) return type_bytes(&mm->type);
    return (size_t)tpcommon_numel(&mm->type) * sizeof(float);
}

/* Whether the batches of `gm` share one B that the driver would pack again
 * for each batch because A's rows do not continue from batch to batch (a
 * [seq, batch, in] permute of a [batch, seq, in] activation times a weight,
 * as ONNX exports of PyTorch's attention write the input projection): the
 * repacking ((batch - 1) * k * n floats) then costs more than copying A once
 * (batch * m * k), after which fold_broadcast_batches makes it one product. */
static bool shared_b_repacked_per_batch(const stax_gemm *gm) {
    if (gm->batch <= 1 || gm->a_rs == 0) return false;
    for (int32_t d = 0; d < gm->batch_ndim; d++)
        if (gm->b_batch_strides[d] != 0) return false;
    return (gm->batch - 1) * gm->n > gm->batch * gm->m;
}

static int32_t contiguous_operand(planner *p, int32_t r, int32_t v, stax_view *out);
static int32_t add_packed_constant(planner *p, const stax_gemm_family *family, size_t floats,
                                   stax_gemm_kernels *kernels);

/* A product of a few rows whose f32 B is a constant (shared by its
 * batches): the gemv kernels stream B row-major, so a B stored otherwise (a
 * linear's [n, k] weight) is written so now, into a constant slot of its
 * own that the step reads instead. */
static int32_t row_major_constant_b(planner *p, int32_t s) {
    const stax_gemm *gm = &p->program->steps[s].gemm;
    if (gm->b_cs == 1) return TP_PLUGIN_OK;
    int32_t slot = add_slot_for(p, STAX_SLOT_CONST, -1, (size_t)(gm->k * gm->n) * sizeof(float),
                                true); /* not cleared: written whole */
    if (slot < 0) return oom(p);
    stax_gemm *step_gemm = &p->program->steps[s].gemm; /* after add_slot: steps did not move */
    stax_gemv_row_major_b(p->program->host, step_gemm, p->threads,
                          p->program->slots[step_gemm->b_slot].data, p->program->slots[slot].data);
    step_gemm->b_slot = slot, step_gemm->b_offset = 0;
    step_gemm->b_rs = step_gemm->n, step_gemm->b_cs = 1;
    return TP_PLUGIN_OK;
}

/* A packed matmul whose B is a constant of the graph (or a view of one: a
 * linear's transposed weight), shared by all its products: B packed now for
 * `family`, into a constant slot of its own, so that no call packs it again. */
static int32_t prepack_constant_b(planner *p, int32_t s, const stax_gemm_family *family) {
    const stax_gemm *gm = &p->program->steps[s].gemm;
    if (gm->b_slot < 0 || p->program->slots[gm->b_slot].kind != STAX_SLOT_CONST ||
        !stax_gemm_b_shared_by_batches(gm) || gm->k <= 0)
        return TP_PLUGIN_OK;
    if (stax_gemv_suits_shape(gm) && gm->b_dtype == TP_PLUGIN_F32)
        return row_major_constant_b(p, s);
    stax_gemm_kernels kernels = {.family = family};
    int32_t slot = add_packed_constant(p, family, stax_gemm_whole_b_floats(gm, &kernels), &kernels);
    if (slot < 0) return oom(p);
    stax_gemm *step_gemm = &p->program->steps[s].gemm; /* after add_slot: steps did not move */
    stax_gemm one_slot = *step_gemm;                   /* B as slot 0 */
    one_slot.b_slot = 0;
    void *slots[1] = {p->program->slots[step_gemm->b_slot].data};
    stax_gemm_pack_whole_b(p->program->host, &one_slot, slots, &kernels, p->threads,
                           p->program->slots[slot].data);
    step_gemm->packed_b_slot = slot, step_gemm->packed_b_kc = kernels.kc;
    step_gemm->packed_b_family = family;
    return TP_PLUGIN_OK;
}

static int32_t plan_matmul_region(planner *p, int32_t r) {
    const tpcommon_region *region = &p->fusion.regions[r];
    int32_t mm = region->matmul, root = region->root;
    const tp_plugin_value *node = &p->graph->values[mm];
    bool has_bias = tpcommon_op_of(p->graph, node) == TP_PLUGIN_OP_LINEAR && node->num_operands > 2;
    int32_t a_dtype = p->values[node->operands[0]].type.dtype,
            b_dtype = p->values[node->operands[1]].type.dtype;
    bool storage = tpcommon_dtype_is_storage_float(p->values[mm].type.dtype) ||
                   tpcommon_dtype_is_storage_float(a_dtype) ||
                   tpcommon_dtype_is_storage_float(b_dtype);
    bool epilogue =
        root != mm || has_bias || tpcommon_dtype_is_storage_float(p->values[mm].type.dtype);
    int32_t status = home_for(p, root, &p->values[root].view);
    if (status != TP_PLUGIN_OK) return status;
    if (epilogue) {
        int32_t slot = add_slot(p, STAX_SLOT_SCRATCH, -1, raw_product_bytes(&p->values[mm]));
        if (slot < 0) return oom(p);
        p->values[mm].raw = contiguous_view(slot, 0, &p->values[mm].type);
        if (root != mm) p->values[mm].view.slot = -1;
    } else {
        p->values[mm].raw = p->values[mm].view;
    }
    describe_gemm(p, mm);
    stax_gemm *gm = &p->gemms[mm];
    if (!p->mode && shared_b_repacked_per_batch(gm)) {
        /* A made contiguous once folds the batch into rows (see above) */
        int32_t a = node->operands[0];
        stax_view saved = p->values[a].view, copy;
        status = contiguous_operand(p, r, a, &copy);
        if (status != TP_PLUGIN_OK) return status;
        p->values[a].view = copy;
        describe_gemm(p, mm);
        p->values[a].view = saved;
    }
    int64_t out_numel = gm->batch * gm->m * gm->n;
    if (stax_decide(&p->eg, out_numel == 0)) return TP_PLUGIN_OK;
    int32_t epilogue_kernel = -1;
    int64_t epilogue_count = 0;
    if (epilogue) {
        epilogue_kernel = add_kernel(p, r, "epilogue");
        if (epilogue_kernel < 0) return oom(p);
        status = stax_emit_pointwise(&p->eg, p->program->kernel_names[epilogue_kernel], root,
                                     &p->values[root].view, &epilogue_count);
        if (status != TP_PLUGIN_OK) return status;
    }
    bool packable = p->values[mm].compute == TP_PLUGIN_F32 && is_packable_float(a_dtype) &&
                    is_packable_float(b_dtype);
    /* the packed driver handles k == 0 itself; stax_gemm.c's 6x16 pair does not */
    bool fast = packable && (storage || stax_decide(&p->eg, gm->k > 0));
    if (fast) {
        const stax_gemm_family *family = storage ? p->storage_gemm_family : p->gemm_family;
        stax_step *step = add_step(p);
        if (!step) return oom(p);
        step->kind = family ? STAX_STEP_PACKED_GEMM : STAX_STEP_GEMM;
        step->gemm = *gm;
        step->gemm.epilogue = epilogue_kernel;
        if (!family) {
            p->program->uses_gemm = true;
            return TP_PLUGIN_OK;
        }
        p->program->packed_gemm = family;
        return prepack_constant_b(p, p->program->num_steps - 1, family);
    }
    int32_t kernel = add_kernel(p, r, "matmul");
    if (kernel < 0) return oom(p);
    int64_t count = 0;
    status = stax_emit_matmul_generic(&p->eg, p->program->kernel_names[kernel], mm, &count);
    if (status == TP_PLUGIN_OK) status = kernel_step(p, kernel, count, 4);
    if (status == TP_PLUGIN_OK && epilogue_kernel >= 0)
        status = kernel_step(p, epilogue_kernel, epilogue_count, 16384);
    return status;
}

/* ---- sliding windows (run by stax_window.c) ---- */

/* A contiguous view of operand v: its own when it already is one, else a
 * copy into scratch (a permuted or broadcast view, an inlined value). */
static int32_t contiguous_operand(planner *p, int32_t r, int32_t v, stax_view *out) {
    const stax_view *view = &p->values[v].view;
    stax_view want = contiguous_view(view->slot, view->offset, &p->values[v].type);
    bool same = view->slot >= 0 && view->ndim == want.ndim;
    for (int32_t d = 0; same && d < want.ndim; d++)
        same = want.dims[d] <= 1 || view->strides[d] == want.strides[d];
    if (same) {
        *out = *view;
        return TP_PLUGIN_OK;
    }
    int32_t slot = add_slot(p, STAX_SLOT_SCRATCH, -1, type_bytes(&p->values[v].type));
    if (slot < 0) return oom(p);
    *out = contiguous_view(slot, 0, &p->values[v].type);
    return copy_into(p, r, v, out);
}

/* ---- fused attention (run by stax_attention.c) ---- */

/* The patterns to fuse (stax_attention_match.c): none for dynamic builds,
 * the legacy gemm, or STAX_ATTENTION=off. */
static int32_t find_attention(planner *p) {
    const tp_plugin_host *host = p->program->host;
    const char *setting = host && host->getenv ? host->getenv("STAX_ATTENTION") : NULL;
    if (setting && *setting && strcmp(setting, "on") && strcmp(setting, "off"))
        return tpcommon_error(p->error, p->error_size,
                              "stax: STAX_ATTENTION is '%s'; use on or off (or unset it)", setting);
    if (p->mode || !p->gemm_family || (setting && !strcmp(setting, "off"))) return TP_PLUGIN_OK;
    int32_t count = stax_attention_find(p->graph, &p->fusion, p->values, &p->attention);
    if (count < 0) return oom(p);
    p->attention_of = malloc(sizeof *p->attention_of * ((size_t)p->graph->num_values + 1));
    if (!p->attention_of) return oom(p);
    for (int32_t v = 0; v <= p->graph->num_values; v++) p->attention_of[v] = -1;
    for (int32_t i = 0; i < count; i++)
        for (int32_t k = 0; k < p->attention[i].num_members; k++)
            p->attention_of[p->attention[i].members[k]] = i;
    return TP_PLUGIN_OK;
}

/* Operand `which` of the step from view `view` whose last two dims are its
 * rows and columns (a mask may have fewer dims: broadcast); batch dims
 * aligned to the output's. */
static void attention_operand(stax_attention *at, int which, const stax_view *view) {
    at->slot[which] = view->slot;
    at->offset[which] = view->offset;
    int32_t nd = view->ndim;
    at->row_stride[which] = nd >= 2 && view->dims[nd - 2] != 1 ? view->strides[nd - 2] : 0;
    at->col_stride[which] = nd >= 1 && view->dims[nd - 1] != 1 ? view->strides[nd - 1] : 0;
    for (int32_t d = 0; d < at->batch_ndim; d++) {
        int32_t own = d - (at->batch_ndim - (nd - 2));
        at->batch_strides[which][d] = own >= 0 && view->dims[own] != 1 ? view->strides[own] : 0;
    }
}

static int32_t plan_attention(planner *p, int32_t r, const stax_attention_match *match) {
    int32_t out = match->output;
    int32_t status = home_for(p, out, &p->values[out].view);
    if (status != TP_PLUGIN_OK) return status;
    stax_view mask = {.slot = -1};
    if (match->mask >= 0) /* the kernel reads rows of the mask contiguously */
        status = contiguous_operand(p, r, match->mask, &mask);
    if (status != TP_PLUGIN_OK) return status;
    stax_step *step = add_step(p);
    if (!step) return oom(p);
    stax_attention *at = &step->attention;
    const stax_view *o = &p->values[out].view;
    at->batch_ndim = o->ndim - 2;
    at->batch = 1;
    for (int32_t d = 0; d < at->batch_ndim; d++) at->batch *= at->batch_dims[d] = o->dims[d];
    at->queries = o->dims[o->ndim - 2];
    at->value_dim = o->dims[o->ndim - 1];
    const stax_view *q = &p->values[match->q].view, *k_t = &p->values[match->k_t].view;
    at->head_dim = q->dims[q->ndim - 1];
    at->keys = k_t->dims[k_t->ndim - 1];
    attention_operand(at, 0, q);
    stax_view keys = *k_t; /* [.., head_dim, keys] -> [.., keys, head_dim] */
    keys.dims[keys.ndim - 2] = k_t->dims[k_t->ndim - 1];
    keys.dims[keys.ndim - 1] = k_t->dims[k_t->ndim - 2];
    keys.strides[keys.ndim - 2] = k_t->strides[k_t->ndim - 1];
    keys.strides[keys.ndim - 1] = k_t->strides[k_t->ndim - 2];
    attention_operand(at, 1, &keys);
    attention_operand(at, 2, &p->values[match->v].view);
    attention_operand(at, 4, o);
    at->slot[3] = -1;
    if (match->mask >= 0) attention_operand(at, 3, &mask);
    at->num_scales = match->num_scales;
    for (int32_t i = 0; i < match->num_scales; i++) {
        const stax_view *scalar = &p->values[match->scales[i]].view;
        at->scale_slot[i] = scalar->slot;
        at->scale_offset[i] = scalar->offset;
        at->scale_divides[i] = match->scale_divides[i];
    }
    step->kind = STAX_STEP_ATTENTION; /* its softmax update is the library's */
    p->program->packed_gemm = p->gemm_family;
    return TP_PLUGIN_OK;
}

/* A list attribute into the 2-D geometry, `fallback` where absent (and on
 * the height of 1-D data). With `end` (pads), the list holds the begin of
 * each spatial axis, then the end. The core checked the counts. */
static void window_list(const tp_plugin_value *value, const char *name, int spatial,
                        int64_t fallback, int64_t *begin, int64_t *end) {
    int32_t count = 0;
    const int64_t *values = tpcommon_attr_ints(value, name, &count);
    bool present = count == (end ? 2 * spatial : spatial);
    for (int a = 0; a < 2; a++) {
        int i = a - (2 - spatial);
        begin[a] = present && i >= 0 ? values[i] : fallback;
        if (end) end[a] = present && i >= 0 ? values[spatial + i] : fallback;
    }
}

static void describe_window(planner *p, int32_t v, int32_t op, stax_window *w) {
    const tp_plugin_value *value = &p->graph->values[v];
    const tp_plugin_type *x = &p->values[value->operands[0]].type, *out = &p->values[v].type;
    int spatial = x->ndim - 2, skip = 2 - spatial;
    memset(w, 0, sizeof *w);
    w->kind = op == TP_PLUGIN_OP_CONV             ? STAX_WINDOW_CONV
              : op == TP_PLUGIN_OP_CONV_TRANSPOSE ? STAX_WINDOW_CONV_TRANSPOSE
              : op == TP_PLUGIN_OP_MAX_POOL       ? STAX_WINDOW_MAX_POOL
                                                  : STAX_WINDOW_AVG_POOL;
    w->batch = x->dims[0];
    w->in_channels = x->dims[1];
    w->out_channels = out->dims[1];
    w->group = tpcommon_attr_int(value, "group", 1);
    for (int a = 0; a < 2; a++) {
        w->in[a] = a < skip ? 1 : x->dims[2 + a - skip];
        w->out[a] = a < skip ? 1 : out->dims[2 + a - skip];
        w->kernel[a] = 1;
    }
    if (w->kind == STAX_WINDOW_CONV || w->kind == STAX_WINDOW_CONV_TRANSPOSE) {
        const tp_plugin_type *weight = &p->values[value->operands[1]].type;
        for (int a = skip; a < 2; a++) w->kernel[a] = weight->dims[2 + a - skip];
    } else {
        window_list(value, "kernel_shape", spatial, 1, w->kernel, NULL);
    }
    window_list(value, "strides", spatial, 1, w->stride, NULL);
    window_list(value, "dilations", spatial, 1, w->dilation, NULL);
    window_list(value, "pads", spatial, 0, w->pad_begin, w->pad_end);
    w->count_include_pad = tpcommon_attr_int(value, "count_include_pad", 0) != 0;
    w->x_slot = w->w_slot = w->b_slot = w->col_slot = w->packed_w_slot = -1;
    w->epilogue = -1;
}

/* The implicit-GEMM shape of one image and group of a conv. */
static void describe_conv_gemm(const stax_window *w, stax_gemm *gemm) {
    int64_t cin_g = w->in_channels / w->group, cols = w->out[0] * w->out[1];
    memset(gemm, 0, sizeof *gemm);
    gemm->batch = 1;
    gemm->m = w->out_channels / w->group;
    gemm->k = cin_g * w->kernel[0] * w->kernel[1];
    gemm->n = cols;
    gemm->a_rs = gemm->k, gemm->a_cs = 1;
    gemm->b_rs = cols, gemm->b_cs = 1;
    gemm->a_slot = w->w_slot;
    gemm->b_slot = w->col_slot >= 0 ? w->col_slot : w->x_slot; /* packed: x, read by the packer */
    gemm->c_slot = w->out_slot;
    gemm->epilogue = -1;
}

static stax_window_method conv_method(const stax_window *w) {
    if (w->in_channels / w->group == 1) return STAX_WINDOW_DEPTHWISE;
    bool pointwise = true;
    for (int a = 0; a < 2; a++)
        pointwise = pointwise && w->kernel[a] == 1 && w->stride[a] == 1 && w->pad_begin[a] == 0 &&
                    w->pad_end[a] == 0;
    return pointwise ? STAX_WINDOW_GEMM_POINTWISE : STAX_WINDOW_GEMM_IM2COL;
}

/* ---- f16/bf16 around a window step (stax_window.c runs on f32) ---- */

static int32_t f32_scratch(planner *p, const tp_plugin_type *type, stax_view *out) {
    tp_plugin_type wide = *type;
    wide.dtype = TP_PLUGIN_F32;
    int32_t slot = add_slot(p, STAX_SLOT_SCRATCH, -1, type_bytes(&wide));
    if (slot < 0) return oom(p);
    *out = contiguous_view(slot, 0, &wide);
    return TP_PLUGIN_OK;
}

/* A conversion kernel over the `numel` contiguous elements of `from`. */
static int32_t convert_step(planner *p, int32_t r, const stax_view *from, int32_t from_dtype,
                            const stax_view *to, int32_t to_dtype, int64_t numel) {
    if (stax_decide(&p->eg, numel == 0)) return TP_PLUGIN_OK;
    int32_t kernel = add_kernel(p, r, "convert");
    if (kernel < 0) return oom(p);
    int32_t status =
        stax_emit_convert(&p->eg, p->program->kernel_names[kernel], from, from_dtype, to, to_dtype);
    return status == TP_PLUGIN_OK ? kernel_step(p, kernel, numel, 16384) : status;
}

/* An f16/bf16 operand (contiguous) widened into f32 scratch; *operand
 * becomes the scratch view. Other dtypes are left as they are. */
static int32_t widen_window_operand(planner *p, int32_t r, int32_t v, stax_view *operand) {
    const tp_plugin_type *type = &p->values[v].type;
    if (!tpcommon_dtype_is_storage_float(type->dtype)) return TP_PLUGIN_OK;
    stax_view wide;
    int32_t status = f32_scratch(p, type, &wide);
    if (status == TP_PLUGIN_OK)
        status =
            convert_step(p, r, operand, type->dtype, &wide, TP_PLUGIN_F32, tpcommon_numel(type));
    *operand = wide;
    return status;
}

/* A constant slot of `floats` floats for an operand packed now for
 * `family`'s blocking (*kernels: the family, kc and mc it is packed for);
 * -1 when out of memory. The caller packs into the slot's data. */
static int32_t add_packed_constant(planner *p, const stax_gemm_family *family, size_t floats,
                                   stax_gemm_kernels *kernels) {
    *kernels = (stax_gemm_kernels){.family = family};
    stax_gemm_family_blocking(p->program->host, family, &kernels->kc, &kernels->mc);
    /* not cleared: every packing writes each float, the padding's zeros too */
    return add_slot_for(p, STAX_SLOT_CONST, -1, floats * sizeof(float), true);
}

/* Whether the method switch `name` is "on" (asked for by name; a bad
 * value was refused by the method's choose function already). */
static bool switched_on(const planner *p, const char *name) {
    stax_switch setting;
    char ignored[1];
    return stax_switch_setting(p->program->host, name, &setting, ignored, sizeof ignored) ==
               TP_PLUGIN_OK &&
           setting == STAX_SWITCH_ON;
}

/* A packed conv's weights that are a constant: packed now, into a constant
 * slot of their own, so that no call packs them again. */
static int32_t pack_constant_weights(planner *p, int32_t s) {
    stax_window *w = &p->program->steps[s].window;
    w->packed_w_slot = -1, w->packed_kc = -1;
    if (p->program->slots[w->w_slot].kind != STAX_SLOT_CONST) return TP_PLUGIN_OK;
    stax_gemm_kernels kernels;
    size_t floats =
        w->pixel_rows ? stax_conv_pixel_rows_weight_floats(&p->program->steps[s], p->gemm_family)
        : w->shifted_rows
            ? stax_conv_shifted_rows_weight_floats(&p->program->steps[s], p->gemm_family)
            : (size_t)(w->out_channels * p->program->steps[s].gemm.k);
    int32_t slot = add_packed_constant(p, p->gemm_family, floats, &kernels);
    if (slot < 0) return oom(p);
    const stax_step *step = &p->program->steps[s]; /* after add_slot: steps did not move */
    void *weights = p->program->slots[step->window.w_slot].data;
    if (step->window.pixel_rows || step->window.shifted_rows)
        stax_conv_pixel_rows_pack_weights(p->program->host, step, &kernels, p->threads, weights,
                                          p->program->slots[slot].data);
    else
        stax_window_pack_weights(p->program->host, step, &kernels, p->threads, weights,
                                 p->program->slots[slot].data);
    w->packed_w_slot = slot, w->packed_kc = kernels.kc;
    return TP_PLUGIN_OK;
}

/* Where a conv with a fused epilogue writes its f32 result (its raw view):
 * in place in the root's home when both are f32 (the epilogue reads element
 * i and writes element i), else f32 scratch. The conv itself is then not
 * stored: the epilogue computes the root from the raw result, rounding an
 * f16/bf16 conv once as the unfused conv would. */
static int32_t window_epilogue_result(planner *p, int32_t v, int32_t root, stax_view *result) {
    bool in_place =
        p->values[v].type.dtype == TP_PLUGIN_F32 && p->values[root].type.dtype == TP_PLUGIN_F32;
    if (in_place) {
        *result = contiguous_view(p->values[root].view.slot, p->values[root].view.offset,
                                  &p->values[v].type);
    } else {
        int32_t status = f32_scratch(p, &p->values[v].type, result);
        if (status != TP_PLUGIN_OK) return status;
    }
    p->values[v].raw = *result;
    p->values[v].view.slot = -1;
    return TP_PLUGIN_OK;
}

/* The epilogue kernel of a window region: the root over its home, reading
 * the conv's raw result. */
static int32_t emit_window_epilogue(planner *p, int32_t r, int32_t *kernel) {
    int32_t root = p->fusion.regions[r].root;
    *kernel = add_kernel(p, r, "epilogue");
    if (*kernel < 0) return oom(p);
    int64_t count = 0;
    return stax_emit_pointwise(&p->eg, p->program->kernel_names[*kernel], root,
                               &p->values[root].view, &count);
}

static int32_t plan_window_region(planner *p, int32_t r) {
    int32_t v = p->fusion.regions[r].window, root = p->fusion.regions[r].root;
    bool fused = root != v;
    const tp_plugin_value *value = &p->graph->values[v];
    int32_t op = tpcommon_op_of(p->graph, value);
    int32_t status = home_for(p, root, &p->values[root].view);
    if (status != TP_PLUGIN_OK) return status;
    if (stax_decide(&p->eg, tpcommon_numel(&p->values[v].type) == 0)) return TP_PLUGIN_OK;
    stax_view operands[3];
    for (int32_t k = 0; k < value->num_operands && k < 3; k++) {
        status = contiguous_operand(p, r, value->operands[k], &operands[k]);
        if (status == TP_PLUGIN_OK)
            status = widen_window_operand(p, r, value->operands[k], &operands[k]);
        if (status != TP_PLUGIN_OK) return status;
    }
    /* an f16/bf16 result: the step writes f32 scratch, rounded into the home after it */
    stax_view home = p->values[v].view, result = home;
    bool narrow = !fused && tpcommon_dtype_is_storage_float(p->values[v].type.dtype);
    if (narrow && (status = f32_scratch(p, &p->values[v].type, &result)) != TP_PLUGIN_OK)
        return status;
    if (fused && (status = window_epilogue_result(p, v, root, &result)) != TP_PLUGIN_OK)
        return status;
    int32_t epilogue = -1;
    if (fused && (status = emit_window_epilogue(p, r, &epilogue)) != TP_PLUGIN_OK) return status;
    stax_window w;
    describe_window(p, v, op, &w);
    w.x_slot = operands[0].slot, w.x_offset = operands[0].offset;
    if (value->num_operands > 1) w.w_slot = operands[1].slot, w.w_offset = operands[1].offset;
    if (value->num_operands > 2) w.b_slot = operands[2].slot, w.b_offset = operands[2].offset;
    w.out_slot = result.slot, w.out_offset = result.offset;
    w.epilogue = epilogue;
    w.method = w.kind == STAX_WINDOW_CONV             ? conv_method(&w)
               : w.kind == STAX_WINDOW_CONV_TRANSPOSE ? STAX_WINDOW_TRANSPOSE
                                                      : STAX_WINDOW_POOL;
    stax_step *step = add_step(p);
    if (!step) return oom(p);
    step->kind = STAX_STEP_WINDOW;
    bool gemm_method =
        w.method == STAX_WINDOW_GEMM_IM2COL || w.method == STAX_WINDOW_GEMM_POINTWISE;
    w.packed = gemm_method && p->gemm_family;
    status = stax_conv_choose_pixel_rows(p->program->host, &w, p->gemm_family, &w.pixel_rows,
                                         p->error, p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    status = stax_conv_choose_shifted(p->program->host, &w, p->gemm_family, &w.shifted, p->error,
                                      p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    status = w.method == STAX_WINDOW_POOL
                 ? stax_pool_choose_direct(p->program->host, &w, p->error, p->error_size)
                 : stax_depthwise_choose_direct(p->program->host, &w, p->error, p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    status = stax_depthwise_choose_channels_last(p->program->host, &w, p->error, p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    /* both chosen: shifted, unless pixel rows were asked for by name */
    bool pixel_rows_asked = switched_on(p, "STAX_CONV_PIXEL_ROWS");
    if (w.pixel_rows && w.shifted) {
        if (pixel_rows_asked)
            w.shifted = false;
        else
            w.pixel_rows = false;
    }
    /* shifted rows, chosen, take the place of either, unless that one was
     * asked for by name and they were not */
    status = stax_conv_choose_shifted_rows(p->program->host, &w, p->gemm_family, &w.shifted_rows,
                                           p->error, p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    if (w.shifted_rows && !switched_on(p, "STAX_CONV_SHIFTED_ROWS") &&
        ((w.pixel_rows && pixel_rows_asked) || (w.shifted && switched_on(p, "STAX_CONV_SHIFTED"))))
        w.shifted_rows = false;
    if (w.shifted_rows) w.pixel_rows = w.shifted = false;
    status = stax_conv_choose_staging(p->program->host, &w, p->gemm_family,
                                      epilogue >= 0 ? &p->program->kernel_slots[epilogue] : NULL,
                                      p->error, p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    if (w.pixel_rows) { /* C^T, transposed into the output after the product */
        w.col_slot = add_slot(p, STAX_SLOT_SCRATCH, -1,
                              (size_t)stax_conv_pixel_rows_result_floats(&w) * sizeof(float));
        if (w.col_slot < 0) return oom(p);
        step = &p->program->steps[p->program->num_steps - 1];
    }
    if (w.method == STAX_WINDOW_GEMM_IM2COL && !w.packed) {
        int64_t rows = w.in_channels / w.group * w.kernel[0] * w.kernel[1];
        w.col_slot = add_slot(p, STAX_SLOT_SCRATCH, -1,
                              (size_t)(rows * w.out[0] * w.out[1]) * sizeof(float));
        if (w.col_slot < 0) return oom(p);
        step = &p->program->steps[p->program->num_steps - 1];
    }
    if (gemm_method) {
        describe_conv_gemm(&w, &step->gemm);
        if (w.packed)
            p->program->packed_gemm = p->gemm_family;
        else
            p->program->uses_gemm = true;
    }
    step->window = w;
    status = w.packed ? pack_constant_weights(p, p->program->num_steps - 1) : TP_PLUGIN_OK;
    if (status != TP_PLUGIN_OK || !narrow) return status;
    return convert_step(p, r, &result, TP_PLUGIN_F32, &home, p->values[v].type.dtype,
                        tpcommon_numel(&p->values[v].type));
}

/* ---- regions ---- */

static int32_t plan_region(planner *p, int32_t r) {
    const tpcommon_region *region = &p->fusion.regions[r];
    int32_t root = region->root;
    int64_t count = 0;
    int32_t status = TP_PLUGIN_OK, kernel = -1;
    if (p->attention_of && p->attention_of[root] >= 0) { /* computed by the fused step */
        const stax_attention_match *match = &p->attention[p->attention_of[root]];
        return root == match->output ? plan_attention(p, r, match) : TP_PLUGIN_OK;
    }
    switch (region->kind) {
    case TPCOMMON_REGION_SHAPE:
        return plan_shape(p, r, root);
    case TPCOMMON_REGION_CREATION:
        return plan_creation(p, root);
    case TPCOMMON_REGION_MATMUL:
        return plan_matmul_region(p, r);
    case TPCOMMON_REGION_WINDOW:
        return plan_window_region(p, r);
    default:
        break;
    }
    status = home_for(p, root, &p->values[root].view);
    if (status != TP_PLUGIN_OK) return status;
    if (stax_decide(&p->eg, tpcommon_numel(&p->values[root].type) == 0)) return TP_PLUGIN_OK;
    kernel = add_kernel(p, r, NULL);
    if (kernel < 0) return oom(p);
    const char *name = p->program->kernel_names[kernel];
    int64_t grain = 16384;
    if (region->kind == TPCOMMON_REGION_POINTWISE) {
        /* emit with the root "not stored yet" so its expression is computed */
        stax_view home = p->values[root].view;
        p->values[root].view.slot = -1;
        status = stax_emit_pointwise(&p->eg, name, root, &home, &count);
        p->values[root].view = home;
    } else if (region->kind == TPCOMMON_REGION_REDUCTION) {
        status = stax_emit_reduction(&p->eg, name, root, &count);
        grain = 16;
    } else {
        status = stax_emit_row(&p->eg, name, root, &count);
        grain = 4;
    }
    if (status != TP_PLUGIN_OK) return status;
    return stax_decide(&p->eg, count > 0) ? kernel_step(p, kernel, count, grain) : TP_PLUGIN_OK;
}

/* Outputs not written by their region (inputs, views, constants, repeats). */
static int32_t plan_outputs(planner *p) {
    const tp_plugin_graph *graph = p->graph;
    for (int32_t j = 0; j < graph->num_outputs; j++) {
        int32_t v = graph->outputs[j];
        const stax_view *view = &p->values[v].view;
        if (view->slot >= 0 && p->program->slots[view->slot].kind == STAX_SLOT_OUTPUT &&
            p->program->slots[view->slot].index == j)
            continue;
        int32_t slot = add_slot(p, STAX_SLOT_OUTPUT, j, type_bytes(&p->values[v].type));
        if (slot < 0) return oom(p);
        stax_view target = contiguous_view(slot, 0, &p->values[v].type);
        int32_t status = copy_into(p, -1, v, &target);
        if (status != TP_PLUGIN_OK) return status;
    }
    return TP_PLUGIN_OK;
}

static void module_prelude(tpcommon_buf *m) {
    static const char *const declares =
        "declare float @llvm.sqrt.f32(float)\ndeclare double @llvm.sqrt.f64(double)\n"
        "declare float @llvm.floor.f32(float)\ndeclare double @llvm.floor.f64(double)\n"
        "declare float @llvm.ceil.f32(float)\ndeclare double @llvm.ceil.f64(double)\n"
        "declare float @llvm.maxnum.f32(float, float)\n"
        "declare double @llvm.maxnum.f64(double, double)\n"
        "declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)\n"
        "declare i32 @llvm.fptosi.sat.i32.f32(float)\ndeclare i32 "
        "@llvm.fptosi.sat.i32.f64(double)\n"
        "declare i64 @llvm.fptosi.sat.i64.f32(float)\ndeclare i64 "
        "@llvm.fptosi.sat.i64.f64(double)\n"
        "declare double @exp(double)\ndeclare double @log(double)\ndeclare double @tanh(double)\n"
        "declare double @erf(double)\ndeclare double @sin(double)\ndeclare double @cos(double)\n"
        "declare double @pow(double, double)\ndeclare float @powf(float, float)\n\n";
    tpcommon_buf_append(m, declares);
#if defined(__x86_64__) || defined(__i386__)
    tpcommon_buf_append(m, "declare void @llvm.x86.sse.sfence()\n\n"); /* stax_emit_stream.c */
#endif
    tpcommon_buf_append(m, stax_mathlib_ir);
    tpcommon_buf_append(m, "\n");
}

/* The fusion regions, a conv's pointwise consumers in its region unless
 * STAX_CONV_EPILOGUE=off (each then runs as a kernel of its own). */
static int32_t compute_fusion(planner *p) {
    const tp_plugin_host *host = p->program->host;
    const char *setting = host && host->getenv ? host->getenv("STAX_CONV_EPILOGUE") : NULL;
    if (setting && *setting && strcmp(setting, "on") && strcmp(setting, "off"))
        return tpcommon_error(p->error, p->error_size,
                              "stax: STAX_CONV_EPILOGUE is '%s'; use on or off (or unset it)",
                              setting);
    tpcommon_fusion_options options = {.window_epilogues = !setting || strcmp(setting, "off")};
    return tpcommon_fusion_compute_with(p->graph, &options, &p->fusion, p->error, p->error_size);
}

/* The graph's constants were read in place while planning (each packed
 * copy was made from there). Each one a run reads is now copied into memory
 * of the program's own, the graph's payload being the caller's; one that no
 * step reads (the raw weights of a conv or matmul packed at compile: only
 * the packed copy is read) is let go, which halves a CNN's constant memory.
 * With keep_all, every one is copied (max-autotune: its candidates of other
 * blocking pack the raw weights at compile; dynamic builds plan again). */
static int32_t keep_read_constants(planner *p, bool keep_all) {
    stax_program *prog = p->program;
    bool *read = calloc((size_t)prog->num_slots + 1, sizeof *read);
    if (!read) return oom(p);
    if (!keep_all) stax_program_slots_touched(prog, read);
    int32_t status = TP_PLUGIN_OK;
    for (int32_t s = 0; s < prog->num_slots; s++) {
        stax_slot *slot = &prog->slots[s];
        if (!slot->borrowed) continue;
        if (keep_all || read[s]) {
            void *own = stax_alloc_aligned(prog->host, slot->bytes);
            if (!own) { /* the rest stay borrowed: stax_program_free leaves them */
                status = oom(p);
                break;
            }
            memcpy(own, slot->data, slot->bytes);
            slot->data = own;
        } else {
            slot->data = NULL;
            prog->constants_dropped++;
            prog->constant_bytes_dropped += slot->bytes;
        }
        slot->borrowed = false;
    }
    free(read);
    return status;
}

/* Whether the loops that call float math routines vectorize to 512 bits
 * (STAX_ATTRS_WIDE; every loop at 512 bits made model compiles 15-20%
 * slower, the encoder 73-79 -> 95 ms cold). LLVM's tuning for
 * Intel's AVX-512 server cores (sapphirerapids and later) prefers 256-bit
 * vectors, for the clock drop wide vectors once cost; the 2-core Xeon we
 * measure on runs FMAs at the same rate on zmm registers with both cores
 * busy, and tanh(x*2+1)*x over 16M floats takes 5.1-5.2 ms a call at 512
 * bits against 5.6-6.5 at 256 (softmax over 4096^2: 5.8-6.1 against
 * 6.6-6.8), 2 threads. STAX_PREFER_512=off leaves the width to LLVM. */
static int32_t prefer_512_bits(planner *p, const char *features, bool *wide) {
    const tp_plugin_host *host = p->program->host;
    const char *setting = host && host->getenv ? host->getenv("STAX_PREFER_512") : NULL;
    *wide = false;
    if (setting && *setting && strcmp(setting, "on") && strcmp(setting, "off"))
        return tpcommon_error(p->error, p->error_size,
                              "stax: STAX_PREFER_512 is '%s'; use on or off (or unset it)",
                              setting);
    *wide = !(setting && !strcmp(setting, "off")) && stax_features_enable(features, "avx512f");
    return TP_PLUGIN_OK;
}

static int32_t plan_all(planner *p, const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                        const char *cpu, const char *features, bool keep_constants) {
    const tp_plugin_graph *graph = p->graph;
    int32_t status = bind_types(p, inputs, num_inputs);
    if (status == TP_PLUGIN_OK) status = check_ops(p);
    if (status == TP_PLUGIN_OK) status = compute_fusion(p);
    if (status == TP_PLUGIN_OK) status = find_attention(p);
    if (status != TP_PLUGIN_OK) return status;
    p->eg.fusion = &p->fusion;
    for (int32_t j = graph->num_outputs - 1; j >= 0; j--) p->out_position[graph->outputs[j]] = j;
    for (int32_t i = 0; i < graph->num_inputs; i++) {
        int32_t v = graph->inputs[i];
        int32_t slot = add_slot(p, STAX_SLOT_INPUT, i, type_bytes(&p->values[v].type));
        if (slot < 0) return oom(p);
        p->values[v].view = contiguous_view(slot, 0, &p->values[v].type);
    }
    module_prelude(&p->module);
    for (int32_t r = 0; r < p->fusion.num_regions && status == TP_PLUGIN_OK; r++)
        status = plan_region(p, r);
    if (status == TP_PLUGIN_OK) status = plan_outputs(p);
    if (status == TP_PLUGIN_OK) status = keep_read_constants(p, keep_constants || p->mode);
    p->eg.emitting = NULL;
    if (status == TP_PLUGIN_OK)
        status = stax_arena_place(p->program, !p->mode, p->error, p->error_size);
    if (status != TP_PLUGIN_OK) return status;
    if (p->eg.bodies && !stax_kernel_bodies_emit(p->eg.bodies, &p->module)) return oom(p);
    /* the matmul micro-kernels are a library module of their own (stax_gemm_library.c) */
    bool wide = false;
    status = prefer_512_bits(p, features, &wide);
    if (status != TP_PLUGIN_OK) return status;
    const char *width = wide ? "\"prefer-vector-width\"=\"512\" " : "";
    tpcommon_buf_printf(
        &p->module,
        "attributes #0 = { nounwind \"target-cpu\"=\"%s\" \"target-features\"=\"%s\" }\n"
        "attributes #1 = { alwaysinline nounwind \"target-cpu\"=\"%s\" "
        "\"target-features\"=\"%s\" }\n"
        "attributes #2 = { noinline nounwind \"target-cpu\"=\"%s\" "
        "\"target-features\"=\"%s\" }\n"
        "attributes #%d = { nounwind \"target-cpu\"=\"%s\" \"target-features\"=\"%s\" %s}\n"
        "attributes #%d = { noinline nounwind \"target-cpu\"=\"%s\" "
        "\"target-features\"=\"%s\" %s}\n",
        cpu, features, cpu, features, cpu, features, STAX_ATTRS_WIDE, cpu, features, width,
        STAX_ATTRS_WIDE_NOINLINE, cpu, features, width);
    tpcommon_buf_append(&p->module, STAX_LOOP_METADATA);
    p->program->ir = tpcommon_buf_take(&p->module);
    return p->program->ir ? TP_PLUGIN_OK : oom(p);
}

static int32_t build_program(const tp_plugin_host *host, const tp_plugin_graph *graph,
                             const tp_plugin_tensor_meta *inputs, int32_t num_inputs,
                             const char *cpu, const char *features, const stax_build_mode *mode,
                             bool keep_constants, int64_t threads, stax_program *out, char *error,
                             size_t error_size) {
    memset(out, 0, sizeof *out);
    out->host = host;
    planner p;
    memset(&p, 0, sizeof p);
    p.graph = graph;
    p.threads = threads > 1 ? threads : 1;
    p.mode = mode;
    p.program = out;
    p.error = error;
    p.error_size = error_size;
    size_t n = (size_t)graph->num_values + 1;
    p.values = calloc(n, sizeof *p.values);
    p.gemms = calloc(n, sizeof *p.gemms);
    p.out_position = malloc(n * sizeof *p.out_position);
    tpcommon_buf_init(&p.module);
    int32_t status = p.values && p.gemms && p.out_position ? TP_PLUGIN_OK : oom(&p);
    if (status == TP_PLUGIN_OK)
        status = stax_gemm_family_choose(host, features, &p.gemm_family, error, error_size);
    p.storage_gemm_family = p.gemm_family ? p.gemm_family : stax_gemm_family_for_features(features);
    if (status == TP_PLUGIN_OK) {
        for (size_t i = 0; i < n; i++) p.out_position[i] = -1;
        p.eg = (stax_emit_graph){.graph = graph,
                                 .values = p.values,
                                 .module = &p.module,
                                 .decisions = mode ? mode->decisions : NULL,
                                 /* dynamic builds keep their own bodies: stax_dynamic.c
                                    rewrites each one's size arguments */
                                 .bodies = mode ? NULL : &p.bodies,
                                 .error = error,
                                 .error_size = error_size};
        status = stax_stream_threshold(host, p.threads, &p.eg.stream_min_bytes, error, error_size);
        if (status == TP_PLUGIN_OK)
            status = plan_all(&p, inputs, num_inputs, cpu, features, keep_constants);
    }
    tpcommon_buf_free(&p.module);
    stax_kernel_bodies_free(&p.bodies);
    tpcommon_fusion_free(&p.fusion);
    free(p.values);
    free(p.gemms);
    free(p.out_position);
    free(p.attention);
    free(p.attention_of);
    if (status != TP_PLUGIN_OK) stax_program_free(out);
    return status;
}

int32_t stax_program_build(const tp_plugin_host *host, const tp_plugin_graph *graph,
                           const tp_plugin_tensor_meta *inputs, int32_t num_inputs, const char *cpu,
                           const char *features, const stax_build_mode *mode, int64_t threads,
                           stax_program *out, char *error, size_t error_size) {
    return build_program(host, graph, inputs, num_inputs, cpu, features, mode, false, threads, out,
                         error, error_size);
}

int32_t stax_program_build_keeping_constants(const tp_plugin_host *host,
                                             const tp_plugin_graph *graph,
                                             const tp_plugin_tensor_meta *inputs,
                                             int32_t num_inputs, const char *cpu,
                                             const char *features, int64_t threads,
                                             stax_program *out, char *error, size_t error_size) {
    return build_program(host, graph, inputs, num_inputs, cpu, features, NULL, true, threads, out,
                         error, error_size);
}

void stax_program_free(stax_program *program) {
    for (int32_t s = 0; s < program->num_slots; s++)
        if (program->slots[s].data && program->slots[s].arena_offset < 0 &&
            !program->slots[s].borrowed) /* a borrowed payload is the graph's */
            stax_free_aligned(program->host, program->slots[s].data);
    stax_free_aligned(program->host, program->arena);
    for (int32_t k = 0; k < program->num_kernels; k++) {
        free(program->kernel_names[k]);
        free(program->kernel_slots[k].slots);
    }
    free(program->kernel_slots);
    for (int32_t s = 0; s < program->num_steps; s++) free(program->steps[s].check.where);
    free(program->slots);
    free(program->steps);
    free(program->kernel_names);
    free(program->ir);
    memset(program, 0, sizeof *program);
}
