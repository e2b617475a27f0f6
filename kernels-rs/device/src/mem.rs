//! Global-memory loads through the read-only (non-coherent) data cache, `__ldg`. CC 3.5+.
//! Only for data that no thread writes during the kernel.

macro_rules! ldg {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $ptx:literal, $class:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned global-memory address not written during the kernel.
        #[inline(always)]
        pub unsafe fn $name(ptr: *const $t) -> $t {
            // SAFETY: forwarded.
            unsafe { <$t as GlobalWord>::ldg(ptr) }
        }
    )*};
}

ldg! {
    /// `__ldg` of a `u32`.
    ldg_u32: u32 => "u32", reg32;
    /// `__ldg` of an `i32`.
    ldg_i32: i32 => "s32", reg32;
    /// `__ldg` of an `f32`.
    ldg_f32: f32 => "f32", reg32;
    /// `__ldg` of a `u64`.
    ldg_u64: u64 => "u64", reg64;
    /// `__ldg` of an `i64`.
    ldg_i64: i64 => "s64", reg64;
    /// `__ldg` of an `f64`.
    ldg_f64: f64 => "f64", reg64;
}

/// `__ldg` of four `u32` with one 16-byte vector load (`ld.global.nc.v4.u32`). CC 3.5+.
///
/// # Safety
/// `ptr` must be a valid, 16-byte aligned global-memory address of four words not written
/// during the kernel.
#[inline(always)]
pub unsafe fn ldg_u32x4(ptr: *const u32) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: the caller guarantees a valid, aligned, read-only global address.
    unsafe {
        core::arch::asm!(
            "ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a, b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg64) ptr,
            options(readonly, nostack, preserves_flags),
        );
    }
    [a, b, c, d]
}

/// `__ldg` of two `u64` with one 16-byte vector load (`ld.global.nc.v2.u64`). CC 3.5+.
///
/// # Safety
/// `ptr` must be a valid, 16-byte aligned global-memory address of two words not written
/// during the kernel.
#[inline(always)]
pub unsafe fn ldg_u64x2(ptr: *const u64) -> [u64; 2] {
    let (a, b): (u64, u64);
    // SAFETY: the caller guarantees a valid, aligned, read-only global address.
    unsafe {
        core::arch::asm!(
            "ld.global.nc.v2.u64 {{{a}, {b}}}, [{p}];",
            a = out(reg64) a, b = out(reg64) b, p = in(reg64) ptr,
            options(readonly, nostack, preserves_flags),
        );
    }
    [a, b]
}

/// Two `u64` loaded with one 16-byte vector load through the coherent path
/// (`ld.global.v2.u64`): for data the kernel also writes (else [`ldg_u64x2`]).
///
/// # Safety
/// `ptr` must be a valid, 16-byte aligned global-memory address.
#[inline(always)]
pub unsafe fn ld_global_u64x2(ptr: *const u64) -> [u64; 2] {
    let (a, b): (u64, u64);
    // SAFETY: the caller guarantees a valid, 16-byte aligned global address.
    unsafe {
        core::arch::asm!(
            "ld.global.v2.u64 {{{a}, {b}}}, [{p}];",
            a = out(reg64) a, b = out(reg64) b, p = in(reg64) ptr,
            options(readonly, nostack, preserves_flags),
        );
    }
    [a, b]
}

/// Two `u64` stored with one 16-byte vector store (`st.global.v2.u64`).
///
/// # Safety
/// `ptr` must be a valid, 16-byte aligned global-memory address of two words.
#[inline(always)]
pub unsafe fn stg_u64x2(ptr: *mut u64, v: [u64; 2]) {
    // SAFETY: the caller guarantees a valid, aligned global address.
    unsafe {
        core::arch::asm!(
            "st.global.v2.u64 [{p}], {{{a}, {b}}};",
            p = in(reg64) ptr, a = in(reg64) v[0], b = in(reg64) v[1],
            options(nostack, preserves_flags),
        );
    }
}

