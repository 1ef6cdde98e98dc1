/* The template backend's table and life cycle: the entry symbol named in
 * template.ini, probe, init, reset, shutdown, and the compile options it
 * accepts. Compiling and running live in template_compile.c and
 * template_run.c.
 *
 * Life cycle, as the core drives it: entry() returns the table (static
 * storage, no side effects) -> the core checks struct_size, contract_version
 * and name -> probe() -> init(host) -> compile/run/release, from any number of
 * threads -> reset() (drop caches; executables stay valid) -> shutdown()
 * once, after every executable is released. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

const tp_plugin_host *template_host = NULL;

/* Whether the backend can run now. A GPU backend would look for its driver
 * and a device here and explain what is missing. Must not need init. The
 * template needs nothing but the CPU; TEMPLATE_UNAVAILABLE lets the guide
 * show what an unavailable backend looks like. */
static int32_t template_probe(char *why, size_t why_size) {
    const char *unavailable = getenv("TEMPLATE_UNAVAILABLE");
    if (unavailable && *unavailable) {
        snprintf(why, why_size, "TEMPLATE_UNAVAILABLE is set (%s)", unavailable);
        return TP_PLUGIN_UNAVAILABLE;
    }
    return TP_PLUGIN_OK;
}

static int32_t template_init(const tp_plugin_host *host) {
    /* Fields of a later host revision would be read only after
     * TP_PLUGIN_HAS_FIELD(host, tp_plugin_host, field). Revision 1 is all we
     * use, and the core never hands out a smaller table. */
    template_host = host;
    char line[128];
    snprintf(line, sizeof line, "template backend %s on TensorPlay %s, %d threads",
             TEMPLATE_VERSION, host->core_version, host->num_threads());
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    return TP_PLUGIN_OK;
}

/* The template keeps no process-wide caches: nothing to drop. */
static void template_reset(void) {}

static void template_shutdown(void) {
    template_host = NULL;
}

/* ---- options ---------------------------------------------------------------- */

static const char known_options[] = "parallel (on|off), grain (elements, >= 1)";

bool template_parse_options(const tp_plugin_option *options, int32_t count, template_options *out,
                            char *error, size_t error_size) {
    out->parallel = true;
    out->grain = 16384;
    for (int32_t i = 0; i < count; i++) {
        const char *key = options[i].key, *value = options[i].value;
        if (strcmp(key, "parallel") == 0) {
            if (strcmp(value, "on") == 0 || strcmp(value, "1") == 0) {
                out->parallel = true;
            } else if (strcmp(value, "off") == 0 || strcmp(value, "0") == 0) {
                out->parallel = false;
            } else {
                snprintf(error, error_size, "option 'parallel' takes on or off, got '%s'", value);
                return false;
            }
        } else if (strcmp(key, "grain") == 0) {
            char *end = NULL;
            errno = 0;
            long long grain = strtoll(value, &end, 10);
            if (errno || !*value || *end || grain < 1) {
                snprintf(error, error_size, "option 'grain' takes a whole number >= 1, got '%s'",
                         value);
                return false;
            }
            out->grain = grain;
        } else {
            snprintf(error, error_size, "unknown option '%s' (the template backend knows: %s)", key,
                     known_options);
            return false;
        }
    }
    return true;
}

/* ---- the table -------------------------------------------------------------- */

static const tp_plugin_backend template_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = TP_BACKEND_CONTRACT_VERSION,
    .name = TEMPLATE_NAME,
    .version = TEMPLATE_VERSION,
    .description = "SDK template: interprets pointwise and reduction ops with plain loops",
    .probe = template_probe,
    .init = template_init,
    .compile = template_compile,
    .run = template_run,
    .release = template_release,
    .reset = template_reset,
    .shutdown = template_shutdown,
};

/* The entry symbol (template.ini: entry = tp_template_backend). */
TP_PLUGIN_EXPORT const tp_plugin_backend *tp_template_backend(void) {
    return &template_table;
}
