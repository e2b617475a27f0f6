//! Embedded PTX modules, kernels looked up in them, and launches that name the kernel in errors.
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaFunction, CudaStream, DevicePtr, DevicePtrMut, LaunchArgs, LaunchConfig, PushKernelArg, SyncOnDrop};

use crate::image::Cubin;
use crate::{Error, Result};

/// A device-code module embedded in a host crate: its PTX and, beside it, a cubin per
/// architecture of [`crate::CUBIN_ARCHS`] (both built by `cargo xtask build-ptx` and committed
/// under the crate's `ptx/`). Declare one `static` per module with [`crate::embed_module!`];
/// [`crate::Gpu::kernel`] loads it lazily, once per context, from the cubin matching the device
/// or else from the PTX.
///
/// ```
/// static MODULE: gpu_runtime::PtxModule =
///     gpu_runtime::PtxModule::new("runtime", include_str!("../ptx/runtime.ptx"));
/// assert_eq!(MODULE.target(), Some("sm_80"));
/// assert!(MODULE.cubins().is_empty()); // PTX only: the driver compiles it at load
/// ```
#[derive(Debug)]
pub struct PtxModule {
    name: &'static str,
    ptx: &'static str,
    cubins: &'static [Cubin],
    /// Each entry's parameter list (the text between its parentheses), indexed on first use:
    /// every kernel load checks its parameters, and a search of the whole PTX per load cost
    /// milliseconds per plan of a module of many kernels.
    entries: OnceLock<HashMap<&'static str, &'static str>>,
}

