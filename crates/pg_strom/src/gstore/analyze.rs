//! Gstore_Fdw under ANALYZE: the FDW's AnalyzeForeignTable and its
//! sample-row function.
//!
//! The sample is drawn from the rows the ANALYZE's snapshot sees, as a
//! heap table's sample is from its live tuples: one pass over the row
//! versions of the replayed store, a uniform reservoir of `targrows`
//! (Algorithm R), returned in row-id order (the store's order, which a
//! device scan reads in, so the correlation PostgreSQL computes is that
//! order's).  Live rows are those visible; dead ones the other versions.
//! The table's size in pages is the rows' bytes over BLCKSZ, so that the
//! planner can scale `reltuples` to a store that grew since.

use std::ffi::c_int;

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::modify::heap_tuple;
use super::state::{self, Visibility};

/// AnalyzeForeignTable: always supported.
#[pg_guard]
pub unsafe extern "C-unwind" fn analyze(
    rel: pg_sys::Relation,
    func: *mut pg_sys::AcquireSampleRowsFunc,
    totalpages: *mut pg_sys::BlockNumber,
) -> bool {
    // SAFETY: ANALYZE's callback arguments; the table is open.
    unsafe {
        *func = Some(acquire_sample_rows);
        let bytes = state::with_store(rel, |st| st.bytes);
        *totalpages = pages_of(bytes);
    }
    true
}

/// The pages `bytes` of rows would fill, at least 1 (a table that holds
/// rows is never of 0 pages to the planner).
pub fn pages_of(bytes: u64) -> pg_sys::BlockNumber {
    bytes.div_ceil(pg_sys::BLCKSZ as u64).clamp(1, u32::MAX as u64 - 1) as pg_sys::BlockNumber
}

/// The sample: up to `targrows` of the visible rows into `rows`, their
/// number returned; the live and dead row versions counted.
#[pg_guard]
unsafe extern "C-unwind" fn acquire_sample_rows(
    rel: pg_sys::Relation,
    elevel: c_int,
    rows: *mut pg_sys::HeapTuple,
    targrows: c_int,
    totalrows: *mut f64,
    totaldeadrows: *mut f64,
) -> c_int {
    // SAFETY: ANALYZE's callback arguments: `rows` holds `targrows`
    // tuples, made in the current (the analyze) memory context.
    unsafe {
        let snapshot =
            if pg_sys::ActiveSnapshotSet() { pg_sys::GetActiveSnapshot() } else { pg_sys::GetTransactionSnapshot() };
        let relid = (*rel).rd_id;
        let target = targrows.max(0) as usize;
        let mut vis = Visibility::new(snapshot);
        // (row id, tuple) of the reservoir
        let mut sample: Vec<(usize, pg_sys::HeapTuple)> = Vec::with_capacity(target);
        let (mut live, mut versions) = (0u64, 0u64);
        state::with_store(rel, |st| {
            versions = st.rows.len() as u64;
            for id in 0..st.rows.len() {
                if id.is_multiple_of(1024) {
                    pgrx::check_for_interrupts!();
                    crate::pg::compat::analyze_delay_point();
                }
                if !vis.visible(st, id) {
                    continue;
                }
                // Algorithm R: the k-th live row replaces a random one
                // of the reservoir with probability target / (k + 1)
                let k = live;
                live += 1;
                let slot = if sample.len() < target {
                    sample.len()
                } else {
                    let j = pg_sys::pg_prng_uint64_range(&raw mut pg_sys::pg_global_prng_state, 0, k) as usize;
                    if j >= target {
                        continue;
                    }
                    pg_sys::heap_freetuple(sample[j].1);
                    j
                };
                let t = heap_tuple(relid, id as u64, &st.rows[id].tuple);
                if slot == sample.len() {
                    sample.push((id, t));
                } else {
                    sample[slot] = (id, t);
                }
            }
        });
        sample.sort_unstable_by_key(|s| s.0);
        for (i, (_, t)) in sample.iter().enumerate() {
            *rows.add(i) = *t;
        }
        *totalrows = live as f64;
        *totaldeadrows = (versions - live) as f64;
        let name = std::ffi::CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy();
        let text = format!(
            "\"{name}\": {versions} row versions in the gstore_fdw store, {live} live, {} dead; {} rows in sample",
            versions - live,
            sample.len()
        );
        // as analyze.c reports: INFO under VERBOSE, DEBUG2 otherwise
        if elevel as u32 >= pg_sys::INFO {
            pgrx::info!("{text}");
        } else {
            pgrx::debug2!("{text}");
        }
        sample.len() as c_int
    }
}
