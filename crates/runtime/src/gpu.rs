//! Device discovery and the [`Gpu`] handle: a context, the stream work is enqueued on, a module
//! cache and properties.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};

use crate::image::{Image, ImagePolicy, ModuleLoad};
use crate::module::{Kernel, KernelOf, PtxModule, PtxParam};
use crate::{Error, Result};

/// `true` when the CUDA driver library can be loaded. Never panics (cudarc itself panics on first
/// use when the library is missing, so every entry point here checks this first).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Number of CUDA devices; [`Error::NoDriver`] without a driver, `Ok(0)` when it sees none.
///
/// # Errors
/// [`Error::NoDriver`] without a driver, [`Error::Driver`] when the driver fails.
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
///
/// # Errors
/// [`Error::NoDriver`] without a driver, [`Error::Driver`] when the driver fails.
pub fn driver_version() -> Result<(u32, u32)> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    let mut v = 0i32;
    // SAFETY: cuDriverGetVersion writes one int; the library is present.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result().map_err(Error::driver("reading the driver version"))?;
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

/// What every handle on one context shares: the context, the device's properties and the module
/// cache.
struct Shared {
    ctx: Arc<CudaContext>,
    props: DeviceProps,
    /// Loaded modules, keyed by the address of their `&'static PtxModule` (identity, not name:
    /// two modules that happen to share a name are still two modules), with what their load did.
    modules: Mutex<HashMap<usize, (Arc<CudaModule>, ModuleLoad)>>,
    /// Which images later loads may take.
    policy: Mutex<ImagePolicy>,
    /// Device allocations made through this handle family ([`Gpu::allocations`]).
    allocations: std::sync::atomic::AtomicU64,
}

impl Shared {
    fn new(ctx: Arc<CudaContext>, props: DeviceProps) -> Arc<Self> {
        Arc::new(Shared {
            ctx,
            props,
            modules: Mutex::new(HashMap::new()),
            policy: Mutex::new(ImagePolicy::from_env()),
            allocations: Default::default(),
        })
    }
}

/// A handle on one GPU: a context, **the stream this handle's work is enqueued on**, a cache of
/// loaded PTX modules shared by every handle on the context, and the device's properties. Cheap
/// to clone (a clone shares the stream).
///
/// Every plan of this workspace (scanner, histogram, transposer, ...) is built from a `Gpu` and
/// enqueues all its work on that handle's stream, in order, without synchronizing (calls that
/// must read a result back, such as validation, say so and synchronize that stream only).
///
/// - [`Gpu::new`] opens the device's primary context with a new non-blocking stream of its own,
///   leaving cudarc's per-buffer event tracking as the context has it (on, cudarc's default).
/// - [`Gpu::from_stream`] wraps the caller's cudarc stream (and its context, left as the caller
///   configured it), so the library's work joins the caller's own.
/// - [`Gpu::with_stream`] and [`Gpu::fork`] give handles on other streams of the same context;
///   plans built from two such handles run concurrently.
///
/// # Buffers across streams
/// Where the context tracks events (the default; turning it off is cudarc's `unsafe`
/// `disable_event_tracking`, the caller's promise to order buffers themselves), safe code cannot
/// free or rewrite a buffer under a kernel on another stream: a `CudaSlice` passed to a plan,
/// directly or as a view ([`crate::DeviceView::of`]), or lent as scratch, has each use recorded
/// on the stream that makes it, and its owner waits for those records before freeing it. Work
/// on one handle is ordered by its stream. cudarc keeps one read and one write event per
/// buffer, so a result read on a second stream is ordered after the write that produced it;
/// reads of one buffer on several streams at once are each complete before a later write or free
/// only as far as cudarc's last recorded read says, which is why every plan of this workspace
/// reads a buffer on the one stream it runs on.
///
/// # CUDA graphs
/// Every plan enqueues without synchronizing, so its work can be captured into a CUDA graph. A
/// capturing stream may not wait on an event recorded outside the capture, and cudarc's tracking
/// waits at each use of a tracked buffer: turn tracking off before capturing
/// (`unsafe { gpu.context().disable_event_tracking() }`), and order the buffers yourself from
/// then on (one stream, or events).
#[derive(Clone)]
pub struct Gpu {
    shared: Arc<Shared>,
    stream: Arc<CudaStream>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("props", &self.shared.props).field("stream", &self.stream.cu_stream()).finish()
    }
}

