/* tp_graph_load_onnx: maps the file, unpacks the ModelProto with the
 * protobuf-c code generated from onnx.proto, and builds the graph: opset
 * check, initializers as constants, graph inputs with their symbols, every
 * unsupported op listed at once, nodes in dependency order (a cycle or a
 * value nothing produces is named), outputs, verification. The per-op
 * conversions are onnx_ops.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "ir/graph_internal.h"
#include "onnx_internal.h"
#include "tensorplay/onnx.h"

bool tp_onnx_available(void) {
    return true;
}

static void describe_node(onnx_importer *im, const Onnx__NodeProto *node, int index) {
    const char *op = node->op_type && node->op_type[0] ? node->op_type : "?";
    if (node->name && node->name[0])
        snprintf(im->node_text, sizeof im->node_text, "node '%.200s' (%.100s)", node->name, op);
    else
        snprintf(im->node_text, sizeof im->node_text, "node #%d (%.100s, no name)", index, op);
}

static bool is_default_domain(const char *domain) {
    return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

static tp_status read_opset(onnx_importer *im, const Onnx__ModelProto *model) {
    im->opset = -1;
    for (size_t i = 0; i < model->n_opset_import; i++)
        if (is_default_domain(model->opset_import[i]->domain) &&
            model->opset_import[i]->has_version)
            im->opset = model->opset_import[i]->version;
    if (im->opset < 0)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: the model imports no version of the default ONNX "
                            "domain (opset_import)",
                            im->file);
    return TP_OK;
}

/* ---- graph inputs and initializers ---- */

static tp_status read_initializers(onnx_importer *im, const Onnx__GraphProto *graph) {
    if (graph->n_sparse_initializer)
        return tp_error_set(TP_ERR_UNSUPPORTED, "%s: sparse initializers are not supported",
                            im->file);
    for (size_t i = 0; i < graph->n_initializer; i++) {
        const Onnx__TensorProto *proto = graph->initializer[i];
        char what[300];
        snprintf(what, sizeof what, "initializer '%.250s'", proto->name ? proto->name : "");
        if (!proto->name || !proto->name[0])
            return tp_error_set(TP_ERR_PARSE, "%s: initializer #%zu has no name", im->file, i);
        tp_tensor *tensor;
        TP_TRY(onnx_tensor_read(im, proto, what, &tensor));
        onnx_handle handle;
        TP_TRY(onnx_new_constant(im, tensor, &handle));
        if (onnx_find(im, proto->name) != ONNX_NO_HANDLE)
            return tp_error_set(TP_ERR_PARSE, "%s: initializer '%s' is given twice", im->file,
                                proto->name);
        TP_TRY(onnx_bind(im, proto->name, handle));
    }
    return TP_OK;
}

static tp_status input_type(onnx_importer *im, const Onnx__ValueInfoProto *info, tp_type *type) {
    const char *name = info->name;
    if (!info->type || info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: graph input '%s' is not a tensor (sequences, "
                            "maps and optionals are not supported)",
                            im->file, name);
    const Onnx__TypeProto__Tensor *tensor = info->type->tensor_type;
    if (!tensor->has_elem_type)
        return tp_error_set(TP_ERR_PARSE, "%s: graph input '%s' has no element type", im->file,
                            name);
    if (onnx_dtype(tensor->elem_type, &type->dtype) != TP_OK)
        return tp_error_prefix(TP_ERR_UNSUPPORTED, "%s: graph input '%s': ", im->file, name);
    if (!tensor->shape)
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: graph input '%s' has no shape (its rank must be known)", im->file,
                            name);
    if (tensor->shape->n_dim > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: graph input '%s' has %zu dimensions (at most "
                            "%d)",
                            im->file, name, tensor->shape->n_dim, TP_MAX_DIMS);
    type->ndim = (int32_t)tensor->shape->n_dim;
    for (size_t d = 0; d < tensor->shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tensor->shape->dim[d];
        char symbol[TP_IR_NAME_MAX + 32];
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0)
                return tp_error_set(TP_ERR_PARSE, "%s: graph input '%s': dimension %zu is %" PRId64,
                                    im->file, name, d, dim->dim_value);
            type->dims[d] = dim->dim_value;
            continue;
        }
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
            dim->dim_param[0]) {
            tp_onnx_value_name(dim->dim_param, symbol, sizeof symbol);
            if (symbol[0] == '_' && dim->dim_param[0] >= '0' && dim->dim_param[0] <= '9')
                symbol[0] = 'd';
        } else {
            char base[100];
            tp_onnx_value_name(name, base, sizeof base);
            snprintf(symbol, sizeof symbol, "%s_d%zu", base, d);
        }
        if (symbol[0] == '_' && !symbol[1]) symbol[0] = 's';
        TP_TRY(tp_graph_symbol(im->graph, symbol, &type->dims[d]));
    }
    return TP_OK;
}

