/* Aligned buffers for tensor storage and scratch. Internal.
 * Every buffer is TP_TENSOR_ALIGNMENT (64) aligned; buffers of 2 MiB and more
 * are 2 MiB aligned and madvise(MADV_HUGEPAGE)d, because with transparent
 * huge pages in `madvise` mode a fresh large buffer otherwise costs one page
 * fault per 4 KiB (DESIGN section 10). Freed large buffers are kept for reuse
 * up to a limit (large_blocks.h), so a loop that allocates one each time
 * does not pay the kernel's page clearing each time. */
#ifndef TP_CORE_BASE_ALLOC_H
#define TP_CORE_BASE_ALLOC_H

#include <stddef.h>

/* NULL on failure (the caller reports what it was allocating). size 0 gives a
 * valid, unique, freeable pointer. */
void *tp_aligned_alloc(size_t size);
void *tp_aligned_calloc(size_t size);
void tp_aligned_free(void *pointer);

/* Plain heap helpers that never return NULL for size 0. */
void *tp_malloc(size_t size);
void *tp_calloc(size_t count, size_t size);
void *tp_realloc(void *pointer, size_t size);
char *tp_strdup(const char *text);

#endif
