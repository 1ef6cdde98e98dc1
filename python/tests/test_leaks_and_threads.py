"""No reference leaks over 10,000 calls (tracemalloc and RSS), and calls from
several Python threads at once (ctypes releases the GIL around tp_call)."""
import gc
import threading
import tracemalloc

import numpy as np

import tensorplay as tp

ops = tp.ops
CALLS = 10_000


def _rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _mlp(x, w):
    return ops.relu(ops.matmul(x, w)) + 1.0


def test_no_leak_over_ten_thousand_cached_calls(backend):
    compiled = tp.compile(_mlp, backend=backend)
    x = np.ones((4, 8), np.float32)
    w = np.ones((8, 8), np.float32)
    for _ in range(200):  # warm up: compile, caches, allocator pools
        compiled(x, w).numpy()
    gc.collect()
    tracemalloc.start()
    rss_before = _rss_kib()
    python_before = tracemalloc.get_traced_memory()[0]
    for i in range(CALLS):
        out = compiled(np.full((4, 8), i % 3, np.float32), w)
        out.numpy()
    del out
    gc.collect()
    python_after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    rss_after = _rss_kib()
    assert python_after - python_before < 64 * 1024, (
        f"Python memory grew by {python_after - python_before} bytes over {CALLS} calls")
    # One leaked input (128 bytes + a tp_tensor) per call would be > 2.5 MiB.
    assert rss_after - rss_before < 2048, f"RSS grew by {rss_after - rss_before} KiB"
    assert not tp._tensor._held or len(tp._tensor._held) <= 2  # only the memoised last call


def test_every_shared_array_is_released(backend):
    compiled = tp.compile(_mlp, backend=backend)
    w = np.ones((8, 8), np.float32)
    for _ in range(1000):
        compiled(np.ones((4, 8), np.float32), w)
    tp.reset()  # drops the memo of the last call
    gc.collect()
    assert len(tp._tensor._held) == 0


def test_calls_from_several_threads_give_right_answers(backend):
    compiled = tp.compile(_mlp, backend=backend)
    w = np.eye(8, dtype=np.float32)
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(300):
                rows = int(rng.integers(1, 4))  # a few shapes: captures race with hits
                x = rng.standard_normal((rows, 8)).astype(np.float32)
                got = compiled(x, w).numpy()
                np.testing.assert_allclose(got, np.maximum(x, 0) + 1, rtol=1e-6)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert compiled.num_entries == 3


def test_eager_ops_from_several_threads():
    errors = []

    def worker(seed):
        try:
            a = np.full(16, seed, np.float64)
            for _ in range(500):
                assert float(ops.sum(ops.mul(a, 2.0))) == 32.0 * seed
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
