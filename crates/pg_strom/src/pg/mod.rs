//! Helpers over PostgreSQL's C API that every module uses and that know
//! nothing of pg_strom's nodes: Lists, memory contexts, EXPLAIN
//! properties, the planner's parallel-cost rules, and PostgreSQL's
//! `TupIsNull`.  The lowest layer
//! of the extension: it imports only `errors`.

pub mod cost;
pub mod explain;
pub mod list;
pub mod memctx;

use pgrx::pg_sys;

/// PostgreSQL's `TupIsNull`: no slot, or an empty one (the end of a plan's
/// rows).
///
/// # Safety
/// `slot` is NULL or a valid slot.
pub unsafe fn tup_is_null(slot: *mut pg_sys::TupleTableSlot) -> bool {
    // SAFETY: caller's promise.
    slot.is_null() || unsafe { (*slot).tts_flags } & pg_sys::TTS_FLAG_EMPTY as u16 != 0
}
