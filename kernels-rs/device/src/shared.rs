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
        impl $name {
            /// Generic pointer to the first element of this shared array.
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
        }
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
        impl $name {
            /// Generic pointer to the start of the dynamic shared memory.
            #[inline(always)]
            $vis fn ptr() -> *mut $ty {
                let p: *mut $ty;
                // SAFETY: as in `static_shared!`.
                unsafe {
                    core::arch::asm!(
                        concat!("cvta.shared.u64 {p}, ", stringify!($name), ";"),
                        p = out(reg64) p,
                        options(pure, nomem, nostack, preserves_flags),
                    );
                }
                p
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
