/* The core's version string. */
#include "tensorplay/status.h"

#define TP_STRINGIFY_(x) #x
#define TP_STRINGIFY(x)  TP_STRINGIFY_(x)

const char *tp_version(void) {
    return TP_STRINGIFY(TP_VERSION_MAJOR) "." TP_STRINGIFY(TP_VERSION_MINOR) "." TP_STRINGIFY(
        TP_VERSION_PATCH);
}