/// Declares the module `name` of the calling crate as a [`PtxModule`] value: its PTX
/// (`ptx/NAME.ptx`) and its cubins (`ptx/NAME.sm_XY.cubin.gz` for each of
/// [`crate::CUBIN_ARCHS`]), all embedded at compile time from the calling crate's directory.
///
/// ```ignore
/// pub static MODULE: gpu_runtime::PtxModule = gpu_runtime::embed_module!("scan");
/// ```
#[macro_export]
macro_rules! embed_module {
    ($name:literal) => {
        $crate::PtxModule::with_cubins(
            $name,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/ptx/", $name, ".ptx")),
            &[
                $crate::embed_module!(@cubin $name, 80),
                $crate::embed_module!(@cubin $name, 86),
                $crate::embed_module!(@cubin $name, 89),
                $crate::embed_module!(@cubin $name, 90),
                $crate::embed_module!(@cubin $name, 100),
                $crate::embed_module!(@cubin $name, 120),
            ],
        )
    };
    (@cubin $name:literal, $sm:literal) => {
        $crate::Cubin::new($sm, include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/ptx/", $name, ".sm_", $sm, ".cubin.gz")))
    };
}

impl PtxModule {
    /// A module called `name` with PTX text `ptx` and no cubins (the driver compiles the PTX at
    /// load).
    pub const fn new(name: &'static str, ptx: &'static str) -> Self {
        Self { name, ptx, cubins: &[], entries: OnceLock::new() }
    }

    /// A module called `name` with PTX text `ptx` and machine code for the architectures of
    /// `cubins` (see [`crate::embed_module!`]).
    pub const fn with_cubins(name: &'static str, ptx: &'static str, cubins: &'static [Cubin]) -> Self {
        Self { name, ptx, cubins, entries: OnceLock::new() }
    }

    /// The embedded cubins.
    pub fn cubins(&self) -> &'static [Cubin] {
        self.cubins
    }

    /// The cubin a device of compute capability `cc` runs: the newest of its major version whose
    /// minor version is not above the device's; `None` when there is none (the PTX is loaded).
    ///
    /// ```
    /// static M: gpu_runtime::PtxModule = gpu_runtime::PtxModule::with_cubins("m", "", &[
    ///     gpu_runtime::Cubin::new(80, b""), gpu_runtime::Cubin::new(86, b""), gpu_runtime::Cubin::new(90, b""),
    /// ]);
    /// assert_eq!(M.cubin_for((8, 9)).map(|c| c.sm()), Some(86));
    /// assert_eq!(M.cubin_for((9, 0)).map(|c| c.sm()), Some(90));
    /// assert!(M.cubin_for((11, 0)).is_none());
    /// ```
    pub fn cubin_for(&self, cc: (u32, u32)) -> Option<&'static Cubin> {
        self.cubins.iter().filter(|c| c.runs_on(cc)).max_by_key(|c| c.sm())
    }

    /// Checks the embedded cubins without a GPU: each decompresses to a CUDA ELF file whose
    /// header names the architecture it is filed under, and defines every kernel of the PTX (a
    /// `.text.<kernel>` section), so a cubin left from an older PTX shows up. Returns how many
    /// cubins were checked.
    ///
    /// # Errors
    /// What is wrong with the first bad cubin, naming the module and architecture.
    pub fn check_cubins(&self) -> std::result::Result<usize, String> {
        let kernels = self.kernels();
        for c in self.cubins {
            let at = format!("module `{}`, sm_{} cubin", self.name, c.sm());
            let elf = c.decompress().map_err(|e| format!("{at}: does not decompress: {e}"))?;
            match crate::cubin_arch(&elf) {
                Some(sm) if sm == c.sm() => {}
                Some(sm) => return Err(format!("{at}: the ELF header says sm_{sm}")),
                None => return Err(format!("{at}: not a 64-bit CUDA ELF file")),
            }
            for k in &kernels {
                let section = format!(".text.{k}\0");
                if !elf.windows(section.len()).any(|w| w == section.as_bytes()) {
                    return Err(format!("{at}: no kernel `{k}` (stale against the PTX? run `cargo xtask build-ptx`)"));
                }
            }
        }
        Ok(self.cubins.len())
    }

    /// The module's name (`scan`, `runtime`, ...).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX text.
    pub fn ptx(&self) -> &'static str {
        self.ptx
    }

    /// The architecture in the PTX `.target` directive (e.g. `sm_80`), if present.
    pub fn target(&self) -> Option<&'static str> {
        self.directive(".target")
    }

    /// The PTX ISA version in the `.version` directive (e.g. `7.0`), if present.
    pub fn isa_version(&self) -> Option<&'static str> {
        self.directive(".version")
    }

    /// Names of the `.entry` kernels the module defines.
    pub fn kernels(&self) -> Vec<&'static str> {
        self.ptx.lines().filter_map(|l| l.trim_start().strip_prefix(".visible .entry ")).filter_map(|rest| rest.split(['(', ' ']).next()).collect()
    }

    /// The parameters of entry `name` as the module's PTX declares them (bytes and alignment of
    /// each, in order), or `None` when the PTX has no such entry. [`crate::Gpu::kernel_of`]
    /// checks an argument struct against them.
    ///
    /// ```
    /// let ptx = ".visible .entry k(\n\t.param .align 8 .b8 k_param_0[56]\n)\n{\n}\n\
    ///            .visible .entry j(\n\t.param .u64 .ptr .align 1 j_param_0,\n\t.param .u32 j_param_1\n)\n{\n}\n";
    /// let m = gpu_runtime::PtxModule::new("demo", ptx);
    /// use gpu_runtime::PtxParam;
    /// assert_eq!(m.entry_params("k"), Some(vec![PtxParam { bytes: 56, align: 8 }]));
    /// assert_eq!(m.entry_params("j"), Some(vec![PtxParam { bytes: 8, align: 8 }, PtxParam { bytes: 4, align: 4 }]));
    /// assert_eq!(m.entry_params("missing"), None);
    /// ```
    pub fn entry_params(&self, name: &str) -> Option<Vec<PtxParam>> {
        self.entry_decl(name)?.split(',').map(str::trim).filter(|p| !p.is_empty()).map(PtxParam::parse).collect()
    }

    /// The parameter list of entry `name` (the text between the parentheses of its `.entry`
    /// line), from the module's index of entries (one pass over the PTX, on first use).
    fn entry_decl(&self, name: &str) -> Option<&'static str> {
        let ptx = self.ptx;
        let index = self.entries.get_or_init(|| {
            let mut entries = HashMap::new();
            let mut rest = ptx;
            while let Some(at) = rest.find(".entry ") {
                let after = &rest[at + ".entry ".len()..];
                let Some(open) = after.find('(') else { break };
                let Some(close) = after[open..].find(')') else { break };
                entries.insert(after[..open].trim(), &after[open + 1..open + close]);
                rest = &after[open + close..];
            }
            entries
        });
        index.get(name).copied()
    }

    /// Whether entry `name` takes an aggregate (`.param .align A .b8 NAME[N]`): a kernel of an
    /// argument struct, which [`crate::Gpu::kernel`] refuses to load for positional launches.
    ///
    /// ```
    /// let ptx = ".visible .entry k(\n\t.param .align 8 .b8 k_param_0[56]\n)\n{\n}\n\
    ///            .visible .entry j(\n\t.param .u64 .ptr .align 1 j_param_0\n)\n{\n}\n";
    /// let m = gpu_runtime::PtxModule::new("demo", ptx);
    /// assert!(m.takes_struct("k"));
    /// assert!(!m.takes_struct("j"));
    /// assert!(!m.takes_struct("missing"));
    /// ```
    pub fn takes_struct(&self, name: &str) -> bool {
        self.entry_decl(name).is_some_and(|decl| decl.contains('['))
    }

    fn directive(&self, key: &str) -> Option<&'static str> {
        self.ptx.lines().find_map(|l| l.trim().strip_prefix(key)).and_then(|rest| rest.split_whitespace().next())
    }
}

