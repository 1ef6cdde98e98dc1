/* The cache of freed large aligned blocks behind tp_aligned_alloc. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/large_blocks.h"
#include "tensorplay/tensor.h"
#include "tp_test.h"

#define MIB ((size_t)1 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

/* Every test starts from an empty cache that holds up to `limit` bytes. */
static void empty_cache(size_t limit) {
    tp_large_block_set_limit(0);
    tp_large_block_set_limit(limit);
    ck_assert_uint_eq(tp_large_block_cached_count(), 0);
}

START_TEST(freed_block_serves_the_next_allocation_of_its_size) {
    empty_cache(64 * MIB);
    unsigned char *first = tp_aligned_alloc(3 * MIB);
    ck_assert_ptr_nonnull(first);
    ck_assert_uint_eq((uintptr_t)first % (2 * MIB), 0);
    memset(first, 0xab, 3 * MIB);
    tp_aligned_free(first);
    /* 3 MiB is kept as the 4 MiB (two huge pages) it was allocated as. */
    ck_assert_uint_eq(tp_large_block_cached_count(), 1);
    ck_assert_uint_eq(tp_large_block_cached_bytes(), 4 * MIB);

    unsigned char *second = tp_aligned_alloc(3 * MIB + 512 * 1024);
    ck_assert_ptr_eq(second, first);
    ck_assert_uint_eq(tp_large_block_cached_count(), 0);
    second[3 * MIB + 512 * 1024 - 1] = 1; /* the whole request is usable */
    tp_aligned_free(second);
    ck_assert_uint_eq(tp_large_block_cached_count(), 1);
}
END_TEST

START_TEST(block_much_larger_than_the_request_stays_cached) {
    empty_cache(64 * MIB);
    void *eight = tp_aligned_alloc(8 * MIB);
    tp_aligned_free(eight);
    /* 2 MiB would waste three quarters of it; 4 MiB and 6 MiB too, past a quarter. */
    void *two = tp_aligned_alloc(2 * MIB);
    void *six = tp_aligned_alloc(6 * MIB);
    ck_assert_ptr_ne(two, eight);
    ck_assert_ptr_ne(six, eight);
    ck_assert_uint_eq(tp_large_block_cached_count(), 1);
    /* A larger request never gets a smaller block. */
    void *ten = tp_aligned_alloc(10 * MIB);
    ck_assert_ptr_ne(ten, eight);
    ck_assert_uint_eq(tp_large_block_cached_count(), 1);
    tp_aligned_free(two);
    tp_aligned_free(six);
    tp_aligned_free(ten);
    void *seven = tp_aligned_alloc(7 * MIB); /* 8 MiB, exactly the cached block */
    ck_assert_ptr_eq(seven, eight);
    tp_aligned_free(seven);
}
END_TEST

START_TEST(calloc_clears_a_reused_block) {
    empty_cache(64 * MIB);
    unsigned char *dirty = tp_aligned_alloc(4 * MIB);
    memset(dirty, 0x5a, 4 * MIB);
    tp_aligned_free(dirty);
    unsigned char *clean = tp_aligned_calloc(4 * MIB);
    ck_assert_ptr_eq(clean, dirty);
    for (size_t i = 0; i < 4 * MIB; i += 4093) ck_assert_uint_eq(clean[i], 0);
    ck_assert_uint_eq(clean[4 * MIB - 1], 0);
    tp_aligned_free(clean);
}
END_TEST

START_TEST(limit_evicts_the_oldest_blocks) {
    empty_cache(10 * MIB);
    void *blocks[3];
    for (int i = 0; i < 3; i++) blocks[i] = tp_aligned_alloc(4 * MIB);
    for (int i = 0; i < 3; i++) tp_aligned_free(blocks[i]);
    /* 12 MiB freed, 10 MiB allowed: the first block went. */
    ck_assert_uint_eq(tp_large_block_cached_count(), 2);
    ck_assert_uint_eq(tp_large_block_cached_bytes(), 8 * MIB);
    void *again = tp_aligned_alloc(4 * MIB);
    ck_assert(again == blocks[1] || again == blocks[2]);
    tp_aligned_free(again);

    /* A lower limit evicts at once; a block over the limit is never kept. */
    tp_large_block_set_limit(4 * MIB);
    ck_assert_uint_eq(tp_large_block_cached_count(), 1);
    ck_assert_uint_eq(tp_large_block_cached_bytes(), 4 * MIB);
    void *big = tp_aligned_alloc(6 * MIB);
    tp_aligned_free(big);
    ck_assert_uint_eq(tp_large_block_cached_bytes(), 4 * MIB);
}
END_TEST

START_TEST(cache_keeps_at_most_its_slots) {
    empty_cache(256 * MIB);
    enum { COUNT = TP_LARGE_BLOCK_SLOTS + 4 };
    void *blocks[COUNT];
    for (int i = 0; i < COUNT; i++) blocks[i] = tp_aligned_alloc(2 * MIB);
    for (int i = 0; i < COUNT; i++) tp_aligned_free(blocks[i]);
    ck_assert_uint_eq(tp_large_block_cached_count(), TP_LARGE_BLOCK_SLOTS);
    ck_assert_uint_eq(tp_large_block_cached_bytes(), TP_LARGE_BLOCK_SLOTS * 2 * MIB);
}
END_TEST

START_TEST(zero_limit_keeps_nothing) {
    empty_cache(64 * MIB);
    tp_aligned_free(tp_aligned_alloc(4 * MIB));
    ck_assert_uint_eq(tp_large_block_cached_count(), 1);
    tp_large_block_set_limit(0);
    ck_assert_uint_eq(tp_large_block_cached_count(), 0);
    ck_assert_uint_eq(tp_large_block_cached_bytes(), 0);
    tp_aligned_free(tp_aligned_alloc(4 * MIB));
    ck_assert_uint_eq(tp_large_block_cached_count(), 0);
}
END_TEST