static tp_status read_inputs(onnx_importer *im, const Onnx__GraphProto *graph) {
    for (size_t i = 0; i < graph->n_input; i++) {
        const Onnx__ValueInfoProto *info = graph->input[i];
        if (!info->name || !info->name[0])
            return tp_error_set(TP_ERR_PARSE, "%s: graph input #%zu has no name", im->file, i);
        if (onnx_find(im, info->name) != ONNX_NO_HANDLE) continue; /* an initializer (IR < 4) */
        tp_type type = {0};
        TP_TRY(input_type(im, info, &type));
        char name[TP_IR_NAME_MAX + 1];
        tp_onnx_value_name(info->name, name, sizeof name);
        if (tp_ir_find_value(im->graph, name) != TP_NO_VALUE)
            return tp_error_set(TP_ERR_UNSUPPORTED,
                                "%s: graph inputs '%s' and another one both map to the name '%s'",
                                im->file, info->name, name);
        tp_value_id id;
        TP_TRY(tp_graph_add_input(im->graph, name, &type, &id));
        onnx_handle handle;
        TP_TRY(onnx_new_graph_value(im, id, &handle));
        for (int k = 0; k < im->num_known; k++)
            if (im->known[k].name && im->known[k].value &&
                strcmp(im->known[k].name, info->name) == 0)
                im->values[handle].known = im->known[k].value;
        TP_TRY(onnx_bind(im, info->name, handle));
    }
    return TP_OK;
}

/* ---- nodes ---- */

/* Distinct unsupported (domain, op type) pairs with their node counts, for
 * the summary at the head of check_ops's message. */
typedef struct op_tally {
    const char *domain, *op_type;
    int nodes;
} op_tally;

#define MAX_TALLIED_OPS 32

static int tally_op(op_tally *tally, int count, const char *domain, const char *op_type) {
    for (int t = 0; t < count; t++)
        if (!strcmp(tally[t].domain, domain) && !strcmp(tally[t].op_type, op_type)) {
            tally[t].nodes++;
            return count;
        }
    if (count == MAX_TALLIED_OPS) return count;
    tally[count] = (op_tally){domain, op_type, 1};
    return count + 1;
}

/* Every node whose op the importer does not know, in one message: first
 * each op type with its node count (so a model with 52 Conv nodes still
 * names the pooling op after them), then the nodes, as many as fit. */
static tp_status check_ops(onnx_importer *im, const Onnx__GraphProto *graph) {
    char nodes[TP_ERROR_MESSAGE_MAX], summary[TP_ERROR_MESSAGE_MAX / 2];
    size_t at = 0;
    int unsupported = 0, listed = 0, distinct = 0;
    op_tally tally[MAX_TALLIED_OPS];
    for (size_t i = 0; i < graph->n_node; i++) {
        const Onnx__NodeProto *node = graph->node[i];
        if (!node->op_type || !node->op_type[0])
            return tp_error_set(TP_ERR_PARSE, "%s: node #%zu ('%s') has no op_type", im->file, i,
                                node->name ? node->name : "");
        if (is_default_domain(node->domain) && onnx_converter(node->op_type)) continue;
        unsupported++;
        const char *domain = node->domain && node->domain[0] ? node->domain : "ai.onnx";
        distinct = tally_op(tally, distinct, domain, node->op_type);
        describe_node(im, node, (int)i);
        if (at < sizeof nodes - 200) {
            at += (size_t)snprintf(nodes + at, sizeof nodes - at, "\n  %s, domain '%s'",
                                   im->node_text, domain);
            listed++;
        }
    }
    if (!unsupported) return TP_OK;
    size_t used = 0;
    summary[0] = '\0';
    for (int t = 0; t < distinct && used < sizeof summary - 100; t++)
        used += (size_t)snprintf(
            summary + used, sizeof summary - used, "%s%s%s%s x%d", t ? ", " : "",
            is_default_domain(tally[t].domain) ? "" : tally[t].domain,
            is_default_domain(tally[t].domain) ? "" : ".", tally[t].op_type, tally[t].nodes);
    return tp_error_set(TP_ERR_UNSUPPORTED,
                        "%s: %d node%s with ops the ONNX importer does not "
                        "support (%s):%s%s",
                        im->file, unsupported, unsupported == 1 ? "" : "s", summary, nodes,
                        listed < unsupported ? "\n  ... and the others counted above" : "");
}

