//! Warp-level intrinsics: lane id, shuffles, votes, match-any. Every `_sync` function takes a
//! member mask naming the lanes that take part; each of those lanes must execute the call.
//! Shuffles, ballot and votes need CC 3.0+ (the `.sync` forms are PTX 6.0); match-any CC 7.0+.

/// Mask of all 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

#[allow(improper_ctypes)]
extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_up_i32(mask: u32, val: i32, delta: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_down_i32(mask: u32, val: i32, delta: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx_i32(mask: u32, val: i32, lane: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly_i32(mask: u32, val: i32, lane_mask: u32, c: u32) -> i32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn vote_all_sync(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any_sync(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn match_any_i32(mask: u32, val: i32) -> u32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
}

/// This thread's lane in its warp, 0..32 (`%laneid`). CC 1.0+.
#[inline(always)]
pub fn lane_id() -> u32 {
    let r: u32;
    // SAFETY: reading a special register.
    unsafe { core::arch::asm!("mov.u32 {r}, %laneid;", r = out(reg32) r) };
    r
}

/// Mask of the lanes below this one (`%lanemask_lt`): `popc(ballot & lanemask_lt())` ranks a
/// lane among the voters. CC 2.0+.
#[inline(always)]
pub fn lanemask_lt() -> u32 {
    let r: u32;
    // SAFETY: reading a special register.
    unsafe { core::arch::asm!("mov.u32 {r}, %lanemask_lt;", r = out(reg32) r) };
    r
}

/// `__syncwarp(mask)`: barrier and memory ordering among the lanes in `mask`. CC 3.0+ (PTX 6.0).
#[inline(always)]
pub fn sync_warp(mask: u32) {
    // SAFETY: warp barrier; every lane in `mask` must reach it.
    unsafe { bar_warp_sync(mask) }
}

/// Values that travel through a shuffle: 32-bit words directly, 64-bit ones as two halves.
pub trait Shuffle: Copy {
    /// Applies `f` to each 32-bit word of `self` and reassembles the result.
    fn map_words(self, f: impl Fn(i32) -> i32) -> Self;
}

macro_rules! shuffle32 {
    ($($t:ty),*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            fn map_words(self, f: impl Fn(i32) -> i32) -> Self {
                <$t>::from_ne_bytes(f(i32::from_ne_bytes(self.to_ne_bytes())).to_ne_bytes())
            }
        }
    )*};
}
shuffle32!(u32, i32, f32);

macro_rules! shuffle64 {
    ($($t:ty),*) => {$(
        impl Shuffle for $t {
            #[inline(always)]
            fn map_words(self, f: impl Fn(i32) -> i32) -> Self {
                let bits = u64::from_ne_bytes(self.to_ne_bytes());
                let lo = f(bits as u32 as i32) as u32 as u64;
                let hi = f((bits >> 32) as u32 as i32) as u32 as u64;
                <$t>::from_ne_bytes((lo | (hi << 32)).to_ne_bytes())
            }
        }
    )*};
}
shuffle64!(u64, i64, f64);

/// `__shfl_up_sync`: the value of lane `lane_id() - delta`; lanes below `delta` keep their own.
/// CC 3.0+.
#[inline(always)]
pub fn shfl_up_sync<T: Shuffle>(mask: u32, val: T, delta: u32) -> T {
    // SAFETY: every lane in `mask` executes this shuffle (caller's contract, as in CUDA).
    val.map_words(|w| unsafe { shfl_up_i32(mask, w, delta, 0) })
}

/// `__shfl_down_sync`: the value of lane `lane_id() + delta`; lanes past the end keep their own.
/// CC 3.0+.
#[inline(always)]
pub fn shfl_down_sync<T: Shuffle>(mask: u32, val: T, delta: u32) -> T {
    // SAFETY: as `shfl_up_sync`.
    val.map_words(|w| unsafe { shfl_down_i32(mask, w, delta, 0x1f) })
}

/// `__shfl_sync`: the value of lane `src_lane` (mod 32). CC 3.0+.
#[inline(always)]
pub fn shfl_idx_sync<T: Shuffle>(mask: u32, val: T, src_lane: u32) -> T {
    // SAFETY: as `shfl_up_sync`.
    val.map_words(|w| unsafe { shfl_idx_i32(mask, w, src_lane, 0x1f) })
}

/// `__shfl_xor_sync`: the value of lane `lane_id() ^ lane_mask` (butterfly). CC 3.0+.
#[inline(always)]
pub fn shfl_xor_sync<T: Shuffle>(mask: u32, val: T, lane_mask: u32) -> T {
    // SAFETY: as `shfl_up_sync`.
    val.map_words(|w| unsafe { shfl_bfly_i32(mask, w, lane_mask, 0x1f) })
}

/// `__ballot_sync`: bit `i` set when lane `i` passed `true`. CC 3.0+.
#[inline(always)]
pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
    // SAFETY: every lane in `mask` executes this vote.
    unsafe { vote_ballot_sync(mask, pred) }
}

/// `__all_sync`: `true` when every lane in `mask` passed `true`. CC 3.0+.
#[inline(always)]
pub fn all_sync(mask: u32, pred: bool) -> bool {
    // SAFETY: every lane in `mask` executes this vote.
    unsafe { vote_all_sync(mask, pred) }
}

/// `__any_sync`: `true` when some lane in `mask` passed `true`. CC 3.0+.
#[inline(always)]
pub fn any_sync(mask: u32, pred: bool) -> bool {
    // SAFETY: every lane in `mask` executes this vote.
    unsafe { vote_any_sync(mask, pred) }
}

/// `__match_any_sync`: mask of the lanes in `mask` whose `val` equals this lane's. CC 7.0+.
#[inline(always)]
pub fn match_any_sync(mask: u32, val: u32) -> u32 {
    // SAFETY: every lane in `mask` executes this match.
    unsafe { match_any_i32(mask, val as i32) }
}

/// Most bits [`match_low_bits`] compares.
pub const MATCH_MAX_BITS: u32 = 9;

/// The lanes of a full warp whose low `bits` bits of `v` equal this lane's (`bits <=`
/// [`MATCH_MAX_BITS`], the same in every lane), by one `vote.ballot` a bit: the vote pipe instead
/// of `match.any`'s (which is issued through the MIO queue with shared-memory traffic; CUB's
/// `MatchAny` does the same for radix digits). All 32 lanes must call it. CC 3.0+.
#[inline(always)]
pub fn match_low_bits(v: u32, bits: u32) -> u32 {
    let mut peers = FULL_MASK;
    crate::unroll!(b in [0, 1, 2, 3, 4, 5, 6, 7, 8] {
        if (b as u32) < bits {
            let set = (v >> b) & 1 != 0;
            let voters = ballot_sync(FULL_MASK, set);
            peers &= if set { voters } else { !voters };
        }
    });
    peers
}

/// Inclusive prefix sum of `v` over the lanes of a full warp (lane `i` gets the sum of lanes
/// `0..=i`), by `log2(32)` `shfl.up` steps. All 32 lanes must call it. CC 3.0+.
#[inline(always)]
pub fn inclusive_sum_u32(v: u32) -> u32 {
    let lane = lane_id();
    let mut inc = v;
    let mut off = 1;
    while off < 32 {
        let y = shfl_up_sync(FULL_MASK, inc, off);
        if lane >= off {
            inc += y;
        }
        off *= 2;
    }
    inc
}

/// `op` of `v` over the lanes of a full warp, in every lane, by `log2(32)` `shfl.bfly` steps
/// (`op` associative and commutative). All 32 lanes must call it. CC 3.0+.
#[inline(always)]
pub fn reduce_u32(v: u32, op: impl Fn(u32, u32) -> u32) -> u32 {
    let mut s = v;
    let mut m = 16;
    while m > 0 {
        s = op(s, shfl_xor_sync(FULL_MASK, s, m));
        m /= 2;
    }
    s
}

/// Sum of `v` over the lanes of a full warp, in every lane (with `u32` wrapping adds the order
/// does not matter). All 32 lanes must call it. CC 3.0+.
#[inline(always)]
pub fn sum_u32(v: u32) -> u32 {
    reduce_u32(v, u32::wrapping_add)
}

/// Largest `v` over the lanes of a full warp, in every lane. All 32 lanes must call it. CC 3.0+.
#[inline(always)]
pub fn max_u32(v: u32) -> u32 {
    reduce_u32(v, u32::max)
}

/// Smallest `v` over the lanes of a full warp, in every lane. All 32 lanes must call it. CC 3.0+.
#[inline(always)]
pub fn min_u32(v: u32) -> u32 {
    reduce_u32(v, u32::min)
}

/// The lanes holding the same key as this one (`peers`) and this lane's rank among them in lane
/// order (0 for the lowest lane, the group's leader). All 32 lanes must call it.
///
/// Stable: lower lanes rank first, which is what per-key ranks in input order need.
#[inline(always)]
pub fn match_rank(key: u32) -> (u32, u32) {
    let peers = match_any_sync(FULL_MASK, key);
    (peers, crate::intrinsics::popc(peers & lanemask_lt()))
}

/// The lowest lane of a non-empty peer mask (the group's leader).
#[inline(always)]
pub fn leader(peers: u32) -> u32 {
    crate::intrinsics::ffs(peers) - 1
}

/// Warp-aggregated increment: every lane with `valid` adds one to `counts[key]`, with one atomic
/// per distinct key of the warp (its leader adds the group's size). Lanes with equal keys must
/// agree on `valid` (true when `valid` depends only on the key). All 32 lanes must call it.
///
/// # Safety
/// `counts[key]` must be a valid global or shared word for every lane with `valid`.
#[inline(always)]
pub unsafe fn aggregated_increment(counts: *mut u32, key: u32, valid: bool) {
    let (peers, rank) = match_rank(key);
    if valid && rank == 0 {
        // SAFETY: forwarded to the caller.
        unsafe { crate::atomic::red_add_u32(counts.add(key as usize), crate::intrinsics::popc(peers)) };
    }
}
