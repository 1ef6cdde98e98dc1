/* The in-memory ONNX model builder of the importer tests (see the header). */
#include "onnx_model_builder.h"

#ifdef TP_WITH_ONNX
#include <stdlib.h>
#include <string.h>

static void *arena_alloc(onnx_test_model *m, size_t size) {
    void *pointer = calloc(1, size ? size : 1);
    if (m->arena_count < (int)(sizeof m->arena / sizeof m->arena[0]))
        m->arena[m->arena_count++] = pointer;
    return pointer;
}

static char *arena_strdup(onnx_test_model *m, const char *text) {
    char *copy = arena_alloc(m, strlen(text) + 1);
    strcpy(copy, text);
    return copy;
}

/* Appends `item` to a protobuf-c repeated field (count + pointer array). */
static void push(onnx_test_model *m, size_t *count, void ***items, void *item) {
    void **grown = arena_alloc(m, (*count + 1) * sizeof *grown);
    if (*count) memcpy(grown, *items, *count * sizeof *grown);
    grown[(*count)++] = item;
    *items = grown;
}

void onnx_test_model_init(onnx_test_model *m, int64_t opset) {
    memset(m, 0, sizeof *m);
    onnx__model_proto__init(&m->model);
    onnx__graph_proto__init(&m->graph);
    onnx__operator_set_id_proto__init(&m->opset);
    m->opset.has_version = 1;
    m->opset.version = opset;
    m->opsets[0] = &m->opset;
    m->model.has_ir_version = 1;
    m->model.ir_version = 8;
    m->model.n_opset_import = 1;
    m->model.opset_import = m->opsets;
    m->graph.name = "g";
    m->model.graph = &m->graph;
}

void onnx_test_model_free(onnx_test_model *m) {
    for (int i = 0; i < m->arena_count; i++) free(m->arena[i]);
    m->arena_count = 0;
}

void onnx_test_value(onnx_test_model *m, int output, const char *name, int elem_type, int ndim,
                     const int64_t *dims, const char *const *params) {
    Onnx__TensorShapeProto *shape = arena_alloc(m, sizeof *shape);
    onnx__tensor_shape_proto__init(shape);
    int param = 0;
    for (int d = 0; d < ndim; d++) {
        Onnx__TensorShapeProto__Dimension *dim = arena_alloc(m, sizeof *dim);
        onnx__tensor_shape_proto__dimension__init(dim);
        if (dims[d] >= 0) {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dim->dim_value = dims[d];
        } else {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dim->dim_param = arena_strdup(m, params[param++]);
        }
        push(m, &shape->n_dim, (void ***)&shape->dim, dim);
    }
    Onnx__TypeProto__Tensor *tensor = arena_alloc(m, sizeof *tensor);
    onnx__type_proto__tensor__init(tensor);
    tensor->has_elem_type = 1;
    tensor->elem_type = elem_type;
    tensor->shape = shape;
    Onnx__TypeProto *type = arena_alloc(m, sizeof *type);
    onnx__type_proto__init(type);
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tensor;
    Onnx__ValueInfoProto *info = arena_alloc(m, sizeof *info);
    onnx__value_info_proto__init(info);
    info->name = arena_strdup(m, name);
    info->type = type;
    if (output)
        push(m, &m->graph.n_output, (void ***)&m->graph.output, info);
    else
        push(m, &m->graph.n_input, (void ***)&m->graph.input, info);
}

static Onnx__TensorProto *new_tensor(onnx_test_model *m, const char *name, int data_type, int ndim,
                                     const int64_t *dims) {
    Onnx__TensorProto *tensor = arena_alloc(m, sizeof *tensor);
    onnx__tensor_proto__init(tensor);
    tensor->name = arena_strdup(m, name);
    tensor->has_data_type = 1;
    tensor->data_type = data_type;
    tensor->n_dims = (size_t)ndim;
    tensor->dims = arena_alloc(m, (size_t)ndim * sizeof(int64_t));
    if (ndim) memcpy(tensor->dims, dims, (size_t)ndim * sizeof(int64_t));
    push(m, &m->graph.n_initializer, (void ***)&m->graph.initializer, tensor);
    return tensor;
}

Onnx__TensorProto *onnx_test_initializer(onnx_test_model *m, const char *name, int ndim,
                                         const int64_t *dims, const float *data, size_t raw_bytes) {
    Onnx__TensorProto *tensor =
        new_tensor(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, ndim, dims);
    tensor->has_raw_data = 1;
    tensor->raw_data.len = raw_bytes;
    tensor->raw_data.data = arena_alloc(m, raw_bytes);
    if (raw_bytes) memcpy(tensor->raw_data.data, data, raw_bytes);
    return tensor;
}

Onnx__TensorProto *onnx_test_int64_initializer(onnx_test_model *m, const char *name, int64_t count,
                                               const int64_t *values) {
    Onnx__TensorProto *tensor =
        new_tensor(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &count);
    tensor->n_int64_data = (size_t)count;
    tensor->int64_data = arena_alloc(m, (size_t)count * sizeof(int64_t));
    memcpy(tensor->int64_data, values, (size_t)count * sizeof(int64_t));
    return tensor;
}

Onnx__NodeProto *onnx_test_node(onnx_test_model *m, const char *op_type, const char *name,
                                const char *const *inputs, const char *const *outputs) {
    Onnx__NodeProto *node = arena_alloc(m, sizeof *node);
    onnx__node_proto__init(node);
    node->op_type = arena_strdup(m, op_type);
    node->name = arena_strdup(m, name ? name : "");
    for (; inputs && *inputs; inputs++)
        push(m, &node->n_input, (void ***)&node->input, arena_strdup(m, *inputs));
    for (; outputs && *outputs; outputs++)
        push(m, &node->n_output, (void ***)&node->output, arena_strdup(m, *outputs));
    push(m, &m->graph.n_node, (void ***)&m->graph.node, node);
    return node;
}

static Onnx__AttributeProto *new_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                                      Onnx__AttributeProto__AttributeType type) {
    Onnx__AttributeProto *attr = arena_alloc(m, sizeof *attr);
    onnx__attribute_proto__init(attr);
    attr->name = arena_strdup(m, name);
    attr->has_type = 1;
    attr->type = type;
    push(m, &node->n_attribute, (void ***)&node->attribute, attr);
    return attr;
}

void onnx_test_int_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                        int64_t value) {
    Onnx__AttributeProto *attr =
        new_attr(m, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    attr->has_i = 1;
    attr->i = value;
}

void onnx_test_float_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                          float value) {
    Onnx__AttributeProto *attr =
        new_attr(m, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    attr->has_f = 1;
    attr->f = value;
}

void onnx_test_ints_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                         const int64_t *values, size_t count) {
    Onnx__AttributeProto *attr =
        new_attr(m, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    attr->ints = arena_alloc(m, sizeof *attr->ints * (count ? count : 1));
    memcpy(attr->ints, values, sizeof *attr->ints * count);
    attr->n_ints = count;
}

void onnx_test_string_attr(onnx_test_model *m, Onnx__NodeProto *node, const char *name,
                           const char *value) {
    Onnx__AttributeProto *attr =
        new_attr(m, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    attr->has_s = 1;
    attr->s.len = strlen(value);
    attr->s.data = (uint8_t *)arena_strdup(m, value);
}

uint8_t *onnx_test_pack(onnx_test_model *m, size_t *size) {
    *size = onnx__model_proto__get_packed_size(&m->model);
    uint8_t *bytes = arena_alloc(m, *size);
    onnx__model_proto__pack(&m->model, bytes);
    return bytes;
}
#endif
