#!/usr/bin/env python3
"""numpy float32 matmul GFLOPS, for devctl's accuracy comparison.

Usage: numpy_matmul.py [N] [REPEATS]  (threads: OPENBLAS_NUM_THREADS / OMP_NUM_THREADS)
Prints "matmul_fp32 GFLOPS" (best of REPEATS, 2*N^3 FLOPs per product) and
the BLAS library and kernel numpy uses (threadpoolctl, when installed).
"""
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
c = a @ b  # warm-up: threads started, pages touched
best = float("inf")
for _ in range(repeats):
    t = time.perf_counter()
    np.matmul(a, b, out=c)
    best = min(best, time.perf_counter() - t)
# spot-check one element against a float64 dot product
ref = float(np.dot(a[7].astype(np.float64), b[:, 11].astype(np.float64)))
if abs(c[7, 11] - ref) > 1e-3 * max(1.0, abs(ref)) * np.sqrt(n):
    print(f"matmul result wrong: {c[7, 11]} vs {ref}", file=sys.stderr)
    sys.exit(1)
print(f"matmul_fp32 {2 * n**3 / best / 1e9:.1f}")
try:
    from threadpoolctl import threadpool_info

    for p in threadpool_info():
        print(f"blas {p.get('internal_api')} {p.get('version')} "
              f"kernel={p.get('architecture')} threads={p.get('num_threads')}")
except ImportError:
    print("blas unknown (threadpoolctl not installed)")
