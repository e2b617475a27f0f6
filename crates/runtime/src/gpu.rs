//! Device discovery and the [`Gpu`] handle: a context, one stream, a module cache and properties.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{
    CudaContext, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    ValidAsZeroBits,
};

use crate::module::{Kernel, PtxModule};
use crate::{Error, Result};

/// `true` when the CUDA driver library can be loaded. Never panics (cudarc itself panics on first
/// use when the library is missing, so every entry point here checks this first).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Number of CUDA devices; [`Error::NoDriver`] without a driver, `Ok(0)` when it sees none.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    match CudaContext::device_count() {
        Ok(n) => Ok(n.max(0) as usize),
        Err(e) if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NO_DEVICE => Ok(0),
        Err(e) => Err(Error::driver("counting devices")(e)),
    }
}

/// The CUDA driver's version as `(major, minor)`, e.g. `(13, 0)`.
pub fn driver_version() -> Result<(u32, u32)> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    let mut v = 0i32;
    // SAFETY: cuDriverGetVersion writes one int; the library is present.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(Error::driver("reading the driver version"))?;
    Ok(((v / 1000) as u32, ((v % 1000) / 10) as u32))
}

/// What the kernels and their launch sizing need to know about a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProps {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability `(major, minor)`, e.g. `(9, 0)`.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Global memory in bytes.
    pub total_memory: u64,
    /// L2 cache in bytes.
    pub l2_bytes: u64,
    /// Shared memory a block may use without opting in (usually 48 KiB).
    pub shared_per_block: u32,
    /// Shared memory a block may use after opting in (227 KiB on H100).
    pub shared_per_block_optin: u32,
    /// Shared memory per SM.
    pub shared_per_sm: u32,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Memory bus width in bits.
    pub memory_bus_bits: u32,
}

struct Inner {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    props: DeviceProps,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
}

/// A handle on one GPU: its primary context, one stream every call of this workspace enqueues on,
/// a per-context cache of loaded PTX modules, and the device's properties. Cheap to clone (shared).
///
/// cudarc's per-buffer event tracking is turned off: work is ordered by the one stream, and the
/// host calls add no hidden synchronization. Results are ready after [`Gpu::synchronize`] (or a
/// download, which waits for the stream).
#[derive(Clone)]
pub struct Gpu(Arc<Inner>);

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("props", &self.0.props).finish()
    }
}

