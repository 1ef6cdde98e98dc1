/* Which backend `auto` picks now, and why, for `tp-backends list`.
 * Resolving `auto` loads candidates (a probe may lower a priority, e.g.
 * opencl on a CPU device), but `list` must load nothing in its own process:
 * the resolution runs in a forked child (as `check` does), which writes its
 * answer into a pipe; a child that crashes or hangs in a plugin is reported,
 * not fatal. The parent adds the backends ranked above the pick that are
 * unavailable (decided without loading, so the child's answer omits them). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_backends.h"

#define AUTO_PICK_TIMEOUT_SECONDS 60

/* Child: "NAME\tWHY" on success, "\tERROR" when nothing can be picked. */
static void child_resolve(int out) {
    alarm(AUTO_PICK_TIMEOUT_SECONDS);
    tp_backend *pick = NULL;
    char *why = NULL;
    FILE *answer = fdopen(out, "w");
    if (!answer) _exit(EXIT_FAILED);
    if (tp_backend_resolve_auto(&pick, &why) == TP_OK)
        fprintf(answer, "%s\t%s", tp_backend_name(pick), why ? why : "");
    else
        fprintf(answer, "\t%s", tp_last_error());
    fclose(answer);
    _exit(EXIT_OK);
}

static size_t read_all(int in, char *text, size_t size) {
    size_t used = 0;
    ssize_t got;
    while (used < size - 1 && (got = read(in, text + used, size - 1 - used)) > 0)
        used += (size_t)got;
    text[used] = '\0';
    return used;
}

/* Fills `answer` with the child's "NAME\tWHY" or "\tPROBLEM". */
static void resolve_in_child(char *answer, size_t size) {
    int ends[2];
    if (pipe(ends) != 0) {
        snprintf(answer, size, "\tcannot resolve: pipe failed");
        return;
    }
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        close(ends[0]), close(ends[1]);
        snprintf(answer, size, "\tcannot resolve: fork failed");
        return;
    }
    if (child == 0) {
        close(ends[0]);
        child_resolve(ends[1]);
    }
    close(ends[1]);
    read_all(ends[0], answer, size);
    close(ends[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
    }
    if (WIFSIGNALED(status)) {
        int number = WTERMSIG(status);
        snprintf(answer, size,
                 "\ta candidate %s while loading (%s); `tp-backends check NAME` shows which",
                 number == SIGALRM ? "did not finish" : "crashed", strsignal(number));
    }
}

static int find_info(const tp_backend_info *infos, int count, const char *name) {
    for (int i = 0; i < count; i++)
        if (infos[i].state != TP_BACKEND_SHADOWED && strcmp(infos[i].name, name) == 0) return i;
    return -1;
}

bool auto_pick_explain(const tp_backend_info *infos, int count, char *pick, size_t pick_size,
                       char *why, size_t why_size) {
    char answer[8192];
    resolve_in_child(answer, sizeof answer);
    char *tab = strchr(answer, '\t');
    if (!tab) {
        snprintf(pick, pick_size, "%s", "");
        snprintf(why, why_size, "no answer from the child that resolves it");
        return false;
    }
    *tab = '\0';
    snprintf(pick, pick_size, "%s", answer);
    snprintf(why, why_size, "%s", tab + 1);
    if (!*pick) return false;
    int picked = find_info(infos, count, pick);
    int priority = picked >= 0 ? infos[picked].priority : 0;
    size_t used = strlen(why);
    for (int i = 0; i < count && used < why_size; i++)
        if (infos[i].state == TP_BACKEND_UNAVAILABLE && infos[i].priority > priority)
            used += (size_t)snprintf(why + used, why_size - used,
                                     "; '%s' (priority %d) is unavailable: %s", infos[i].name,
                                     infos[i].priority, infos[i].reason);
    return true;
}
