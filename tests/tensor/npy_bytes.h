/* Builds .npy images byte by byte for the reader's tests. Header-only
 * because the suite build compiles only tests/<module>/test_*.c. */
#ifndef TP_TESTS_TENSOR_NPY_BYTES_H
#define TP_TESTS_TENSOR_NPY_BYTES_H

#include <check.h>
#include <stddef.h>
#include <string.h>

/* Writes magic, version major.0, the header length (2 bytes for 1.x, else
 * 4), `header` verbatim (no padding added) and `data_size` bytes of `data`.
 * Returns the image size. */
static inline size_t npy_bytes_build(unsigned char *out, size_t capacity, int major,
                                     const char *header, const void *data, size_t data_size) {
    size_t header_length = strlen(header), length_bytes = major == 1 ? 2 : 4;
    size_t size = 8 + length_bytes + header_length + data_size;
    ck_assert_uint_le(size, capacity);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < length_bytes; i++)
        out[8 + i] = (unsigned char)(header_length >> (8 * i));
    memcpy(out + 8 + length_bytes, header, header_length);
    if (data_size) memcpy(out + 8 + length_bytes + header_length, data, data_size);
    return size;
}

#endif
