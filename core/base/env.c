/* Environment reads for the whole core and, through host->getenv, for every
 * plugin. Built on secure_getenv: in a privileged process (AT_SECURE: setuid,
 * setgid, file capabilities) every variable reads as unset, so neither an
 * override (TP_BACKENDS_PATH, TP_CACHE_DIR, TP_CONFIG, TP_LOG...) nor a
 * folder derived from the caller's HOME/XDG_* is used. */
#define _GNU_SOURCE
#include "env.h"

#include <stdlib.h>
#include <sys/auxv.h>

const char *tp_env_get(const char *name) {
    return name ? secure_getenv(name) : NULL;
}

bool tp_env_is_privileged(void) {
    return getauxval(AT_SECURE) != 0;
}
