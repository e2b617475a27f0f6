#!/usr/bin/env python3
"""Peer for gpu-histogram: CuPy's bincount(keys, minlength=bins) on the same GPU in the same run,
over 2^26 keys and 2^8..2^24 bins, uniform and power-law (bins * u^3) keys, as
`cargo bench -p gpu-histogram`. GB/s counts the keys read (4 bytes each).
Usage: python3 benches/peers/histogram_cupy.py"""
import cupy as cp

from cupy_timing import median_ms

src = cp.empty(1 << 28, dtype=cp.int32)
dst = cp.empty_like(src)
ms = median_ms(lambda: dst.__setitem__(slice(None), src))
copy = 2 * src.size * 4 / (ms * 1e-3) / 1e9
print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; device-to-device copy: {copy:.0f} GB/s (read + write)")
del src, dst
n = 1 << 26
rs = cp.random.RandomState(11)
print(f"{'keys':>10} {'bins':>6} {'cupy ms':>9} {'GB/s':>7}")
for kind in ["uniform", "power-law"]:
    for log_bins in [8, 12, 16, 20, 24]:
        bins = 1 << log_bins
        if kind == "uniform":
            keys = rs.randint(0, bins, size=n, dtype=cp.int64).astype(cp.int32)
        else:
            keys = cp.minimum((rs.random_sample(n) ** 3 * bins).astype(cp.int32), bins - 1)
        ms = median_ms(lambda: cp.bincount(keys, minlength=bins))
        print(f"{kind:>10} 2^{log_bins:<4} {ms:9.4f} {4 * n / (ms * 1e-3) / 1e9:7.0f}")
