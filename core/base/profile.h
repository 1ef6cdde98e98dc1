/* Timed points for tensorplay/profile.h. Internal. Use:
 *   uint64_t start = tp_profile_start();
 *   ... the phase ...
 *   tp_profile_end(start, "pass", name, -1);
 * With no handler, tp_profile_start is one relaxed load and returns 0, and
 * tp_profile_end(0, ...) does nothing. */
#ifndef TP_CORE_BASE_PROFILE_H
#define TP_CORE_BASE_PROFILE_H

#include <stdbool.h>

#include "tensorplay/profile.h"

uint64_t tp_profile_start(void);
void tp_profile_end(uint64_t start, const char *phase, const char *detail, int32_t region);
/* Whether a handler is installed (one relaxed load). */
bool tp_profile_active(void);
/* A "kernel" event a backend reported (the plugin host's report_kernel). */
void tp_profile_kernel(const char *backend, const char *name, uint64_t start_ns, uint64_t end_ns);

#endif
