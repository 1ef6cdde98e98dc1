/* The core's thread pool: every index exactly once, chunks respect the
 * grain, nested calls run serially, the workers stay off the caller's CPU,
 * and the host table exposes it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "registry_test.h"
#include "runtime/thread_pool.h"

typedef struct coverage {
    atomic_int *hits;
    atomic_int calls;
    int64_t smallest_chunk;
    pthread_mutex_t lock;
} coverage;

static void count_range(void *context, int64_t begin, int64_t end) {
    coverage *state = context;
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&state->hits[i], 1);
    atomic_fetch_add(&state->calls, 1);
    pthread_mutex_lock(&state->lock);
    if (end - begin < state->smallest_chunk) state->smallest_chunk = end - begin;
    pthread_mutex_unlock(&state->lock);
}

START_TEST(every_index_is_visited_exactly_once) {
    setenv("TP_NUM_THREADS", "4", 1);
    enum { N = 100003 };
    coverage state = {.hits = calloc(N, sizeof(atomic_int)), .smallest_chunk = N};
    pthread_mutex_init(&state.lock, NULL);
    tp_parallel_for(N, 1000, count_range, &state);
    for (int i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&state.hits[i]), 1);
    ck_assert_int_gt(atomic_load(&state.calls), 1);
    free(state.hits);
}
END_TEST

START_TEST(chunks_are_at_least_the_grain_except_the_last) {
    setenv("TP_NUM_THREADS", "4", 1);
    enum { N = 10000 };
    coverage state = {.hits = calloc(N, sizeof(atomic_int)), .smallest_chunk = N};
    pthread_mutex_init(&state.lock, NULL);
    tp_parallel_for(N, 2500, count_range, &state); /* 10000 = 4 x 2500: no short tail */
    ck_assert_int_ge(state.smallest_chunk, 2500);
    free(state.hits);
}
END_TEST

START_TEST(pool_size_follows_tp_num_threads) {
    setenv("TP_NUM_THREADS", "3", 1);
    ck_assert_int_eq(tp_thread_pool_size(), 3);
}
END_TEST

static void nested_range(void *context, int64_t begin, int64_t end) {
    coverage *state = context;
    (void)begin, (void)end;
    tp_parallel_for(10, 1, count_range, state); /* runs serially on this thread */
}

START_TEST(nested_calls_run_serially_without_deadlock) {
    setenv("TP_NUM_THREADS", "4", 1);
    coverage state = {.hits = calloc(10, sizeof(atomic_int)), .smallest_chunk = 10};
    pthread_mutex_init(&state.lock, NULL);
    tp_parallel_for(8, 1, nested_range, &state);
    for (int i = 0; i < 10; i++) ck_assert_int_eq(atomic_load(&state.hits[i]), 8);
    free(state.hits);
}
END_TEST

START_TEST(host_table_offers_the_pool_and_aligned_memory) {
    setenv("TP_NUM_THREADS", "2", 1);
    tp_plugin_host host;
    tp_host_table_init(&host, NULL);
    ck_assert_uint_eq(host.struct_size, sizeof(tp_plugin_host));
    ck_assert_uint_ge(host.struct_size, TP_PLUGIN_HOST_SIZE_V1);
    ck_assert_uint_eq(host.contract_version, TP_BACKEND_CONTRACT_VERSION);
    ck_assert_str_eq(host.core_version, tp_version());
    ck_assert_int_eq(host.num_threads(), 2);
    enum { N = 1000 };
    coverage state = {.hits = calloc(N, sizeof(atomic_int)), .smallest_chunk = N};
    pthread_mutex_init(&state.lock, NULL);
    host.parallel_for(N, 10, count_range, &state);
    for (int i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&state.hits[i]), 1);
    free(state.hits);
    void *memory = host.aligned_alloc(100);
    ck_assert_uint_eq((uintptr_t)memory % 64, 0);
    host.aligned_free(memory);
    host.set_error(&host, "remembered");
    ck_assert_str_eq(tp_host_take_error(), "remembered");
}
END_TEST

/* Many small jobs in a row: workers still polling from the last job pick up
 * the next one (TP_SPIN_US) and every index is still visited once. */
