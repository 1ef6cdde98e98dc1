/* Kernel times for the core's profile: see tpcommon_profile.h. */
#include "tpcommon_profile.h"

#include <stddef.h>

tpcommon_kernel_timer tpcommon_kernel_timer_begin(const tp_plugin_host *host) {
    tpcommon_kernel_timer timer = {NULL};
    if (host && TP_PLUGIN_HAS_FIELD(host, tp_plugin_host, report_kernel) && host->profiling &&
        host->now_ns && host->report_kernel && host->profiling(host))
        timer.host = host;
    return timer;
}

uint64_t tpcommon_kernel_timer_now(const tpcommon_kernel_timer *timer) {
    return timer->host ? timer->host->now_ns() : 0;
}

void tpcommon_kernel_timer_report(const tpcommon_kernel_timer *timer, const char *name,
                                  uint64_t start_ns) {
    if (timer->host) timer->host->report_kernel(timer->host, name, start_ns, timer->host->now_ns());
}

void tpcommon_kernel_timer_report_span(const tpcommon_kernel_timer *timer, const char *name,
                                       uint64_t start_ns, uint64_t end_ns) {
    if (timer->host) timer->host->report_kernel(timer->host, name, start_ns, end_ns);
}
