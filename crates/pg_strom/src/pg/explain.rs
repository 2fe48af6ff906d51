//! EXPLAIN properties: text, integers, byte sizes, column names.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;

/// An EXPLAIN text property.
pub(crate) fn prop_text(label: &CStr, value: &str, es: *mut pg_sys::ExplainState) {
    let v = CString::new(value.replace('\0', "")).expect("NULs removed");
    // SAFETY: valid ExplainState; PostgreSQL copies the strings.
    unsafe { pg_sys::ExplainPropertyText(label.as_ptr(), v.as_ptr(), es) };
}

/// `exprs` (of `plan`'s node) as EXPLAIN deparses them, comma-separated.
///
/// # Safety
/// `plan` is the node's plan, `es` the ExplainState; the expressions
/// refer to the plan's range table.
pub(crate) unsafe fn deparse_list(
    exprs: &[*mut pg_sys::Node],
    plan: *mut pg_sys::Plan,
    es: *mut pg_sys::ExplainState,
) -> String {
    // SAFETY: caller's promise.
    unsafe {
        let ctx = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, std::ptr::null_mut());
        exprs
            .iter()
            .map(|&e| {
                CStr::from_ptr(pg_sys::deparse_expression(e, ctx, (*es).verbose, false)).to_string_lossy().into_owned()
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An EXPLAIN integer property, with an optional unit.
pub(crate) fn prop_int(label: &CStr, unit: Option<&CStr>, value: i64, es: *mut pg_sys::ExplainState) {
    // SAFETY: valid ExplainState; PostgreSQL copies the strings.
    unsafe { pg_sys::ExplainPropertyInteger(label.as_ptr(), unit.map_or(std::ptr::null(), |u| u.as_ptr()), value, es) };
}

/// A byte count as EXPLAIN prints sizes: `512 bytes`, `1.50KB`, `2.00MB`,
/// `3.25GB`.
pub(crate) fn size_text(n: u64) -> String {
    let f = n as f64;
    match n {
        n if n >= 1 << 30 => format!("{:.2}GB", f / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.2}MB", f / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.2}KB", f / 1024.0),
        n => format!("{n} bytes"),
    }
}

/// An estimated size (planner bytes), in KB at least: `0.50KB`, `2.00MB`.
pub(crate) fn size_text_kb(bytes: f64) -> String {
    if bytes >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}GB", bytes / (1024.0 * 1024.0 * 1024.0))
    } else if bytes >= 1024.0 * 1024.0 {
        format!("{:.2}MB", bytes / (1024.0 * 1024.0))
    } else {
        format!("{:.2}KB", bytes / 1024.0)
    }
}

/// The name of column `attnum` of `rel` (`$N` for a dropped one).
pub(crate) fn column_name(rel: pg_sys::Oid, attnum: i16) -> String {
    // SAFETY: get_attname with missing_ok returns NULL or a palloc'd name.
    unsafe {
        let n = pg_sys::get_attname(rel, attnum, true);
        if n.is_null() { format!("${attnum}") } else { CStr::from_ptr(n).to_string_lossy().into_owned() }
    }
}