START_TEST(back_to_back_small_jobs_visit_every_index_once) {
    setenv("TP_NUM_THREADS", "2", 1);
    setenv("TP_SPIN_US", "50", 1);
    enum { N = 64, CALLS = 2000 };
    coverage state = {.hits = calloc(N, sizeof(atomic_int)), .smallest_chunk = N};
    pthread_mutex_init(&state.lock, NULL);
    for (int call = 0; call < CALLS; call++) tp_parallel_for(N, 1, count_range, &state);
    for (int i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&state.hits[i]), CALLS);
    free(state.hits);
}
END_TEST

static void slow_range(void *context, int64_t begin, int64_t end) {
    struct timespec pause = {0, 2000000}; /* 2 ms, far past the 1 us poll */
    nanosleep(&pause, NULL);
    count_range(context, begin, end);
}

/* Chunks slower than the poll window: the caller stops polling and sleeps
 * until the workers finish, and the job is still complete. */
START_TEST(jobs_longer_than_the_poll_window_complete) {
    setenv("TP_NUM_THREADS", "3", 1);
    setenv("TP_SPIN_US", "1", 1);
    enum { N = 12 };
    coverage state = {.hits = calloc(N, sizeof(atomic_int)), .smallest_chunk = N};
    pthread_mutex_init(&state.lock, NULL);
    for (int call = 0; call < 3; call++) tp_parallel_for(N, 1, slow_range, &state);
    for (int i = 0; i < N; i++) ck_assert_int_eq(atomic_load(&state.hits[i]), 3);
    free(state.hits);
}
END_TEST

typedef struct placement {
    pthread_t caller;
    int caller_cpu;
    atomic_int worker_chunks, worker_chunks_allowed_on_callers_cpu;
} placement;

/* A chunk of about 2 ms of work (so that the worker takes some): on a
 * worker, whether its affinity still allows the caller's CPU. */
static void record_placement(void *context, int64_t begin, int64_t end) {
    (void)begin, (void)end;
    placement *p = context;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 2000000);
    if (pthread_equal(pthread_self(), p->caller)) return;
    atomic_fetch_add(&p->worker_chunks, 1);
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_ISSET(p->caller_cpu, &mine))
        atomic_fetch_add(&p->worker_chunks_allowed_on_callers_cpu, 1);
}

/* The caller held on one CPU: the workers are kept to the others (woken
 * after an idle spell, a worker the scheduler placed on the caller's CPU
 * shared it with the caller for the whole job). Needs two CPUs. */
START_TEST(workers_are_kept_off_the_callers_cpu) {
    cpu_set_t allowed;
    ck_assert_int_eq(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    if (CPU_COUNT(&allowed) < 2) {
        fprintf(stderr, "skipped: this process may use one CPU\n");
        return;
    }
    setenv("TP_NUM_THREADS", "2", 1);
    ck_assert_int_eq(tp_thread_pool_size(), 2); /* started before the caller is held */
    placement p = {.caller = pthread_self()};
    while (!CPU_ISSET(p.caller_cpu, &allowed)) p.caller_cpu++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(p.caller_cpu, &one);
    ck_assert_int_eq(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    for (int call = 0; call < 4; call++) {
        struct timespec idle = {0, 5000000}; /* the worker falls asleep */
        nanosleep(&idle, NULL);
        tp_parallel_for(8, 1, record_placement, &p);
    }
    ck_assert_msg(atomic_load(&p.worker_chunks) > 0, "the worker ran no chunk in 4 calls");
    ck_assert_msg(atomic_load(&p.worker_chunks_allowed_on_callers_cpu) == 0,
                  "%d of the worker's %d chunks ran where the caller's CPU %d was allowed",
                  atomic_load(&p.worker_chunks_allowed_on_callers_cpu),
                  atomic_load(&p.worker_chunks), p.caller_cpu);
}
END_TEST

TP_TEST_SUITE(registry_thread_pool) {
    Suite *suite = suite_create("registry.thread_pool");
    TCase *tc = tcase_create("thread_pool");
    tcase_add_test(tc, every_index_is_visited_exactly_once);
    tcase_add_test(tc, chunks_are_at_least_the_grain_except_the_last);
    tcase_add_test(tc, pool_size_follows_tp_num_threads);
    tcase_add_test(tc, nested_calls_run_serially_without_deadlock);
    tcase_add_test(tc, host_table_offers_the_pool_and_aligned_memory);
    tcase_add_test(tc, back_to_back_small_jobs_visit_every_index_once);
    tcase_add_test(tc, jobs_longer_than_the_poll_window_complete);
    tcase_add_test(tc, workers_are_kept_off_the_callers_cpu);
    suite_add_tcase(suite, tc);
    return suite;
}
