//! The serial twin: the specification, in plain loops.

/// One merge pass: every adjacent pair of sorted runs of length `s` (runs `2p` and `2p + 1`; the
/// last ones may be shorter or missing) becomes one sorted run of `2s`, stably: on equal keys the
/// left run's items come first. Values travel with their keys.
///
/// ```
/// let (k, v) = gpu_segmerge::serial::merge_pass(&[1, 4, 2, 4, 0], &[0, 1, 2, 3, 4], 2);
/// assert_eq!((k, v), (vec![1, 2, 4, 4, 0], vec![0, 2, 1, 3, 4]));
/// ```
pub fn merge_pass(keys: &[u32], values: &[u32], s: usize) -> (Vec<u32>, Vec<u32>) {
    let n = keys.len();
    let (mut ko, mut vo) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut pb = 0;
    while pb < n {
        let (a_end, b_end) = ((pb + s).min(n), (pb + 2 * s).min(n));
        let (mut i, mut j) = (pb, a_end);
        while i < a_end || j < b_end {
            // Left first unless the right key is strictly smaller.
            if i < a_end && (j >= b_end || keys[j] >= keys[i]) {
                ko.push(keys[i]);
                vo.push(values[i]);
                i += 1;
            } else {
                ko.push(keys[j]);
                vo.push(values[j]);
                j += 1;
            }
        }
        pb += 2 * s;
    }
    (ko, vo)
}
