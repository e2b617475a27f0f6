//! Bit intrinsics (all CC 1.0+) and the f64 square root: each compiles to a single PTX instruction.

/// `__popc`: number of set bits.
#[inline(always)]
pub fn popc(x: u32) -> u32 {
    x.count_ones()
}

/// `__popcll`: number of set bits of a 64-bit word.
#[inline(always)]
pub fn popcll(x: u64) -> u32 {
    x.count_ones()
}

/// `__clz`: leading zero bits (32 for 0).
#[inline(always)]
pub fn clz(x: u32) -> u32 {
    x.leading_zeros()
}

/// `__ffs`: 1-based position of the lowest set bit, 0 when `x == 0`.
#[inline(always)]
pub fn ffs(x: u32) -> u32 {
    if x == 0 {
        0
    } else {
        x.trailing_zeros() + 1
    }
}

/// `__brev`: bits reversed.
#[inline(always)]
pub fn brev(x: u32) -> u32 {
    x.reverse_bits()
}

/// `sqrt` of an `f64`, correctly rounded (`sqrt.rn.f64`, CC 1.3+): `core` has no square root.
#[inline(always)]
pub fn sqrt_f64(x: f64) -> f64 {
    let r: f64;
    // SAFETY: a pure arithmetic instruction.
    unsafe { core::arch::asm!("sqrt.rn.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x, options(pure, nomem, nostack, preserves_flags)) };
    r
}
