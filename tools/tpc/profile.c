/* tpc: `tpc run --profile [--repeat N] [--profile-json FILE]` — collects the
 * core's phase events (tensorplay/profile.h: capture, each pass, partition,
 * each region's backend compile) and tpc's own (parse, first run, steady
 * runs), then prints one table on stderr and, with --profile-json, writes
 * the same events in Chrome's trace-event format (chrome://tracing,
 * Perfetto). Public API only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/profile.h"
#include "tpc.h"

typedef struct profile_entry {
    char name[160]; /* the table's row name */
    uint64_t start_ns, end_ns;
} profile_entry;

struct tpc_profile {
    profile_entry *entries;
    int count, capacity;
    uint64_t *steady_ns; /* one per steady run */
    int num_steady;
    bool out_of_memory;
};

void tpc_profile_add(tpc_profile *profile, const char *name, uint64_t start_ns, uint64_t end_ns) {
    if (profile->count == profile->capacity) {
        int capacity = profile->capacity ? profile->capacity * 2 : 32;
        profile_entry *grown = realloc(profile->entries, (size_t)capacity * sizeof *grown);
        if (!grown) {
            profile->out_of_memory = true;
            return;
        }
        profile->entries = grown;
        profile->capacity = capacity;
    }
    profile_entry *entry = &profile->entries[profile->count++];
    snprintf(entry->name, sizeof entry->name, "%s", name);
    entry->start_ns = start_ns;
    entry->end_ns = end_ns;
}

static void on_core_event(const tp_profile_event *event, void *user) {
    char name[160];
    if (strcmp(event->phase, "pass") == 0)
        snprintf(name, sizeof name, "pass %s", event->detail);
    else if (strcmp(event->phase, "backend_compile") == 0)
        snprintf(name, sizeof name, "compile region %d (%s)", (int)event->region, event->detail);
    else
        snprintf(name, sizeof name, "%s", event->phase);
    tpc_profile_add(user, name, event->start_ns, event->end_ns);
}

tpc_profile *tpc_profile_begin(void) {
    tpc_profile *profile = calloc(1, sizeof *profile);
    if (profile) tp_profile_set_handler(on_core_event, profile);
    return profile;
}

void tpc_profile_steady_run(tpc_profile *profile, uint64_t start_ns, uint64_t end_ns) {
    uint64_t *grown =
        realloc(profile->steady_ns, ((size_t)profile->num_steady + 1) * sizeof *grown);
    if (!grown) {
        profile->out_of_memory = true;
        return;
    }
    profile->steady_ns = grown;
    profile->steady_ns[profile->num_steady++] = end_ns - start_ns;
    char name[64];
    snprintf(name, sizeof name, "steady run %d", profile->num_steady);
    tpc_profile_add(profile, name, start_ns, end_ns);
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double microseconds(uint64_t ns) {
    return (double)ns / 1e3;
}

static void print_table(const tpc_profile *profile, FILE *out) {
    fprintf(out, "profile (microseconds; the first run includes the compile):\n");
    for (int i = 0; i < profile->count; i++) {
        const profile_entry *entry = &profile->entries[i];
        if (strncmp(entry->name, "steady run ", 11) == 0) continue;
        fprintf(out, "  %-36s %12.1f\n", entry->name,
                microseconds(entry->end_ns - entry->start_ns));
    }
    if (!profile->num_steady) return;
    uint64_t *sorted = malloc((size_t)profile->num_steady * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, profile->steady_ns, (size_t)profile->num_steady * sizeof *sorted);
    qsort(sorted, (size_t)profile->num_steady, sizeof *sorted, compare_u64);
    int n = profile->num_steady;
    uint64_t median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    char name[64];
    snprintf(name, sizeof name, "steady runs (%d)", n);
    fprintf(out, "  %-36s %12.1f median, range %.1f .. %.1f\n", name, microseconds(median),
            microseconds(sorted[0]), microseconds(sorted[n - 1]));
    free(sorted);
}

static void json_text(FILE *out, const char *text) {
    fputc('"', out);
    for (; *text; text++) {
        if (*text == '"' || *text == '\\')
            fprintf(out, "\\%c", *text);
        else if ((unsigned char)*text < 0x20)
            fprintf(out, "\\u%04x", (unsigned)*text);
        else
            fputc(*text, out);
    }
    fputc('"', out);
}

/* Complete events ("ph": "X"), microseconds from the first event. */
static int write_json(const tpc_profile *profile, const char *path) {
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return EXIT_FAILURE;
    }
    uint64_t origin = profile->count ? profile->entries[0].start_ns : 0;
    for (int i = 0; i < profile->count; i++)
        if (profile->entries[i].start_ns < origin) origin = profile->entries[i].start_ns;
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", out);
    for (int i = 0; i < profile->count; i++) {
        const profile_entry *entry = &profile->entries[i];
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
        json_text(out, entry->name);
        fprintf(out,
                ", \"cat\": \"tpc\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, "
                "\"tid\": 1}",
                (double)(entry->start_ns - origin) / 1e3,
                (double)(entry->end_ns - entry->start_ns) / 1e3);
    }
    fputs("\n]}\n", out);
    if (fclose(out) != 0) {
        perror(path);
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}

int tpc_profile_finish(tpc_profile *profile, const char *json_path) {
    tp_profile_set_handler(NULL, NULL);
    if (!profile) return EXIT_FAILURE;
    int code = EXIT_SUCCESS;
    if (profile->out_of_memory) fprintf(stderr, "tpc: --profile: out of memory, events lost\n");
    print_table(profile, stderr);
    if (json_path) code = write_json(profile, json_path);
    free(profile->entries);
    free(profile->steady_ns);
    free(profile);
    return code;
}
