//! GPU-side timing with CUDA events.
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaEvent;

use crate::{Error, Gpu, Result};

/// A pair of events around a region of stream work: [`GpuTimer::start`], enqueue work,
/// [`GpuTimer::stop_ms`] (which waits for the end event) gives the elapsed GPU time.
pub struct GpuTimer {
    gpu: Gpu,
    start: CudaEvent,
    end: CudaEvent,
}

impl GpuTimer {
    /// Creates the two events.
    ///
    /// # Errors
    /// [`Error::Driver`] when an event cannot be created.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let mk = || gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(Error::driver("creating a timing event"));
        Ok(Self { gpu: gpu.clone(), start: mk()?, end: mk()? })
    }

    /// Records the start event on the stream.
    ///
    /// # Errors
    /// [`Error::Driver`] when the event cannot be recorded.
    pub fn start(&self) -> Result<()> {
        self.start.record(self.gpu.stream()).map_err(Error::driver("recording an event"))
    }

    /// Records the end event, waits for it and returns milliseconds since the start event.
    ///
    /// # Errors
    /// [`Error::Driver`] when the event cannot be recorded, waited for or read (an earlier fault surfaces here).
    pub fn stop_ms(&self) -> Result<f64> {
        self.end.record(self.gpu.stream()).map_err(Error::driver("recording an event"))?;
        self.end.synchronize().map_err(Error::driver("waiting for an event"))?;
        let ms = self.start.elapsed_ms(&self.end).map_err(Error::driver("reading elapsed time"))?;
        Ok(ms as f64)
    }

    /// Times `iters` calls of `f` (stream work) as one region; for criterion's `iter_custom`.
    ///
    /// # Errors
    /// The first error of `f`, or the timer's.
    pub fn time_iters<E: From<Error>>(&self, iters: u64, mut f: impl FnMut() -> Result<(), E>) -> Result<std::time::Duration, E> {
        self.start()?;
        for _ in 0..iters {
            f()?;
        }
        Ok(std::time::Duration::from_secs_f64(self.stop_ms()? * 1e-3))
    }

    /// The median milliseconds of `reps` (at least 1) timed calls of `f` (stream work), each
    /// between its own start and stop, after `warmup` untimed calls: the benchmarks' measure.
    ///
    /// # Errors
    /// The first error of `f`, or the timer's.
    pub fn median_ms<E: From<Error>>(&self, warmup: usize, reps: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
        for _ in 0..warmup {
            f()?;
        }
        let mut ms = Vec::with_capacity(reps.max(1));
        for _ in 0..reps.max(1) {
            self.start()?;
            f()?;
            ms.push(self.stop_ms()?);
        }
        ms.sort_by(f64::total_cmp);
        Ok(ms[ms.len() / 2])
    }

    /// Times `f`'s stream work: start, `f()`, stop. Returns `f`'s value and milliseconds.
    ///
    /// # Errors
    /// The error of `f`, or the timer's.
    pub fn time<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, f64)> {
        self.start()?;
        let r = f()?;
        Ok((r, self.stop_ms()?))
    }
}

/// Measures device-to-device copy bandwidth in GB/s (bytes read + bytes written, 10^9), the
/// median of `reps` copies of a `bytes`-sized buffer after one warm-up. The ceiling that
/// memory-bound kernels are quoted against.
///
/// # Errors
/// Out of memory for the two buffers, copy and timer errors.
pub fn copy_bandwidth_gbs(gpu: &Gpu, bytes: usize, reps: usize) -> Result<f64> {
    let n = (bytes / 4).max(1);
    let src = gpu.alloc_zeros::<u32>(n)?;
    let mut dst = gpu.alloc::<u32>(n)?;
    let timer = GpuTimer::new(gpu)?;
    let copy = |dst: &mut cudarc::driver::CudaSlice<u32>| gpu.stream().memcpy_dtod(&src, dst).map_err(Error::driver("device-to-device copy"));
    copy(&mut dst)?;
    let mut times = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        times.push(timer.time(|| copy(&mut dst))?.1);
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];
    Ok(2.0 * (n * 4) as f64 / (ms * 1e-3) / 1e9)
}
