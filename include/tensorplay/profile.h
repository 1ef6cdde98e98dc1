/* TensorPlay — timings of compiling and of kernels: a process-wide handler
 * that receives one event per timed phase (capture, each pass, partition,
 * each region's backend compile) and one per kernel a backend reports while
 * running a compiled function (the plugin host's report_kernel; stax, opencl
 * and cuda report theirs). Off by default: with no handler each timed point
 * costs one relaxed atomic load, and a backend asks once per run whether to
 * time its kernels, so a cache hit costs what it did. tp_call itself is not
 * timed here: callers time runs themselves (`tpc run --profile` does). */
#ifndef TENSORPLAY_PROFILE_H
#define TENSORPLAY_PROFILE_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_profile_event {
    /* "capture", "pass", "partition", "backend_compile" or "kernel" */
    const char *phase;
    /* the pass's name; the backend's name for backend_compile; the kernel's
     * name (as the backend calls it) for kernel; "" */
    const char *detail;
    int32_t region;            /* backend_compile: the region's index (0 when not split); else -1 */
    uint64_t start_ns, end_ns; /* tp_profile_now_ns clock */
    /* kernel: the backend that ran it; NULL for the other phases */
    const char *backend;
} tp_profile_event;

typedef void (*tp_profile_handler)(const tp_profile_event *event, void *user);

/* Installs `handler` (NULL: off). Called on the compiling thread (kernel
 * events: on the thread that called tp_call), with no lock of the caller's
 * held; set it before compiling starts, not while other threads compile or
 * run. */
TP_API void tp_profile_set_handler(tp_profile_handler handler, void *user);
/* Monotonic nanoseconds (CLOCK_MONOTONIC). */
TP_API uint64_t tp_profile_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
