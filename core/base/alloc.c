/* Aligned allocation with huge-page advice for large buffers, which are
 * reused through large_blocks.c. */
#define _GNU_SOURCE
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "large_blocks.h"

#include "tensorplay/status.h"
#include "tensorplay/tensor.h"

#define HUGE_PAGE_SIZE ((size_t)2 << 20)

void *tp_aligned_alloc(size_t size) {
    size_t alignment = size >= HUGE_PAGE_SIZE ? HUGE_PAGE_SIZE : TP_TENSOR_ALIGNMENT;
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    if (rounded < size) return NULL; /* overflow */
    if (rounded == 0) rounded = alignment;
    if (alignment == HUGE_PAGE_SIZE) {
        void *reused = tp_large_block_reuse(rounded);
        if (reused) return reused;
    }
    void *pointer = NULL;
    if (posix_memalign(&pointer, alignment, rounded) != 0) return NULL;
    if (alignment == HUGE_PAGE_SIZE) {
#ifdef MADV_HUGEPAGE
        madvise(pointer, rounded, MADV_HUGEPAGE);
#endif
        tp_large_block_track(pointer, rounded);
    }
    return pointer;
}

void *tp_aligned_calloc(size_t size) {
    void *pointer = tp_aligned_alloc(size);
    if (pointer) memset(pointer, 0, size);
    return pointer;
}

void tp_aligned_free(void *pointer) {
    if (((uintptr_t)pointer & (HUGE_PAGE_SIZE - 1)) == 0 && tp_large_block_release(pointer)) return;
    free(pointer);
}

void *tp_malloc(size_t size) {
    return malloc(size ? size : 1);
}

void *tp_calloc(size_t count, size_t size) {
    return calloc(count ? count : 1, size ? size : 1);
}

void *tp_realloc(void *pointer, size_t size) {
    return realloc(pointer, size ? size : 1);
}

char *tp_strdup(const char *text) {
    size_t length = strlen(text) + 1;
    char *copy = malloc(length);
    if (copy) memcpy(copy, text, length);
    return copy;
}

TP_API void tp_free(void *pointer) {
    free(pointer);
}
