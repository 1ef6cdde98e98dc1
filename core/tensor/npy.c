/* .npy files: reading format 1.0, 2.0 and 3.0 into a tp_tensor and writing
 * one atomically. Owns the file format only (preamble, header dict, data
 * layout); tensors themselves are made in tensor.c.
 *
 * Reading validates everything before it allocates the tensor: the header
 * must lie inside the input, the shape must fit, and the data must have
 * exactly the size the shape says, so a hostile file can neither make us read
 * past the buffer nor allocate more than the file could fill. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/error.h"
#include "tensor/shape_text.h"
#include "tensor/tensor_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c reads and writes little-endian data in place; port it before using a big-endian host"
#endif

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
#define NPY_MAGIC_SIZE     6
#define NPY_DATA_ALIGNMENT 64
#define NPY_DESCR_MAX      32

/* Where the header dict lies in the file. */
typedef struct npy_preamble {
    int major, minor;
    size_t header_offset; /* first byte of the dict text */
    size_t header_length; /* bytes of dict text (with its padding) */
} npy_preamble;

/* What the header dict says. */
typedef struct npy_header {
    char descr[NPY_DESCR_MAX];
    tp_dtype dtype;
    int ndim;
    int64_t shape[TP_MAX_DIMS];
} npy_header;

/* ---- preamble ------------------------------------------------------------ */

static uint32_t read_le(const unsigned char *bytes, int count) {
    uint32_t value = 0;
    for (int i = count - 1; i >= 0; i--) value = value << 8 | bytes[i];
    return value;
}

/* `available` bytes of the file start at `bytes` (at least the preamble, when
 * the file is that long). */
static tp_status npy_read_preamble(const unsigned char *bytes, size_t available, const char *name,
                                   npy_preamble *preamble) {
    size_t magic_seen = available < NPY_MAGIC_SIZE ? available : NPY_MAGIC_SIZE;
    if (memcmp(bytes, npy_magic, magic_seen) != 0)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: bad magic: a .npy file starts with \\x93NUMPY (is this a .npy "
                            "file? .npz archives hold .npy files but are not one)",
                            name);
    if (available < NPY_MAGIC_SIZE + 2)
        return tp_error_set(
            TP_ERR_PARSE,
            "%s: truncated header: the file has %zu bytes, the preamble alone needs "
            "%d",
            name, available, NPY_MAGIC_SIZE + 4);
    preamble->major = bytes[6];
    preamble->minor = bytes[7];
    if (preamble->major < 1 || preamble->major > 3 || preamble->minor != 0)
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: unsupported .npy format version %d.%d (TensorPlay reads 1.0, 2.0 "
                            "and 3.0)",
                            name, preamble->major, preamble->minor);
    int length_bytes = preamble->major == 1 ? 2 : 4;
    preamble->header_offset = NPY_MAGIC_SIZE + 2 + (size_t)length_bytes;
    if (available < preamble->header_offset)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: truncated header: the file has %zu bytes, the version %d.0 "
                            "preamble needs %zu",
                            name, available, preamble->major, preamble->header_offset);
    preamble->header_length = read_le(bytes + NPY_MAGIC_SIZE + 2, length_bytes);
    return TP_OK;
}

static tp_status npy_check_header_fits(const npy_preamble *preamble, size_t total_size,
                                       const char *name) {
    if (preamble->header_length <= total_size - preamble->header_offset) return TP_OK;
    return tp_error_set(TP_ERR_PARSE,
                        "%s: header length %zu goes beyond the end of the file (the header would "
                        "end at byte %zu, the file has %zu bytes)",
                        name, preamble->header_length,
                        preamble->header_offset + preamble->header_length, total_size);
}

/* ---- header dict ---------------------------------------------------------
 * A Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * followed by padding. Keys in any order, either quote, optional trailing
 * commas, whitespace anywhere between tokens, shapes "()", "(5,)", "(2, 3)"
 * (and Python 2's "(2L, 3L)"). */

typedef struct header_cursor {
    const char *text;
    size_t length, pos;
    const char *name;
} header_cursor;

static bool cursor_is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void cursor_skip_space(header_cursor *cursor) {
    while (cursor->pos < cursor->length && cursor_is_space(cursor->text[cursor->pos]))
        cursor->pos++;
}

