/* The core's one thread pool (DESIGN section 10). Internal: plugins reach it
 * only through the host table's parallel_for.
 *
 * Fixed size: TP_NUM_THREADS, else the number of online cores; the workers
 * start on the first parallel call. Idle workers sleep on a condition
 * variable; right after a job a worker polls for the next one for at most
 * TP_SPIN_US microseconds (default 50, 0 turns it off) before sleeping, so
 * back-to-back small jobs skip a ~20 us wake-up (see spin_until). The calling thread takes part in
 * the work. One parallel_for runs at a time: a call made while another is running (from a worker,
 * nested, or from a second thread) runs serially on its caller, so the pool can never deadlock on
 * itself. */
#ifndef TP_CORE_RUNTIME_THREAD_POOL_H
#define TP_CORE_RUNTIME_THREAD_POOL_H

#include <stdint.h>

/* Processes indices [begin, end). */
typedef void (*tp_range_fn)(void *context, int64_t begin, int64_t end);

/* Runs fn over [0, n) in chunks of at least `grain` (< 1 counts as 1)
 * indices; returns when all are done. */
void tp_parallel_for(int64_t n, int64_t grain, tp_range_fn fn, void *context);
/* Threads parallel_for uses, the caller included (>= 1). */
int tp_thread_pool_size(void);

#endif
