/* Starting, talking to and stopping the Python helper (see helper_process.h). */
#define _GNU_SOURCE
#include "helper_process.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static bool read_reply(helper_process *h, char *reply, size_t size) {
    for (;;) {
        if (!fgets(reply, (int)size, h->from)) return false;
        reply[strcspn(reply, "\n")] = '\0';
        if (strncmp(reply, "note ", 5)) return true;
        fprintf(stderr, "tp-bench: %s\n", reply + 5);
    }
}

bool helper_start(helper_process *h, const char *python, const char *script, int threads) {
    memset(h, 0, sizeof *h);
    h->pid = -1;
    if (access(script, R_OK) != 0) {
        snprintf(h->why, sizeof h->why, "%s is missing (set TP_BENCH_PEERS_SCRIPT)", script);
        return false;
    }
    int down[2], up[2];
    if (pipe(down) != 0) return false;
    if (pipe(up) != 0) {
        close(down[0]), close(down[1]);
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(h->why, sizeof h->why, "fork failed");
        return false;
    }
    if (pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[0]), close(down[1]), close(up[0]), close(up[1]);
        char count[16];
        snprintf(count, sizeof count, "%d", threads);
        setenv("OMP_NUM_THREADS", count, 1);
        setenv("OPENBLAS_NUM_THREADS", count, 1);
        setenv("MKL_NUM_THREADS", count, 1);
        execl(python, python, script, "--serve", (char *)NULL);
        fprintf(stderr, "tp-bench: cannot run %s\n", python);
        _exit(127);
    }
    close(down[0]), close(up[1]);
    h->pid = pid;
    h->to = fdopen(down[1], "w");
    h->from = fdopen(up[0], "r");
    char greeting[256];
    if (!h->to || !h->from || !read_reply(h, greeting, sizeof greeting) ||
        strncmp(greeting, "hello", 5)) {
        snprintf(h->why, sizeof h->why, "%s %s --serve did not start (is it Python 3 with NumPy?)",
                 python, script);
        helper_stop(h);
        return false;
    }
    return true;
}

bool helper_ask(helper_process *h, char *reply, size_t size, const char *format, ...) {
    if (h->pid < 0) return false;
    va_list args;
    va_start(args, format);
    vfprintf(h->to, format, args);
    va_end(args);
    fputc('\n', h->to);
    fflush(h->to);
    if (read_reply(h, reply, size)) return true;
    snprintf(h->why, sizeof h->why, "the helper exited");
    return false;
}

void helper_stop(helper_process *h) {
    if (h->to) {
        fputs("quit\n", h->to);
        fclose(h->to);
    }
    if (h->from) fclose(h->from);
    if (h->pid > 0) waitpid(h->pid, NULL, 0);
    h->to = h->from = NULL;
    h->pid = -1;
}
