/* The .tpir printer: tp_graph_print (canonical text), tp_graph_save (atomic
 * file write) and tp_type_describe. The grammar is in docs/tpir.md; the parser
 * (parse.c) reads back exactly what this file writes.
 *
 * Canonical form, byte for byte:
 *   graph NAME(%in: TYPE, %in2: TYPE) {      inputs in declaration order,
 *                                            "graph NAME() {" without inputs
 *     %v: TYPE = op(%a, %b) {key=value, ...} one line per node, in id order,
 *                                            two-space indent; "op()" without
 *                                            operands; the attribute block only
 *                                            when the op declares attributes,
 *                                            then all of them, in tp_attr_key
 *                                            order, joined by ", "
 *     return %v, %in                         two-space indent
 *   }                                        followed by one '\n'
 * TYPE is DTYPE[d0, d1] ("f32[]" for a scalar); a dim is a decimal size or a
 * symbol's name. Attribute values:
 *   ints        [1, -2] ([] when empty)
 *   bool        true / false
 *   int         decimal; TP_SLICE_END is `end`
 *   float       the shortest %.Ng (N = 1..17) that reads back to the same
 *               double, where N is at least the number of digits of the
 *               integer part when that is at most 17 (20, not 2e+01); inf,
 *               -inf, nan (NaN's sign and payload are not kept)
 *   dtype       f32 f64 i32 i64 bool
 *   approximate none / tanh
 *   payload     the constant's elements, flat in C order: [1, 2.5, 3]; f32
 *               elements use the shortest %.Ng (N = 1..9, same integer-part
 *               rule) that reads back to the same float, f64 as floats above, integers in decimal,
 * bool as 0 / 1
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "graph_internal.h"
#include "ops/attr_info.h"

/* ---- a growing text buffer ------------------------------------------------ */

typedef struct text_buffer {
    char *data;
    size_t length, capacity;
    bool failed; /* an allocation failed: everything after is dropped */
} text_buffer;

static void append_bytes(text_buffer *buffer, const char *bytes, size_t count) {
    if (buffer->failed) return;
    if (buffer->length + count + 1 > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 256;
        while (buffer->length + count + 1 > capacity) capacity *= 2;
        char *data = realloc(buffer->data, capacity);
        if (!data) {
            buffer->failed = true;
            return;
        }
        buffer->data = data;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->length, bytes, count);
    buffer->length += count;
    buffer->data[buffer->length] = '\0';
}

static void append(text_buffer *buffer, const char *text) {
    append_bytes(buffer, text, strlen(text));
}

/* ---- numbers ------------------------------------------------------------------ */

static void format_special(double value, char *out, size_t size) {
    snprintf(out, size, "%s", isnan(value) ? "nan" : value > 0 ? "inf" : "-inf");
}

/* At least as many significant digits as the integer part has, so that 20
 * prints as "20" rather than "2e+01" (up to `max_precision` digits). */
static int integer_digits(double value, int max_precision) {
    if (fabs(value) >= 1e17) return 1;
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", fabs(value));
    int count = (int)strlen(digits);
    return count <= max_precision ? count : 1;
}

/* Shortest %.Ng reading back to the same double. */
static void format_double(double value, char *out, size_t size) {
    if (!isfinite(value)) return format_special(value, out, size);
    for (int precision = integer_digits(value, 17); precision <= 17; precision++) {
        snprintf(out, size, "%.*g", precision, value);
        if (strtod(out, NULL) == value) return;
    }
}

/* Shortest %.Ng reading back (with strtof) to the same float. */
static void format_float(float value, char *out, size_t size) {
    if (!isfinite(value)) return format_special(value, out, size);
    for (int precision = integer_digits(value, 9); precision <= 9; precision++) {
        snprintf(out, size, "%.*g", precision, (double)value);
        if (strtof(out, NULL) == value) return;
    }
}

static void append_double(text_buffer *buffer, double value) {
    char text[40];
    format_double(value, text, sizeof text);
    append(buffer, text);
}

static void append_int(text_buffer *buffer, int64_t value) {
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)value);
    append(buffer, text);
}

/* ---- types, attributes, payloads ---------------------------------------------------- */

