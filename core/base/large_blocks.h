/* Large aligned blocks (2 MiB and more): which are live, and a bounded cache
 * of freed ones for the next allocation of about the same size. Internal.
 *
 * Why: glibc serves a 2 MiB-aligned block of this size from a fresh mmap and
 * unmaps it on free, so a loop that allocates, fills and frees a 2.4 MB
 * output (tp_call's outputs) paid the kernel's page clearing every time:
 * 322 us a call against 80 us for the fill alone. A freed block is kept
 * (oldest evicted first) while the cache holds at most its limit in bytes:
 * TP_ALLOC_CACHE_MIB, default 256, 0 for no cache. Under AddressSanitizer a
 * cached block is poisoned, so a use after free is still reported. */
#ifndef TP_CORE_BASE_LARGE_BLOCKS_H
#define TP_CORE_BASE_LARGE_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>

/* A cached block of at least `size` bytes and at most a quarter more (taken
 * out of the cache and tracked as live), or NULL. */
void *tp_large_block_reuse(size_t size);

/* Tracks a block the allocator has just made, of `size` usable bytes. Gives
 * false when the table cannot grow; the block then stays untracked and
 * tp_large_block_release leaves it to the caller. */
bool tp_large_block_track(void *pointer, size_t size);

/* When `pointer` is a tracked live block: keeps it in the cache or frees it,
 * and gives true. Otherwise gives false and does nothing. */
bool tp_large_block_release(void *pointer);

/* The most blocks the cache keeps, whatever their bytes. */
#define TP_LARGE_BLOCK_SLOTS 16

/* The limit TP_ALLOC_CACHE_MIB asks for (a warning and the default when it is
 * not a number of MiB); read once, at the first large allocation. */
size_t tp_large_block_limit_from_environment(void);

/* Testing and diagnostics: a new limit for the cache (a lower one evicts at
 * once) and what the cache holds now. */
void tp_large_block_set_limit(size_t bytes);
size_t tp_large_block_cached_bytes(void);
size_t tp_large_block_cached_count(void);

#endif
