//! The EXPLAIN fields every device node prints about GPUs.

use pgrx::pg_sys;

use crate::pg::explain::prop_text;

/// `GPU Candidates` (with several GPUs: the GPUs a scan was placed among,
/// and why) and, after a run whose processes used more than one GPU,
/// `GPUs Used`.
pub(crate) fn explain_placement(
    candidates: Option<&pgstrom_runtime::placement::Preference>,
    used: u64,
    es: *mut pg_sys::ExplainState,
) {
    if let Some(p) = candidates {
        prop_text(c"GPU Candidates", &pgstrom_runtime::placement::candidates_text(p), es);
    }
    // SAFETY: valid ExplainState.
    if unsafe { (*es).analyze } && used.count_ones() > 1 {
        prop_text(c"GPUs Used", &crate::engine::gpus_text(used), es);
    }
}