/// One parameter of a PTX entry ([`PtxModule::entry_params`]): its size and alignment in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxParam {
    /// Bytes.
    pub bytes: u64,
    /// Alignment in bytes.
    pub align: u64,
}

impl PtxParam {
    /// `.param .align A .b8 NAME[N]` (an aggregate), or `.param .TYPE [.ptr …] NAME` (a scalar
    /// of `TYPE`; a pointer's own `.align` is its pointee's).
    fn parse(decl: &str) -> Option<PtxParam> {
        let words: Vec<&str> = decl.split_whitespace().collect();
        if let Some(open) = decl.find('[') {
            let bytes = decl[open + 1..].split(']').next()?.trim().parse().ok()?;
            let align = words.iter().position(|w| *w == ".align").and_then(|i| words.get(i + 1)?.parse().ok()).unwrap_or(1);
            return Some(PtxParam { bytes, align });
        }
        let bytes = words.iter().find_map(|w| match *w {
            ".u64" | ".s64" | ".b64" | ".f64" => Some(8),
            ".u32" | ".s32" | ".b32" | ".f32" => Some(4),
            ".u16" | ".s16" | ".b16" | ".f16" => Some(2),
            ".u8" | ".s8" | ".b8" => Some(1),
            _ => None,
        })?;
        Some(PtxParam { bytes, align: bytes })
    }
}

/// A kernel that takes one `#[repr(C)]` argument struct `A` by value ([`crate::Gpu::kernel_of`]:
/// its PTX parameter checked at load to have `A`'s size and at least its alignment), launched
/// with an `A` and nothing else.
#[derive(Debug, Clone)]
pub struct KernelOf<A> {
    kernel: Kernel,
    _args: std::marker::PhantomData<fn(A)>,
}

impl<A: Copy> KernelOf<A> {
    /// Wraps a kernel whose signature was checked ([`crate::check_signature`]).
    pub(crate) fn new(kernel: Kernel) -> Self {
        Self { kernel, _args: std::marker::PhantomData }
    }

    /// The kernel (its name, attributes such as [`Kernel::set_max_dynamic_shared`]).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Enqueues a launch with `args` on `stream` (asynchronous).
    ///
    /// # Safety
    /// `args` must satisfy the kernel's documented contract for `cfg` (every pointer covering
    /// what the kernel reads and writes for this grid); the argument's type is checked already.
    ///
    /// # Errors
    /// [`Error::Launch`] when the driver refuses the launch.
    pub unsafe fn launch(&self, stream: &CudaStream, cfg: LaunchConfig, args: A) -> Result<()> {
        // SAFETY: the struct's layout matches the kernel's one parameter (checked at load); the
        // rest is the caller's contract.
        unsafe { self.kernel.args(stream).arg(&ArgStruct(args)).launch(cfg) }
    }
}

/// A kernel function loaded from a [`PtxModule`], remembering its name for error messages.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub(crate) func: CudaFunction,
    pub(crate) name: Arc<str>,
}

impl Kernel {
    /// The kernel's symbol.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The underlying cudarc function, for launches this crate does not wrap.
    pub fn function(&self) -> &CudaFunction {
        &self.func
    }

    /// Lets launches of this kernel use up to `bytes` of dynamic shared memory (needed above the
    /// default 48 KiB per block; CC 7.0+). Errors past the device's opt-in limit.
    ///
    /// # Errors
    /// [`Error::Launch`] past the device's opt-in limit.
    pub fn set_max_dynamic_shared(&self, bytes: u32) -> Result<()> {
        self.func
            .set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
            .map_err(|source| Error::Launch { kernel: self.name.to_string(), source })
    }

    /// Starts an argument list for a launch of this kernel on `stream`.
    pub fn args<'a>(&'a self, stream: &'a CudaStream) -> Launch<'a> {
        Launch { args: stream.launch_builder(&self.func), name: &self.name }
    }
}

/// Arguments being gathered for one launch; see [`Kernel::args`].
pub struct Launch<'a> {
    args: LaunchArgs<'a>,
    name: &'a str,
}

