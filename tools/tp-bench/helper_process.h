/* The Python helper tp-bench talks to (bench/peers.py, run as a child
 * process with pipes on its stdin and stdout): it checks each case's output
 * against its oracle (NumPy, or ONNX Runtime for the model cases) and times
 * the peers (NumPy, ONNX Runtime, PyTorch) on the same inputs, one round at
 * a time, so tp-bench can interleave them with its own measurements. One
 * command line out, one reply line back (see bench/peers.py for the
 * protocol). */
#ifndef TP_BENCH_HELPER_PROCESS_H
#define TP_BENCH_HELPER_PROCESS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct helper_process {
    pid_t pid;
    FILE *to, *from;
    char why[512]; /* why it is not running, when it is not */
} helper_process;

/* Starts `python script --serve` with OMP/OpenBLAS/MKL thread counts set to
 * `threads`; false (and h->why) when it cannot be started or does not
 * answer its greeting. */
bool helper_start(helper_process *h, const char *python, const char *script, int threads);

/* Sends one command line (printf-style) and reads one reply line into
 * `reply` (without the newline), skipping and printing to stderr any
 * "note ..." lines before it. False when the helper has gone. */
bool helper_ask(helper_process *h, char *reply, size_t size, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

void helper_stop(helper_process *h);

#endif
