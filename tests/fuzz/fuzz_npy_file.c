/* libFuzzer target for the .npy FILE reader (tp_npy_load), which reads the
 * preamble, the header and the data in separate steps and so has edge cases
 * of its own that the buffer reader (fuzz_npy.c) never reaches (a header
 * shorter than the preamble read, a file shorter than its header says). Any
 * byte string written to a file either loads into a tensor that agrees with
 * itself or fails with a message; never a crash, a leak or undefined
 * behaviour. Seeds: corpus/npy_file (the same images as corpus/npy plus the
 * short-header regressions). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensor/tensor_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char npy_path[256];

static void remove_npy(void) {
    unlink(npy_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!npy_path[0]) {
        snprintf(npy_path, sizeof npy_path, "/tmp/tp-fuzz-npy-%d-XXXXXX", (int)getpid());
        int fd = mkstemp(npy_path);
        if (fd < 0) __builtin_trap();
        close(fd);
        atexit(remove_npy);
    }
    FILE *file = fopen(npy_path, "wb");
    if (!file || fwrite(data, 1, size, file) != size || fclose(file) != 0) __builtin_trap();

    tp_tensor *tensor = NULL;
    if (tp_npy_load(npy_path, &tensor) != TP_OK) {
        if (tensor != NULL || tp_last_error()[0] == '\0') __builtin_trap();
        return 0;
    }
    int64_t numel = 1;
    for (int i = 0; i < tensor->ndim; i++) numel *= tensor->shape[i];
    if (numel != tensor->numel || tensor->nbytes != (size_t)numel * tp_dtype_size(tensor->dtype) ||
        tensor->nbytes > size)
        __builtin_trap();
    /* The file reader and the buffer reader must agree byte for byte. */
    tp_tensor *from_buffer = NULL;
    if (tp_npy_load_buffer(data, size, "fuzz.npy", &from_buffer) != TP_OK ||
        from_buffer->nbytes != tensor->nbytes ||
        (tensor->nbytes && memcmp(from_buffer->data, tensor->data, tensor->nbytes) != 0))
        __builtin_trap();
    tp_tensor_release(from_buffer);
    tp_tensor_release(tensor);
    return 0;
}
