"""Shared timing for the PyTorch peers: median of CUDA-event-timed calls, after warm-up."""
import torch

def median_ms(fn, reps=50, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]