/* The next character after whitespace, or '\0' at the end. */
static char cursor_peek(header_cursor *cursor) {
    cursor_skip_space(cursor);
    return cursor->pos < cursor->length ? cursor->text[cursor->pos] : '\0';
}

static tp_status cursor_error(const header_cursor *cursor, const char *expected) {
    if (cursor->pos >= cursor->length)
        return tp_error_set(TP_ERR_PARSE, "%s: header: expected %s, found the end of the header",
                            cursor->name, expected);
    unsigned char c = (unsigned char)cursor->text[cursor->pos];
    if (c >= 0x20 && c < 0x7f)
        return tp_error_set(TP_ERR_PARSE, "%s: header: expected %s at header byte %zu, found '%c'",
                            cursor->name, expected, cursor->pos, c);
    return tp_error_set(TP_ERR_PARSE,
                        "%s: header: expected %s at header byte %zu, found byte 0x%02x",
                        cursor->name, expected, cursor->pos, c);
}

static tp_status cursor_expect(header_cursor *cursor, char c, const char *expected) {
    if (cursor_peek(cursor) != c) return cursor_error(cursor, expected);
    cursor->pos++;
    return TP_OK;
}

/* A quoted string without escapes, at most out_size - 1 bytes. */
static tp_status cursor_string(header_cursor *cursor, char *out, size_t out_size,
                               const char *what) {
    char quote = cursor_peek(cursor);
    if (quote != '\'' && quote != '"') return cursor_error(cursor, what);
    size_t start = ++cursor->pos, used = 0;
    while (cursor->pos < cursor->length && cursor->text[cursor->pos] != quote) {
        char c = cursor->text[cursor->pos];
        if (c == '\\' || c == '\n')
            return tp_error_set(TP_ERR_PARSE,
                                "%s: header: unsupported character in %s at header byte %zu",
                                cursor->name, what, cursor->pos);
        if (used + 1 >= out_size)
            return tp_error_set(TP_ERR_PARSE,
                                "%s: header: %s starting at header byte %zu is too long",
                                cursor->name, what, start - 1);
        out[used++] = c;
        cursor->pos++;
    }
    if (cursor->pos >= cursor->length) return cursor_error(cursor, "a closing quote");
    cursor->pos++;
    out[used] = '\0';
    return TP_OK;
}

static bool cursor_word(header_cursor *cursor, const char *word) {
    size_t length = strlen(word);
    cursor_skip_space(cursor);
    if (cursor->length - cursor->pos < length ||
        memcmp(cursor->text + cursor->pos, word, length) != 0)
        return false;
    cursor->pos += length;
    return true;
}

static tp_status parse_fortran_order(header_cursor *cursor) {
    if (cursor_word(cursor, "False")) return TP_OK;
    if (cursor_word(cursor, "True"))
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: 'fortran_order' is True: %s is Fortran-ordered; save it with "
                            "numpy.ascontiguousarray",
                            cursor->name, cursor->name);
    return cursor_error(cursor, "True or False for 'fortran_order'");
}

/* One dimension: optional minus, digits, optional 'L'. Range is checked by
 * the caller, except overflow of int64. */
static tp_status parse_dimension(header_cursor *cursor, int index, int64_t *out) {
    cursor_skip_space(cursor);
    bool negative = cursor->pos < cursor->length && cursor->text[cursor->pos] == '-';
    if (negative) cursor->pos++;
    if (cursor->pos >= cursor->length || cursor->text[cursor->pos] < '0' ||
        cursor->text[cursor->pos] > '9')
        return cursor_error(cursor, "an integer in 'shape'");
    uint64_t value = 0;
    while (cursor->pos < cursor->length && cursor->text[cursor->pos] >= '0' &&
           cursor->text[cursor->pos] <= '9') {
        unsigned digit = (unsigned)(cursor->text[cursor->pos++] - '0');
        if (value > ((uint64_t)INT64_MAX - digit) / 10)
            return tp_error_set(TP_ERR_PARSE,
                                "%s: 'shape' dimension %d does not fit a 64-bit integer",
                                cursor->name, index);
        value = value * 10 + digit;
    }
    if (cursor->pos < cursor->length && cursor->text[cursor->pos] == 'L') cursor->pos++;
    *out = negative ? -(int64_t)value : (int64_t)value;
    return TP_OK;
}

