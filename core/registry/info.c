/* Read-only snapshots of the registry for tools and users: the state of each
 * claim (available, unavailable, loaded, failed, shadowed) and why, the list
 * with its filters, info by name, the search path and the file problems.
 * Nothing here loads a backend. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/error.h"
#include "registry_internal.h"

const char *tp_backend_state_name(tp_backend_state state) {
    static const char *const names[TP_BACKEND_STATE_COUNT] = {"available", "unavailable", "loaded",
                                                              "failed", "shadowed"};
    return (unsigned)state < TP_BACKEND_STATE_COUNT ? names[state] : "?";
}

static char *copy_or_empty(const char *text) {
    return tp_strdup(text ? text : "");
}

/* Caller holds the registry read lock. */
static char *shadow_reason(const tp_backend *winner) {
    switch (winner->source) {
    case TP_BACKEND_SOURCE_REGISTERED:
        return tp_format("shadowed by a backend registered at run time");
    case TP_BACKEND_SOURCE_BUILTIN:
        return tp_format("shadowed by the built-in backend");
    default:
        return tp_format("shadowed by %s:%d", winner->file, winner->line);
    }
}

static tp_backend_state claim_state(const tp_backend *claim, const tp_backend *winner) {
    if (claim->refused)
        return TP_BACKEND_UNAVAILABLE; /* it shadows nothing and is shadowed by nothing */
    if (winner != claim) return TP_BACKEND_SHADOWED;
    int load_state = atomic_load(&claim->load_state);
    if (load_state == TP_LOAD_DONE) return TP_BACKEND_LOADED;
    if (load_state == TP_LOAD_FAILED) return TP_BACKEND_FAILED;
    return claim->unavailable_reason ? TP_BACKEND_UNAVAILABLE : TP_BACKEND_AVAILABLE;
}

/* The reason of a failed load remembered from an earlier process, for a
 * claim this process has not tried to load (new string), or NULL. */
static char *remembered_failure(const tp_backend *claim, tp_backend_state state) {
    return state == TP_BACKEND_AVAILABLE ? tp_load_memory_recall_failure(claim) : NULL;
}

static const char **copy_list(const tp_strvec *list, int count) {
    const char **copy = calloc((size_t)count + 1, sizeof *copy);
    for (int i = 0; copy && i < count; i++)
        copy[i] = i < list->count && list->items[i] ? tp_strdup(list->items[i]) : NULL;
    return copy;
}

/* Caller holds the registry read lock. */
static tp_status fill_info(const tp_backend *claim, tp_backend_info *info) {
    const tp_backend *winner = tp_registry_winner(claim->name);
    memset(info, 0, sizeof *info);
    info->state = claim_state(claim, winner);
    info->source = claim->source;
    char *reason = remembered_failure(claim, info->state);
    if (reason) {
        info->state = TP_BACKEND_FAILED;
        info->remembered = true;
    }
    switch (reason ? TP_BACKEND_STATE_COUNT : info->state) {
    case TP_BACKEND_SHADOWED:
        reason = shadow_reason(winner);
        break;
    case TP_BACKEND_FAILED:
        reason = copy_or_empty(claim->load_error);
        break;
    case TP_BACKEND_UNAVAILABLE:
        reason = copy_or_empty(claim->unavailable_reason);
        break;
    case TP_BACKEND_STATE_COUNT: /* remembered: reason is set */
        break;
    default:
        reason = tp_strdup("");
        break;
    }
    info->reason = reason;
    const char *description = claim->description;
    if ((!description || !*description) && claim->given_table)
        description = claim->given_table->description;
    info->name = copy_or_empty(claim->name);
    info->description = copy_or_empty(description);
    info->tags = copy_or_empty(claim->tags);
    info->file = copy_or_empty(claim->file);
    info->line = claim->line;
    info->library = copy_or_empty(claim->library);
    info->entry = copy_or_empty(claim->entry_symbol);
    info->contract = claim->source == TP_BACKEND_SOURCE_INI ? claim->contract
                     : claim->given_table ? (int)claim->given_table->contract_version
                                          : 0;
    info->min_contract =
        claim->source == TP_BACKEND_SOURCE_INI ? claim->min_contract : info->contract;
    info->priority = claim->priority;
    info->revision = info->state == TP_BACKEND_LOADED ? claim->revision : 0;
    info->min_core = copy_or_empty(claim->min_core);
    info->max_core = copy_or_empty(claim->max_core);
    info->num_required_sonames = claim->requires.count;
    info->required_sonames = copy_list(&claim->requires, claim->requires.count);
    info->required_sonames_found = copy_list(&claim->requires_found, claim->requires.count);
    info->num_warnings = claim->warnings.count;
    info->warnings = copy_list(&claim->warnings, claim->warnings.count);
    info->version = copy_or_empty(info->state == TP_BACKEND_LOADED ? claim->table->version : NULL);
    if (!info->reason || !info->name || !info->description || !info->tags || !info->file ||
        !info->library || !info->entry || !info->min_core || !info->max_core ||
        !info->required_sonames || !info->required_sonames_found || !info->warnings ||
        !info->version)
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    return TP_OK;
}

