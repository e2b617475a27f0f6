//! Atomics on global or shared memory through generic addresses (device scope, relaxed).
//! 32-bit add/min/max/exch/CAS: CC 1.1+ (global), 1.2+ (shared); 64-bit add: CC 1.2+;
//! 64-bit min/max: CC 3.5+. `red_*` forms return nothing and are cheaper when the old value is
//! not needed.

macro_rules! atom {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $op:literal, $class:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// Returns the old value.
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned global or shared address.
        #[inline(always)]
        pub unsafe fn $name(ptr: *mut $t, val: $t) -> $t {
            let old: $t;
            // SAFETY: the caller guarantees a valid, aligned address.
            unsafe {
                core::arch::asm!(
                    concat!("atom.", $op, " {old}, [{p}], {v};"),
                    old = out($class) old, p = in(reg64) ptr, v = in($class) val,
                    options(nostack, preserves_flags),
                );
            }
            old
        }
    )*};
}

atom! {
    /// `atomicAdd` on a `u32`.
    atomic_add_u32: u32 => "add.u32", reg32;
    /// `atomicAdd` on a `u64`.
    atomic_add_u64: u64 => "add.u64", reg64;
    /// `atomicMax` on a `u32`.
    atomic_max_u32: u32 => "max.u32", reg32;
    /// `atomicMin` on a `u32`.
    atomic_min_u32: u32 => "min.u32", reg32;
    /// `atomicMin` on a `u64` (CC 3.5+).
    atomic_min_u64: u64 => "min.u64", reg64;
    /// `atomicExch` on a `u32`.
    atomic_exch_u32: u32 => "exch.b32", reg32;
    /// `atomicAdd` on an `f32` (CC 2.0+). The order of concurrent adds is unspecified, so sums
    /// built with it are not bit-reproducible.
    atomic_add_f32: f32 => "add.f32", reg32;
    /// `atomicAdd` on an `f64` (CC 6.0+). As [`atomic_add_f32`], not bit-reproducible.
    atomic_add_f64: f64 => "add.f64", reg64;
}

/// `atomicAdd` without a result (`red.add.u32`).
///
/// # Safety
/// `ptr` must be a valid, aligned global or shared address.
#[inline(always)]
pub unsafe fn red_add_u32(ptr: *mut u32, val: u32) {
    // SAFETY: the caller guarantees a valid, aligned address.
    unsafe {
        core::arch::asm!(
            "red.add.u32 [{p}], {v};",
            p = in(reg64) ptr, v = in(reg32) val,
            options(nostack, preserves_flags),
        );
    }
}

/// `atomicCAS` on a `u32`: stores `new` when the value equals `compare`; returns the old value.
///
/// # Safety
/// `ptr` must be a valid, aligned global or shared address.
#[inline(always)]
pub unsafe fn atomic_cas_u32(ptr: *mut u32, compare: u32, new: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees a valid, aligned address.
    unsafe {
        core::arch::asm!(
            "atom.cas.b32 {old}, [{p}], {c}, {n};",
            old = out(reg32) old, p = in(reg64) ptr, c = in(reg32) compare, n = in(reg32) new,
            options(nostack, preserves_flags),
        );
    }
    old
}

/// `atomicCAS` on a `u64`: stores `new` when the value equals `compare`; returns the old value.
///
/// # Safety
/// `ptr` must be a valid, 8-byte aligned global or shared address.
#[inline(always)]
pub unsafe fn atomic_cas_u64(ptr: *mut u64, compare: u64, new: u64) -> u64 {
    let old: u64;
    // SAFETY: the caller guarantees a valid, aligned address.
    unsafe {
        core::arch::asm!(
            "atom.cas.b64 {old}, [{p}], {c}, {n};",
            old = out(reg64) old, p = in(reg64) ptr, c = in(reg64) compare, n = in(reg64) new,
            options(nostack, preserves_flags),
        );
    }
    old
}