/// Types loaded from and stored to global memory with `ld.global.nc` ([`ldg`]) and `st.global`
/// ([`stg`]).
pub trait GlobalWord: Copy {
    /// `ld.global.nc` of the value at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a valid, aligned global-memory address not written during the kernel.
    unsafe fn ldg(ptr: *const Self) -> Self;
    /// `ld.global` (coherent) of the value at `ptr`: for data the kernel also writes.
    ///
    /// # Safety
    /// `ptr` must be a valid, aligned global-memory address.
    unsafe fn ld(ptr: *const Self) -> Self;
    /// `st.global` of `v` at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a valid, aligned global-memory address.
    unsafe fn stg(ptr: *mut Self, v: Self);
    /// `ld.volatile.global` of the value at `ptr`: read anew every time (words other blocks
    /// publish during the kernel).
    ///
    /// # Safety
    /// `ptr` must be a valid, aligned global-memory address.
    unsafe fn ld_volatile(ptr: *const Self) -> Self;
    /// `st.volatile.global` of `v` at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a valid, aligned global-memory address.
    unsafe fn st_volatile(ptr: *mut Self, v: Self);
    /// `ld.global.nc.L2::cache_hint` of the value at `ptr` under the L2 eviction `policy` (from
    /// [`l2_evict_first`] or [`l2_evict_last`]).
    ///
    /// # Safety
    /// As [`GlobalWord::ldg`].
    unsafe fn ldg_hint(ptr: *const Self, policy: L2Policy) -> Self;
}

/// An L2 eviction policy for [`ldg_hint`] (`createpolicy`'s opaque 64-bit word; sm_80 and
/// later).
#[derive(Clone, Copy)]
pub struct L2Policy(u64);

/// The L2 policy "evict first" for the whole access: data read once (a matrix streamed by a
/// product) that should not push out data read again.
#[inline(always)]
pub fn l2_evict_first() -> L2Policy {
    let p: u64;
    // SAFETY: createpolicy only computes a register value.
    unsafe {
        core::arch::asm!("createpolicy.fractional.L2::evict_first.b64 {p}, 1.0;", p = out(reg64) p, options(pure, nomem, nostack, preserves_flags))
    };
    L2Policy(p)
}

/// The L2 policy "evict last": data gathered again and again (a product's `x`).
#[inline(always)]
pub fn l2_evict_last() -> L2Policy {
    let p: u64;
    // SAFETY: createpolicy only computes a register value.
    unsafe {
        core::arch::asm!("createpolicy.fractional.L2::evict_last.b64 {p}, 1.0;", p = out(reg64) p, options(pure, nomem, nostack, preserves_flags))
    };
    L2Policy(p)
}

/// `ld.global.nc` of the value at `ptr` under an L2 eviction policy ([`GlobalWord::ldg_hint`]).
///
/// # Safety
/// `ptr` must be a valid, aligned global-memory address not written during the kernel.
#[inline(always)]
pub unsafe fn ldg_hint<T: GlobalWord>(ptr: *const T, policy: L2Policy) -> T {
    // SAFETY: forwarded.
    unsafe { T::ldg_hint(ptr, policy) }
}