impl Gpu {
    /// Opens device `ordinal`. Errors (never panics) without a driver or without that device.
    pub fn new(ordinal: usize) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("creating the context"))?;
        // SAFETY: every operation of this crate goes through the single stream below, which
        // orders it; buffers are not shared with other streams by this crate.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let props = read_props(&ctx, ordinal)?;
        Ok(Self(Arc::new(Inner { ctx, stream, props, modules: Mutex::new(HashMap::new()) })))
    }

    /// Opens device 0.
    pub fn first() -> Result<Self> {
        Self::new(0)
    }

    /// The device's properties.
    pub fn props(&self) -> &DeviceProps {
        &self.0.props
    }

    /// The cudarc context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.0.ctx
    }

    /// The stream all work of this handle is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.0.stream
    }

    /// Waits for all work on the stream; surfaces asynchronous kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.0.stream.synchronize().map_err(Error::driver("synchronizing the stream"))
    }

    /// `(free, total)` device memory in bytes.
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        let (free, total) = self.0.ctx.mem_get_info().map_err(Error::driver("reading memory info"))?;
        Ok((free as u64, total as u64))
    }

    /// Loads `module` into this context on first use (cached afterwards) and returns kernel `name`.
    pub fn kernel(&self, module: &'static PtxModule, name: &str) -> Result<Kernel> {
        let m = {
            let mut cache = self.0.modules.lock().unwrap_or_else(|p| p.into_inner());
            match cache.get(module.name()) {
                Some(m) => m.clone(),
                None => {
                    let m = self
                        .0
                        .ctx
                        .load_module(cudarc::nvrtc::Ptx::from_src(module.ptx()))
                        .map_err(|source| Error::PtxLoad { module: module.name(), source })?;
                    cache.insert(module.name(), m.clone());
                    m
                }
            }
        };
        let func = m.load_function(name).map_err(|source| Error::KernelNotFound {
            module: module.name(),
            kernel: name.to_string(),
            source,
        })?;
        Ok(Kernel { func, name: name.into() })
    }

    /// Uninitialized device buffer of `len` elements (contents are whatever the allocator left).
    /// Errors with the size asked for when memory runs out.
    pub fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        let bytes = bytes_of::<T>(len)?;
        if len == 0 {
            return self.0.stream.null().map_err(Error::alloc(0, "device buffer"));
        }
        // SAFETY: the buffer is uninitialized device memory of plain-old-data `T`; callers write
        // before reading (the kernels of this workspace never read unwritten memory).
        unsafe { self.0.stream.alloc::<T>(len) }.map_err(Error::alloc(bytes, "device buffer"))
    }

    /// The kept buffer in `slot`, replaced by a fresh one of `len` elements when it is missing or
    /// shorter (the old one is freed first, so peak memory is the larger buffer alone). The
    /// scratch buffers that primitives keep between calls grow this way.
    pub fn grow<'a, T: DeviceRepr>(&self, slot: &'a mut Option<CudaSlice<T>>, len: usize) -> Result<&'a mut CudaSlice<T>> {
        let kept = slot.take().filter(|b| b.len() >= len);
        let buf = match kept {
            Some(b) => b,
            None => self.alloc::<T>(len)?,
        };
        Ok(slot.insert(buf))
    }

    /// Zero-filled device buffer of `len` elements.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        let mut buf = self.alloc::<T>(len)?;
        if len > 0 {
            self.0.stream.memset_zeros(&mut buf).map_err(Error::driver("zeroing a buffer"))?;
        }
        Ok(buf)
    }

    /// Copies `host` into a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let mut buf = self.alloc::<T>(host.len())?;
        if !host.is_empty() {
            self.0.stream.memcpy_htod(host, &mut buf).map_err(Error::driver("copying to the device"))?;
        }
        Ok(buf)
    }

    /// Copies a device buffer or view back into a new `Vec` (waits for the stream).
    pub fn download<T: DeviceRepr + Default + Clone, S: DevicePtr<T>>(&self, dev: &S) -> Result<Vec<T>> {
        let mut host = vec![T::default(); dev.len()];
        if !host.is_empty() {
            self.0.stream.memcpy_dtoh(dev, &mut host).map_err(Error::driver("copying to the host"))?;
        }
        self.synchronize()?;
        Ok(host)
    }

    /// Fills a byte-addressable buffer with one repeated byte (e.g. `0xAB` to poison outputs
    /// in tests): every element's bytes become `byte`.
    pub fn memset_bytes<T, D: DevicePtrMut<T>>(&self, buf: &mut D, byte: u8) -> Result<()> {
        let bytes = buf.num_bytes();
        if bytes == 0 {
            return Ok(());
        }
        let (ptr, _sync) = buf.device_ptr_mut(&self.0.stream);
        // SAFETY: `ptr` covers `num_bytes` bytes of the live buffer; the memset is ordered on
        // this handle's stream.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                ptr,
                byte,
                bytes,
                self.0.stream.cu_stream(),
            )
        }
        .map_err(Error::driver("filling a buffer"))
    }
}

/// Bytes of `len` elements of `T`, or [`Error::TooLarge`] when that overflows.
pub fn bytes_of<T>(len: usize) -> Result<u64> {
    len.checked_mul(std::mem::size_of::<T>())
        .map(|b| b as u64)
        .ok_or(Error::TooLarge {
            what: "device buffer",
            len: len as u64,
            max: (usize::MAX / std::mem::size_of::<T>().max(1)) as u64,
        })
}

fn read_props(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceProps> {
    let attr = |a: Attr| -> Result<u32> {
        ctx.attribute(a).map(|v| v.max(0) as u32).map_err(Error::driver("reading device attributes"))
    };
    let (major, minor) = ctx.compute_capability().map_err(Error::driver("reading compute capability"))?;
    Ok(DeviceProps {
        ordinal,
        name: ctx.name().map_err(Error::driver("reading the device name"))?,
        compute_capability: (major as u32, minor as u32),
        sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        total_memory: ctx.total_mem().map_err(Error::driver("reading total memory"))? as u64,
        l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        shared_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        shared_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
        max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        warp_size: attr(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        memory_bus_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
    })
}
