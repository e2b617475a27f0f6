//! Warp-level building blocks over keys (CC 7.0+: `match.any`).
use gpu_device::atomic::red_add_u32;
use gpu_device::intrinsics::{ffs, popc};
use gpu_device::warp::{lanemask_lt, match_any_sync, FULL_MASK};

/// The lanes holding the same key as this one (`peers`) and this lane's rank among them in lane
/// order (0 for the lowest lane, the group's leader). All 32 lanes must call it.
///
/// Stable: lower lanes rank first, which is what per-key ranks in input order need.
#[inline(always)]
pub fn match_rank(key: u32) -> (u32, u32) {
    let peers = match_any_sync(FULL_MASK, key);
    (peers, popc(peers & lanemask_lt()))
}

/// The lowest lane of a non-empty peer mask (the group's leader).
#[inline(always)]
pub fn leader(peers: u32) -> u32 {
    ffs(peers) - 1
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
        unsafe { red_add_u32(counts.add(key as usize), popc(peers)) };
    }
}