static tp_status parse_shape(header_cursor *cursor, npy_header *header) {
    TP_TRY(cursor_expect(cursor, '(', "'(' to open 'shape'"));
    int count = 0;
    while (cursor_peek(cursor) != ')') {
        int64_t dimension = 0;
        TP_TRY(parse_dimension(cursor, count, &dimension));
        if (count < TP_MAX_DIMS) header->shape[count] = dimension;
        count++;
        char next = cursor_peek(cursor);
        if (next == ',') {
            cursor->pos++;
        } else if (next != ')') {
            return cursor_error(cursor, "',' or ')' in 'shape'");
        } else if (count == 1) {
            /* "(5)" is the integer 5 in Python, not a tuple. */
            return cursor_error(cursor,
                                "',' after the only dimension of 'shape' (a 1-tuple is (5,))");
        }
    }
    cursor->pos++;
    if (count > TP_MAX_DIMS)
        return tp_error_set(TP_ERR_UNSUPPORTED,
                            "%s: 'shape' has %d dimensions; TensorPlay tensors have at most %d",
                            cursor->name, count, TP_MAX_DIMS);
    header->ndim = count;
    for (int i = 0; i < count; i++)
        if (header->shape[i] < 0)
            return tp_error_set(TP_ERR_PARSE, "%s: 'shape' dimension %d is negative (%lld)",
                                cursor->name, i, (long long)header->shape[i]);
    return TP_OK;
}

/* Maps a descr to a dtype: byte order '<' or '=' (native is little-endian on
 * every host we build for), or '|' for the one-byte bool. */
static tp_status descr_to_dtype(const char *descr, const char *name, tp_dtype *out) {
    static const struct {
        const char *code;
        tp_dtype dtype;
    } codes[] = {{"f4", TP_F32}, {"f8", TP_F64}, {"i4", TP_I32}, {"i8", TP_I64}, {"b1", TP_BOOL}};
    char order = descr[0];
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (order == '\0' || strcmp(descr + 1, codes[i].code) != 0) continue;
        bool one_byte = codes[i].dtype == TP_BOOL;
        if (order == '<' || order == '=' || (one_byte && order == '|')) {
            *out = codes[i].dtype;
            return TP_OK;
        }
        if (!one_byte && (order == '>' || order == '!'))
            return tp_error_set(TP_ERR_UNSUPPORTED,
                                "%s: 'descr' '%s' is big-endian; convert with .astype('<%s')", name,
                                descr, codes[i].code);
    }
    return tp_error_set(TP_ERR_UNSUPPORTED,
                        "%s: 'descr' '%s' is not supported (TensorPlay reads '<f4', '<f8', '<i4', "
                        "'<i8' and '|b1')",
                        name, descr);
}

static tp_status parse_descr(header_cursor *cursor, npy_header *header) {
    if (cursor_peek(cursor) == '[')
        return tp_error_set(
            TP_ERR_UNSUPPORTED,
            "%s: 'descr' is a structured dtype; TensorPlay reads only '<f4', '<f8', "
            "'<i4', '<i8' and '|b1'",
            cursor->name);
    TP_TRY(cursor_string(cursor, header->descr, sizeof header->descr, "a string for 'descr'"));
    return descr_to_dtype(header->descr, cursor->name, &header->dtype);
}

enum { KEY_DESCR = 1, KEY_FORTRAN_ORDER = 2, KEY_SHAPE = 4 };

static tp_status parse_entry(header_cursor *cursor, npy_header *header, unsigned *seen) {
    char key[32];
    TP_TRY(cursor_string(cursor, key, sizeof key, "a quoted key"));
    unsigned bit = strcmp(key, "descr") == 0           ? KEY_DESCR
                   : strcmp(key, "fortran_order") == 0 ? KEY_FORTRAN_ORDER
                   : strcmp(key, "shape") == 0         ? KEY_SHAPE
                                                       : 0;
    if (bit == 0)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: header: unexpected key '%s' (a .npy header has 'descr', "
                            "'fortran_order' and 'shape')",
                            cursor->name, key);
    if (*seen & bit)
        return tp_error_set(TP_ERR_PARSE, "%s: header: key '%s' appears twice", cursor->name, key);
    *seen |= bit;
    TP_TRY(cursor_expect(cursor, ':', "':' after the key"));
    if (bit == KEY_DESCR) return parse_descr(cursor, header);
    if (bit == KEY_FORTRAN_ORDER) return parse_fortran_order(cursor);
    return parse_shape(cursor, header);
}

