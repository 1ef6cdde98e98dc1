/* plugins/common — reading a file that ships with a plugin (a prebuilt
 * object beside it) under the same trust rule the registry applies to plugin
 * files: a regular file owned by root or the effective user and writable by
 * nobody else, in folders (up to /) owned by root or the user and writable
 * by nobody else, except a sticky folder (/tmp) above a file the user owns.
 * Built only on the C library (plugins never see core/). */
#ifndef TPCOMMON_TRUST_H
#define TPCOMMON_TRUST_H

#include <stddef.h>

/* The whole of `path` (caller frees; NULL on failure, with the reason in
 * `why`: missing, unreadable, not a regular file, untrusted (which owner or
 * mode, and the chmod that fixes it), larger than `max_size`, or swapped
 * while it was being checked). `*untrusted` is set when the file exists but
 * fails the trust rule (a reason worth telling the user about). */
void *tpcommon_trusted_file_read(const char *path, size_t max_size, size_t *size, int *untrusted,
                                 char *why, size_t why_size);

#endif
