/* `auto`: the available backend with the highest priority. Owns only the
 * choice; loading (and the probe that may lower a priority, e.g. opencl on a
 * CPU device) is the loader's.
 *
 * A candidate's priority is final only once it is loaded, so the choice
 * loads candidates from the highest INI priority down until the best loaded
 * one outranks every candidate not yet tried: nothing below the pick is ever
 * loaded. Ties go to the name that sorts first, so the pick is stable. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

typedef struct auto_candidate {
    tp_backend *backend;
    bool tried;
} auto_candidate;

static bool is_candidate(tp_backend *claim) {
    return tp_registry_winner(claim->name) == claim && !claim->unavailable_reason &&
           atomic_load(&claim->load_state) != TP_LOAD_FAILED && !atomic_load(&claim->removed);
}

static tp_status collect_candidates(auto_candidate **out, int *count) {
    tp_registry_ensure_scanned();
    tp_registry_read_lock();
    int total = tp_registry_claim_count();
    auto_candidate *candidates = calloc((size_t)total + 1, sizeof *candidates);
    int found = 0;
    for (int i = 0; candidates && i < total; i++) {
        tp_backend *claim = tp_registry_claim_at(i);
        if (is_candidate(claim)) candidates[found++].backend = claim;
    }
    tp_registry_unlock();
    if (!candidates) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "auto: out of memory");
    *out = candidates;
    *count = found;
    return TP_OK;
}

/* True when `a` ranks before `b`. */
static bool ranks_before(const tp_backend *a, const tp_backend *b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    return strcmp(a->name, b->name) < 0;
}

/* The untried candidate of highest (INI or probed) priority, or -1. */
static int best_untried(const auto_candidate *candidates, int count) {
    int best = -1;
    for (int i = 0; i < count; i++)
        if (!candidates[i].tried &&
            (best < 0 || ranks_before(candidates[i].backend, candidates[best].backend)))
            best = i;
    return best;
}

static void note_failure(tp_strvec *notes, const tp_backend *backend) {
    tp_strvec_push_owned(notes, tp_format("'%s' (priority %d) failed to load: %s", backend->name,
                                          backend->priority, tp_last_error()));
}

static char *join_why(const tp_backend *pick, const tp_strvec *notes) {
    size_t length = 128;
    for (int i = 0; i < notes->count; i++) length += strlen(notes->items[i]) + 2;
    char *text = malloc(length);
    if (!text) return NULL;
    size_t used = (size_t)snprintf(text, length, "highest priority of the available backends (%d)",
                                   pick->priority);
    for (int i = 0; i < notes->count; i++)
        used += (size_t)snprintf(text + used, length - used, "; %s", notes->items[i]);
    return text;
}

tp_status tp_backend_resolve_auto(tp_backend **out, char **why) {
    if (!out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_resolve_auto: out is NULL");
    *out = NULL;
    if (why) *why = NULL;
    auto_candidate *candidates = NULL;
    int count = 0;
    TP_TRY(collect_candidates(&candidates, &count));
    tp_backend *pick = NULL;
    tp_strvec notes = {0};
    for (;;) {
        int next = best_untried(candidates, count);
        if (next < 0 || (pick && ranks_before(pick, candidates[next].backend))) break;
        candidates[next].tried = true;
        tp_backend *backend = candidates[next].backend;
        int listed = backend->priority;
        if (tp_loader_ensure_loaded(backend) != TP_OK) {
            note_failure(&notes, backend);
            continue;
        }
        if (backend->priority < listed)
            tp_strvec_push_owned(&notes, tp_format("'%s' lowered its priority from %d to %d "
                                                   "(its probe)",
                                                   backend->name, listed, backend->priority));
        if (!pick || ranks_before(backend, pick)) pick = backend;
    }
    free(candidates);
    tp_status status = TP_OK;
    if (!pick)
        status = tp_error_set(TP_ERR_BACKEND,
                              "auto: no backend can be loaded (see `tp-backends list --all`)");
    else if (why && !(*why = join_why(pick, &notes)))
        status = tp_error_set(TP_ERR_OUT_OF_MEMORY, "auto: out of memory");
    tp_strvec_clear(&notes);
    if (status == TP_OK) *out = pick;
    return status;
}
