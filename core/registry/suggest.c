/* "Did you mean" for unknown backend names: optimal-string-alignment edit
 * distance (insert, delete, substitute, swap two neighbours), compared
 * case-insensitively, over every known name (hidden and unavailable ones
 * too). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "registry_internal.h"

#define MAX_NAME        64
#define MAX_SUGGESTIONS 3

static int edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > MAX_NAME || m > MAX_NAME) return MAX_NAME;
    int d[MAX_NAME + 1][MAX_NAME + 1];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

typedef struct candidate {
    int distance;
    const char *name;
} candidate;

static int compare_candidates(const void *a, const void *b) {
    const candidate *x = a, *y = b;
    if (x->distance != y->distance) return x->distance - y->distance;
    return strcmp(x->name, y->name);
}

tp_status tp_suggest_names(const char *name, const tp_strvec *names, tp_strvec *out) {
    size_t length = strlen(name);
    int limit = length <= 3 ? 1 : length <= 8 ? 2 : 3;
    candidate *close = calloc((size_t)names->count + 1, sizeof *close);
    if (!close) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    int found = 0;
    for (int i = 0; i < names->count; i++) {
        int distance = edit_distance(name, names->items[i]);
        if (distance <= limit) close[found++] = (candidate){distance, names->items[i]};
    }
    qsort(close, (size_t)found, sizeof *close, compare_candidates);
    tp_status status = TP_OK;
    int taken = 0;
    for (int i = 0; i < found && taken < MAX_SUGGESTIONS && status == TP_OK; i++) {
        if (i > 0 && strcmp(close[i].name, close[i - 1].name) == 0) continue;
        status = tp_strvec_push(out, close[i].name);
        taken++;
    }
    free(close);
    return status;
}

tp_status tp_error_unknown_backend(const char *name, const tp_strvec *known_names) {
    tp_strvec suggestions = {0};
    tp_suggest_names(name, known_names, &suggestions);
    char list[512] = "";
    for (int i = 0; i < suggestions.count; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s'%s'", i ? ", " : "", suggestions.items[i]);
    }
    tp_status status =
        suggestions.count
            ? tp_error_set(TP_ERR_NOT_FOUND,
                           "Invalid backend: '%s', did you mean: %s? See `tp-backends list` for "
                           "available backends.",
                           name, list)
            : tp_error_set(TP_ERR_NOT_FOUND,
                           "Invalid backend: '%s'. See `tp-backends list` for available "
                           "backends.",
                           name);
    tp_strvec_clear(&suggestions);
    return status;
}