/// [`Gpu::kernel_of`]'s check of `A` against entry `name`'s PTX parameters (no GPU needed:
/// host tests call it on every argument struct).
///
/// # Errors
/// [`Error::KernelSignature`] when the entry is missing or its parameters differ.
pub fn check_signature<A>(module: &PtxModule, name: &str) -> Result<()> {
    let want = PtxParam { bytes: std::mem::size_of::<A>() as u64, align: std::mem::align_of::<A>() as u64 };
    let found = module.entry_params(name);
    match found.as_deref() {
        Some([p]) if p.bytes == want.bytes && p.align >= want.align => Ok(()),
        _ => Err(Error::KernelSignature {
            kernel: name.to_string(),
            detail: format!(
                "PTX module `{}` declares {}, the host passes one parameter of {} bytes aligned to {}",
                module.name(),
                found.map_or_else(|| "no such entry".to_string(), |ps| format!("{ps:?}")),
                want.bytes,
                want.align
            ),
        }),
    }
}

impl Gpu {
    /// Opens device `ordinal`: its primary context and a new non-blocking stream.
    ///
    /// # Errors
    /// [`Error::NoDriver`] without a driver, [`Error::NoDevice`] without that device,
    /// [`Error::Driver`] when the context or stream cannot be created. Never panics.
    pub fn new(ordinal: usize) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(Error::driver("creating the context"))?;
        let stream = ctx.new_stream().map_err(Error::driver("creating a stream"))?;
        let props = read_props(&ctx, ordinal)?;
        Ok(Self { shared: Shared::new(ctx, props), stream })
    }

    /// Opens device 0.
    ///
    /// # Errors
    /// As [`Gpu::new`].
    pub fn first() -> Result<Self> {
        Self::new(0)
    }

    /// A handle on the caller's cudarc `stream` and its context. The context's settings (event
    /// tracking included) are left as they are. Modules are cached per handle family: handles
    /// derived from this one ([`Gpu::with_stream`], [`Gpu::fork`], clones) share the cache.
    ///
    /// # Errors
    /// [`Error::Driver`] when the device's attributes cannot be read.
    pub fn from_stream(stream: Arc<CudaStream>) -> Result<Self> {
        let ctx = stream.context().clone();
        let props = read_props(&ctx, ctx.ordinal())?;
        Ok(Self { shared: Shared::new(ctx, props), stream })
    }

    /// A handle on `stream`, which must belong to this handle's context; shares the module cache.
    ///
    /// # Errors
    /// [`Error::ForeignStream`] when `stream` belongs to another context.
    pub fn with_stream(&self, stream: Arc<CudaStream>) -> Result<Self> {
        if stream.context().cu_ctx() != self.shared.ctx.cu_ctx() {
            return Err(Error::ForeignStream);
        }
        Ok(Self { shared: self.shared.clone(), stream })
    }

    /// Makes this handle's stream wait (on the device, through an event; the host does not
    /// block) for the work enqueued so far on `old`'s stream, when the two differ: for a plan
    /// moving from `old` to this handle (a plan's `set_gpu`).
    ///
    /// # Errors
    /// [`Error::ForeignStream`] when `old` belongs to another context; driver errors recording or
    /// waiting for the event.
    pub fn follow(&self, old: &Gpu) -> Result<()> {
        if old.shared.ctx.cu_ctx() != self.shared.ctx.cu_ctx() {
            return Err(Error::ForeignStream);
        }
        if old.stream.cu_stream() != self.stream.cu_stream() {
            self.stream.join(&old.stream).map_err(Error::driver("ordering a stream after another"))?;
        }
        Ok(())
    }

    /// A handle on a new non-blocking stream of the same context (shares the module cache): work
    /// of plans built from it may overlap with this handle's.
    ///
    /// # Errors
    /// [`Error::Driver`] when the stream cannot be created.
    pub fn fork(&self) -> Result<Self> {
        let stream = self.shared.ctx.new_stream().map_err(Error::driver("creating a stream"))?;
        Ok(Self { shared: self.shared.clone(), stream })
    }

    /// The device's properties.
    pub fn props(&self) -> &DeviceProps {
        &self.shared.props
    }

    /// The cudarc context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.shared.ctx
    }

    /// The stream all work of this handle is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits for all work on this handle's stream; surfaces asynchronous kernel faults.
    ///
    /// # Errors
    /// [`Error::Driver`] with the fault of any earlier asynchronous work.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(Error::driver("synchronizing the stream"))
    }

    /// `(free, total)` device memory in bytes.
    ///
    /// # Errors
    /// [`Error::Driver`] when the driver cannot say.
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        let (free, total) = self.shared.ctx.mem_get_info().map_err(Error::driver("reading memory info"))?;
        Ok((free as u64, total as u64))
    }

    /// Loads `module` into this context on first use (cached by the module's identity) and
    /// returns kernel `name`. The module is loaded from its cubin for this device's architecture
    /// when it embeds one and the [image policy](Gpu::set_image_policy) allows, else from its
    /// PTX ([`Gpu::load_module`] says which).
    ///
    /// # Errors
    /// [`Error::PtxLoad`] when the driver refuses the module, [`Error::KernelNotFound`] when it
    /// has no such kernel, [`Error::KernelSignature`] when the kernel takes an argument struct
    /// (those load with [`Gpu::kernel_of`], whose launches pass the struct).
    pub fn kernel(&self, module: &'static PtxModule, name: &str) -> Result<Kernel> {
        if module.takes_struct(name) {
            return Err(Error::KernelSignature {
                kernel: name.to_string(),
                detail: format!(
                    "PTX module `{}` declares an argument struct: load it with Gpu::kernel_of, not for positional arguments",
                    module.name()
                ),
            });
        }
        self.load_kernel(module, name)
    }

    /// Kernel `name` of `module`, loaded without looking at its parameters.
    fn load_kernel(&self, module: &'static PtxModule, name: &str) -> Result<Kernel> {
        let m = self.loaded(module, |(m, _)| m.clone())?;
        let func = m.load_function(name).map_err(|source| Error::KernelNotFound { module: module.name(), kernel: name.to_string(), source })?;
        Ok(Kernel { func, name: name.into() })
    }

    /// Loads kernel `name` of `module` as one that takes the argument struct `A` by value: its
    /// PTX must declare exactly one parameter of `size_of::<A>()` bytes aligned to at least
    /// `align_of::<A>()`, so a host struct that drifted from the kernel crate's is an error at
    /// load, not a launch that reads wrong bytes.
    ///
    /// # Errors
    /// [`Error::KernelSignature`] when the parameter list differs; as [`Gpu::kernel`].
    pub fn kernel_of<A: Copy>(&self, module: &'static PtxModule, name: &str) -> Result<KernelOf<A>> {
        check_signature::<A>(module, name)?;
        Ok(KernelOf::new(self.load_kernel(module, name)?))
    }

    /// Loads `module` into this context unless it is loaded already, and says how it was loaded
    /// (or was, by the first load): the image and how long it took. [`Gpu::kernel`] loads modules
    /// by itself; this is for reports (`sptrans info`) and for warming up before timing.
    ///
    /// # Errors
    /// [`Error::PtxLoad`] when the driver refuses the module.
    pub fn load_module(&self, module: &'static PtxModule) -> Result<ModuleLoad> {
        self.loaded(module, |(_, load)| load.clone())
    }

    /// How each module loaded so far into this context (by this handle family) was loaded, in
    /// no particular order.
    pub fn loaded_modules(&self) -> Vec<ModuleLoad> {
        let cache = self.shared.modules.lock().unwrap_or_else(|p| p.into_inner());
        cache.values().map(|(_, l)| l.clone()).collect()
    }

    /// Which images later module loads of this handle family take: [`ImagePolicy::Auto`] (the
    /// cubin for the device when embedded, else the PTX) or [`ImagePolicy::PtxOnly`]. Modules
    /// already loaded stay as they are. The default is [`ImagePolicy::from_env`]
    /// (`CUDA_FORCE_PTX_JIT=1` selects the PTX).
    pub fn set_image_policy(&self, policy: ImagePolicy) {
        *self.shared.policy.lock().unwrap_or_else(|p| p.into_inner()) = policy;
    }

    /// The image policy of this handle family ([`Gpu::set_image_policy`]).
    pub fn image_policy(&self) -> ImagePolicy {
        *self.shared.policy.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `take` applied to `module`'s cache entry, loading the module first if it is not loaded:
    /// a kernel lookup takes the module alone, without copying the load's record.
    fn loaded<R>(&self, module: &'static PtxModule, take: impl FnOnce(&(Arc<CudaModule>, ModuleLoad)) -> R) -> Result<R> {
        let key = module as *const PtxModule as usize;
        // The lock is held across the load so that two threads never load one module twice.
        let mut cache = self.shared.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = cache.get(&key) {
            return Ok(take(hit));
        }
        let entry = self.load_uncached(module)?;
        Ok(take(cache.entry(key).or_insert(entry)))
    }

    fn load_uncached(&self, module: &'static PtxModule) -> Result<(Arc<CudaModule>, ModuleLoad)> {
        let start = std::time::Instant::now();
        let cc = self.shared.props.compute_capability;
        let why_ptx = match (self.image_policy(), module.cubin_for(cc)) {
            (_, None) if module.cubins().is_empty() => "the module embeds no cubins".to_string(),
            (_, None) => format!("no embedded cubin runs on compute capability {}.{}", cc.0, cc.1),
            (ImagePolicy::PtxOnly, Some(_)) => "the image policy asks for the PTX (CUDA_FORCE_PTX_JIT=1 or Gpu::set_image_policy)".to_string(),
            (ImagePolicy::Auto, Some(cubin)) => {
                let loaded = cubin.decompress().map_err(|e| format!("its sm_{} cubin does not decompress ({e})", cubin.sm())).and_then(|elf| {
                    self.shared
                        .ctx
                        .load_module(cudarc::nvrtc::Ptx::from_binary(elf))
                        .map_err(|e| format!("the driver refused its sm_{} cubin ({e})", cubin.sm()))
                });
                match loaded {
                    Ok(m) => {
                        let load = ModuleLoad { module: module.name(), image: Image::Cubin { sm: cubin.sm() }, time: start.elapsed(), why_ptx: None };
                        return Ok((m, load));
                    }
                    Err(why) => why,
                }
            }
        };
        let m = self
            .shared
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(module.ptx()))
            .map_err(|source| Error::PtxLoad { module: module.name(), source })?;
        Ok((m, ModuleLoad { module: module.name(), image: Image::Ptx, time: start.elapsed(), why_ptx: Some(why_ptx) }))
    }

    /// Device buffer of `len` elements with unspecified contents, for types valid for any bit
    /// pattern ([`AnyBits`]): reading it before writing gives arbitrary values, never undefined
    /// behaviour.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] with the size asked for; [`Error::TooLarge`] when the byte count
    /// overflows.
    pub fn alloc<T: AnyBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        // SAFETY: any bit pattern is a valid `T`, so uninitialized contents are merely arbitrary.
        unsafe { self.alloc_uninit(len) }
    }

    /// Device buffer of `len` elements of any device type, uninitialized.
    ///
    /// # Safety
    /// The contents are whatever the allocator left: the caller must write every element before
    /// it is read as a `T` (downloaded, or used by a kernel that relies on `T`'s invariants).
    ///
    /// # Errors
    /// As [`Gpu::alloc`].
    pub unsafe fn alloc_uninit<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        let bytes = bytes_of::<T>(len)?;
        if len == 0 {
            return self.stream.null().map_err(Error::alloc(0, "device buffer"));
        }
        self.shared.allocations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded to the caller (contents written before they are read as `T`).
        unsafe { self.stream.alloc::<T>(len) }.map_err(Error::alloc(bytes, "device buffer"))
    }

    /// Device allocations made so far through this handle and the handles sharing its module
    /// cache (clones, [`Gpu::with_stream`], [`Gpu::fork`]): every buffer of this workspace's
    /// plans comes from [`Gpu::alloc`] and its kin, so a hot call that leaves this count
    /// unchanged allocated nothing (cuBLAS's and cuSPARSE's own buffers are not counted).
    pub fn allocations(&self) -> u64 {
        self.shared.allocations.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Zero-filled device buffer of `len` elements.
    ///
    /// # Errors
    /// As [`Gpu::alloc`].
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        // SAFETY: every element is zeroed below before anything can read it.
        let mut buf = unsafe { self.alloc_uninit::<T>(len)? };
        if len > 0 {
            self.stream.memset_zeros(&mut buf).map_err(Error::driver("zeroing a buffer"))?;
        }
        Ok(buf)
    }

    /// Copies `host` into a new device buffer.
    ///
    /// # Errors
    /// As [`Gpu::alloc`], or [`Error::Driver`] when the copy fails.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        // SAFETY: every element is written by the copy below before anything can read it.
        let mut buf = unsafe { self.alloc_uninit::<T>(host.len())? };
        if !host.is_empty() {
            self.stream.memcpy_htod(host, &mut buf).map_err(Error::driver("copying to the device"))?;
        }
        Ok(buf)
    }

    /// Copies a device buffer or view back into a new `Vec` (waits for this handle's stream).
    /// Limited to [`AnyBits`] types: device bytes become host values of `T` unchecked.
    ///
    /// # Errors
    /// [`Error::Driver`] when the copy fails or earlier asynchronous work faulted.
    pub fn download<T: AnyBits + Default, S: DevicePtr<T>>(&self, dev: &S) -> Result<Vec<T>> {
        let mut host = vec![T::default(); dev.len()];
        if !host.is_empty() {
            self.stream.memcpy_dtoh(dev, &mut host).map_err(Error::driver("copying to the host"))?;
        }
        self.synchronize()?;
        Ok(host)
    }

    /// Fills a byte-addressable buffer with one repeated byte (e.g. `0xAB` to poison outputs
    /// in tests): every element's bytes become `byte`. Limited to [`AnyBits`] types.
    ///
    /// # Errors
    /// [`Error::Driver`] when the fill cannot be enqueued.
    pub fn memset_bytes<T: AnyBits, D: DevicePtrMut<T>>(&self, buf: &mut D, byte: u8) -> Result<()> {
        let bytes = buf.num_bytes();
        if bytes == 0 {
            return Ok(());
        }
        let (ptr, _sync) = buf.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` covers `num_bytes` bytes of the live buffer; the memset is ordered on
        // this handle's stream; any byte pattern is a valid `T`.
        self.bind()?;
        unsafe { cudarc::driver::result::memset_d8_async(ptr, byte, bytes, self.stream.cu_stream()) }.map_err(Error::driver("filling a buffer"))
    }
}

impl Gpu {
    /// Fills `bytes` bytes at device address `addr` with `byte`, ordered on this stream.
    ///
    /// # Safety
    /// `addr..addr + bytes` must be live device memory that nothing else uses meanwhile.
    ///
    /// # Errors
    /// [`Error::Driver`] when the fill cannot be enqueued.
    pub unsafe fn fill_raw(&self, addr: u64, byte: u8, bytes: u64) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: forwarded to the caller.
        unsafe { cudarc::driver::result::memset_d8_async(addr, byte, bytes as usize, self.stream.cu_stream()) }
            .map_err(Error::driver("filling device memory"))
    }

    /// Keeps up to `bytes` of freed device memory reserved in this device's default memory pool
    /// (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`) instead of returning it to the driver at every
    /// synchronization, the driver's default (0). Buffers freed and allocated again between
    /// synchronizations reuse memory either way; across them, a kept reserve saves mapping
    /// fresh pages (about 2 ms a GB on an H200). The setting is the device's, for every context
    /// and library in the process that allocates from its default pool; `u64::MAX` keeps
    /// everything, as the caching allocators of PyTorch and CuPy do.
    ///
    /// # Errors
    /// [`Error::Driver`].
    pub fn set_pool_release_threshold(&self, bytes: u64) -> Result<()> {
        use cudarc::driver::sys;
        self.bind()?;
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        // SAFETY: `pool` receives the handle of this context's device's default pool.
        unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, self.context().cu_device()) }
            .result()
            .map_err(Error::driver("reading the default memory pool"))?;
        let mut value = bytes;
        // SAFETY: the release threshold is a cuuint64_t read from `value`.
        unsafe { sys::cuMemPoolSetAttribute(pool, sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, (&mut value as *mut u64).cast()) }
            .result()
            .map_err(Error::driver("setting the memory pool's release threshold"))
    }

    /// Makes this GPU's context current on the calling thread: raw driver calls (the `*_raw`
    /// methods here, cuSPARSE and cuBLAS handles) need it when one thread drives several GPUs;
    /// cudarc's typed calls bind it themselves.
    ///
    /// # Errors
    /// [`Error::Driver`].
    pub fn bind(&self) -> Result<()> {
        self.context().bind_to_thread().map_err(Error::driver("binding the context"))
    }

    /// Copies `dst.len()` items from device address `src` to `dst` after this stream's earlier
    /// work, and waits for it.
    ///
    /// # Safety
    /// `src` must hold `dst.len()` live items of `T`.
    ///
    /// # Errors
    /// [`Error::Driver`] when the copy fails or earlier asynchronous work faulted.
    pub unsafe fn read_raw<T: AnyBits>(&self, src: u64, dst: &mut [T]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: forwarded to the caller; `dst` is read only after the synchronization below.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src, self.stream.cu_stream()) }.map_err(Error::driver("copying to the host"))?;
        self.synchronize()
    }
}

