/* libFuzzer target for the .npy reader: any byte string either loads into a
 * tensor that agrees with itself or fails with a message, and never reads
 * outside the input (ASan) or hits undefined behaviour (UBSan). */
#include <stddef.h>
#include <stdint.h>

#include "tensor/tensor_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tp_tensor *tensor = NULL;
    tp_status status = tp_npy_load_buffer(data, size, "fuzz.npy", &tensor);
    if (status != TP_OK) {
        if (tensor != NULL || tp_last_error()[0] == '\0') __builtin_trap();
        return 0;
    }
    int64_t numel = 1;
    for (int i = 0; i < tensor->ndim; i++) numel *= tensor->shape[i];
    if (tensor->ndim < 0 || tensor->ndim > TP_MAX_DIMS || numel != tensor->numel ||
        tensor->nbytes != (size_t)numel * tp_dtype_size(tensor->dtype) || tensor->nbytes > size)
        __builtin_trap();
    /* Touch every byte so ASan checks the whole allocation. */
    const uint8_t *bytes = tensor->data;
    unsigned checksum = 0;
    for (size_t i = 0; i < tensor->nbytes; i++) {
        if (tensor->dtype == TP_BOOL && bytes[i] > 1) __builtin_trap();
        checksum += bytes[i];
    }
    tp_tensor_release(tensor);
    return (int)(checksum & 0);
}
