//! Helpers over PostgreSQL's C API that every module uses and that know
//! nothing of pg_strom's nodes: Lists, memory contexts, EXPLAIN
//! properties, the planner's parallel-cost rules, which wrapper a foreign
//! table belongs to, and PostgreSQL's
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

/// Is `relid` a foreign table whose wrapper's handler function is named
/// `handler`?
pub fn fdw_handler_is(relid: pg_sys::Oid, handler: &std::ffi::CStr) -> bool {
    // SAFETY: catalog lookups of an existing relation.
    unsafe {
        if pg_sys::get_rel_relkind(relid) != pg_sys::RELKIND_FOREIGN_TABLE as std::ffi::c_char {
            return false;
        }
        let server = pg_sys::GetForeignServer((*pg_sys::GetForeignTable(relid)).serverid);
        let func = (*pg_sys::GetForeignDataWrapper((*server).fdwid)).fdwhandler;
        let name = pg_sys::get_func_name(func);
        !name.is_null() && std::ffi::CStr::from_ptr(name) == handler
    }
}
