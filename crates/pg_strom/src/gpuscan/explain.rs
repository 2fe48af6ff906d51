//! GpuScan's EXPLAIN fields (ExplainCustomScan).
//!
//! Always: `GPU Filter` (the quals the device evaluates, deparsed as
//! PostgreSQL prints quals), `GPU Projection` (the output expressions the
//! device computes, when any), `GPU Preference` (the engine: `GPU0 (name)`,
//! or `none (CPU engine)`), `GPU Candidates` (with several GPUs: those the
//! scan was placed among, and why), `referenced` (the columns the device
//! reads).
//! With VERBOSE: `GPU Program`, the device program listing.  With ANALYZE:
//! `Rows Removed by GPU Filter` (per loop, as PostgreSQL counts
//! `Rows Removed by Filter`, workers included), `GPU Chunks`, `GPU Input`
//! (rows and bytes handed to the engine), `CPU Path Rows` (rows of chunks
//! the engine could not finish, re-evaluated by PostgreSQL), `Heap Direct
//! Read` and `Storage Read` (the heap direct path's blocks), and with
//! TIMING `GPU Time`; `GPUs Used` when the scan's processes ran on more
//! than one GPU.  PostgreSQL itself prints `Filter` and
//! `Rows Removed by Filter` for the quals left on the CPU.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;

use crate::customscan::explain::explain_placement;
use crate::gpuscan::exec::{GpuScanExec, engine_of};
use crate::pg::explain::{column_name, prop_int, prop_text};
use crate::pg::list::{from_list, to_list};

/// GpuScan's EXPLAIN fields (ExplainCustomScan) of a node whose state is
/// `st`.
///
/// # Safety
/// EXPLAIN callback of `node`, whose executor state `st` is; `es` valid.
pub unsafe fn explain(
    node: *mut pg_sys::CustomScanState,
    st: &mut GpuScanExec,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: caller's promise.
    unsafe {
        let plan = (*node).ss.ps.plan;
        let cscan = plan as *mut pg_sys::CustomScan;
        let exprs = from_list((*cscan).custom_exprs);
        let device: Vec<*mut pg_sys::Node> =
            exprs.iter().zip(&st.info.on_device).filter(|(_, d)| **d).map(|(e, _)| *e).collect();
        let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, ancestors);
        let useprefix = (*es).verbose || pg_sys::list_length((*es).rtable) > 1;
        let text =
            pg_sys::deparse_expression(pg_sys::make_ands_explicit(to_list(&device)).cast(), context, useprefix, false);
        prop_text(c"GPU Filter", &CStr::from_ptr(text).to_string_lossy(), es);
        if !st.projections.is_empty() {
            // the target-list entries the device computes
            let tlist = from_list((*plan).targetlist);
            let shown: Vec<String> = st
                .projections
                .iter()
                .filter_map(|p| tlist.get(p.resno as usize - 1))
                .map(|&n| {
                    let e = (*(n as *mut pg_sys::TargetEntry)).expr;
                    CStr::from_ptr(pg_sys::deparse_expression(e.cast(), context, useprefix, false))
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            prop_text(c"GPU Projection", &shown.join(", "), es);
        }
        if (*es).analyze {
            let nloops = (*node).ss.ps.instrument.as_ref().map_or(1.0, |i| i.nloops.max(1.0));
            let removed = (*node).ss.ps.instrument.as_ref().map_or(0.0, |i| i.nfiltered2);
            // SAFETY: valid ExplainState.
            pg_sys::ExplainPropertyFloat(
                c"Rows Removed by GPU Filter".as_ptr(),
                std::ptr::null(),
                removed / nloops,
                0,
                es,
            );
        }
        let eng = engine_of(st);
        let mut pref = crate::engine::describe(eng);
        if crate::customscan::explain::heap_gpudirect(st.direct.as_deref(), &st.dev.counters, eng) {
            pref.push_str(" with GPUDirect SQL");
        }
        prop_text(c"GPU Preference", &pref, es);
        explain_placement(st.dev.candidates.as_ref(), st.dev.counters.gpus, es);
        let relid = (*(*node).ss.ss_currentRelation).rd_id;
        let names: Vec<String> = st.info.columns.iter().map(|(a, _)| column_name(relid, *a)).collect();
        match st.arrow_reader() {
            // Arrow_Fdw's lines: referenced, Stats-Hint, filesN
            Some(r) => r.explain(plan, es),
            None => prop_text(c"referenced", &names.join(", "), es),
        }
        if let Some(text) = st.source.gstore_text() {
            prop_text(c"GPU Store", &text, es);
        }
        st.source.explain_brin((*node).ss.ps.plan, es);
        if (*es).verbose {
            let listing =
                st.info.program.disassemble(&|i| names.get(i as usize).cloned().unwrap_or_else(|| format!("${i}")));
            if (*es).format == pg_sys::ExplainFormat::EXPLAIN_FORMAT_TEXT {
                // one instruction per line, indented under the label
                let mut text = String::from("GPU Program:\n");
                for line in listing.lines() {
                    text.push_str(&" ".repeat((*es).indent as usize * 2 + 2));
                    text.push_str(line);
                    text.push('\n');
                }
                let c = CString::new(text.replace('\0', "")).expect("NULs removed");
                pg_sys::appendStringInfoSpaces((*es).str_, (*es).indent * 2);
                pg_sys::appendStringInfoString((*es).str_, c.as_ptr());
            } else {
                prop_text(c"GPU Program", listing.trim_end(), es);
            }
        }
        if (*es).analyze {
            let c = st.dev.counters;
            prop_int(c"GPU Chunks", None, c.chunks as i64, es);
            prop_int(c"GPU Input Rows", None, c.rows_in as i64, es);
            prop_int(c"GPU Input Bytes", None, c.bytes as i64, es);
            prop_int(c"CPU Path Rows", None, c.rows_cpu_path as i64, es);
            if let Some(mode) = st.source.heap_read_mode() {
                prop_text(c"Heap Read", &crate::source::read_mode_text(mode, c.chunks, c.tid_chunks, c.ahead), es);
            }
            crate::customscan::explain::explain_heap_direct(st.direct.as_deref(), &c, eng, es);
            if (*es).timing {
                pg_sys::ExplainPropertyFloat(c"GPU Time".as_ptr(), c"ms".as_ptr(), c.engine_ns as f64 / 1e6, 3, es);
            }
        }
    }
}
