"""Run by python/run-tests.sh from outside the checkout, with no
TENSORPLAY_LIBRARY, in a venv where `cmake --install` put the C library and
pip put the package: `import tensorplay` must find that installed library
and compile and run a small model on stax with NumPy inputs (NumPy is the
oracle). Not collected by pytest (no test_ prefix).

    python installed_smoke.py PREFIX [--require-stax] [--require-speedups]

--require-stax (the build has stax-llvm.so): stax must be usable from the
installed prefix; without it a build with no stax only checks the import.
--require-speedups (the build made the C extension): the package must load
it from next to the installed library.
"""
import os
import sys

import numpy as np

import tensorplay as tp


def main() -> None:
    prefix = os.path.realpath(sys.argv[1])
    library = os.path.realpath(tp.library_path)
    assert library.startswith(prefix + os.sep), (
        f"tensorplay loaded {library}, not the library installed under {prefix}")
    speedups = tp.speedups_status()
    if "--require-speedups" in sys.argv:
        assert speedups.active and speedups.path.startswith(prefix + os.sep), (
            f"the installed tensorplay._speedups was not used: {speedups}")
    stax = tp.backend_info("stax")
    if not stax.usable:
        assert "--require-stax" not in sys.argv, (
            f"the installed stax backend is not usable: {stax.reason}")
        print(f"installed_smoke: stax is not usable here ({stax.reason}); nothing to run")
        return
    mlp = tp.compile(lambda x, w, b: tp.ops.relu(tp.ops.matmul(x, w) + b), backend="stax")
    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    for _ in range(3):  # a compile, then cache hits
        x = rng.standard_normal((4, 8)).astype(np.float32)
        np.testing.assert_allclose(mlp(x, w, b).numpy(), np.maximum(x @ w + b, 0),
                                   rtol=1e-5, atol=1e-6)
    assert mlp.num_compiles == 1
    print(f"installed_smoke: {library} ran a model on stax ({mlp.last_partition}; "
          f"speedups: {speedups.reason})")


if __name__ == "__main__":
    main()
