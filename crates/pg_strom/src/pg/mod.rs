//! Helpers over PostgreSQL's C API that every module uses and that know
//! nothing of pg_strom's nodes: Lists, memory contexts, EXPLAIN
//! properties, the planner's parallel-cost rules, which wrapper a foreign
//! table belongs to, an expression below its binary-compatible casts,
//! and PostgreSQL's `TupIsNull`.  The lowest layer
//! of the extension: it imports only `errors`.

pub mod compat;
pub mod cost;
pub mod explain;
pub mod list;
pub mod memctx;
pub mod phase;

use pgrx::pg_sys;

/// The value of `state` (an initialized expression of the scan node
/// `ps`), None for NULL, evaluated in the query's memory context so that
/// a by-reference value lives as long as the scan: a comparison value the
/// scan prunes by (Arrow statistics hints, BRIN keys), taken at its start
/// and again after each rescan.
///
/// # Safety
/// A backend, during `ps`'s execution.
pub unsafe fn eval_for_scan(state: *mut pg_sys::ExprState, ps: *mut pg_sys::PlanState) -> Option<pg_sys::Datum> {
    // SAFETY: caller's promise.
    unsafe {
        let _cxt = memctx::Switched::to((*(*ps).state).es_query_cxt);
        let mut isnull = false;
        let eval = (*state).evalfunc.expect("an initialized expression");
        let v = eval(state, (*ps).ps_ExprContext, &mut isnull);
        (!isnull).then_some(v)
    }
}

/// PostgreSQL's `TupIsNull`: no slot, or an empty one (the end of a plan's
/// rows).
///
/// # Safety
/// `slot` is NULL or a valid slot.
pub unsafe fn tup_is_null(slot: *mut pg_sys::TupleTableSlot) -> bool {
    // SAFETY: caller's promise.
    slot.is_null() || unsafe { (*slot).tts_flags } & pg_sys::TTS_FLAG_EMPTY as u16 != 0
}

/// `e` without the RelabelTypes (binary-compatible casts) above it.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn strip_relabel(e: *mut pg_sys::Node) -> *mut pg_sys::Node {
    let mut v = e;
    // SAFETY: a valid expression (caller); a RelabelType's arg is one too.
    unsafe {
        while (*v).type_ == pg_sys::NodeTag::T_RelabelType {
            v = (*(v as *mut pg_sys::RelabelType)).arg.cast();
        }
    }
    v
}

/// An attribute's alignment in bytes (its `attalign`: c, s, i or d).
///
/// # Safety
/// `att` is an attribute of a valid tuple descriptor.
pub unsafe fn attalign_bytes(att: *const pg_sys::FormData_pg_attribute) -> u8 {
    // SAFETY: caller's promise.
    match unsafe { (*att).attalign } as u8 {
        b'c' => 1,
        b's' => 2,
        b'i' => 4,
        _ => 8,
    }
}

/// A plain (unparameterized, unsorted) ForeignPath of a foreign base
/// relation with these rows and costs and the FDW's `fdw_private`.
pub use compat::foreignscan_path as foreign_path;

/// Run `f` with each (setting, value) of `settings` set at a new nesting
/// level, as a function's SET clause does, and put back after it (an
/// ERROR puts them back at abort).
pub fn with_settings<T>(settings: &[(&std::ffi::CStr, &std::ffi::CStr)], f: impl FnOnce() -> T) -> T {
    // SAFETY: settings saved and restored at a nesting level of this
    // backend's.
    unsafe {
        let level = pg_sys::NewGUCNestLevel();
        for (name, value) in settings {
            pg_sys::set_config_option(
                name.as_ptr(),
                value.as_ptr(),
                pg_sys::GucContext::PGC_USERSET,
                pg_sys::GucSource::PGC_S_SESSION,
                pg_sys::GucAction::GUC_ACTION_SAVE,
                true,
                pgrx::PgLogLevel::ERROR as i32,
                false,
            );
        }
        let out = f();
        pg_sys::AtEOXact_GUC(true, level);
        out
    }
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