static bool node_ready(const onnx_importer *im, const Onnx__NodeProto *node) {
    for (size_t i = 0; i < node->n_input; i++)
        if (node->input[i] && node->input[i][0] && onnx_find(im, node->input[i]) == ONNX_NO_HANDLE)
            return false;
    return true;
}

static bool produced_by_some_node(const Onnx__GraphProto *graph, const char *name) {
    for (size_t n = 0; n < graph->n_node; n++)
        for (size_t o = 0; o < graph->node[n]->n_output; o++)
            if (graph->node[n]->output[o] && strcmp(graph->node[n]->output[o], name) == 0)
                return true;
    return false;
}

/* No node left can run: name a missing value or the cycle's nodes. */
static tp_status report_stuck(onnx_importer *im, const Onnx__GraphProto *graph, const bool *done) {
    char cycle[1024];
    size_t at = 0;
    for (size_t n = 0; n < graph->n_node; n++) {
        if (done[n]) continue;
        const Onnx__NodeProto *node = graph->node[n];
        for (size_t i = 0; i < node->n_input; i++) {
            const char *input = node->input[i];
            if (!input || !input[0] || onnx_find(im, input) != ONNX_NO_HANDLE) continue;
            if (!produced_by_some_node(graph, input)) {
                describe_node(im, node, (int)n);
                im->node = node;
                return onnx_node_error(im, TP_ERR_INVALID_GRAPH,
                                       "input '%s' is not a graph input, an initializer or the "
                                       "output of any node",
                                       input);
            }
        }
        describe_node(im, node, (int)n);
        if (at < sizeof cycle - 300)
            at += (size_t)snprintf(cycle + at, sizeof cycle - at, "%s%s", at ? ", " : "",
                                   im->node_text);
    }
    im->node = NULL;
    return tp_error_set(TP_ERR_INVALID_GRAPH,
                        "%s: the nodes form a cycle (each waits for another's "
                        "output): %s",
                        im->file, cycle);
}

static tp_status convert_node(onnx_importer *im, const Onnx__NodeProto *node, int index) {
    im->node = node;
    im->node_index = index;
    describe_node(im, node, index);
    tp_status status = onnx_converter(node->op_type)(im);
    if (status != TP_OK) return status;
    /* Outputs the converter did not bind are not produced. */
    for (size_t o = 0; o < node->n_output; o++) {
        const char *name = node->output[o];
        if (!name || !name[0] || onnx_find(im, name) != ONNX_NO_HANDLE) continue;
        onnx_handle handle;
        TP_TRY(onnx_new_graph_value(im, TP_NO_VALUE, &handle));
        char *text = tp_strdup(im->node_text); /* owned by the value (importer_free) */
        if (!text) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
        im->values[handle].unsupported_by = text;
        TP_TRY(onnx_bind(im, name, handle));
    }
    im->node = NULL;
    return TP_OK;
}

static tp_status read_nodes(onnx_importer *im, const Onnx__GraphProto *graph) {
    if (graph->n_node > TP_ONNX_MAX_NODES)
        return tp_error_set(TP_ERR_UNSUPPORTED, "%s: %zu nodes (at most %d)", im->file,
                            graph->n_node, TP_ONNX_MAX_NODES);
    TP_TRY(check_ops(im, graph));
    bool *done = calloc(graph->n_node + 1, sizeof *done);
    if (!done) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
    size_t remaining = graph->n_node;
    tp_status status = TP_OK;
    while (remaining && status == TP_OK) {
        size_t progress = 0;
        for (size_t n = 0; n < graph->n_node && status == TP_OK; n++) {
            if (done[n] || !node_ready(im, graph->node[n])) continue;
            status = convert_node(im, graph->node[n], (int)n);
            done[n] = true;
            progress++;
            remaining--;
        }
        if (status == TP_OK && !progress) status = report_stuck(im, graph, done);
    }
    free(done);
    return status;
}