impl<'a> Launch<'a> {
    /// Appends a kernel argument: `&CudaSlice<T>`, `&mut CudaSlice<T>`, views, or `&T` for plain values.
    pub fn arg<T>(&mut self, arg: T) -> &mut Self
    where
        LaunchArgs<'a>: PushKernelArg<T>,
    {
        self.args.arg(arg);
        self
    }

    /// Enqueues the launch (asynchronous: faults inside the kernel surface at a later sync).
    ///
    /// # Safety
    /// The arguments must match the kernel's parameter list in number, order and type, and every
    /// pointer must cover what the kernel reads and writes for this grid.
    ///
    /// # Errors
    /// [`Error::Launch`] when the driver refuses the launch (or an earlier asynchronous fault surfaces at it).
    pub unsafe fn launch(&mut self, cfg: LaunchConfig) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.args.launch(cfg) }.map(|_| ()).map_err(|source| Error::Launch { kernel: self.name.to_string(), source })
    }
}

/// A kernel's `#[repr(C)]` argument struct, passed by value: the kernel crate defines the
/// struct (plain data: device addresses and sizes) and its kernel takes it as its one parameter;
/// the host fills the same struct and pushes `&ArgStruct(args)` ([`Launch::arg`]). Host and
/// device share one definition, so the order and types of the fields cannot drift apart.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct ArgStruct<T: Copy>(pub T);

// SAFETY: `ArgStruct` is `repr(transparent)` over plain `Copy` data; the launch passes its bytes
// as the kernel's parameter, and `Launch::launch` (unsafe) makes the caller match the kernel's
// parameter type.
unsafe impl<T: Copy> cudarc::driver::DeviceRepr for ArgStruct<T> {}

/// A 1-D launch of `nt` threads per block covering `n` items with `items_per_block` each, at most
/// `max_blocks` blocks (grid-stride kernels loop over the rest). At least one block.
pub fn grid_1d(n: u64, nt: u32, items_per_block: u64, max_blocks: u32) -> LaunchConfig {
    let blocks = n.div_ceil(items_per_block.max(1)).clamp(1, max_blocks.max(1) as u64) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (nt, 1, 1), shared_mem_bytes: 0 }
}

/// The device address of an optional writable buffer for a launch module, with the guard that
/// orders its use on `stream`: `(0, None)` when absent (the null pointer kernels read as "no such
/// array"). Callers check its length.
pub fn ptr_mut_or_null<'b, T, D: DevicePtrMut<T> + ?Sized>(buf: Option<&'b mut D>, stream: &'b CudaStream) -> (u64, Option<SyncOnDrop<'b>>) {
    match buf {
        Some(b) => {
            let (p, g) = b.device_ptr_mut(stream);
            (p, Some(g))
        }
        None => (0, None),
    }
}

/// A buffer's device address as an argument struct's read-only field, with the guard that
/// orders its use on `stream` (hold it until the launch is enqueued: the buffer's pending writes
/// on other streams are waited for, and its later users wait for this launch).
pub fn arg_ptr<'b, T, D: DevicePtr<T> + ?Sized>(buf: &'b D, stream: &'b CudaStream) -> (*const T, SyncOnDrop<'b>) {
    let (p, g) = buf.device_ptr(stream);
    (p as *const T, g)
}

/// [`arg_ptr`] for a field the kernel writes.
pub fn arg_ptr_mut<'b, T, D: DevicePtrMut<T> + ?Sized>(buf: &'b mut D, stream: &'b CudaStream) -> (*mut T, SyncOnDrop<'b>) {
    let (p, g) = buf.device_ptr_mut(stream);
    (p as *mut T, g)
}

/// [`arg_ptr`] of an optional buffer: null (what kernels read as "no such array") when absent.
pub fn arg_ptr_or_null<'b, T, D: DevicePtr<T> + ?Sized>(buf: Option<&'b D>, stream: &'b CudaStream) -> (*const T, Option<SyncOnDrop<'b>>) {
    buf.map_or((std::ptr::null(), None), |b| {
        let (p, g) = arg_ptr(b, stream);
        (p, Some(g))
    })
}

/// [`arg_ptr_mut`] of an optional buffer: null when absent.
pub fn arg_ptr_mut_or_null<'b, T, D: DevicePtrMut<T> + ?Sized>(buf: Option<&'b mut D>, stream: &'b CudaStream) -> (*mut T, Option<SyncOnDrop<'b>>) {
    buf.map_or((std::ptr::null_mut(), None), |b| {
        let (p, g) = arg_ptr_mut(b, stream);
        (p, Some(g))
    })
}
