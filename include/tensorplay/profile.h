/* TensorPlay — phase timings of compiling: a process-wide handler that
 * receives one event per timed phase (capture, each pass, partition, each
 * region's backend compile). Off by default: with no handler each timed
 * point costs one relaxed atomic load, and running a compiled function
 * (tp_call) is never timed here, so a cache hit costs what it did. Callers
 * time runs themselves (`tpc run --profile` does). Per-kernel times from
 * backends are not reported yet. */
#ifndef TENSORPLAY_PROFILE_H
#define TENSORPLAY_PROFILE_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_profile_event {
    /* "capture", "pass", "partition" or "backend_compile" */
    const char *phase;
    /* the pass's name; the backend's name for backend_compile; "" */
    const char *detail;
    int32_t region;            /* backend_compile: the region's index (0 when not split); else -1 */
    uint64_t start_ns, end_ns; /* tp_profile_now_ns clock */
} tp_profile_event;

typedef void (*tp_profile_handler)(const tp_profile_event *event, void *user);

/* Installs `handler` (NULL: off). Called on the compiling thread, with no
 * lock of the caller's held; set it before compiling starts, not while
 * other threads compile. */
TP_API void tp_profile_set_handler(tp_profile_handler handler, void *user);
/* Monotonic nanoseconds (CLOCK_MONOTONIC). */
TP_API uint64_t tp_profile_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
