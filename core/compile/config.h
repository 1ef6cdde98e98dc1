/* The compile configuration knobs (public side: compile.h): the policy a
 * wrapper snapshots at tp_compile. Internal. */
#ifndef TP_CORE_COMPILE_CONFIG_H
#define TP_CORE_COMPILE_CONFIG_H

#include <stdbool.h>

#include "tensorplay/status.h"

#define TP_FALLBACK_BACKEND_MAX 128

typedef struct tp_compile_policy {
    int recompile_limit;
    int accumulated_recompile_limit;
    bool fail_on_recompile_limit_hit;
    bool force_disable_caches;
    bool assume_static_by_default;
    bool verbose;
    int dynamic_shapes; /* -1 unset, 0 false, 1 true */
    /* Environment TP_FALLBACK_BACKEND > ini [compile] fallback_backend; ""
     * when neither sets it (then: stax, or eager where stax is unavailable). */
    char fallback_backend[TP_FALLBACK_BACKEND_MAX];
} tp_compile_policy;

/* The policy in force now (API > environment > ini > defaults). Fails, naming
 * the knob and where its value came from, when an environment variable or the
 * ini file holds a bad value. */
tp_status tp_config_snapshot(tp_compile_policy *out);

#endif