static tp_status npy_parse_header(const char *text, size_t length, const char *name,
                                  npy_header *header) {
    header_cursor cursor = {text, length, 0, name};
    unsigned seen = 0;
    TP_TRY(cursor_expect(&cursor, '{', "'{' to open the header dict"));
    while (cursor_peek(&cursor) != '}') {
        TP_TRY(parse_entry(&cursor, header, &seen));
        char next = cursor_peek(&cursor);
        if (next == ',')
            cursor.pos++;
        else if (next != '}')
            return cursor_error(&cursor, "',' or '}' in the header dict");
    }
    cursor.pos++;
    cursor_skip_space(&cursor);
    if (cursor.pos < cursor.length)
        return cursor_error(&cursor, "only padding after the header dict");
    static const struct {
        unsigned bit;
        const char *key;
    } required[] = {
        {KEY_DESCR, "descr"}, {KEY_FORTRAN_ORDER, "fortran_order"}, {KEY_SHAPE, "shape"}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!(seen & required[i].bit))
            return tp_error_set(TP_ERR_PARSE, "%s: header: missing key '%s'", name,
                                required[i].key);
    return TP_OK;
}

/* ---- data ----------------------------------------------------------------- */

static tp_status npy_check_data_size(const npy_header *header, size_t data_offset,
                                     size_t total_size, const char *name, size_t *nbytes) {
    int64_t numel;
    if (tp_shape_check(header->dtype, header->ndim, header->shape, &numel, nbytes) != TP_OK)
        return tp_error_prefix(TP_ERR_PARSE, "%s: 'shape': ", name);
    size_t present = total_size - data_offset;
    if (present == *nbytes) return TP_OK;
    char shape[256];
    tp_shape_format(shape, sizeof shape, header->ndim, header->shape);
    if (present < *nbytes)
        return tp_error_set(TP_ERR_PARSE,
                            "%s: data is truncated: 'shape' %s of '%s' needs %zu bytes after the "
                            "header, the file has %zu",
                            name, shape, header->descr, *nbytes, present);
    return tp_error_set(TP_ERR_PARSE,
                        "%s: %zu unexpected bytes after the data ('shape' %s of '%s' needs %zu "
                        "bytes, the file has %zu)",
                        name, present - *nbytes, shape, header->descr, *nbytes, present);
}

static tp_status npy_check_bool_data(const unsigned char *data, size_t nbytes, size_t data_offset,
                                     const char *name) {
    for (size_t i = 0; i < nbytes; i++)
        if (data[i] > 1)
            return tp_error_set(
                TP_ERR_PARSE,
                "%s: bool element %zu at byte offset %zu is %u; a '|b1' array holds "
                "only 0 and 1",
                name, i, data_offset + i, data[i]);
    return TP_OK;
}

/* Parses everything before the data. `front` holds the first `front_size`
 * bytes of a file of `total_size` bytes (the whole header when it fits). */
static tp_status npy_parse_front(const unsigned char *front, size_t front_size, size_t total_size,
                                 const char *name, npy_header *header, size_t *data_offset,
                                 size_t *nbytes) {
    npy_preamble preamble;
    TP_TRY(npy_read_preamble(front, front_size, name, &preamble));
    TP_TRY(npy_check_header_fits(&preamble, total_size, name));
    TP_TRY(npy_parse_header((const char *)front + preamble.header_offset, preamble.header_length,
                            name, header));
    *data_offset = preamble.header_offset + preamble.header_length;
    return npy_check_data_size(header, *data_offset, total_size, name, nbytes);
}

tp_status tp_npy_load_buffer(const void *bytes, size_t size, const char *name, tp_tensor **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_npy_load_buffer: out is NULL");
    *out = NULL;
    if (!name) name = "<buffer>";
    if (!bytes && size > 0)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_npy_load_buffer: %s: bytes is NULL", name);
    static const unsigned char empty[1] = {0};
    const unsigned char *input = bytes ? bytes : empty;
    npy_header header;
    size_t data_offset, nbytes;
    TP_TRY(npy_parse_front(input, size, size, name, &header, &data_offset, &nbytes));
    if (header.dtype == TP_BOOL)
        TP_TRY(npy_check_bool_data(input + data_offset, nbytes, data_offset, name));
    return tp_tensor_from_data(header.dtype, header.ndim, header.shape, input + data_offset, out);
}

