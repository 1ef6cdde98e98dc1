/* tpc: when a backend crashes (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT),
 * say which backend, in which phase (load, compile, run) and on which graph,
 * then die with the same signal so the exit status stays what it was. The
 * handler only reads buffers filled before the phase began and calls write,
 * sigaction and raise (all async-signal-safe); it runs on its own stack so
 * a stack overflow is reported too. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tpc.h"

static const int reported_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define REPORTED_COUNT ((int)(sizeof reported_signals / sizeof reported_signals[0]))

static char crash_backend[128], crash_phase[32], crash_graph[256];
static volatile sig_atomic_t phase_is_set;
static char alternate_stack[65536];

static void write_text(const char *text) {
    size_t length = strlen(text); /* strlen is async-signal-safe since POSIX 2016 */
    while (length > 0) {
        ssize_t written = write(STDERR_FILENO, text, length);
        if (written <= 0) return;
        text += written;
        length -= (size_t)written;
    }
}

static const char *signal_text(int number) {
    switch (number) {
    case SIGSEGV:
        return "SIGSEGV (segmentation fault)";
    case SIGBUS:
        return "SIGBUS (bus error)";
    case SIGILL:
        return "SIGILL (illegal instruction)";
    case SIGFPE:
        return "SIGFPE (arithmetic exception)";
    case SIGABRT:
        return "SIGABRT (aborted)";
    default:
        return "a signal";
    }
}

static void report_and_die(int number) {
    if (phase_is_set) {
        write_text("tpc: backend '");
        write_text(crash_backend);
        write_text("' crashed with ");
        write_text(signal_text(number));
        write_text(" during ");
        write_text(crash_phase);
        write_text(" of graph '");
        write_text(crash_graph);
        write_text("'\n");
    }
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(number, &fallback, NULL);
    raise(number);
}

void tpc_crash_report_install(void) {
    stack_t stack = {.ss_sp = alternate_stack, .ss_size = sizeof alternate_stack};
    sigaltstack(&stack, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report_and_die;
    action.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < REPORTED_COUNT; i++) sigaction(reported_signals[i], &action, NULL);
}

void tpc_crash_report_phase(const char *backend, const char *phase, const char *graph) {
    phase_is_set = 0;
    snprintf(crash_backend, sizeof crash_backend, "%s", backend ? backend : "?");
    snprintf(crash_phase, sizeof crash_phase, "%s", phase ? phase : "?");
    snprintf(crash_graph, sizeof crash_graph, "%s", graph ? graph : "?");
    phase_is_set = 1;
}

void tpc_crash_report_clear(void) {
    phase_is_set = 0;
}