static void free_list(const char *const *list, int count) {
    if (!list) return;
    for (int i = 0; i < count; i++) free((void *)list[i]);
    free((void *)list);
}

void tp_backend_info_release(tp_backend_info *infos, int count) {
    if (!infos) return;
    for (int i = 0; i < count; i++) {
        tp_backend_info *info = &infos[i];
        free((void *)info->name);
        free((void *)info->reason);
        free((void *)info->description);
        free((void *)info->tags);
        free((void *)info->file);
        free((void *)info->library);
        free((void *)info->entry);
        free((void *)info->min_core);
        free((void *)info->max_core);
        free_list(info->required_sonames, info->num_required_sonames);
        free_list(info->required_sonames_found, info->num_required_sonames);
        free_list(info->warnings, info->num_warnings);
        free((void *)info->version);
    }
    free(infos);
}

/* ---- list -------------------------------------------------------------------------------- */

static bool has_excluded_tag(const char *tags, const char *excluded) {
    const char *cursor = excluded;
    while (*cursor) {
        while (*cursor == ',' || *cursor == ' ') cursor++;
        size_t length = strcspn(cursor, ", ");
        if (!length) break;
        for (const char *tag = tags; tag && *tag;) {
            size_t tag_length = strcspn(tag, ",");
            if (tag_length == length && strncmp(tag, cursor, length) == 0) return true;
            tag += tag_length + (tag[tag_length] == ',');
        }
        cursor += length;
    }
    return false;
}

typedef struct ordered_claim {
    const tp_backend *claim;
    int precedence;
} ordered_claim;

static int compare_claims(const void *a, const void *b) {
    const ordered_claim *x = a, *y = b;
    int by_name = strcmp(x->claim->name, y->claim->name);
    return by_name ? by_name : x->precedence - y->precedence;
}

tp_status tp_backend_list(const tp_backend_list_options *options, tp_backend_info **out,
                          int *count) {
    if (!out || !count)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_list: NULL output");
    *out = NULL;
    *count = 0;
    tp_backend_list_options defaults = TP_BACKEND_LIST_OPTIONS_INIT;
    if (!options) options = &defaults;
    const char *excluded = options->exclude_tags ? options->exclude_tags : "debug,experimental";
    tp_registry_ensure_scanned();
    tp_registry_read_lock();
    int total = tp_registry_claim_count();
    ordered_claim *order = calloc((size_t)total + 1, sizeof *order);
    tp_backend_info *infos = calloc((size_t)total + 1, sizeof *infos);
    tp_status status =
        order && infos ? TP_OK : tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    int selected = 0;
    for (int i = 0; i < total && status == TP_OK; i++) {
        const tp_backend *claim = tp_registry_claim_at(i);
        tp_backend_state state = claim_state(claim, tp_registry_winner(claim->name));
        if (state == TP_BACKEND_AVAILABLE && !options->include_unavailable) {
            char *remembered = remembered_failure(claim, state);
            if (remembered) state = TP_BACKEND_FAILED;
            free(remembered);
        }
        if (state == TP_BACKEND_SHADOWED && !options->include_shadowed) continue;
        if ((state == TP_BACKEND_UNAVAILABLE || state == TP_BACKEND_FAILED) &&
            !options->include_unavailable)
            continue;
        if (has_excluded_tag(claim->tags, excluded)) continue;
        order[selected++] = (ordered_claim){claim, i};
    }
    if (status == TP_OK) qsort(order, (size_t)selected, sizeof *order, compare_claims);
    int filled = 0;
    for (; filled < selected && status == TP_OK; filled++)
        status = fill_info(order[filled].claim, &infos[filled]);
    tp_registry_unlock();
    free(order);
    if (status != TP_OK) {
        tp_backend_info_release(infos, filled);
        return status;
    }
    *out = infos;
    *count = selected;
    return TP_OK;
}

