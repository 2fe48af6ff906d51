//! The one encoding of a device plan's private state.
//!
//! A CustomScan's `custom_private` must survive copyObject and
//! nodeToString (parallel workers get the plan as text), so each node's
//! info is written as bytes by a [`Writer`], kept as one String node of
//! hex digits at the head of `custom_private` (`expressions` may follow as
//! more list items), and read back by a [`Reader`].  Every info starts
//! with its layout version; a plan of another version, or a damaged one,
//! is an ERROR that asks for a re-plan, never a crash.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::program::Program;

use crate::errors;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// Writes a plan's info, little-endian.
#[derive(Default)]
pub struct Writer(Vec<u8>);

impl Writer {
    /// A writer whose info starts with layout `version`.
    pub fn new(version: u32) -> Writer {
        let mut w = Writer::default();
        w.u32(version);
        w
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bool(&mut self, v: bool) {
        self.u32(v as u32);
    }
    /// A list of u16 values (device types), length first.
    pub fn u16s(&mut self, v: &[u16]) {
        self.u32(v.len() as u32);
        for &t in v {
            self.u32(t as u32);
        }
    }
    /// A device program, or none.
    pub fn program(&mut self, p: Option<&Program>) {
        match p {
            None => self.u32(0),
            Some(p) => {
                let b = p.to_bytes().unwrap_or_else(|e| errors::raise("cannot serialize a device program", &e));
                self.u32(b.len() as u32);
                self.0.extend_from_slice(&b);
            }
        }
    }
    /// (attnum, device type) pairs.
    pub fn columns(&mut self, cols: &[(i16, u16)]) {
        self.u32(cols.len() as u32);
        for &(a, t) in cols {
            self.u32(a as u16 as u32 | (t as u32) << 16);
        }
    }
    /// The info as a String node (the head of `custom_private`).
    pub fn into_node(self) -> *mut pg_sys::Node {
        let text = CString::new(hex(&self.0)).expect("hex has no NUL");
        // SAFETY: makeString keeps the palloc'd copy, in the planner's
        // current memory context.
        unsafe { pg_sys::makeString(pg_sys::pstrdup(text.as_ptr())).cast() }
    }
}

/// Reads what a [`Writer`] wrote; every read is None past the end.
pub struct Reader<'a> {
    bytes: &'a [u8],
    /// The node's name, for the errors of a program that does not load.
    node: &'static str,
}

impl<'a> Reader<'a> {
    pub fn u32(&mut self) -> Option<u32> {
        let (h, t) = self.bytes.split_at_checked(4)?;
        self.bytes = t;
        Some(u32::from_le_bytes(h.try_into().ok()?))
    }
    pub fn f64(&mut self) -> Option<f64> {
        let (h, t) = self.bytes.split_at_checked(8)?;
        self.bytes = t;
        Some(f64::from_le_bytes(h.try_into().ok()?))
    }
    pub fn bool(&mut self) -> Option<bool> {
        self.u32().map(|v| v != 0)
    }
    pub fn u16s(&mut self) -> Option<Vec<u16>> {
        let n = self.u32()?;
        (0..n).map(|_| self.u32().map(|t| t as u16)).collect()
    }
    /// A device program (bound to the session's time zone), or none.
    pub fn program(&mut self) -> Option<Option<Program>> {
        let n = self.u32()? as usize;
        if n == 0 {
            return Some(None);
        }
        let (h, t) = self.bytes.split_at_checked(n)?;
        self.bytes = t;
        let mut p = Program::from_bytes(h)
            .unwrap_or_else(|e| errors::raise(&format!("cannot load the {} plan", self.node), &e));
        crate::timezone::bind(&mut p);
        Some(Some(p))
    }
    pub fn columns(&mut self) -> Option<Vec<(i16, u16)>> {
        let n = self.u32()?;
        (0..n).map(|_| self.u32().map(|v| (v as u16 as i16, (v >> 16) as u16))).collect()
    }
    /// True when every byte was read.
    pub fn at_end(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// An ERROR for a damaged plan of `node`, or one from another version.
pub fn bad_plan(node: &str, why: Option<&str>) -> ! {
    let msg = match why {
        Some(w) => format!("invalid {node} plan: {w}"),
        None => format!("invalid {node} plan"),
    };
    errors::raise_plain(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        msg,
        None,
        Some("Re-plan the query (for a prepared statement: DEALLOCATE and PREPARE it again)."),
    )
}

/// Read the info at the head of `private` (at most `max_len` items in
/// all) with `read`, which gets a [`Reader`] past the version; an ERROR
/// unless the version is `version` and `read` consumed every byte.
///
/// # Safety
/// `private` is the `custom_private` of a CustomScan of `node`.
pub unsafe fn read<T>(
    private: *mut pg_sys::List,
    max_len: i32,
    node: &'static str,
    version: u32,
    read: impl FnOnce(&mut Reader<'_>) -> Option<T>,
) -> T {
    // SAFETY: checked as far as the shape goes before any item is used.
    unsafe {
        if !(1..=max_len).contains(&pg_sys::list_length(private)) {
            bad_plan(node, Some("private list has the wrong length"));
        }
        let s = pg_sys::list_nth(private, 0) as *mut pg_sys::Node;
        if s.is_null() || (*s).type_ != pg_sys::NodeTag::T_String {
            bad_plan(node, Some("private list has the wrong node types"));
        }
        let text = CStr::from_ptr((*(s as *mut pg_sys::String)).sval).to_string_lossy();
        let Some(bytes) = unhex(&text) else { bad_plan(node, Some("private state is not hex")) };
        let mut r = Reader { bytes: &bytes, node };
        if r.u32() != Some(version) {
            bad_plan(node, Some("made by another version of pg_strom"));
        }
        match read(&mut r) {
            Some(v) if r.at_end() => v,
            _ => bad_plan(node, None),
        }
    }
}