/* ---- files ---------------------------------------------------------------- */

static tp_status read_exactly(FILE *file, void *buffer, size_t size, const char *path) {
    if (size == 0 || fread(buffer, 1, size, file) == size) return TP_OK;
    if (ferror(file)) return tp_error_set(TP_ERR_IO, "%s: read failed: %s", path, strerror(errno));
    return tp_error_set(TP_ERR_IO, "%s: file ended early (was it changed while being read?)", path);
}

static tp_status open_for_reading(const char *path, FILE **file, size_t *size) {
    *file = fopen(path, "rb");
    if (!*file)
        return tp_error_set(errno == ENOENT ? TP_ERR_NOT_FOUND : TP_ERR_IO, "cannot open '%s': %s",
                            path, strerror(errno));
    struct stat info;
    errno = 0;
    if (fstat(fileno(*file), &info) != 0 || !S_ISREG(info.st_mode)) {
        int error = errno;
        fclose(*file);
        *file = NULL;
        return tp_error_set(TP_ERR_IO, "cannot read '%s': %s", path,
                            error ? strerror(error) : "not a regular file");
    }
    *size = (size_t)info.st_size;
    return TP_OK;
}

/* Reads the header into memory (at most the preamble plus 4 GiB, but never
 * more than the file holds) and the data straight into the tensor. */
static tp_status npy_load_file(FILE *file, size_t size, const char *path, tp_tensor **out) {
    unsigned char preamble_bytes[NPY_MAGIC_SIZE + 6];
    size_t available = size < sizeof preamble_bytes ? size : sizeof preamble_bytes;
    TP_TRY(read_exactly(file, preamble_bytes, available, path));
    npy_preamble preamble;
    TP_TRY(npy_read_preamble(preamble_bytes, available, path, &preamble));
    TP_TRY(npy_check_header_fits(&preamble, size, path));
    size_t front_size = preamble.header_offset + preamble.header_length;
    unsigned char *front = malloc(front_size);
    if (!front)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "%s: out of memory reading a %zu-byte header",
                            path, front_size);
    /* A header shorter than the preamble buffer (length 0 or 1 in version 1)
     * ends inside the bytes already read: copy only the front, and seek to
     * the data below rather than trusting the stream position. */
    size_t already_read = available < front_size ? available : front_size;
    memcpy(front, preamble_bytes, already_read);
    npy_header header;
    size_t data_offset, nbytes;
    tp_status status = read_exactly(file, front + already_read, front_size - already_read, path);
    if (status == TP_OK)
        status = npy_parse_front(front, front_size, size, path, &header, &data_offset, &nbytes);
    free(front);
    TP_TRY(status);
    if (fseek(file, (long)data_offset, SEEK_SET) != 0)
        return tp_error_set(TP_ERR_IO, "%s: cannot seek to the data at byte %zu: %s", path,
                            data_offset, strerror(errno));
    tp_tensor *tensor;
    TP_TRY(tp_tensor_create_uninit(header.dtype, header.ndim, header.shape, &tensor));
    status = read_exactly(file, tensor->data, nbytes, path);
    if (status == TP_OK && header.dtype == TP_BOOL)
        status = npy_check_bool_data(tensor->data, nbytes, data_offset, path);
    if (status != TP_OK) {
        tp_tensor_release(tensor);
        return status;
    }
    *out = tensor;
    return TP_OK;
}

tp_status tp_npy_load(const char *path, tp_tensor **out) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_npy_load: out is NULL");
    *out = NULL;
    if (!path) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_npy_load: path is NULL");
    FILE *file = NULL;
    size_t size = 0;
    TP_TRY(open_for_reading(path, &file, &size));
    tp_status status = npy_load_file(file, size, path, out);
    fclose(file);
    return status;
}

/* ---- writing -------------------------------------------------------------- */

static const char *dtype_descr(tp_dtype dtype) {
    switch (dtype) {
    case TP_F32:
        return "<f4";
    case TP_F64:
        return "<f8";
    case TP_I32:
        return "<i4";
    case TP_I64:
        return "<i8";
    case TP_BOOL:
        return "|b1";
    default:
        return NULL;
    }
}

