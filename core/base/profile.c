/* The profile handler (tensorplay/profile.h): one process-wide pointer pair,
 * read with a relaxed load at every timed point. */
#include "profile.h"

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

static _Atomic(tp_profile_handler) profile_handler;
static void *_Atomic profile_user;

TP_API void tp_profile_set_handler(tp_profile_handler handler, void *user) {
    atomic_store(&profile_user, user);
    atomic_store(&profile_handler, handler);
}

TP_API uint64_t tp_profile_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t tp_profile_start(void) {
    if (!atomic_load_explicit(&profile_handler, memory_order_relaxed)) return 0;
    uint64_t now = tp_profile_now_ns();
    return now ? now : 1;
}

void tp_profile_end(uint64_t start, const char *phase, const char *detail, int32_t region) {
    if (!start) return;
    tp_profile_handler handler = atomic_load(&profile_handler);
    if (!handler) return;
    tp_profile_event event = {.phase = phase,
                              .detail = detail ? detail : "",
                              .region = region,
                              .start_ns = start,
                              .end_ns = tp_profile_now_ns()};
    handler(&event, atomic_load(&profile_user));
}

bool tp_profile_active(void) {
    return atomic_load_explicit(&profile_handler, memory_order_relaxed) != NULL;
}

void tp_profile_kernel(const char *backend, const char *name, uint64_t start_ns, uint64_t end_ns) {
    tp_profile_handler handler = atomic_load(&profile_handler);
    if (!handler) return;
    tp_profile_event event = {.phase = "kernel",
                              .detail = name ? name : "?",
                              .region = -1,
                              .start_ns = start_ns,
                              .end_ns = end_ns < start_ns ? start_ns : end_ns,
                              .backend = backend ? backend : "?"};
    handler(&event, atomic_load(&profile_user));
}
