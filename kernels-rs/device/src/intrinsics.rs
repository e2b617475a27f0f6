//! Bit intrinsics (all CC 1.0+; they compile to single PTX instructions).

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