START_TEST(small_blocks_are_not_cached) {
    empty_cache(64 * MIB);
    void *small = tp_aligned_alloc(2 * MIB - 64);
    ck_assert_uint_eq((uintptr_t)small % TP_TENSOR_ALIGNMENT, 0);
    tp_aligned_free(small);
    tp_aligned_free(NULL);
    ck_assert_uint_eq(tp_large_block_cached_count(), 0);
}
END_TEST

START_TEST(tensor_storage_is_reused) {
    empty_cache(64 * MIB);
    int64_t shape[2] = {600, 1024}; /* 2.4 MB of f32, the size that was slow */
    tp_tensor *first = NULL, *second = NULL;
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, shape, &first), TP_OK);
    float *storage = tp_tensor_data_mut(first);
    for (int64_t i = 0; i < shape[0] * shape[1]; i++) storage[i] = 1.5f;
    tp_tensor_release(first);
    ck_assert_int_eq(tp_tensor_create(TP_F32, 2, shape, &second), TP_OK);
    ck_assert_ptr_eq(tp_tensor_data(second), storage);
    /* tp_tensor_create zero-fills its storage: a reused block must be too. */
    const float *values = tp_tensor_data(second);
    for (int64_t i = 0; i < shape[0] * shape[1]; i += 997) ck_assert_float_eq(values[i], 0.0f);
    tp_tensor_release(second);
}
END_TEST

enum { WORKERS = 4, ROUNDS = 150 };

static void *churn(void *argument) {
    uintptr_t id = (uintptr_t)argument;
    static const size_t sizes[] = {2 * MIB, 3 * MIB, 4 * MIB, 6 * MIB};
    for (int round = 0; round < ROUNDS; round++) {
        size_t size = sizes[(round + id) % 4];
        unsigned char *block = tp_aligned_alloc(size);
        if (!block) return (void *)1;
        /* Another thread holding the same block would overwrite the marks. */
        block[0] = (unsigned char)(id + 1);
        block[size / 2] = (unsigned char)round;
        block[size - 1] = (unsigned char)(id + 1);
        for (volatile int spin = 0; spin < 1000; spin++) {
        }
        int intact = block[0] == (unsigned char)(id + 1) &&
                     block[size / 2] == (unsigned char)round &&
                     block[size - 1] == (unsigned char)(id + 1);
        tp_aligned_free(block);
        if (!intact) return (void *)1;
    }
    return NULL;
}

START_TEST(threads_never_share_a_block) {
    empty_cache(24 * MIB);
    pthread_t threads[WORKERS];
    for (uintptr_t i = 0; i < WORKERS; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, churn, (void *)i), 0);
    for (int i = 0; i < WORKERS; i++) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        ck_assert_ptr_null(result);
    }
    ck_assert_uint_le(tp_large_block_cached_bytes(), 24 * MIB);
}
END_TEST

START_TEST(environment_sets_the_limit) {
    setenv("TP_ALLOC_CACHE_MIB", "8", 1);
    ck_assert_uint_eq(tp_large_block_limit_from_environment(), 8 * MIB);
    setenv("TP_ALLOC_CACHE_MIB", "0", 1);
    ck_assert_uint_eq(tp_large_block_limit_from_environment(), 0);
    const char *bad[] = {"lots", "-1", "12MiB", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("TP_ALLOC_CACHE_MIB", bad[i], 1);
        ck_assert_uint_eq(tp_large_block_limit_from_environment(), 256 * MIB);
    }
    unsetenv("TP_ALLOC_CACHE_MIB");
    ck_assert_uint_eq(tp_large_block_limit_from_environment(), 256 * MIB);
}
END_TEST

#ifdef TEST_ASAN
int __asan_address_is_poisoned(void const volatile *address);

START_TEST(cached_block_is_poisoned_for_asan) {
    empty_cache(64 * MIB);
    unsigned char *block = tp_aligned_alloc(4 * MIB);
    tp_aligned_free(block);
    ck_assert_int_eq(__asan_address_is_poisoned(block), 1);
    ck_assert_int_eq(__asan_address_is_poisoned(block + 4 * MIB - 1), 1);
    unsigned char *again = tp_aligned_alloc(4 * MIB);
    ck_assert_ptr_eq(again, block);
    ck_assert_int_eq(__asan_address_is_poisoned(again), 0);
    ck_assert_int_eq(__asan_address_is_poisoned(again + 4 * MIB - 1), 0);
    tp_aligned_free(again);
}
END_TEST
#endif

TP_TEST_SUITE(large_blocks) {
    Suite *suite = suite_create("base.large_blocks");
    TCase *tc = tcase_create("large_blocks");
    tcase_add_test(tc, freed_block_serves_the_next_allocation_of_its_size);
    tcase_add_test(tc, block_much_larger_than_the_request_stays_cached);
    tcase_add_test(tc, calloc_clears_a_reused_block);
    tcase_add_test(tc, limit_evicts_the_oldest_blocks);
    tcase_add_test(tc, cache_keeps_at_most_its_slots);
    tcase_add_test(tc, zero_limit_keeps_nothing);
    tcase_add_test(tc, small_blocks_are_not_cached);
    tcase_add_test(tc, tensor_storage_is_reused);
    tcase_add_test(tc, threads_never_share_a_block);
    tcase_add_test(tc, environment_sets_the_limit);
#ifdef TEST_ASAN
    tcase_add_test(tc, cached_block_is_poisoned_for_asan);
#endif
    suite_add_tcase(suite, tc);
    return suite;
}