macro_rules! relaxed {
    ($($t:ty, $ld:ident, $st:ident, $ptx:literal, $class:ident, $align:literal;)*) => {$(
        #[doc = concat!("A relaxed load of a `", stringify!($t), "` at GPU scope (`ld.relaxed.gpu.", $ptx, "`, CC 7.0+): one")]
        #[doc = concat!("indivisible read that sees other blocks' [`", stringify!($st), "`] stores without a fence; for")]
        /// spin-waiting on a status word that packs a flag with its value (decoupled look-back).
        ///
        /// # Safety
        #[doc = concat!("`ptr` must be a valid, ", $align, "-byte aligned global address.")]
        #[inline(always)]
        pub unsafe fn $ld(ptr: *const $t) -> $t {
            let r: $t;
            // SAFETY: the caller guarantees a valid, aligned address.
            unsafe {
                core::arch::asm!(
                    concat!("ld.relaxed.gpu.", $ptx, " {r}, [{p}];"),
                    r = out($class) r, p = in(reg64) ptr,
                    options(nostack, preserves_flags),
                );
            }
            r
        }

        #[doc = concat!("A relaxed store of a `", stringify!($t), "` at GPU scope (`st.relaxed.gpu.", $ptx, "`, CC 7.0+): one")]
        #[doc = concat!("indivisible write for [`", stringify!($ld), "`] readers in other blocks.")]
        ///
        /// # Safety
        #[doc = concat!("`ptr` must be a valid, ", $align, "-byte aligned global address.")]
        #[inline(always)]
        pub unsafe fn $st(ptr: *mut $t, val: $t) {
            // SAFETY: the caller guarantees a valid, aligned address.
            unsafe {
                core::arch::asm!(
                    concat!("st.relaxed.gpu.", $ptx, " [{p}], {v};"),
                    p = in(reg64) ptr, v = in($class) val,
                    options(nostack, preserves_flags),
                );
            }
        }
    )*};
}

relaxed! {
    u64, ld_relaxed_u64, st_relaxed_u64, "u64", reg64, "8";
    u32, ld_relaxed_u32, st_relaxed_u32, "u32", reg32, "4";
}

macro_rules! red_float {
    ($($(#[$doc:meta])* $name:ident: $t:ty => $asm:literal, $class:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// `ptr` must be a valid, aligned address (of the state space the instruction names).
        #[inline(always)]
        pub unsafe fn $name(ptr: *mut $t, val: $t) {
            // SAFETY: the caller guarantees a valid, aligned address.
            unsafe {
                core::arch::asm!(
                    $asm,
                    p = in(reg64) ptr, v = in($class) val,
                    options(nostack, preserves_flags),
                );
            }
        }
    )*};
}

red_float! {
    /// `atomicAdd` on an `f32` without a result (`red.add.f32`, CC 2.0+), through a generic
    /// address: the thread does not wait for the old value. Not bit-reproducible, as
    /// [`atomic_add_f32`].
    red_add_f32: f32 => "red.add.f32 [{p}], {v};", reg32;
    /// `atomicAdd` on an `f64` without a result (`red.add.f64`, CC 6.0+), through a generic
    /// address.
    red_add_f64: f64 => "red.add.f64 [{p}], {v};", reg64;
    /// [`red_add_f32`] on shared memory: the generic address is turned into a shared-window one
    /// (`cvta.to.shared`) and added by `red.shared.add.f32`, which skips the generic path's
    /// state-space check. `ptr` must point into shared memory.
    red_shared_add_f32: f32 => "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; red.shared.add.f32 [s], {v}; }}", reg32;
    /// [`red_add_f64`] on shared memory (`red.shared.add.f64`, CC 6.0+). `ptr` must point into
    /// shared memory.
    red_shared_add_f64: f64 => "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; red.shared.add.f64 [s], {v}; }}", reg64;
}
