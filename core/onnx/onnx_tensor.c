/* ONNX tensors to tp_tensors: the dtype mapping, and TensorProto payloads in
 * each of their encodings (raw_data, the typed repeated fields, external
 * data files next to the model). Every size is checked against the claimed
 * shape before anything is allocated or copied, so a file that claims more
 * data than it holds fails with a message instead of a huge allocation. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "onnx_internal.h"

/* TensorProto.DataType numbers (onnx.proto). */
static const struct {
    int32_t onnx_type;
    const char *name;
    int dtype; /* tp_dtype, or -1 when not supported */
} dtype_table[] = {
    {1, "float", TP_F32},      {2, "uint8", -1},       {3, "int8", -1},
    {4, "uint16", -1},         {5, "int16", -1},       {6, "int32", TP_I32},
    {7, "int64", TP_I64},      {8, "string", -1},      {9, "bool", TP_BOOL},
    {10, "float16", TP_F16},   {11, "double", TP_F64}, {12, "uint32", -1},
    {13, "uint64", -1},        {14, "complex64", -1},  {15, "complex128", -1},
    {16, "bfloat16", TP_BF16},
};

const char *onnx_dtype_name(int32_t onnx_type) {
    for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
        if (dtype_table[i].onnx_type == onnx_type) return dtype_table[i].name;
    return "an unknown type";
}

tp_status onnx_dtype(int32_t onnx_type, tp_dtype *out) {
    for (size_t i = 0; i < sizeof dtype_table / sizeof dtype_table[0]; i++)
        if (dtype_table[i].onnx_type == onnx_type && dtype_table[i].dtype >= 0) {
            *out = (tp_dtype)dtype_table[i].dtype;
            return TP_OK;
        }
    return tp_error_set(TP_ERR_UNSUPPORTED,
                        "element type %s (%d) is not supported (float, double, float16, bfloat16, "
                        "int32, int64 and bool are)",
                        onnx_dtype_name(onnx_type), (int)onnx_type);
}

static const char *external_entry(const Onnx__TensorProto *proto, const char *key) {
    for (size_t i = 0; i < proto->n_external_data; i++)
        if (proto->external_data[i]->key && strcmp(proto->external_data[i]->key, key) == 0)
            return proto->external_data[i]->value;
    return NULL;
}

static bool parse_size(const char *text, int64_t *out) {
    if (!text || !text[0]) return false;
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno || *end || value < 0) return false;
    *out = value;
    return true;
}

/* A location is a relative path inside the model's folder. */
static bool location_is_safe(const char *location) {
    if (!location[0] || location[0] == '/') return false;
    for (const char *p = location; *p;) {
        const char *slash = strchr(p, '/');
        size_t length = slash ? (size_t)(slash - p) : strlen(p);
        if (length == 2 && p[0] == '.' && p[1] == '.') return false;
        if (!slash) break;
        p = slash + 1;
    }
    return true;
}

static tp_status read_external(const onnx_importer *im, const Onnx__TensorProto *proto,
                               const char *what, void *data, size_t nbytes) {
    const char *location = external_entry(proto, "location");
    if (!location)
        return tp_error_set(TP_ERR_PARSE, "%s: %s: external data without a 'location' entry",
                            im->file, what);
    if (!im->base_dir)
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: %s: external data ('%s') needs the model's folder; load the model "
                            "from a file",
                            im->file, what, location);
    if (!location_is_safe(location))
        return tp_error_set(TP_ERR_PARSE,
                            "%s: %s: external data location '%s' must be a relative path inside "
                            "the model's folder",
                            im->file, what, location);
    int64_t offset = 0, length = (int64_t)nbytes;
    const char *offset_text = external_entry(proto, "offset");
    const char *length_text = external_entry(proto, "length");
    if ((offset_text && !parse_size(offset_text, &offset)) ||
        (length_text && !parse_size(length_text, &length)))
        return tp_error_set(TP_ERR_PARSE,
                            "%s: %s: external data offset '%s' or length '%s' is "
                            "not a non-negative integer",
                            im->file, what, offset_text ? offset_text : "",
                            length_text ? length_text : "");
    if (length != (int64_t)nbytes)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: %s: external data length %" PRId64 " does not match its shape "
                            "(%zu bytes)",
                            im->file, what, length, nbytes);
    size_t path_size = strlen(im->base_dir) + strlen(location) + 2;
    char *path = malloc(path_size);
    if (!path) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", im->file);
    snprintf(path, path_size, "%s/%s", im->base_dir, location);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    tp_status status = TP_OK;
    struct stat info;
    if (fd < 0) {
        status = tp_error_set(TP_ERR_IO, "%s: %s: cannot open external data file %s: %s", im->file,
                              what, path, strerror(errno));
    } else if (fstat(fd, &info) != 0 || info.st_size < offset ||
               info.st_size - offset < (int64_t)nbytes) {
        status = tp_error_set(TP_ERR_PARSE,
                              "%s: %s: external data file %s is too short: %zu bytes needed at "
                              "offset %" PRId64 ", the file has %lld",
                              im->file, what, path, nbytes, offset, (long long)info.st_size);
    } else {
        size_t done = 0;
        while (done < nbytes && status == TP_OK) {
            ssize_t got = pread(fd, (char *)data + done, nbytes - done, (off_t)(offset + done));
            if (got <= 0)
                status = tp_error_set(TP_ERR_IO, "%s: %s: reading %s failed: %s", im->file, what,
                                      path, got < 0 ? strerror(errno) : "unexpected end of file");
            else
                done += (size_t)got;
        }
    }
    if (fd >= 0) close(fd);
    free(path);
    return status;
}