char *tp_type_describe(const tp_graph *graph, const tp_type *type, char *buf, size_t size) {
    if (!buf || size == 0) return buf;
    buf[0] = '\0';
    if (!type) return buf;
    size_t used = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int written_ = snprintf(buf + used, size - used, __VA_ARGS__);                             \
        if (written_ < 0 || (size_t)written_ >= size - used) return buf;                           \
        used += (size_t)written_;                                                                  \
    } while (0)
    PUT("%s[", tp_dtype_name(type->dtype));
    int ndim = type->ndim < 0 ? 0 : type->ndim > TP_MAX_DIMS ? TP_MAX_DIMS : type->ndim;
    for (int i = 0; i < ndim; i++) {
        const char *separator = i ? ", " : "";
        if (!TP_DIM_IS_SYMBOL(type->dims[i])) {
            PUT("%s%lld", separator, (long long)type->dims[i]);
        } else {
            const char *symbol = tp_graph_symbol_name(graph, type->dims[i]);
            PUT("%s%s", separator, symbol ? symbol : "?");
        }
    }
    PUT("]");
#undef PUT
    return buf;
}

static void append_type(text_buffer *buffer, const tp_graph *graph, const tp_type *type) {
    char text[TP_MAX_DIMS * (TP_IR_NAME_MAX + 2) + 16];
    append(buffer, tp_type_describe(graph, type, text, sizeof text));
}

static void append_payload(text_buffer *buffer, const tp_tensor *data) {
    append(buffer, "[");
    int64_t count = data ? tp_tensor_numel(data) : 0;
    const void *elements = data ? tp_tensor_data(data) : NULL;
    for (int64_t i = 0; i < count; i++) {
        char text[40];
        switch (tp_tensor_dtype(data)) {
        case TP_F32:
            format_float(((const float *)elements)[i], text, sizeof text);
            break;
        case TP_F64:
            format_double(((const double *)elements)[i], text, sizeof text);
            break;
        case TP_I32:
            snprintf(text, sizeof text, "%d", (int)((const int32_t *)elements)[i]);
            break;
        case TP_I64:
            snprintf(text, sizeof text, "%lld", (long long)((const int64_t *)elements)[i]);
            break;
        default:
            snprintf(text, sizeof text, "%d", ((const uint8_t *)elements)[i] ? 1 : 0);
            break;
        }
        if (i) append(buffer, ", ");
        append(buffer, text);
    }
    append(buffer, "]");
}

static void append_attr_value(text_buffer *buffer, const tp_attrs *attrs, tp_attr_key key) {
    const tp_attr_info *info = tp_attr_info_get(key);
    switch (info->type) {
    case TP_ATTR_TYPE_INTS: {
        int32_t count;
        const int64_t *values = tp_attrs_ints(attrs, key, &count);
        append(buffer, "[");
        for (int32_t i = 0; i < count && i < TP_MAX_DIMS; i++) {
            if (i) append(buffer, ", ");
            append_int(buffer, values[i]);
        }
        append(buffer, "]");
        break;
    }
    case TP_ATTR_TYPE_BOOL:
        append(buffer, tp_attrs_bool(attrs, key) ? "true" : "false");
        break;
    case TP_ATTR_TYPE_INT: {
        int64_t value = key == TP_ATTR_GROUP   ? attrs->group
                        : key == TP_ATTR_AXIS  ? attrs->axis
                        : key == TP_ATTR_DIM0  ? attrs->dim0
                        : key == TP_ATTR_DIM1  ? attrs->dim1
                        : key == TP_ATTR_START ? attrs->start
                        : key == TP_ATTR_STOP  ? attrs->stop
                                               : attrs->step;
        if (value == TP_SLICE_END)
            append(buffer, "end");
        else
            append_int(buffer, value);
        break;
    }
    case TP_ATTR_TYPE_FLOAT: {
        double value = key == TP_ATTR_RANGE_START  ? attrs->range_start
                       : key == TP_ATTR_RANGE_STOP ? attrs->range_stop
                       : key == TP_ATTR_RANGE_STEP ? attrs->range_step
                       : key == TP_ATTR_VALUE      ? attrs->value
                       : key == TP_ATTR_EPS        ? attrs->eps
                       : key == TP_ATTR_BETA       ? attrs->beta
                                                   : attrs->threshold;
        append_double(buffer, value);
        break;
    }
    case TP_ATTR_TYPE_DTYPE:
        append(buffer, tp_dtype_name(attrs->dtype));
        break;
    case TP_ATTR_TYPE_APPROXIMATE:
        append(buffer, attrs->approximate == TP_GELU_TANH ? "tanh" : "none");
        break;
    case TP_ATTR_TYPE_TENSOR:
        append_payload(buffer, attrs->data);
        break;
    }
}

