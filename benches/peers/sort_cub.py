#!/usr/bin/env python3
"""Peer for gpu-segsort's sort_pairs: CUB's radix sort through torch.sort(keys, stable=True) plus
gathering the payload by the returned indices, for 2^20..2^26 pairs with 24- and 32-bit keys
(int64 holds 32-bit unsigned keys; 24-bit keys fit int32). Prints ms and G pairs/s.
Usage: python3 benches/peers/sort_cub.py"""
import torch

from torch_timing import median_ms


print(f"device: {torch.cuda.get_device_name()}")
print(f"{'bits':>5} {'n':>6} {'cub ms':>9} {'Gpairs/s':>9}")
g = torch.Generator(device="cuda").manual_seed(9)
for bits in [24, 32]:
    for log_n in [20, 22, 24, 26]:
        n = 1 << log_n
        dtype = torch.int32 if bits == 24 else torch.int64
        keys = torch.randint(0, 1 << bits, (n,), dtype=dtype, device="cuda", generator=g)
        vals = torch.arange(n, dtype=torch.int32, device="cuda")
        def run():
            sk, idx = torch.sort(keys, stable=True)
            return sk, vals[idx]
        ms = median_ms(run, reps=30, warmup=3)
        print(f"{bits:>5} 2^{log_n:<4} {ms:9.3f} {n / (ms * 1e-3) / 1e9:9.2f}")
