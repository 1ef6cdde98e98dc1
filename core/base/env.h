/* The one way the core reads the environment. Internal. */
#ifndef TP_CORE_BASE_ENV_H
#define TP_CORE_BASE_ENV_H

#include <stdbool.h>

/* The value of environment variable `name`, or NULL when it is unset, when
 * `name` is NULL, or when the process is privileged (setuid/setgid or with
 * file capabilities: secure_getenv's rule), so that a privileged process runs
 * with the built-in defaults whatever its caller's environment says. */
const char *tp_env_get(const char *name);

/* True when the process runs with more privilege than the user who started
 * it (the case where tp_env_get returns NULL for everything). */
bool tp_env_is_privileged(void);

#endif
