/* `tp-backends check NAME --conformance`, the parent side: find and load the
 * corpus, run its cases in a child process (the backend is loaded there, so a
 * crash is reported, not fatal), show progress, and print the summary table
 * (and --json). The child reports through a pipe, one line per event:
 *   "S POS"                 case POS started
 *   "C POS OP CLAIMED N"    of the case's N nodes of op OP, the backend claims CLAIMED
 *   "R POS STATUS ERROR D"  its result (status code, max error, detail)
 *   "L TEXT"                the backend could not be loaded
 * When the child dies during a case (a signal, or the per-case alarm), that
 * case fails with the signal named and a new child resumes after it. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance.h"
#include "tp_backends.h"

#define CASE_TIMEOUT_SECONDS 60

typedef struct kit {
    const char *backend;
    const conformance_options *options;
    conformance_corpus corpus;
    int num_selected;
    int *selected; /* case indices, in run order */
    conformance_result *results;
    int num_coverage_ops;
    conformance_op_claims coverage[CONFORMANCE_MAX_OPS]; /* summed over the cases */
} kit;

/* ---- the child ------------------------------------------------------------------ */

static void child_write(FILE *pipe, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void child_write(FILE *pipe, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vfprintf(pipe, format, args);
    va_end(args);
    fflush(pipe);
}

/* Whether the loaded backend says which nodes it takes (contract revision 2
 * and later): its cases then run through the partitioner. A revision-1
 * backend compiles whole graphs or refuses them, and is judged that way. */
static bool backend_has_claims(const char *name) {
    tp_backend_info *info = NULL;
    if (tp_backend_info_get(name, &info) != TP_OK) return false;
    bool has_claims = info->revision >= 2;
    tp_backend_info_release(info, 1);
    return has_claims;
}

static int child_main(kit *kit, int first, FILE *pipe) {
    tp_backend *backend = NULL, *eager = NULL;
    if (tp_backend_lookup(kit->backend, &backend) != TP_OK ||
        tp_backend_lookup("eager", &eager) != TP_OK) {
        char text[1024];
        snprintf(text, sizeof text, "%s", tp_last_error());
        for (char *c = text; *c; c++)
            if (*c == '\n') *c = ' ';
        child_write(pipe, "L %s\n", text);
        return 3;
    }
    bool partitioned = backend_has_claims(kit->backend);
    for (int position = first; position < kit->num_selected; position++) {
        const conformance_case *item = &kit->corpus.cases[kit->selected[position]];
        child_write(pipe, "S %d\n", position);
        alarm(CASE_TIMEOUT_SECONDS);
        conformance_result result;
        conformance_run_case(backend, eager, partitioned, item, &result);
        alarm(0);
        for (int o = 0; o < result.num_ops; o++)
            child_write(pipe, "C %d %s %d %d\n", position, result.ops[o].op, result.ops[o].claimed,
                        result.ops[o].nodes);
        child_write(pipe, "R %d %d %.17g %s\n", position, (int)result.status, result.max_error,
                    result.detail);
    }
    return 0;
}

/* ---- progress -------------------------------------------------------------------- */

static void print_progress(const kit *kit, int position) {
    const conformance_case *item = &kit->corpus.cases[kit->selected[position]];
    const conformance_result *result = &kit->results[kit->selected[position]];
    int width = snprintf(NULL, 0, "%d", kit->num_selected);
    printf("  [%*d/%d] %-52s %s", width, position + 1, kit->num_selected, item->name,
           conformance_status_name(result->status));
    if (result->status == CONFORMANCE_PASS && result->max_error > 0)
        printf(" (max error %.2g)", result->max_error);
    putchar('\n');
    if (result->status != CONFORMANCE_PASS || kit->options->verbose)
        printf("  %*s   %s\n", 2 * width, "", result->detail);
    fflush(stdout);
}

static const char *signal_text(int number) {
    static char text[96];
    const char *abbrev = sigabbrev_np(number);
    if (number == SIGALRM)
        snprintf(text, sizeof text, "did not finish within %d s", CASE_TIMEOUT_SECONDS);
    else
        snprintf(text, sizeof text, "the backend crashed with SIG%s (%s)", abbrev ? abbrev : "?",
                 strsignal(number));
    return text;
}

/* Reads the child's events until it exits. Returns the position a new child
 * must resume at (num_selected when done), or -1 when the backend cannot be
 * loaded at all. */
static int follow_child(kit *kit, FILE *events, pid_t child) {
    char *line = NULL;
    size_t capacity = 0;
    int current = -1, resume = kit->num_selected;
    bool load_failed = false;
    while (getline(&line, &capacity, events) > 0) {
        line[strcspn(line, "\n")] = '\0';
        int position, status, consumed = 0;
        double error;
        conformance_op_claims op;
        if (line[0] == 'S' && sscanf(line, "S %d", &position) == 1) {
            current = position;
        } else if (line[0] == 'C' &&
                   sscanf(line, "C %d %31s %d %d", &position, op.op, &op.claimed, &op.nodes) == 4) {
            conformance_add_claims(kit->coverage, &kit->num_coverage_ops, &op);
        } else if (line[0] == 'R' &&
                   sscanf(line, "R %d %d %lg %n", &position, &status, &error, &consumed) == 3 &&
                   position >= 0 && position < kit->num_selected) {
            conformance_result *result = &kit->results[kit->selected[position]];
            result->status = (conformance_status)status;
            result->max_error = error;
            snprintf(result->detail, sizeof result->detail, "%s", line + consumed);
            print_progress(kit, position);
            current = -1;
        } else if (line[0] == 'L') {
            printf("FAILED: cannot load backend '%s': %s\n", kit->backend, line + 2);
            load_failed = true;
        }
    }
    free(line);
    int wait_status = 0;
    while (waitpid(child, &wait_status, 0) < 0) {
    }
    if (load_failed) return -1;
    if (current >= 0) { /* died inside a case */
        conformance_result *result = &kit->results[kit->selected[current]];
        result->status = CONFORMANCE_FAIL;
        if (WIFSIGNALED(wait_status))
            snprintf(result->detail, sizeof result->detail, "%s",
                     signal_text(WTERMSIG(wait_status)));
        else
            snprintf(result->detail, sizeof result->detail,
                     "the process exited (status %d) in the middle of the case",
                     WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
        print_progress(kit, current);
        resume = current + 1;
    } else if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        printf("FAILED: the conformance child ended abnormally between cases\n");
        return -1;
    }
    return resume;
}

static bool run_children(kit *kit) {
    int next = 0;
    while (next < kit->num_selected) {
        int ends[2];
        fflush(stdout);
        fflush(stderr);
        if (pipe(ends) != 0) {
            perror("tp-backends check: pipe");
            return false;
        }
        pid_t child = fork();
        if (child < 0) {
            perror("tp-backends check: fork");
            return false;
        }
        if (child == 0) {
            close(ends[0]);
            FILE *pipe = fdopen(ends[1], "w");
            _exit(pipe ? child_main(kit, next, pipe) : 4);
        }
        close(ends[1]);
        FILE *events = fdopen(ends[0], "r");
        if (!events) {
            close(ends[0]);
            return false;
        }
        next = follow_child(kit, events, child);
        fclose(events);
        if (next < 0) return false;
    }
    return true;
}

/* ---- summary --------------------------------------------------------------------- */

typedef struct group_row {
    const char *name;
    int counts[CONFORMANCE_STATUS_COUNT];
    int cases;
    double max_error;
} group_row;

static int collect_groups(const kit *kit, group_row *rows) {
    int count = 0;
    for (int p = 0; p < kit->num_selected; p++) {
        const conformance_case *item = &kit->corpus.cases[kit->selected[p]];
        const conformance_result *result = &kit->results[kit->selected[p]];
        int row = 0;
        while (row < count && strcmp(rows[row].name, item->file->group) != 0) row++;
        if (row == count) {
            memset(&rows[count], 0, sizeof rows[count]);
            rows[count++].name = item->file->group;
        }
        rows[row].cases++;
        rows[row].counts[result->status]++;
        if (result->max_error > rows[row].max_error) rows[row].max_error = result->max_error;
    }
    return count;
}

static void print_table(const group_row *rows, int count, int *totals) {
    printf("\n%-20s %6s %6s %6s %12s %10s\n", "OP / GROUP", "CASES", "PASS", "FAIL", "UNSUPPORTED",
           "MAX ERROR");
    for (int r = 0; r < count; r++) {
        const group_row *row = &rows[r];
        int failed = row->counts[CONFORMANCE_FAIL] + row->counts[CONFORMANCE_BROKEN] +
                     row->counts[CONFORMANCE_NOT_RUN];
        char error[32];
        snprintf(error, sizeof error, row->max_error > 0 ? "%.2g" : "0", row->max_error);
        printf("%-20s %6d %6d %6d %12d %10s%s\n", row->name, row->cases,
               row->counts[CONFORMANCE_PASS], failed, row->counts[CONFORMANCE_UNSUPPORTED], error,
               failed ? "  <- FAILING" : "");
        for (int s = 0; s < CONFORMANCE_STATUS_COUNT; s++) totals[s] += row->counts[s];
    }
}

static void write_json(const kit *kit, const group_row *rows, int count, const int *totals) {
    FILE *out = fopen(kit->options->json_path, "w");
    if (!out) {
        fprintf(stderr, "tp-backends check: cannot write %s\n", kit->options->json_path);
        return;
    }
    fputs("{\"backend\": ", out), json_string(out, kit->backend);
    fputs(", \"core_version\": ", out), json_string(out, tp_version());
    fputs(", \"corpus\": ", out), json_string(out, kit->corpus.dir);
    fprintf(out,
            ", \"summary\": {\"cases\": %d, \"pass\": %d, \"fail\": %d, \"unsupported\": %d, "
            "\"broken\": %d, \"not_run\": %d}",
            kit->num_selected, totals[CONFORMANCE_PASS], totals[CONFORMANCE_FAIL],
            totals[CONFORMANCE_UNSUPPORTED], totals[CONFORMANCE_BROKEN],
            totals[CONFORMANCE_NOT_RUN]);
    fputs(",\n ", out);
    conformance_write_coverage_json(out, kit->coverage, kit->num_coverage_ops);
    fputs(",\n \"groups\": [", out);
    for (int r = 0; r < count; r++) {
        fputs(r ? ",\n  {\"name\": " : "\n  {\"name\": ", out), json_string(out, rows[r].name);
        fprintf(out,
                ", \"cases\": %d, \"pass\": %d, \"fail\": %d, \"unsupported\": %d, "
                "\"max_error\": %.6g}",
                rows[r].cases, rows[r].counts[CONFORMANCE_PASS],
                rows[r].counts[CONFORMANCE_FAIL] + rows[r].counts[CONFORMANCE_BROKEN] +
                    rows[r].counts[CONFORMANCE_NOT_RUN],
                rows[r].counts[CONFORMANCE_UNSUPPORTED], rows[r].max_error);
    }
    fputs("],\n \"cases\": [", out);
    for (int p = 0; p < kit->num_selected; p++) {
        const conformance_case *item = &kit->corpus.cases[kit->selected[p]];
        const conformance_result *result = &kit->results[kit->selected[p]];
        fputs(p ? ",\n  {\"name\": " : "\n  {\"name\": ", out), json_string(out, item->name);
        fputs(", \"file\": ", out), json_string(out, item->file->path);
        fputs(", \"group\": ", out), json_string(out, item->file->group);
        fputs(", \"dtype\": ", out), json_string(out, tp_dtype_name(item->dtype));
        char status[32];
        snprintf(status, sizeof status, "%s", conformance_status_name(result->status));
        for (char *c = status; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        fputs(", \"status\": ", out), json_string(out, status);
        fprintf(out, ", \"max_error\": %.6g, \"detail\": ",
                isfinite(result->max_error) ? result->max_error : -1.0);
        json_string(out, result->detail);
        fputc('}', out);
    }
    fputs("]}\n", out);
    fclose(out);
    printf("wrote %s\n", kit->options->json_path);
}

static bool is_failure(conformance_status status) {
    return status == CONFORMANCE_FAIL || status == CONFORMANCE_BROKEN ||
           status == CONFORMANCE_NOT_RUN;
}

/* The ops found in the most failing cases: with one wrong op, it is in all. */
static void print_suspects(const kit *kit, int failed) {
    const char *names[128];
    int counts[128], num_ops = 0, best = 0;
    for (int p = 0; p < kit->num_selected; p++) {
        if (!is_failure(kit->results[kit->selected[p]].status)) continue;
        const tp_graph *graph = kit->corpus.cases[kit->selected[p]].file->graph;
        const char *seen[64];
        int num_seen = 0;
        for (int v = 0; v < tp_graph_num_values(graph); v++) {
            const char *op = tp_graph_value_op(graph, v);
            bool again = !op;
            for (int s = 0; !again && s < num_seen; s++) again = strcmp(seen[s], op) == 0;
            if (again || num_seen == 64) continue;
            seen[num_seen++] = op;
            int k = 0;
            while (k < num_ops && strcmp(names[k], op) != 0) k++;
            if (k == num_ops && num_ops == 128) continue;
            if (k == num_ops) names[num_ops] = op, counts[num_ops++] = 0;
            if (++counts[k] > best) best = counts[k];
        }
    }
    printf("ops in the most failing cases:");
    for (int k = 0; k < num_ops; k++)
        if (counts[k] == best) printf(" %s (%d of %d)", names[k], counts[k], failed);
    putchar('\n');
}

static int summarize(const kit *kit) {
    group_row *rows = calloc((size_t)kit->num_selected + 1, sizeof *rows);
    if (!rows) return EXIT_FAILED;
    int count = collect_groups(kit, rows);
    int totals[CONFORMANCE_STATUS_COUNT] = {0};
    print_table(rows, count, totals);
    int failed =
        totals[CONFORMANCE_FAIL] + totals[CONFORMANCE_BROKEN] + totals[CONFORMANCE_NOT_RUN];
    printf("%-20s %6d %6d %6d %12d\n", "total", kit->num_selected, totals[CONFORMANCE_PASS], failed,
           totals[CONFORMANCE_UNSUPPORTED]);
    if (failed) {
        printf("\nfailing:");
        for (int r = 0; r < count; r++)
            if (rows[r].counts[CONFORMANCE_FAIL] + rows[r].counts[CONFORMANCE_BROKEN] +
                rows[r].counts[CONFORMANCE_NOT_RUN])
                printf(" %s", rows[r].name);
        putchar('\n');
    }
    if (failed) print_suspects(kit, failed);
    double coverage = conformance_print_coverage(kit->coverage, kit->num_coverage_ops);
    if (kit->options->json_path) write_json(kit, rows, count, totals);
    free(rows);
    if (failed) {
        printf("FAILED: backend '%s' fails %d of %d conformance cases\n", kit->backend, failed,
               kit->num_selected);
        return EXIT_FAILED;
    }
    if (coverage < kit->options->min_coverage) {
        printf("FAILED: backend '%s' claims %.1f%% of the nodes, below --min-coverage %g\n",
               kit->backend, coverage, kit->options->min_coverage);
        return EXIT_FAILED;
    }
    printf("ok: backend '%s' passes the conformance kit (%d passed, %d unsupported, %.1f%% of "
           "nodes claimed)\n",
           kit->backend, totals[CONFORMANCE_PASS], totals[CONFORMANCE_UNSUPPORTED], coverage);
    return EXIT_OK;
}

/* ---- entry ------------------------------------------------------------------------- */

static bool select_cases(kit *kit) {
    kit->selected = calloc((size_t)kit->corpus.num_cases + 1, sizeof *kit->selected);
    kit->results = calloc((size_t)kit->corpus.num_cases + 1, sizeof *kit->results);
    if (!kit->selected || !kit->results) return false;
    for (int c = 0; c < kit->corpus.num_cases; c++) {
        kit->results[c].status = CONFORMANCE_NOT_RUN;
        snprintf(kit->results[c].detail, sizeof kit->results[c].detail, "not run");
        if (!kit->options->filter || strstr(kit->corpus.cases[c].name, kit->options->filter))
            kit->selected[kit->num_selected++] = c;
    }
    return true;
}

int conformance_main(const char *name, const conformance_options *options) {
    char dir[4096], error[4096];
    if (!conformance_corpus_find(options->corpus_dir, dir, sizeof dir)) {
        fprintf(stderr,
                "tp-backends check: no conformance corpus found (tried %s); pass --corpus DIR\n",
                dir);
        return EXIT_FAILED;
    }
    kit kit = {.backend = name, .options = options};
    if (conformance_corpus_load(dir, &kit.corpus, error, sizeof error) != TP_OK) {
        fprintf(stderr, "tp-backends check: %s\n", error);
        return EXIT_FAILED;
    }
    int code = EXIT_FAILED;
    if (!select_cases(&kit)) {
        fputs("tp-backends check: out of memory\n", stderr);
    } else if (kit.num_selected == 0) {
        fprintf(stderr, "tp-backends check: no case matches --filter '%s'\n", options->filter);
    } else {
        printf("conformance: backend '%s' against 'eager', %d cases from %s\n", name,
               kit.num_selected, dir);
        printf("tolerance: f32 1e-05 + 1e-04 |want|, f64 1e-12 + 1e-10 |want|, f16 4e-03 + "
               "8e-03 |want|, bf16 3.2e-02 + 3.2e-02 |want|, integers and bool exact\n");
        if (run_children(&kit)) code = summarize(&kit);
    }
    free(kit.selected);
    free(kit.results);
    conformance_corpus_free(&kit.corpus);
    return code;
}