/* Copies a typed repeated field, converting to the tensor's element type. */
static tp_status read_typed(const onnx_importer *im, const Onnx__TensorProto *proto,
                            const char *what, tp_dtype dtype, int64_t numel, void *data) {
    size_t have;
    switch (dtype) {
    case TP_F32:
        have = proto->n_float_data;
        break;
    case TP_F64:
        have = proto->n_double_data;
        break;
    case TP_I64:
        have = proto->n_int64_data;
        break;
    default:
        have = proto->n_int32_data;
        break; /* int32, bool, and float16/bfloat16 as their 16 bits */
    }
    if ((int64_t)have != numel)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: %s: holds %zu values for %" PRId64
                            " elements (neither raw_data nor the %s field matches its shape)",
                            im->file, what, have, numel, tp_dtype_name(dtype));
    for (int64_t i = 0; i < numel; i++) switch (dtype) {
        case TP_F32:
            ((float *)data)[i] = proto->float_data[i];
            break;
        case TP_F64:
            ((double *)data)[i] = proto->double_data[i];
            break;
        case TP_I64:
            ((int64_t *)data)[i] = proto->int64_data[i];
            break;
        case TP_I32:
            ((int32_t *)data)[i] = proto->int32_data[i];
            break;
        case TP_F16:
        case TP_BF16:
            ((uint16_t *)data)[i] = (uint16_t)proto->int32_data[i];
            break;
        default:
            ((uint8_t *)data)[i] = proto->int32_data[i] != 0;
            break;
        }
    return TP_OK;
}

tp_status onnx_tensor_read(const onnx_importer *im, const Onnx__TensorProto *proto,
                           const char *what, tp_tensor **out) {
    *out = NULL;
    tp_dtype dtype;
    if (!proto->has_data_type)
        return tp_error_set(TP_ERR_PARSE, "%s: %s: tensor without a data_type", im->file, what);
    if (onnx_dtype(proto->data_type, &dtype) != TP_OK)
        return tp_error_prefix(TP_ERR_UNSUPPORTED, "%s: %s: ", im->file, what);
    if (proto->n_dims > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_UNSUPPORTED, "%s: %s: %zu dimensions (at most %d)", im->file,
                            what, proto->n_dims, TP_MAX_DIMS);
    if (proto->segment)
        return tp_error_set(TP_ERR_UNSUPPORTED, "%s: %s: segmented tensors are not supported",
                            im->file, what);
    int64_t numel = 1;
    for (size_t i = 0; i < proto->n_dims; i++) {
        if (proto->dims[i] < 0 ||
            (proto->dims[i] > 0 && numel > TP_ONNX_MAX_ELEMENTS / proto->dims[i]))
            return tp_error_set(TP_ERR_PARSE,
                                "%s: %s: dimension %zu is %" PRId64 " (must be >= 0 "
                                "and the tensor at most 2^34 elements)",
                                im->file, what, i, proto->dims[i]);
        numel *= proto->dims[i];
    }
    size_t nbytes = (size_t)numel * tp_dtype_size(dtype);
    bool external = proto->has_data_location &&
                    proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (!external && proto->has_raw_data && proto->raw_data.len != nbytes)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: %s: claims %s with %" PRId64 " elements (%zu bytes) but its "
                            "raw_data has %zu bytes",
                            im->file, what, tp_dtype_name(dtype), numel, nbytes,
                            proto->raw_data.len);
    if (!external && !proto->has_raw_data) {
        /* Checked before allocating: a typed field must hold every element. */
        size_t have = dtype == TP_F32   ? proto->n_float_data
                      : dtype == TP_F64 ? proto->n_double_data
                      : dtype == TP_I64 ? proto->n_int64_data
                                        : proto->n_int32_data;
        if ((int64_t)have != numel)
            return tp_error_set(TP_ERR_PARSE,
                                "%s: %s: claims %s with %" PRId64 " elements but holds %zu "
                                "values (no raw_data)",
                                im->file, what, tp_dtype_name(dtype), numel, have);
    }
    int64_t shape[TP_MAX_DIMS];
    for (size_t i = 0; i < proto->n_dims; i++) shape[i] = proto->dims[i];
    tp_tensor *tensor;
    TP_TRY(tp_tensor_create(dtype, (int)proto->n_dims, shape, &tensor));
    void *data = nbytes ? tp_tensor_data_mut(tensor) : NULL;
    tp_status status = TP_OK;
    if (external)
        status = read_external(im, proto, what, data, nbytes);
    else if (proto->has_raw_data) {
        if (nbytes) memcpy(data, proto->raw_data.data, nbytes);
        if (dtype == TP_BOOL)
            for (size_t i = 0; i < nbytes; i++) ((uint8_t *)data)[i] = ((uint8_t *)data)[i] != 0;
    } else
        status = read_typed(im, proto, what, dtype, numel, data);
    if (status != TP_OK) {
        tp_tensor_release(tensor);
        return status;
    }
    *out = tensor;
    return TP_OK;
}