/* ---- the graph ------------------------------------------------------------------------ */

static void append_value_name(text_buffer *buffer, const tp_graph *graph, tp_value_id id) {
    append(buffer, "%");
    append(buffer, id >= 0 && id < graph->num_values ? graph->values[id].name : "?");
}

static void append_node(text_buffer *buffer, const tp_graph *graph, const tp_value *value) {
    append(buffer, "  %");
    append(buffer, value->name);
    append(buffer, ": ");
    append_type(buffer, graph, &value->type);
    append(buffer, " = ");
    append(buffer, value->op ? value->op->name : "?");
    append(buffer, "(");
    for (int i = 0; i < value->num_operands; i++) {
        if (i) append(buffer, ", ");
        append_value_name(buffer, graph, value->operands[i]);
    }
    append(buffer, ")");
    uint32_t mask = value->op ? value->op->attr_mask : 0;
    if (mask) {
        append(buffer, " {");
        bool first = true;
        for (int key = 0; key < TP_ATTR_KEY_COUNT; key++) {
            if (!(mask & TP_ATTR_BIT(key))) continue;
            if (!first) append(buffer, ", ");
            first = false;
            append(buffer, tp_attr_key_name((tp_attr_key)key));
            append(buffer, "=");
            append_attr_value(buffer, &value->attrs, (tp_attr_key)key);
        }
        append(buffer, "}");
    }
    append(buffer, "\n");
}

tp_status tp_graph_print(const tp_graph *graph, char **text_out) {
    if (!graph || !text_out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_print: graph or text_out is NULL");
    *text_out = NULL;
    text_buffer buffer = {0};
    append(&buffer, "graph ");
    append(&buffer, graph->name);
    append(&buffer, "(");
    for (int i = 0; i < graph->num_inputs; i++) {
        if (i) append(&buffer, ", ");
        append_value_name(&buffer, graph, graph->inputs[i]);
        append(&buffer, ": ");
        tp_value_id id = graph->inputs[i];
        if (id >= 0 && id < graph->num_values) append_type(&buffer, graph, &graph->values[id].type);
    }
    append(&buffer, ") {\n");
    for (int32_t id = 0; id < graph->num_values; id++)
        if (graph->values[id].kind == TP_VALUE_NODE)
            append_node(&buffer, graph, &graph->values[id]);
    append(&buffer, "  return");
    for (int i = 0; i < graph->num_outputs; i++) {
        append(&buffer, i ? ", " : " ");
        append_value_name(&buffer, graph, graph->outputs[i]);
    }
    append(&buffer, "\n}\n");
    if (buffer.failed) {
        free(buffer.data);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_print: out of memory printing '%s'",
                            graph->name);
    }
    *text_out = buffer.data;
    return TP_OK;
}

/* ---- saving ------------------------------------------------------------------------------ */

static tp_status write_all(FILE *file, const char *text, const char *path) {
    size_t length = strlen(text);
    if (fwrite(text, 1, length, file) != length || fflush(file) != 0 || fsync(fileno(file)) != 0)
        return tp_error_set(TP_ERR_IO, "%s: cannot write the graph (disk full?)", path);
    return TP_OK;
}

tp_status tp_graph_save(const tp_graph *graph, const char *path) {
    if (!path) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_graph_save: path is NULL");
    char *text;
    TP_TRY(tp_graph_print(graph, &text));
    size_t temp_size = strlen(path) + 32;
    char *temp_path = malloc(temp_size);
    if (!temp_path) {
        free(text);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_graph_save: out of memory");
    }
    snprintf(temp_path, temp_size, "%s.tmp.%ld", path, (long)getpid());
    tp_status status = TP_OK;
    FILE *file = fopen(temp_path, "wb");
    if (!file) {
        status = tp_error_set(TP_ERR_IO,
                              "%s: cannot create (does the folder exist and is it "
                              "writable?)",
                              temp_path);
    } else {
        status = write_all(file, text, path);
        if (fclose(file) != 0 && status == TP_OK)
            status = tp_error_set(TP_ERR_IO, "%s: cannot write the graph", path);
        if (status == TP_OK && rename(temp_path, path) != 0)
            status = tp_error_set(TP_ERR_IO, "%s: cannot rename %s into place", path, temp_path);
        if (status != TP_OK) remove(temp_path);
    }
    free(temp_path);
    free(text);
    return status;
}
