//! GpuScan plans: PlanCustomPath and the plan-private state.
//!
//! A GpuScan CustomScan carries:
//! - `scan.plan.qual`: the quals that stay on the CPU (EXPLAIN's `Filter`);
//! - `custom_exprs`: every qual, in the order PostgreSQL evaluates them
//!   (the CPU path re-runs exactly these), then the hoisted parameter
//!   expressions of the device program (evaluated once per scan); kept
//!   here so that setrefs and the subplan machinery fix them up;
//! - `custom_private`: one [`GpuScanInfo`] in the device plans' one
//!   encoding (`customscan::private`), copyObject- and nodeToString-safe,
//!   so the plan reaches parallel workers intact.

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::program::Program;

use crate::codegen;
use crate::customscan::node::plan_methods;
use crate::customscan::private::{self, Writer};
use crate::customscan::quals::split_quals;
use crate::errors;
use crate::gpuscan::{NAME, exec};
use crate::pg::list::{from_list, to_list};

/// Layout version of [`GpuScanInfo`] in `custom_private`.
const INFO_VERSION: u32 = 2;

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

impl GpuScanInfo {
    /// Serialize into a `custom_private` List.
    fn to_private(&self) -> *mut pg_sys::List {
        let mut w = Writer::new(INFO_VERSION);
        w.program(Some(&self.program));
        w.columns(&self.columns);
        w.u32(self.on_device.len() as u32);
        for &d in &self.on_device {
            w.bool(d);
        }
        w.u16s(&self.param_types);
        // SAFETY: a one-item List in the planner's memory context.
        unsafe { pg_sys::lappend(std::ptr::null_mut(), w.into_node().cast()) }
    }

    /// Read back what [`Self::to_private`] wrote; a plan from another
    /// version or a damaged one is an ERROR, never a crash.
    ///
    /// # Safety
    /// `private` is the `custom_private` of a GpuScan CustomScan.
    pub unsafe fn from_private(private: *mut pg_sys::List) -> GpuScanInfo {
        // SAFETY: caller's promise.
        unsafe {
            private::read(private, 1, "GpuScan", INFO_VERSION, |r| {
                let program = r.program()??;
                let columns = r.columns()?;
                let n = r.u32()?;
                let on_device = (0..n).map(|_| r.bool()).collect::<Option<Vec<_>>>()?;
                let param_types = r.u16s()?;
                Some(GpuScanInfo { program, columns, on_device, param_types })
            })
        }
    }
}

plan_methods!(NAME, plan_custom_path, exec::create_scan_state);

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
