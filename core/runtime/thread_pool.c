/* The core's thread pool: fixed-size workers started lazily, sleeping on a
 * condition variable between jobs; the caller works too. See
 * thread_pool.h for the rules. */
#define _GNU_SOURCE
#include "base/env.h"
#include "thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

#define MAX_THREADS 256

typedef struct pool_job {
    tp_range_fn fn;
    void *context;
    int64_t n, chunk;
    int64_t num_chunks;
    atomic_llong next_chunk;
    atomic_llong chunks_done;
} pool_job;

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_size = 1;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t work_finished = PTHREAD_COND_INITIALIZER;
static pool_job *current_job;   /* guarded by pool_lock */
static uint64_t job_generation; /* guarded by pool_lock */
static int workers_inside;      /* workers touching current_job; guarded */
static atomic_bool pool_busy;
static atomic_ullong published_generation; /* job_generation, readable unlocked */
static int64_t spin_ns = 50000;            /* see spin_until */
static _Thread_local bool inside_pool_work;

/* Keeping the workers off the caller's CPU (see keep_workers_off): the
 * workers, the CPUs the process may use, and the CPU they were last kept
 * off (-1: none yet). Guarded by pool_busy (one caller at a time). */
static pthread_t workers[MAX_THREADS];
static int num_workers;
static cpu_set_t allowed_cpus;
static bool know_allowed_cpus;
static int workers_kept_off = -1;

static int configured_size(void) {
    const char *text = tp_env_get("TP_NUM_THREADS");
    if (text && *text) {
        char *end = NULL;
        long value = strtol(text, &end, 10);
        if (*end == '\0' && value >= 1 && value <= MAX_THREADS) return (int)value;
        tp_log_message(TP_LOG_WARN,
                       "TP_NUM_THREADS='%s' is not a number from 1 to %d; using the core count",
                       text, MAX_THREADS);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A short, bounded poll before a condition-variable sleep: a worker that
 * just finished a job polls for the next one, and the caller polls for the
 * workers' last chunks, for at most spin_ns (default 50 us, TP_SPIN_US).
 * Waking a sleeping thread costs ~20 us here, as much as a small matmul; a
 * model's calls come back to back, so the next job usually arrives within
 * the window. It is not a spinning pool (DESIGN section 10): the poll only
 * follows a job this pool just ran, and after spin_ns the thread sleeps, so
 * another pool or process sharing the cores loses at most spin_ns per job.
 * Returns whether done(arg) became true. */
static bool spin_until(bool (*done)(const void *), const void *arg) {
    if (spin_ns <= 0) return done(arg);
    int64_t deadline = now_ns() + spin_ns;
    for (int i = 0;; i++) {
        if (done(arg)) return true;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if ((i & 63) == 63 && now_ns() > deadline) return done(arg);
    }
}

static bool generation_moved(const void *seen) {
    return atomic_load_explicit(&published_generation, memory_order_acquire) !=
           *(const uint64_t *)seen;
}

/* Takes chunks until none is left; returns how many this thread did. */
static int64_t work_on(pool_job *job) {
    int64_t done = 0;
    for (;;) {
        int64_t index = atomic_fetch_add(&job->next_chunk, 1);
        if (index >= job->num_chunks) break;
        int64_t begin = index * job->chunk;
        int64_t end = begin + job->chunk < job->n ? begin + job->chunk : job->n;
        job->fn(job->context, begin, end);
        done++;
    }
    return done;
}

static void *worker_main(void *unused) {
    (void)unused;
    inside_pool_work = true;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        while (job_generation == seen || !current_job) {
            if (job_generation != seen) seen = job_generation; /* job already gone */
            pthread_cond_wait(&work_ready, &pool_lock);
        }
        seen = job_generation;
        pool_job *job = current_job;
        workers_inside++;
        pthread_mutex_unlock(&pool_lock);
        int64_t done = work_on(job);
        pthread_mutex_lock(&pool_lock);
        atomic_fetch_add(&job->chunks_done, done);
        workers_inside--;
        pthread_cond_broadcast(&work_finished);
        pthread_mutex_unlock(&pool_lock);
        spin_until(generation_moved, &seen); /* the lock decides below */
        pthread_mutex_lock(&pool_lock);
    }
    return NULL;
}

static void start_pool(void) {
    pool_size = configured_size();
    const char *spin = tp_env_get("TP_SPIN_US");
    if (spin && *spin) {
        char *end = NULL;
        long value = strtol(spin, &end, 10);
        if (*end == '\0' && value >= 0 && value <= 1000)
            spin_ns = (int64_t)value * 1000;
        else
            tp_log_message(TP_LOG_WARN, "TP_SPIN_US='%s' is not a number from 0 to 1000; using %d",
                           spin, (int)(spin_ns / 1000));
    }
    know_allowed_cpus = sched_getaffinity(0, sizeof allowed_cpus, &allowed_cpus) == 0;
    int started = 1;
    for (int i = 1; i < pool_size; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, worker_main, NULL) != 0) break;
        pthread_detach(thread);
        workers[num_workers++] = thread;
        started++;
    }
    if (started < pool_size)
        tp_log_message(TP_LOG_WARN, "thread pool: started %d of %d threads", started, pool_size);
    pool_size = started;
}

