/* Live large blocks and the cache of freed ones (see large_blocks.h). */
#include "large_blocks.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "log.h"

#if defined(__SANITIZE_ADDRESS__)
#define TP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TP_ASAN 1
#endif
#endif

#ifdef TP_ASAN
void __asan_poison_memory_region(void const volatile *address, size_t size);
void __asan_unpoison_memory_region(void const volatile *address, size_t size);
#define POISON(address, size)   __asan_poison_memory_region((address), (size))
#define UNPOISON(address, size) __asan_unpoison_memory_region((address), (size))
#else
#define POISON(address, size)   ((void)(address), (void)(size))
#define UNPOISON(address, size) ((void)(address), (void)(size))
#endif

#define DEFAULT_LIMIT_MIB 256
#define MAX_LIMIT_MIB     ((size_t)1 << 20) /* 1 TiB: past it a value is a typo */
#define CACHE_SLOTS       TP_LARGE_BLOCK_SLOTS

typedef struct {
    void *pointer;
    size_t size;
} block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t limit_once = PTHREAD_ONCE_INIT;
static _Atomic size_t limit_bytes; /* set once from the environment, or by tests */

static block *live; /* unordered; removal moves the last one in */
static size_t live_count, live_capacity;

static block cached[CACHE_SLOTS]; /* oldest first */
static size_t cached_count, cached_bytes;

size_t tp_large_block_limit_from_environment(void) {
    size_t fallback = (size_t)DEFAULT_LIMIT_MIB << 20;
    const char *text = tp_env_get("TP_ALLOC_CACHE_MIB");
    if (!text || !*text) return fallback;
    char *end = NULL;
    errno = 0;
    unsigned long long mib = strtoull(text, &end, 10);
    if (errno || *end != '\0' || text[0] == '-' || mib > MAX_LIMIT_MIB) {
        tp_log_message(TP_LOG_WARN,
                       "TP_ALLOC_CACHE_MIB='%s' is not a number of MiB from 0 to %zu; "
                       "keeping up to %d MiB of freed large buffers",
                       text, MAX_LIMIT_MIB, DEFAULT_LIMIT_MIB);
        return fallback;
    }
    return (size_t)mib << 20;
}

static void read_limit(void) {
    atomic_store(&limit_bytes, tp_large_block_limit_from_environment());
}

static size_t current_limit(void) {
    pthread_once(&limit_once, read_limit);
    return atomic_load(&limit_bytes);
}

static void remove_cached(size_t index) {
    cached_bytes -= cached[index].size;
    memmove(&cached[index], &cached[index + 1], (cached_count - index - 1) * sizeof cached[0]);
    cached_count--;
}

/* Moves the oldest blocks out of the cache into `victims` until `blocks`
 * more blocks of `incoming` bytes in all fit under `limit` (lock held). */
static size_t evict_for(size_t blocks, size_t incoming, size_t limit, void **victims) {
    size_t evicted = 0;
    while (cached_count > 0 &&
           (cached_count + blocks > CACHE_SLOTS || cached_bytes + incoming > limit)) {
        victims[evicted++] = cached[0].pointer;
        UNPOISON(cached[0].pointer, cached[0].size);
        remove_cached(0);
    }
    return evicted;
}

static void free_all(void **victims, size_t count) {
    for (size_t i = 0; i < count; i++) free(victims[i]);
}

static bool add_live(void *pointer, size_t size) {
    if (live_count == live_capacity) {
        size_t capacity = live_capacity ? live_capacity * 2 : 32;
        block *grown = realloc(live, capacity * sizeof *grown);
        if (!grown) return false;
        live = grown;
        live_capacity = capacity;
    }
    live[live_count++] = (block){pointer, size};
    return true;
}

void *tp_large_block_reuse(size_t size) {
    if (current_limit() == 0) return NULL;
    pthread_mutex_lock(&lock);
    size_t best = CACHE_SLOTS;
    for (size_t i = 0; i < cached_count; i++) {
        size_t have = cached[i].size;
        if (have >= size && have - size <= size / 4 &&
            (best == CACHE_SLOTS || have < cached[best].size))
            best = i;
    }
    void *pointer = NULL;
    if (best < CACHE_SLOTS) {
        block taken = cached[best];
        if (add_live(taken.pointer, taken.size)) {
            remove_cached(best);
            UNPOISON(taken.pointer, taken.size);
            pointer = taken.pointer;
        }
    }
    pthread_mutex_unlock(&lock);
    return pointer;
}

bool tp_large_block_track(void *pointer, size_t size) {
    if (current_limit() == 0) return false;
    pthread_mutex_lock(&lock);
    bool tracked = add_live(pointer, size);
    pthread_mutex_unlock(&lock);
    return tracked;
}

bool tp_large_block_release(void *pointer) {
    if (!pointer) return false;
    size_t limit = current_limit();
    void *victims[CACHE_SLOTS + 1];
    size_t evicted = 0;
    pthread_mutex_lock(&lock);
    size_t index = live_count;
    for (size_t i = live_count; i-- > 0;)
        if (live[i].pointer == pointer) {
            index = i;
            break;
        }
    if (index == live_count) {
        pthread_mutex_unlock(&lock);
        return false;
    }
    block freed = live[index];
    live[index] = live[--live_count];
    if (freed.size <= limit) {
        evicted = evict_for(1, freed.size, limit, victims);
        POISON(freed.pointer, freed.size);
        cached[cached_count++] = freed;
        cached_bytes += freed.size;
    } else {
        victims[evicted++] = freed.pointer;
    }
    pthread_mutex_unlock(&lock);
    free_all(victims, evicted);
    return true;
}

void tp_large_block_set_limit(size_t bytes) {
    current_limit(); /* the environment's value must not override this one later */
    void *victims[CACHE_SLOTS + 1];
    pthread_mutex_lock(&lock);
    atomic_store(&limit_bytes, bytes);
    size_t evicted = evict_for(0, 0, bytes, victims);
    pthread_mutex_unlock(&lock);
    free_all(victims, evicted);
}

size_t tp_large_block_cached_bytes(void) {
    pthread_mutex_lock(&lock);
    size_t bytes = cached_bytes;
    pthread_mutex_unlock(&lock);
    return bytes;
}

size_t tp_large_block_cached_count(void) {
    pthread_mutex_lock(&lock);
    size_t count = cached_count;
    pthread_mutex_unlock(&lock);
    return count;
}
