"""PyTorch side of the cuda benchmark (tests/gpu/run-cuda.sh): the same
measurements as `cuda_gpu bench`, with CUDA events around kernels only.
Prints "name value unit" lines; prints nothing (exit 0) when torch or a GPU
is missing, so the run goes on without the comparison."""
import sys

try:
    import torch
except Exception as error:  # no torch: no comparison
    print(f"# torch not importable: {error}", file=sys.stderr)
    sys.exit(0)
if not torch.cuda.is_available():
    print("# torch has no CUDA device", file=sys.stderr)
    sys.exit(0)


def timed(fn, iterations):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iterations):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iterations


a = torch.rand(268435456, device="cuda")
b = torch.rand(268435456, device="cuda")
c = torch.empty_like(a)
print(f"torch_add_256M_f32 {timed(lambda: torch.add(a, b, out=c), 20):.3f} ms")
del a, b, c
x = torch.rand(4096, 4096, device="cuda")
y = torch.rand(4096, 4096, device="cuda")
ms = timed(lambda: torch.matmul(x, y), 10)
print(f"torch_sgemm_4096 {ms:.3f} ms")
print(f"torch_sgemm_4096_tflops {2 * 4096 ** 3 / (ms * 1e9):.2f} TFLOP/s")
print(f"torch_allow_tf32 {int(torch.backends.cuda.matmul.allow_tf32)} flag")
del x, y
x = torch.rand(67108864, device="cuda")
bias = torch.rand(67108864, device="cuda")
print(f"torch_eager_chain_64M_f32 {timed(lambda: torch.tanh(x * 1.5 + bias) * torch.sigmoid(x), 20):.3f} ms")
