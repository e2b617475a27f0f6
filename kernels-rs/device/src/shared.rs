//! Shared memory: PTX `.shared` declarations made with `global_asm!`, turned into generic
//! pointers with `cvta.shared` (CC 1.0+; dynamic shared memory above 48 KiB per block needs the
//! host to raise the function's limit, CC 7.0+).
//!
//! Block-level building blocks never declare shared memory themselves: as CUB's `TempStorage`,
//! the kernel declares it once and passes a pointer, so phases can reuse one region.

/// Declares, at module level, a static shared array `$name` of `$len` elements of `$ty`, 16-byte
/// aligned; `$name::ptr()` yields a generic `*mut $ty` to its first element. `$name` must be
/// unique in the PTX module. `$len` must be a constant visible at module level.
///
/// ```ignore
/// gpu_device::static_shared!(SCAN_TILE: [u32; 1024]);
/// let tile: *mut u32 = SCAN_TILE::ptr();
/// ```
#[macro_export]
macro_rules! static_shared {
    ($vis:vis $name:ident : [$ty:ty; $len:expr]) => {
        #[allow(non_camel_case_types)]
        $vis struct $name;
        core::arch::global_asm!(
            concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
            bytes = const core::mem::size_of::<$ty>() * ($len),
        );
        $crate::__shared_symbol_fns!($vis $name: $ty, "Generic pointer to the first element of this shared array.");
    };
}

/// Declares, at module level, the module's dynamic shared memory `$name` (sized at launch);
/// `$name::ptr()` yields a 16-byte aligned generic `*mut $ty` to its start. One per module.
#[macro_export]
macro_rules! dynamic_shared {
    ($vis:vis $name:ident : $ty:ty) => {
        #[allow(non_camel_case_types)]
        $vis struct $name;
        core::arch::global_asm!(concat!(".extern .shared .align 16 .b8 ", stringify!($name), "[];"));
        $crate::__shared_symbol_fns!($vis $name: $ty, "Generic pointer to the start of the dynamic shared memory.");
    };
}

/// The `ptr()` and `smem()` functions of a shared symbol declared by [`static_shared!`] or
/// [`dynamic_shared!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __shared_symbol_fns {
    ($vis:vis $name:ident : $ty:ty, $ptr_doc:literal) => {
        impl $name {
            #[doc = $ptr_doc]
            #[inline(always)]
            $vis fn ptr() -> *mut $ty {
                let p: *mut $ty;
                // SAFETY: `cvta.shared` turns the symbol's shared-window address into a generic one.
                unsafe {
                    core::arch::asm!(
                        concat!("cvta.shared.u64 {p}, ", stringify!($name), ";"),
                        p = out(reg64) p,
                        options(pure, nomem, nostack, preserves_flags),
                    );
                }
                p
            }

            /// The shared-window address ([`$crate::shared::Smem`]: `ld.shared` and friends
            /// with 32-bit addresses).
            #[inline(always)]
            $vis fn smem() -> $crate::shared::Smem<$ty> {
                let a: u32;
                // SAFETY: `mov.u32` of the symbol gives its shared-window address.
                unsafe {
                    core::arch::asm!(
                        concat!("mov.u32 {a}, ", stringify!($name), ";"),
                        a = out(reg32) a,
                        options(pure, nomem, nostack, preserves_flags),
                    );
                    $crate::shared::Smem::from_addr(a)
                }
            }
        }
    };
}

macro_rules! shared_access {
    ($($(#[$doc:meta])* $ld:ident, $st:ident: $t:ty => $ptx:literal, $class:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned generic address inside this block's shared memory.
        #[inline(always)]
        pub unsafe fn $ld(ptr: *const $t) -> $t {
            let r: $t;
            // SAFETY: the caller guarantees a valid, aligned shared-memory address.
            unsafe {
                core::arch::asm!(
                    concat!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; ld.shared.", $ptx, " {r}, [s]; }}"),
                    r = out($class) r, p = in(reg64) ptr,
                    options(readonly, nostack, preserves_flags),
                );
            }
            r
        }

        /// The store matching the load above (`st.shared`).
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned generic address inside this block's shared memory.
        #[inline(always)]
        pub unsafe fn $st(ptr: *mut $t, val: $t) {
            // SAFETY: the caller guarantees a valid, aligned shared-memory address.
            unsafe {
                core::arch::asm!(
                    concat!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; st.shared.", $ptx, " [s], {v}; }}"),
                    p = in(reg64) ptr, v = in($class) val,
                    options(nostack, preserves_flags),
                );
            }
        }
    )*};
}

shared_access! {
    /// Loads an `f32` from shared memory through a generic pointer made by [`static_shared!`] or
    /// [`dynamic_shared!`] (`cvta.to.shared`, then `ld.shared`): the `LDS` the compiler cannot
    /// pick itself when the pointer came from inline assembly (a plain read is a generic `LD`).
    ld_shared_f32, st_shared_f32: f32 => "f32", reg32;
    /// [`ld_shared_f32`] for an `f64`.
    ld_shared_f64, st_shared_f64: f64 => "f64", reg64;
}

