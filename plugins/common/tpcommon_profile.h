/* plugins/common — kernel times for the core's profile (plugin.h:
 * host->profiling, now_ns, report_kernel). A run asks once whether the core
 * is profiling; when it is not (or the core's host table predates these
 * calls), every other helper is a test of one pointer. Built only on
 * plugin.h. */
#ifndef TPCOMMON_PROFILE_H
#define TPCOMMON_PROFILE_H

#include <stdint.h>

#include "tensorplay/plugin.h"

/* One run's kernel timer: `host` is NULL when nothing is timed. */
typedef struct tpcommon_kernel_timer {
    const tp_plugin_host *host;
} tpcommon_kernel_timer;

/* Starts a run: times kernels when the host has the profiling calls and is
 * profiling now. */
tpcommon_kernel_timer tpcommon_kernel_timer_begin(const tp_plugin_host *host);

/* now_ns() when timing, else 0. */
uint64_t tpcommon_kernel_timer_now(const tpcommon_kernel_timer *timer);

/* Reports kernel `name`, started at `start_ns` (a tpcommon_kernel_timer_now
 * reading) and ended now; nothing when not timing. */
void tpcommon_kernel_timer_report(const tpcommon_kernel_timer *timer, const char *name,
                                  uint64_t start_ns);

/* Reports kernel `name` with both times given (device timestamps mapped
 * onto now_ns's clock); nothing when not timing. */
void tpcommon_kernel_timer_report_span(const tpcommon_kernel_timer *timer, const char *name,
                                       uint64_t start_ns, uint64_t end_ns);

#endif