macro_rules! global_word {
    ($($t:ty => $ptx:literal, $class:ident;)*) => {$(
        impl GlobalWord for $t {
            #[inline(always)]
            unsafe fn ldg(ptr: *const Self) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned, read-only global address.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.global.nc.", $ptx, " {r}, [{p}];"),
                        r = out($class) r, p = in(reg64) ptr,
                        options(readonly, nostack, preserves_flags),
                    );
                }
                r
            }

            #[inline(always)]
            unsafe fn ld(ptr: *const Self) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned global address.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.global.", $ptx, " {r}, [{p}];"),
                        r = out($class) r, p = in(reg64) ptr,
                        options(readonly, nostack, preserves_flags),
                    );
                }
                r
            }

            #[inline(always)]
            unsafe fn ldg_hint(ptr: *const Self, policy: L2Policy) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned, read-only global address.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.global.nc.L2::cache_hint.", $ptx, " {r}, [{p}], {q};"),
                        r = out($class) r, p = in(reg64) ptr, q = in(reg64) policy.0,
                        options(readonly, nostack, preserves_flags),
                    );
                }
                r
            }

            #[inline(always)]
            unsafe fn stg(ptr: *mut Self, v: Self) {
                // SAFETY: the caller guarantees a valid, aligned global address.
                unsafe {
                    core::arch::asm!(
                        concat!("st.global.", $ptx, " [{p}], {v};"),
                        p = in(reg64) ptr, v = in($class) v,
                        options(nostack, preserves_flags),
                    );
                }
            }

            #[inline(always)]
            unsafe fn ld_volatile(ptr: *const Self) -> Self {
                let r: $t;
                // SAFETY: the caller guarantees a valid, aligned global address.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.volatile.global.", $ptx, " {r}, [{p}];"),
                        r = out($class) r, p = in(reg64) ptr,
                        options(nostack, preserves_flags),
                    );
                }
                r
            }

            #[inline(always)]
            unsafe fn st_volatile(ptr: *mut Self, v: Self) {
                // SAFETY: the caller guarantees a valid, aligned global address.
                unsafe {
                    core::arch::asm!(
                        concat!("st.volatile.global.", $ptx, " [{p}], {v};"),
                        p = in(reg64) ptr, v = in($class) v,
                        options(nostack, preserves_flags),
                    );
                }
            }
        }
    )*};
}

global_word! {
    u8 => "u8", reg16;
    u16 => "u16", reg16;
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    i64 => "s64", reg64;
    f32 => "f32", reg32;
    f64 => "f64", reg64;
}

/// `st.global` of `v` at `ptr` (a plain store through a kernel's pointer argument is a generic
/// `ST`: nvcc marks those pointers global, rustc does not).
///
/// # Safety
/// `ptr` must be a valid, aligned global-memory address.
#[inline(always)]
pub unsafe fn stg<T: GlobalWord>(ptr: *mut T, v: T) {
    // SAFETY: forwarded.
    unsafe { T::stg(ptr, v) }
}

/// `ld.global` (coherent) of the value at `ptr` ([`GlobalWord::ld`]): a load through a pointer
/// held in an argument struct is otherwise generic (`LD`), since rustc knows it only as a
/// generic pointer; for data the kernel may also write (else [`ldg`]).
///
/// # Safety
/// `ptr` must be a valid, aligned global-memory address.
#[inline(always)]
pub unsafe fn ld_global<T: GlobalWord>(ptr: *const T) -> T {
    // SAFETY: forwarded.
    unsafe { T::ld(ptr) }
}

/// `ld.global.nc` of the value at `ptr` ([`GlobalWord::ldg`]).
///
/// # Safety
/// `ptr` must be a valid, aligned global-memory address not written during the kernel.
#[inline(always)]
pub unsafe fn ldg<T: GlobalWord>(ptr: *const T) -> T {
    // SAFETY: forwarded.
    unsafe { T::ldg(ptr) }
}

/// `ld.volatile.global` of the value at `ptr` ([`GlobalWord::ld_volatile`]).
///
/// # Safety
/// `ptr` must be a valid, aligned global-memory address.
#[inline(always)]
pub unsafe fn ld_volatile_global<T: GlobalWord>(ptr: *const T) -> T {
    // SAFETY: forwarded.
    unsafe { T::ld_volatile(ptr) }
}

/// `st.volatile.global` of `v` at `ptr` ([`GlobalWord::st_volatile`]).
///
/// # Safety
/// `ptr` must be a valid, aligned global-memory address.
#[inline(always)]
pub unsafe fn st_volatile_global<T: GlobalWord>(ptr: *mut T, v: T) {
    // SAFETY: forwarded.
    unsafe { T::st_volatile(ptr, v) }
}