tp_status tp_backend_info_get(const char *name, tp_backend_info **out) {
    if (!name || !out)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_info_get: NULL argument");
    *out = NULL;
    tp_registry_ensure_scanned();
    tp_registry_read_lock();
    tp_backend *winner = tp_registry_winner(name);
    tp_status status = TP_OK;
    tp_backend_info *info = NULL;
    if (winner) {
        info = calloc(1, sizeof *info);
        status = info ? fill_info(winner, info)
                      : tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    }
    tp_strvec names = {0};
    int total = tp_registry_claim_count();
    for (int i = 0; !winner && i < total; i++)
        tp_strvec_push(&names, tp_registry_claim_at(i)->name);
    tp_registry_unlock();
    if (!winner) status = tp_error_unknown_backend(name, &names);
    tp_strvec_clear(&names);
    if (status != TP_OK) {
        tp_backend_info_release(info, info ? 1 : 0);
        return status;
    }
    *out = info;
    return TP_OK;
}

/* ---- search path and problems -------------------------------------------------------------- */

tp_status tp_backend_search_path(tp_backend_path_part **out, int *count) {
    if (!out || !count)
        return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_search_path: NULL output");
    tp_search_path path;
    TP_TRY(tp_search_path_build(&path));
    size_t size = (size_t)path.paths.count * sizeof(tp_backend_path_part);
    for (int i = 0; i < path.paths.count; i++)
        size += strlen(path.paths.items[i]) + strlen(path.origins.items[i]) + 2;
    tp_backend_path_part *parts = malloc(size ? size : 1);
    if (!parts) {
        tp_search_path_clear(&path);
        return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    }
    char *strings = (char *)(parts + path.paths.count);
    for (int i = 0; i < path.paths.count; i++) {
        struct stat info;
        bool exists = stat(path.paths.items[i], &info) == 0;
        parts[i].exists = exists;
        parts[i].is_directory = exists && S_ISDIR(info.st_mode);
        parts[i].path = strcpy(strings, path.paths.items[i]);
        strings += strlen(strings) + 1;
        parts[i].origin = strcpy(strings, path.origins.items[i]);
        strings += strlen(strings) + 1;
    }
    *out = parts;
    *count = path.paths.count;
    tp_search_path_clear(&path);
    return TP_OK;
}

tp_status tp_backend_problems(char **text_out) {
    if (!text_out) return tp_error_set(TP_ERR_INVALID_ARGUMENT, "tp_backend_problems: NULL output");
    tp_registry_ensure_scanned();
    tp_registry_read_lock();
    const tp_strvec *list = tp_registry_problems();
    size_t length = 1;
    for (int i = 0; i < list->count; i++) length += strlen(list->items[i]) + 1;
    char *text = malloc(length);
    if (text) {
        text[0] = '\0';
        char *end = text;
        for (int i = 0; i < list->count; i++) end = stpcpy(stpcpy(end, list->items[i]), "\n");
    }
    tp_registry_unlock();
    if (!text) return tp_error_set(TP_ERR_OUT_OF_MEMORY, "registry: out of memory");
    *text_out = text;
    return TP_OK;
}
