/* tpc: `tpc run --profile [--repeat N] [--profile-json FILE]` — collects the
 * core's phase events (tensorplay/profile.h: capture, each pass, partition,
 * each region's backend compile), the kernels backends report while running,
 * and tpc's own (parse, first run, steady runs), then prints one table on
 * stderr (phases, steady runs, the top kernels by total time) and, with
 * --profile-json, writes the same events in Chrome's trace-event format
 * (chrome://tracing, Perfetto; kernels on their own track). Public API
 * only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorplay/profile.h"
#include "tpc.h"

typedef struct profile_entry {
    char name[160]; /* the table's row name */
    uint64_t start_ns, end_ns;
} profile_entry;

/* One kernel execution a backend reported. */
typedef struct kernel_entry {
    char name[160];
    char backend[64];
    uint64_t start_ns, end_ns;
} kernel_entry;

/* The table's kernel rows: at most this many, by total time. */
#define TOP_KERNELS 10

struct tpc_profile {
    profile_entry *entries;
    int count, capacity;
    kernel_entry *kernels;
    int num_kernels, kernel_capacity;
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

static void add_kernel(tpc_profile *profile, const tp_profile_event *event) {
    if (profile->num_kernels == profile->kernel_capacity) {
        int capacity = profile->kernel_capacity ? profile->kernel_capacity * 2 : 64;
        kernel_entry *grown = realloc(profile->kernels, (size_t)capacity * sizeof *grown);
        if (!grown) {
            profile->out_of_memory = true;
            return;
        }
        profile->kernels = grown;
        profile->kernel_capacity = capacity;
    }
    kernel_entry *entry = &profile->kernels[profile->num_kernels++];
    snprintf(entry->name, sizeof entry->name, "%s", event->detail);
    snprintf(entry->backend, sizeof entry->backend, "%s", event->backend ? event->backend : "?");
    entry->start_ns = event->start_ns;
    entry->end_ns = event->end_ns;
}

static void on_core_event(const tp_profile_event *event, void *user) {
    if (strcmp(event->phase, "kernel") == 0) {
        add_kernel(user, event);
        return;
    }
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

/* One row of the kernel table: every execution of one kernel of one backend. */
typedef struct kernel_total {
    const kernel_entry *first;
    int calls;
    uint64_t total_ns;
} kernel_total;

static int compare_totals(const void *a, const void *b) {
    const kernel_total *x = a, *y = b;
    return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

static void print_kernels(const tpc_profile *profile, FILE *out) {
    if (!profile->num_kernels) return;
    kernel_total *totals = calloc((size_t)profile->num_kernels, sizeof *totals);
    if (!totals) return;
    int rows = 0;
    for (int i = 0; i < profile->num_kernels; i++) {
        const kernel_entry *kernel = &profile->kernels[i];
        int row = 0;
        while (row < rows && (strcmp(totals[row].first->name, kernel->name) != 0 ||
                              strcmp(totals[row].first->backend, kernel->backend) != 0))
            row++;
        if (row == rows) totals[rows++].first = kernel;
        totals[row].calls++;
        totals[row].total_ns += kernel->end_ns - kernel->start_ns;
    }
    qsort(totals, (size_t)rows, sizeof *totals, compare_totals);
    fprintf(out, "kernels (%d executions of %d kernels; top %d by total time, microseconds):\n",
            profile->num_kernels, rows, rows < TOP_KERNELS ? rows : TOP_KERNELS);
    fprintf(out, "  %-44s %-8s %6s %12s %10s\n", "kernel", "backend", "calls", "total", "mean");
    for (int row = 0; row < rows && row < TOP_KERNELS; row++)
        fprintf(out, "  %-44s %-8s %6d %12.1f %10.2f\n", totals[row].first->name,
                totals[row].first->backend, totals[row].calls, microseconds(totals[row].total_ns),
                microseconds(totals[row].total_ns) / totals[row].calls);
    free(totals);
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

static void print_profile(const tpc_profile *profile, FILE *out) {
    print_table(profile, out);
    print_kernels(profile, out);
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

/* Complete events ("ph": "X"), microseconds from the first event: phases on
 * track 1, kernels (with their backend) on track 2. */
static int write_json(const tpc_profile *profile, const char *path) {
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        return EXIT_FAILURE;
    }
    uint64_t origin = profile->count         ? profile->entries[0].start_ns
                      : profile->num_kernels ? profile->kernels[0].start_ns
                                             : 0;
    for (int i = 0; i < profile->count; i++)
        if (profile->entries[i].start_ns < origin) origin = profile->entries[i].start_ns;
    for (int i = 0; i < profile->num_kernels; i++)
        if (profile->kernels[i].start_ns < origin) origin = profile->kernels[i].start_ns;
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
    for (int i = 0; i < profile->num_kernels; i++) {
        const kernel_entry *kernel = &profile->kernels[i];
        fputs(profile->count || i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
        json_text(out, kernel->name);
        fprintf(out,
                ", \"cat\": \"kernel\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, "
                "\"pid\": 1, \"tid\": 2, \"args\": {\"backend\": ",
                (double)(kernel->start_ns - origin) / 1e3,
                (double)(kernel->end_ns - kernel->start_ns) / 1e3);
        json_text(out, kernel->backend);
        fputs("}}", out);
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
    print_profile(profile, stderr);
    if (json_path) code = write_json(profile, json_path);
    free(profile->entries);
    free(profile->kernels);
    free(profile->steady_ns);
    free(profile);
    return code;
}