int tp_thread_pool_size(void) {
    pthread_once(&pool_once, start_pool);
    return pool_size;
}

static bool all_chunks_done(const void *job) {
    const pool_job *j = job;
    return atomic_load((atomic_llong *)&j->chunks_done) >= j->num_chunks;
}

static void run_serially(int64_t n, tp_range_fn fn, void *context) {
    if (n > 0) fn(context, 0, n);
}

/* Keeps the workers off the CPU the caller runs on. Woken after an idle
 * spell (between calls of a program that does other work), a worker was
 * often placed on the caller's own CPU, which had just woken it, and the
 * two then shared that CPU for the whole job while the other stayed idle:
 * on a 2-core virtual machine a 0.5 ms matmul called every 5 ms took
 * 1.05-1.17 ms a call (the speed of one thread) against 0.51 ms back to
 * back, and 0.66 ms with the threads on CPUs of their own. The workers may
 * run on every other CPU the process may use; their affinity changes only
 * when the caller is seen on another CPU (a system call per worker then). */
static void keep_workers_off(void) {
    if (!know_allowed_cpus || num_workers == 0) return;
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu == workers_kept_off || !CPU_ISSET(cpu, &allowed_cpus)) return;
    cpu_set_t others = allowed_cpus;
    CPU_CLR(cpu, &others);
    if (CPU_COUNT(&others) == 0) return;
    for (int i = 0; i < num_workers; i++)
        pthread_setaffinity_np(workers[i], sizeof others, &others);
    workers_kept_off = cpu;
}

void tp_parallel_for(int64_t n, int64_t grain, tp_range_fn fn, void *context) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (n <= grain || inside_pool_work || tp_thread_pool_size() == 1)
        return run_serially(n, fn, context);
    bool expected = false;
    if (!atomic_compare_exchange_strong(&pool_busy, &expected, true))
        return run_serially(n, fn, context);

    keep_workers_off();
    int64_t max_chunks = (int64_t)pool_size * 4;
    int64_t chunk = (n + max_chunks - 1) / max_chunks;
    if (chunk < grain) chunk = grain;
    pool_job job = {.fn = fn, .context = context, .n = n, .chunk = chunk};
    job.num_chunks = (n + chunk - 1) / chunk;
    atomic_init(&job.next_chunk, 0);
    atomic_init(&job.chunks_done, 0);

    pthread_mutex_lock(&pool_lock);
    current_job = &job;
    job_generation++;
    atomic_store_explicit(&published_generation, job_generation, memory_order_release);
    pthread_cond_broadcast(&work_ready);
    pthread_mutex_unlock(&pool_lock);

    inside_pool_work = true;
    int64_t done = work_on(&job);
    inside_pool_work = false;

    pthread_mutex_lock(&pool_lock);
    atomic_fetch_add(&job.chunks_done, done);
    current_job = NULL; /* late workers see no job */
    if (atomic_load(&job.chunks_done) < job.num_chunks) {
        pthread_mutex_unlock(&pool_lock);
        spin_until(all_chunks_done, &job);
        pthread_mutex_lock(&pool_lock);
    }
    while (atomic_load(&job.chunks_done) < job.num_chunks || workers_inside > 0)
        pthread_cond_wait(&work_finished, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    atomic_store(&pool_busy, false);
}