/* The shape as a Python tuple: "()", "(5,)", "(2, 3)". */
static void format_shape_tuple(const tp_tensor *tensor, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < tensor->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                                 (long long)tensor->shape[i]);
    if (used < size) snprintf(buf + used, size - used, tensor->ndim == 1 ? ",)" : ")");
}

/* Builds preamble + dict + padding so that the data starts at a multiple of
 * 64; format 1.0 unless the header length does not fit 16 bits. Returns a
 * malloc'd buffer of *size bytes, or NULL when out of memory. */
static unsigned char *npy_build_header(const tp_tensor *tensor, size_t *size) {
    char shape[TP_MAX_DIMS * 24 + 8], dict[sizeof shape + 96];
    format_shape_tuple(tensor, shape, sizeof shape);
    int dict_length =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                 dtype_descr(tensor->dtype), shape);
    int major = 1;
    size_t preamble_size = NPY_MAGIC_SIZE + 4;
    size_t unpadded = preamble_size + (size_t)dict_length + 1; /* + '\n' */
    size_t total = (unpadded + NPY_DATA_ALIGNMENT - 1) / NPY_DATA_ALIGNMENT * NPY_DATA_ALIGNMENT;
    if (total - preamble_size > 0xffff) {
        major = 2;
        preamble_size = NPY_MAGIC_SIZE + 6;
        unpadded += 2;
        total = (unpadded + NPY_DATA_ALIGNMENT - 1) / NPY_DATA_ALIGNMENT * NPY_DATA_ALIGNMENT;
    }
    unsigned char *bytes = malloc(total);
    if (!bytes) return NULL;
    size_t header_length = total - preamble_size;
    memcpy(bytes, npy_magic, NPY_MAGIC_SIZE);
    bytes[6] = (unsigned char)major;
    bytes[7] = 0;
    for (size_t i = 0; i < preamble_size - 8; i++)
        bytes[8 + i] = (unsigned char)(header_length >> (8 * i));
    memcpy(bytes + preamble_size, dict, (size_t)dict_length);
    memset(bytes + preamble_size + dict_length, ' ',
           total - preamble_size - (size_t)dict_length - 1);
    bytes[total - 1] = '\n';
    *size = total;
    return bytes;
}

static int write_all(int fd, const void *data, size_t size) {
    const unsigned char *cursor = data;
    while (size > 0) {
        ssize_t written = write(fd, cursor, size);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        cursor += written;
        size -= (size_t)written;
    }
    return 0;
}

/* Writes header and data to `temp_path`, flushed to disk; 0 or an errno. */
static int npy_write_temp(const char *temp_path, const unsigned char *header, size_t header_size,
                          const tp_tensor *tensor) {
    int fd = open(temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return errno;
    int error = 0;
    if (write_all(fd, header, header_size) != 0 ||
        write_all(fd, tensor->data, tensor->nbytes) != 0 || fsync(fd) != 0)
        error = errno;
    if (close(fd) != 0 && error == 0) error = errno;
    return error;
}

tp_status tp_npy_save(const char *path, const tp_tensor *tensor) {
    if (!path || !tensor)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_npy_save: %s is NULL",
                            path ? "tensor" : "path");
    if (!dtype_descr(tensor->dtype))
        return tp_error_set(TP_ERR_DTYPE, "tp_npy_save: %s: tensor has invalid dtype %d", path,
                            (int)tensor->dtype);
    tp_tensor_note_raw_access(tensor, "tp_npy_save");
    size_t header_size;
    unsigned char *header = npy_build_header(tensor, &header_size);
    size_t temp_size = strlen(path) + 32;
    char *temp_path = malloc(temp_size);
    if (!header || !temp_path) {
        free(header);
        free(temp_path);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "tp_npy_save: %s: out of memory", path);
    }
    snprintf(temp_path, temp_size, "%s.tmp.%ld", path, (long)getpid());
    int error = npy_write_temp(temp_path, header, header_size, tensor);
    const char *step = "writing";
    if (error == 0 && rename(temp_path, path) != 0) {
        error = errno;
        step = "renaming";
    }
    tp_status status = TP_OK;
    if (error != 0) {
        unlink(temp_path);
        status = tp_error_set(TP_ERR_IO, "cannot write '%s': %s (while %s the temporary file '%s')",
                              path, strerror(error), step, temp_path);
    }
    free(header);
    free(temp_path);
    return status;
}