/// A shared-memory address in the shared window (32 bits), from [`static_shared!`]'s or
/// [`dynamic_shared!`]'s `smem()`: its loads, stores and atomics are `ld.shared`, `st.shared`
/// and `atom.shared` with 32-bit address arithmetic, the `LDS`/`STS`/`ATOMS` that nvcc emits
/// for `__shared__` arrays. (A generic pointer from `ptr()` costs 64-bit address math and
/// generic `LD`/`ST`/`ATOM`; on an H100 the onesweep radix pass ran its per-warp counters
/// through `ATOM.E.ADD.STRONG.GPU` that way.)
#[derive(Debug)]
pub struct Smem<T> {
    addr: u32,
    _t: core::marker::PhantomData<*mut T>,
}

impl<T> Clone for Smem<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Smem<T> {}

impl<T> Smem<T> {
    /// The address `addr` of the shared window.
    ///
    /// # Safety
    /// `addr` must be a shared-window address of a `T` (or of an array of them).
    #[inline(always)]
    pub const unsafe fn from_addr(addr: u32) -> Self {
        Self { addr, _t: core::marker::PhantomData }
    }

    /// The shared-window address.
    #[inline(always)]
    pub const fn addr(self) -> u32 {
        self.addr
    }

    /// The address of item `i` after this one (no check: the accesses carry the contract).
    #[inline(always)]
    pub const fn add(self, i: usize) -> Self {
        Self { addr: self.addr.wrapping_add((i * core::mem::size_of::<T>()) as u32), _t: core::marker::PhantomData }
    }

    /// The same address as items of another type.
    #[inline(always)]
    pub const fn cast<U>(self) -> Smem<U> {
        Smem { addr: self.addr, _t: core::marker::PhantomData }
    }

    /// The same address `bytes` further on.
    #[inline(always)]
    pub const fn byte_add(self, bytes: usize) -> Self {
        Self { addr: self.addr.wrapping_add(bytes as u32), _t: core::marker::PhantomData }
    }
}

/// Types with `ld.shared`/`st.shared` through a [`Smem`] address.
pub trait SmemWord: Copy {
    /// Loads the value at `at`.
    ///
    /// # Safety
    /// `at` must be a valid, aligned shared address of this block.
    unsafe fn ld(at: Smem<Self>) -> Self;
    /// Stores `v` at `at`.
    ///
    /// # Safety
    /// As [`SmemWord::ld`].
    unsafe fn st(at: Smem<Self>, v: Self);
}

macro_rules! smem_word {
    ($($t:ty => $ptx:literal, $class:ident;)*) => {$(
        impl SmemWord for $t {
            #[inline(always)]
            unsafe fn ld(at: Smem<Self>) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned shared address.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.shared.", $ptx, " {r}, [{a}];"),
                        r = out($class) r, a = in(reg32) at.addr,
                        options(readonly, nostack, preserves_flags),
                    );
                }
                r
            }

            #[inline(always)]
            unsafe fn st(at: Smem<Self>, v: Self) {
                // SAFETY: the caller guarantees a valid, aligned shared address.
                unsafe {
                    core::arch::asm!(
                        concat!("st.shared.", $ptx, " [{a}], {v};"),
                        a = in(reg32) at.addr, v = in($class) v,
                        options(nostack, preserves_flags),
                    );
                }
            }
        }
    )*};
}

smem_word! {
    u8 => "u8", reg16;
    u16 => "u16", reg16;
    u32 => "u32", reg32;
    u64 => "u64", reg64;
    f32 => "f32", reg32;
    f64 => "f64", reg64;
}

impl<T: SmemWord> Smem<T> {
    /// `ld.shared` of the value here.
    ///
    /// # Safety
    /// A valid, aligned shared address of this block.
    #[inline(always)]
    pub unsafe fn ld(self) -> T {
        // SAFETY: forwarded.
        unsafe { T::ld(self) }
    }

    /// `st.shared` of `v` here.
    ///
    /// # Safety
    /// As [`Smem::ld`].
    #[inline(always)]
    pub unsafe fn st(self, v: T) {
        // SAFETY: forwarded.
        unsafe { T::st(self, v) }
    }
}

impl Smem<u32> {
    /// `atom.shared.add.u32`: adds `v`, returns the old value.
    ///
    /// # Safety
    /// As [`Smem::ld`].
    #[inline(always)]
    pub unsafe fn atomic_add(self, v: u32) -> u32 {
        let old: u32;
        // SAFETY: the caller guarantees a valid, aligned shared address.
        unsafe {
            core::arch::asm!(
                "atom.shared.add.u32 {o}, [{a}], {v};",
                o = out(reg32) old, a = in(reg32) self.addr, v = in(reg32) v,
                options(nostack, preserves_flags),
            );
        }
        old
    }

    /// `red.shared.add.u32`: adds `v`.
    ///
    /// # Safety
    /// As [`Smem::ld`].
    #[inline(always)]
    pub unsafe fn red_add(self, v: u32) {
        // SAFETY: the caller guarantees a valid, aligned shared address.
        unsafe {
            core::arch::asm!(
                "red.shared.add.u32 [{a}], {v};",
                a = in(reg32) self.addr, v = in(reg32) v,
                options(nostack, preserves_flags),
            );
        }
    }
}
