#!/usr/bin/env python3
"""Peer for gpu-scan: CUB's DeviceScan through torch.cumsum(x, 0, dtype=torch.int32), on the same GPU
in the same run. Prints GB/s (bytes read + written: 8 per u32 item) and the fraction of the measured
device-to-device copy bandwidth. Usage: python3 benches/peers/scan_cub.py [max_log2]"""
import sys
import torch

from torch_timing import median_ms


max_log2 = int(sys.argv[1]) if len(sys.argv) > 1 else 28
src = torch.empty(1 << 28, dtype=torch.int32, device="cuda")
dst = torch.empty_like(src)
ms = median_ms(lambda: dst.copy_(src))
copy = 2 * src.numel() * 4 / (ms * 1e-3) / 1e9
print(f"device: {torch.cuda.get_device_name()}; device-to-device copy: {copy:.0f} GB/s (read + write)")
print(f"{'n':>6} {'cub ms':>9} {'cub GB/s':>9} {'of copy':>8}")
for log2 in range(16, max_log2 + 1, 2):
    x = torch.randint(0, 1 << 16, (1 << log2,), dtype=torch.int32, device="cuda")
    ms = median_ms(lambda: torch.cumsum(x, 0, dtype=torch.int32))
    gbs = 8 * x.numel() / (ms * 1e-3) / 1e9
    print(f"2^{log2:<4} {ms:9.4f} {gbs:9.0f} {gbs / copy:8.0%}")
