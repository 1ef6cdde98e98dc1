/* tpc --args FILE.npz: the arrays of a NumPy .npz archive (a zip file of
 * NAME.npy members, as np.savez writes it). Reads the zip central directory
 * and hands each stored member to tp_npy_load_buffer; compressed members
 * (np.savez_compressed) are refused with a message saying so. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpc.h"

static uint32_t read_u16(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}
static uint32_t read_u32(const unsigned char *p) {
    return read_u16(p) | read_u16(p + 2) << 16;
}

static int npz_error(const char *path, const char *what) {
    fprintf(stderr, "tpc: --args %s: %s\n", path, what);
    return 1;
}

static int read_file(const char *path, unsigned char **bytes, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "tpc: --args %s: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    int code = fseek(file, 0, SEEK_END) != 0;
    long length = code ? -1 : ftell(file);
    if (length < 0 || fseek(file, 0, SEEK_SET) != 0) code = 1;
    *bytes = code ? NULL : malloc((size_t)length + 1);
    if (!code && (!*bytes || fread(*bytes, 1, (size_t)length, file) != (size_t)length)) code = 1;
    fclose(file);
    if (code) {
        free(*bytes);
        *bytes = NULL;
        return npz_error(path, "cannot read the file");
    }
    *size = (size_t)length;
    return 0;
}

/* Calls `member` once per array with its name (without ".npy"). */
int tpc_npz_each(const char *path, tpc_npz_member_fn member, void *user) {
    unsigned char *bytes;
    size_t size;
    if (read_file(path, &bytes, &size)) return 1;
    int code = 0;
    /* The end-of-central-directory record is in the last 64 KiB + 22 bytes. */
    size_t end = size >= 22 ? size - 22 : SIZE_MAX;
    size_t stop = size > 65557 ? size - 65557 : 0;
    while (end != SIZE_MAX && end >= stop && read_u32(bytes + end) != 0x06054b50u)
        end = end ? end - 1 : SIZE_MAX;
    if (end == SIZE_MAX || end < stop) {
        free(bytes);
        return npz_error(path, "not a .npz file (no zip directory found)");
    }
    uint32_t entries = read_u16(bytes + end + 10), offset = read_u32(bytes + end + 16);
    for (uint32_t i = 0; i < entries && !code; i++) {
        if ((size_t)offset + 46 > size || read_u32(bytes + offset) != 0x02014b50u) {
            code = npz_error(path, "damaged zip directory");
            break;
        }
        const unsigned char *entry = bytes + offset;
        uint32_t method = read_u16(entry + 10), compressed = read_u32(entry + 20);
        uint32_t name_length = read_u16(entry + 28), extra = read_u16(entry + 30);
        uint32_t comment = read_u16(entry + 32), local = read_u32(entry + 42);
        if ((size_t)offset + 46 + name_length > size || (size_t)local + 30 > size) {
            code = npz_error(path, "damaged zip directory");
            break;
        }
        char name[256];
        size_t copy = name_length < sizeof name - 1 ? name_length : sizeof name - 1;
        memcpy(name, entry + 46, copy);
        name[copy] = '\0';
        if (copy > 4 && strcmp(name + copy - 4, ".npy") == 0) name[copy - 4] = '\0';
        if (method != 0) {
            fprintf(stderr,
                    "tpc: --args %s: member '%s' is compressed (np.savez_compressed); write the "
                    "file with np.savez\n",
                    path, name);
            code = 1;
            break;
        }
        size_t data =
            (size_t)local + 30 + read_u16(bytes + local + 26) + read_u16(bytes + local + 28);
        if (data > size || size - data < compressed) {
            code = npz_error(path, "a member runs past the end of the file");
            break;
        }
        code = member(name, bytes + data, compressed, path, user);
        offset += 46 + name_length + extra + comment;
    }
    free(bytes);
    return code;
}
