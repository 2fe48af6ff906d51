//! The EXPLAIN fields every device node prints about GPUs, and those of
//! the heap direct path.

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

/// Whether a node on the heap direct path (`direct`) reads a heap file by
/// cuFile (GPUDirect SQL): after a run, whether it did; before, whether
/// the engine and the storage settings would (`GPU Preference`'s `with
/// GPUDirect SQL`).
pub(crate) fn heap_gpudirect(
    direct: Option<&crate::source::heap_direct::HeapDirect>,
    c: &crate::customscan::counters::Counters,
    eng: &dyn pgstrom_runtime::Engine,
) -> bool {
    direct.is_some_and(|d| {
        if c.chunks > 0 {
            d.cufile_files > 0
        } else {
            eng.gpudirect().is_some_and(|mode| crate::guc::read_policy().direct.allows(mode))
        }
    })
}

/// EXPLAIN ANALYZE's `Heap Direct Read` (the blocks the GPU service read
/// and those left to the buffer manager, over the processes) and, on a
/// GPU, `Storage Read` (by which storage path), when the heap direct path
/// read any block.
pub(crate) fn explain_heap_direct(
    direct: Option<&crate::source::heap_direct::HeapDirect>,
    c: &crate::customscan::counters::Counters,
    eng: &dyn pgstrom_runtime::Engine,
    es: *mut pg_sys::ExplainState,
) {
    use crate::pg::explain::size_text_kb;
    if !c.direct.iter().take(3).any(|&n| n > 0) {
        return;
    }
    prop_text(c"Heap Direct Read", &crate::source::heap_direct::HeapDirect::explain_text(c.direct), es);
    if eng.kind() == pgstrom_runtime::EngineKind::Gpu {
        let mut text = format!(
            "cuFile: {}, pinned buffers: {}, GPU column cache: {}",
            size_text_kb(c.cufile_bytes as f64),
            size_text_kb(c.pinned_bytes as f64),
            size_text_kb(c.cached_bytes as f64)
        );
        if let Some(why) = direct.and_then(|d| d.refused_why.as_ref()) {
            text.push_str(&format!(" (cuFile refused the file: {why})"));
        }
        prop_text(c"Storage Read", &text, es);
    }
}