static tp_status read_outputs(onnx_importer *im, const Onnx__GraphProto *graph) {
    if (graph->n_output == 0)
        return tp_error_set(TP_ERR_INVALID_GRAPH, "%s: the graph has no outputs", im->file);
    tp_value_id *ids = calloc(graph->n_output, sizeof *ids);
    if (!ids) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
    tp_status status = TP_OK;
    for (size_t i = 0; i < graph->n_output && status == TP_OK; i++) {
        const char *name = graph->output[i]->name;
        onnx_handle handle = onnx_find(im, name);
        if (handle == ONNX_NO_HANDLE)
            status = tp_error_set(TP_ERR_INVALID_GRAPH,
                                  "%s: graph output '%s' is not produced by any node, initializer "
                                  "or input",
                                  im->file, name ? name : "");
        else
            status = onnx_graph_value(im, handle, &ids[i]);
    }
    if (status == TP_OK) status = tp_graph_set_outputs(im->graph, ids, (int)graph->n_output);
    free(ids);
    return status;
}

/* ---- entry points ---- */

static tp_status import_model(onnx_importer *im, const Onnx__ModelProto *model) {
    if (!model->graph) return tp_error_set(TP_ERR_PARSE, "%s: the model has no graph", im->file);
    TP_TRY(read_opset(im, model));
    char graph_name[TP_IR_NAME_MAX + 1];
    tp_onnx_value_name(model->graph->name && model->graph->name[0] ? model->graph->name : "main",
                       graph_name, sizeof graph_name);
    if (graph_name[0] == '_') graph_name[0] = 'g';
    TP_TRY(tp_graph_create(graph_name, &im->graph));
    TP_TRY(read_initializers(im, model->graph));
    TP_TRY(read_inputs(im, model->graph));
    TP_TRY(read_nodes(im, model->graph));
    TP_TRY(read_outputs(im, model->graph));
    tp_status status = tp_graph_verify(im->graph);
    if (status != TP_OK) return tp_error_prefix(status, "%s: imported graph: ", im->file);
    return TP_OK;
}

static void importer_free(onnx_importer *im) {
    for (onnx_handle h = 0; h < im->num_values; h++) free((char *)im->values[h].unsupported_by);
    onnx_values_free(im);
    tp_ctx_destroy(im->ctx);
}

tp_status tp_graph_load_onnx_buffer(const void *bytes, size_t size, const char *name,
                                    const char *base_dir, const tp_onnx_known_input *known,
                                    int num_known, tp_graph **out) {
    if (!out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_load_onnx_buffer: out is NULL");
    *out = NULL;
    if (!bytes && size)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_load_onnx_buffer: bytes is NULL");
    onnx_importer im = {.file = name ? name : "<onnx>",
                        .base_dir = base_dir,
                        .known = known,
                        .num_known = known ? num_known : 0};
    Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, size, bytes);
    if (!model)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: not a valid ONNX model (the protobuf ModelProto does not decode: "
                            "the file is truncated, is not ONNX, or has fields of the wrong type)",
                            im.file);
    im.ctx = tp_ctx_create();
    tp_status status = im.ctx ? import_model(&im, model)
                              : tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im.file);
    importer_free(&im);
    onnx__model_proto__free_unpacked(model, NULL);
    if (status != TP_OK) {
        tp_graph_destroy(im.graph);
        return status;
    }
    *out = im.graph;
    return TP_OK;
}

tp_status tp_graph_load_onnx(const char *path, tp_graph **out) {
    return tp_graph_load_onnx_with_inputs(path, NULL, 0, out);
}

tp_status tp_graph_load_onnx_with_inputs(const char *path, const tp_onnx_known_input *known,
                                         int num_known, tp_graph **out) {
    if (!out || !path)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_load_onnx: path or out is NULL");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tp_error_set(TP_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        close(fd);
        return tp_error_set(TP_ERR_IO, "%s is not a regular file", path);
    }
    size_t size = (size_t)info.st_size;
    void *bytes = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (size && bytes == MAP_FAILED)
        return tp_error_set(TP_ERR_IO, "cannot map %s: %s", path, strerror(errno));
    char *base_dir = tp_strdup(path);
    if (!base_dir) {
        if (size) munmap(bytes, size);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    char *slash = strrchr(base_dir, '/');
    if (slash)
        *(slash == base_dir ? slash + 1 : slash) = '\0';
    else
        strcpy(base_dir, ".");
    tp_status status =
        tp_graph_load_onnx_buffer(size ? bytes : "", size, path, base_dir, known, num_known, out);
    free(base_dir);
    if (size) munmap(bytes, size);
    return status;
}
