/* The template backend's table and life cycle: the entry symbol named in
 * template.ini, probe, init and shutdown (the per-instance context), and the
 * compile options it accepts. Claims live in template_ops.c, compiling and
 * running in template_compile.c and template_run.c.
 *
 * Life cycle, as the core drives it (contract revision 2): entry(revision)
 * returns the table (static storage, no side effects) -> the core checks
 * struct_size, contract_version and name -> calls.probe -> calls.init makes
 * the context -> supports/compile/run/release, from any number of threads ->
 * calls.shutdown once, after every executable is released, frees it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

int32_t template_fail(const tp_plugin_host *host, int32_t code, const char *format, ...) {
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    host->set_error(host, message);
    return code;
}

/* Whether the backend can run now. A GPU backend would look for its driver
 * and a device here, explain what is missing, and may lower info->priority
 * for a weak device. Must not need init. The template needs nothing but the
 * CPU; TEMPLATE_UNAVAILABLE (read through host->getenv, never getenv) lets
 * the guide show what an unavailable backend looks like. */
static int32_t template_probe(const tp_plugin_host *host, tp_plugin_probe_info *info) {
    const char *unavailable = host->getenv("TEMPLATE_UNAVAILABLE");
    if (unavailable && *unavailable)
        return template_fail(host, TP_PLUGIN_UNAVAILABLE, "TEMPLATE_UNAVAILABLE is set (%s)",
                             unavailable);
    if (info && TP_PLUGIN_HAS_FIELD(info, tp_plugin_probe_info, device))
        snprintf(info->device, sizeof info->device, "the host CPU (plain C loops)");
    return TP_PLUGIN_OK;
}

static int32_t template_init(const tp_plugin_host *host, void **context) {
    template_context *self = calloc(1, sizeof *self);
    if (!self) return template_fail(host, TP_PLUGIN_ERROR, "out of memory creating the context");
    self->host = host; /* valid until shutdown: kept here, never in a global */
    char line[128];
    snprintf(line, sizeof line, "template backend %s on TensorPlay %s, %d threads",
             TEMPLATE_VERSION, host->core_version, host->num_threads());
    host->log(host, TP_PLUGIN_LOG_DEBUG, line);
    *context = self;
    return TP_PLUGIN_OK;
}

static void template_shutdown(void *context) {
    free(context);
}

/* ---- options ---------------------------------------------------------------- */

static const char known_options[] = "parallel (on|off), grain (elements, >= 1)";

bool template_parse_options(const tp_plugin_host *host, const tp_plugin_option *options,
                            int32_t count, template_options *out) {
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
                template_fail(host, TP_PLUGIN_ERROR, "option 'parallel' takes on or off, got '%s'",
                              value);
                return false;
            }
        } else if (strcmp(key, "grain") == 0) {
            char *end = NULL;
            errno = 0;
            long long grain = strtoll(value, &end, 10);
            if (errno || !*value || *end || grain < 1) {
                template_fail(host, TP_PLUGIN_ERROR,
                              "option 'grain' takes a whole number >= 1, got '%s'", value);
                return false;
            }
            out->grain = grain;
        } else {
            template_fail(host, TP_PLUGIN_ERROR,
                          "unknown option '%s' (the template backend knows: %s)", key,
                          known_options);
            return false;
        }
    }
    return true;
}

/* ---- the table -------------------------------------------------------------- */

static const tp_plugin_backend template_table = {
    .struct_size = sizeof(tp_plugin_backend),
    .contract_version = 2, /* a revision-2 table: the revision-1 fields stay NULL */
    .name = TEMPLATE_NAME,
    .version = TEMPLATE_VERSION,
    .description = "SDK template: add, sub, mul, relu, exp and matmul with plain loops; the rest "
                   "runs on the fallback",
    .calls =
        {
            .probe = template_probe,
            .init = template_init,
            .supports = template_supports,
            .compile = template_compile,
            .run = template_run,
            .release = template_release,
            .shutdown = template_shutdown,
        },
};

/* The entry symbol (template.ini: entry = tp_template_backend, contract = 2,
 * min_contract = 2). `revision` is the highest revision both the core and
 * the INI speak; this table is revision 2, the only one the template speaks. */
TP_PLUGIN_EXPORT const tp_plugin_backend *tp_template_backend(uint32_t revision) {
    return revision >= 2 ? &template_table : NULL;
}
