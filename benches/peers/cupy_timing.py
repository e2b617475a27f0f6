"""Shared timing for the CuPy peers: median of CUDA-event-timed calls, after warm-up."""
import cupy as cp


def median_ms(fn, reps=30, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); fn(); e.record(); e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    times.sort()
    return times[len(times) // 2]
