//! GpuScan plans: PlanCustomPath and the plan-private state.
//!
//! A GpuScan CustomScan carries:
//! - `scan.plan.qual`: the quals that stay on the CPU (EXPLAIN's `Filter`);
//! - `custom_exprs`: every qual, in the order PostgreSQL evaluates them
//!   (the CPU path re-runs exactly these), then the hoisted parameter
//!   expressions of the device program (evaluated once per scan); kept
//!   here so that setrefs and the subplan machinery fix them up;
//! - `custom_private`: one [`GpuScanInfo`] as an IntList and a String
//!   (the device program, hex), both copyObject- and
//!   nodeToString-safe, so the plan reaches parallel workers intact.

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::program::Program;

use crate::codegen;
use crate::errors;
use crate::gpuscan::path::{from_list, split_quals, to_list};
use crate::gpuscan::{NAME, exec};

/// Layout version of [`GpuScanInfo`] in `custom_private`.
const INFO_VERSION: i32 = 1;

/// What a GpuScan plan knows beyond the standard fields.
#[derive(Debug, Clone)]
pub struct GpuScanInfo {
    /// The device program: the AND of the device quals.
    pub program: Program,
    /// Columns the program reads, in program order: (attnum, device type).
    pub columns: Vec<(i16, u16)>,
    /// Per qual in `custom_exprs` (PostgreSQL's order): true when the
    /// device evaluates it.
    pub on_device: Vec<bool>,
    /// Device type of each hoisted parameter (after the quals in
    /// `custom_exprs`).
    pub param_types: Vec<u16>,
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

impl GpuScanInfo {
    /// Serialize into a `custom_private` List.
    fn to_private(&self) -> *mut pg_sys::List {
        let mut ints =
            vec![INFO_VERSION, self.columns.len() as i32, self.on_device.len() as i32, self.param_types.len() as i32];
        ints.extend(self.columns.iter().flat_map(|&(a, t)| [a as i32, t as i32]));
        ints.extend(self.on_device.iter().map(|&d| d as i32));
        ints.extend(self.param_types.iter().map(|&t| t as i32));
        let bytes = self.program.to_bytes().unwrap_or_else(|e| errors::raise("cannot serialize a device program", &e));
        // SAFETY: building Lists of plain values in the planner's context.
        unsafe {
            let mut ilist: *mut pg_sys::List = std::ptr::null_mut();
            for v in ints {
                ilist = pg_sys::lappend_int(ilist, v);
            }
            let text = std::ffi::CString::new(hex(&bytes)).expect("hex has no NUL");
            let s = pg_sys::makeString(pg_sys::pstrdup(text.as_ptr()));
            let mut list = pg_sys::lappend(std::ptr::null_mut(), ilist.cast());
            list = pg_sys::lappend(list, s.cast());
            list
        }
    }

    /// Read back what [`Self::to_private`] wrote; a plan from another
    /// version or a damaged one is an ERROR, never a crash.
    ///
    /// # Safety
    /// `private` is the `custom_private` of a GpuScan CustomScan.
    pub unsafe fn from_private(private: *mut pg_sys::List) -> GpuScanInfo {
        let bad = |why: &str| -> ! {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("invalid GpuScan plan: {why}"),
                None,
                Some("Re-plan the query (for a prepared statement: DEALLOCATE and PREPARE it again)."),
            )
        };
        // SAFETY: the list came from to_private (checked as far as its
        // shape goes before any element is used).
        unsafe {
            if pg_sys::list_length(private) != 2 {
                bad("private list has the wrong length");
            }
            let ilist = pg_sys::list_nth(private, 0) as *mut pg_sys::List;
            let snode = pg_sys::list_nth(private, 1) as *mut pg_sys::Node;
            if ilist.is_null()
                || (*ilist).type_ != pg_sys::NodeTag::T_IntList
                || snode.is_null()
                || (*snode).type_ != pg_sys::NodeTag::T_String
            {
                bad("private list has the wrong node types");
            }
            let ints: Vec<i32> = (0..pg_sys::list_length(ilist)).map(|i| pg_sys::list_nth_int(ilist, i)).collect();
            if ints.len() < 4 || ints[0] != INFO_VERSION {
                bad("made by another version of pg_strom");
            }
            let (ncols, nquals, nparams) = (ints[1] as usize, ints[2] as usize, ints[3] as usize);
            if ints.len() != 4 + 2 * ncols + nquals + nparams {
                bad("private list has the wrong length");
            }
            let body = &ints[4..];
            let columns = (0..ncols).map(|i| (body[2 * i] as i16, body[2 * i + 1] as u16)).collect();
            let on_device = body[2 * ncols..2 * ncols + nquals].iter().map(|&d| d != 0).collect();
            let param_types = body[2 * ncols + nquals..].iter().map(|&t| t as u16).collect();
            let sval = CStr::from_ptr((*(snode as *mut pg_sys::String)).sval).to_string_lossy();
            let Some(bytes) = unhex(&sval) else { bad("device program is not hex") };
            let mut program =
                Program::from_bytes(&bytes).unwrap_or_else(|e| errors::raise("cannot load the GpuScan plan", &e));
            crate::timezone::bind(&mut program);
            GpuScanInfo { program, columns, on_device, param_types }
        }
    }
}

static mut PATH_METHODS: pg_sys::CustomPathMethods = pg_sys::CustomPathMethods {
    CustomName: NAME.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
};

static mut SCAN_METHODS: pg_sys::CustomScanMethods =
    pg_sys::CustomScanMethods { CustomName: NAME.as_ptr(), CreateCustomScanState: Some(exec::create_scan_state) };

/// The path methods (PlanCustomPath).
pub fn path_methods() -> *const pg_sys::CustomPathMethods {
    &raw const PATH_METHODS
}

/// Register the scan methods by name, for parallel workers.
pub fn register_methods() {
    // SAFETY: _PG_init, once; the methods live for the process.
    unsafe { pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS) };
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
    _root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    clauses: *mut pg_sys::List,
    _custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: planner callback arguments are valid; `clauses` is the
    // relation's RestrictInfo list in PostgreSQL's evaluation order.
    unsafe {
        let varno = (*rel).relid as i32;
        let quals = from_list(pg_sys::extract_actual_clauses(clauses, false));
        let split = split_quals(&quals, varno);
        let on_device: Vec<bool> = quals.iter().map(|q| split.device.contains(q)).collect();
        let combined = pg_sys::make_ands_explicit(to_list(&split.device)) as *mut pg_sys::Node;
        let compiled = match codegen::compile(combined, varno) {
            Ok(c) => c,
            // the path was only made when this compiled
            Err(why) => errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "GpuScan quals no longer compile".into(),
                Some(why.0),
                None,
            ),
        };
        let mut exprs: Vec<*mut pg_sys::Node> = quals.clone();
        exprs.extend(compiled.params.iter().map(|(e, _)| pg_sys::copyObjectImpl((*e).cast()) as *mut pg_sys::Node));
        let info = GpuScanInfo {
            program: compiled.program,
            columns: compiled.columns,
            on_device,
            param_types: compiled.params.iter().map(|(_, t)| *t).collect(),
        };

        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.plan.qual = to_list(&split.host);
        (*cscan).scan.scanrelid = (*rel).relid;
        (*cscan).flags = (*best_path).flags;
        (*cscan).custom_plans = std::ptr::null_mut();
        (*cscan).custom_exprs = to_list(&exprs);
        (*cscan).custom_private = info.to_private();
        (*cscan).custom_scan_tlist = std::ptr::null_mut();
        (*cscan).methods = &raw const SCAN_METHODS;
        cscan.cast()
    }
}