/// Device types for which every bit pattern is a valid value (plain integers and floats), so
/// memory with unspecified contents may be read as them.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid `Self`, and `Self` must have no
/// padding.
pub unsafe trait AnyBits: DeviceRepr + Copy + Send + Sync + 'static {}

macro_rules! any_bits {
    ($($t:ty),*) => {$(
        // SAFETY: plain integers and IEEE floats: every bit pattern is a value, no padding.
        unsafe impl AnyBits for $t {}
    )*};
}
any_bits!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64, half::f16, half::bf16);

/// Bytes of `len` elements of `T`, or [`Error::TooLarge`] when that overflows.
///
/// # Errors
/// [`Error::TooLarge`] when the byte count overflows `usize`.
pub fn bytes_of<T>(len: usize) -> Result<u64> {
    len.checked_mul(std::mem::size_of::<T>()).map(|b| b as u64).ok_or(Error::TooLarge {
        what: "device buffer",
        len: len as u64,
        max: (usize::MAX / std::mem::size_of::<T>().max(1)) as u64,
    })
}

fn read_props(ctx: &Arc<CudaContext>, ordinal: usize) -> Result<DeviceProps> {
    let attr = |a: Attr| -> Result<u32> { ctx.attribute(a).map(|v| v.max(0) as u32).map_err(Error::driver("reading device attributes")) };
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

/// A value payload that kernels move beside their keys (sorts, transposers, formats): every bit
/// pattern is a value ([`AnyBits`]), zero bits are zero, and `BYTES` (1, 2, 4, 8 or 16: `u8`,
/// `i8`, `u16`, `i16`, `f16`, `bf16`, the 4- and 8-byte numbers, `u128`/`i128`, which hold a
/// `Complex<f64>`'s bits) selects the kernel variant. `u8` also stands for "no values", as in
/// pattern matrices.
///
/// # Safety
/// `BYTES` is `size_of::<Self>()`, and any bit pattern of that size is a valid `Self`.
pub unsafe trait Payload: AnyBits + ValidAsZeroBits + Default {
    /// Size in bytes.
    const BYTES: usize;
}

macro_rules! payload {
    ($($t:ty),*) => {$(
        // SAFETY: plain numbers; BYTES is their size.
        unsafe impl Payload for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
        }
    )*};
}
payload!(u8, i8, u16, i16, u32, i32, f32, u64, i64, f64, u128, i128, half::f16, half::bf16);
