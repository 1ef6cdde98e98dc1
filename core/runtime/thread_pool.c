/* The core's thread pool: fixed-size workers started lazily, sleeping on a
 * condition variable between jobs; the caller works too. See
 * thread_pool.h for the rules. */
#define _GNU_SOURCE
#include "thread_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
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
static _Thread_local bool inside_pool_work;

static int configured_size(void) {
    const char *text = secure_getenv("TP_NUM_THREADS");
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
    }
    return NULL;
}

static void start_pool(void) {
    pool_size = configured_size();
    int started = 1;
    for (int i = 1; i < pool_size; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, worker_main, NULL) != 0) break;
        pthread_detach(thread);
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

static void run_serially(int64_t n, tp_range_fn fn, void *context) {
    if (n > 0) fn(context, 0, n);
}

void tp_parallel_for(int64_t n, int64_t grain, tp_range_fn fn, void *context) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (n <= grain || inside_pool_work || tp_thread_pool_size() == 1)
        return run_serially(n, fn, context);
    bool expected = false;
    if (!atomic_compare_exchange_strong(&pool_busy, &expected, true))
        return run_serially(n, fn, context);

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
    pthread_cond_broadcast(&work_ready);
    pthread_mutex_unlock(&pool_lock);

    inside_pool_work = true;
    int64_t done = work_on(&job);
    inside_pool_work = false;

    pthread_mutex_lock(&pool_lock);
    atomic_fetch_add(&job.chunks_done, done);
    current_job = NULL; /* late workers see no job */
    while (atomic_load(&job.chunks_done) < job.num_chunks || workers_inside > 0)
        pthread_cond_wait(&work_finished, &pool_lock);
    pthread_mutex_unlock(&pool_lock);
    atomic_store(&pool_busy, false);
}
