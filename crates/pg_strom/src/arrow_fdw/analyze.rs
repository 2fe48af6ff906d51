//! ANALYZE of Arrow_Fdw tables: AnalyzeForeignTable and its sample-rows
//! function.
//!
//! The row count comes from the record batch headers; the sample is up to
//! `targrows` rows at random positions over all batches of all files
//! (every column converted as a scan converts it), so PostgreSQL's column
//! statistics (null fraction, distinct values, histograms) and therefore
//! the planner's estimates exist for Arrow tables too.  Only the batches
//! that hold sampled rows are read.  The positions are random, as the heap
//! AM's are (`pgstrom_arrow::sample`).

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::reader::ArrowReader;

#[pg_guard]
pub unsafe extern "C-unwind" fn analyze(
    rel: pg_sys::Relation,
    func: *mut pg_sys::AcquireSampleRowsFunc,
    totalpages: *mut pg_sys::BlockNumber,
) -> bool {
    // SAFETY: ANALYZE's arguments.
    unsafe {
        *func = Some(sample_rows);
        let (_, files) = super::scan::open_files(rel);
        let bytes: u64 = files.iter().map(|f| f.size).sum();
        *totalpages = (bytes / pg_sys::BLCKSZ as u64).clamp(1, u32::MAX as u64 - 1) as pg_sys::BlockNumber;
        true
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn sample_rows(
    rel: pg_sys::Relation,
    _elevel: i32,
    rows: *mut pg_sys::HeapTuple,
    targrows: i32,
    totalrows: *mut f64,
    totaldeadrows: *mut f64,
) -> i32 {
    // SAFETY: ANALYZE's arguments; rows has room for targrows tuples, made
    // in the current (ANALYZE's) memory context.
    unsafe {
        let tupdesc = (*rel).rd_att;
        let natts = (*tupdesc).natts as i16;
        let attnums: Vec<i16> = (1..=natts).collect();
        let mut reader = ArrowReader::open(rel, &attnums, Vec::new(), std::ptr::null_mut(), &[], false);
        let counts: Vec<usize> = (0..reader.nbatches()).map(|g| reader.rows_of(g)).collect();
        let total: usize = counts.iter().sum();
        *totalrows = total as f64;
        *totaldeadrows = 0.0;
        let want = (targrows.max(0) as usize).min(total);
        if want == 0 {
            return 0;
        }
        let positions = pgstrom_arrow::sample::positions(total, want, |hi| {
            pg_sys::pg_prng_uint64_range(&raw mut pg_sys::pg_global_prng_state, 0, hi as u64) as usize
        });
        let slot = pg_sys::MakeSingleTupleTableSlot(tupdesc, &raw const pg_sys::TTSOpsVirtual);
        let mut n = 0usize;
        let mut first = 0usize; // the first row of batch g
        reader.push_context();
        for (g, &rows_in) in counts.iter().enumerate() {
            let end = first + rows_in;
            // the sample positions within the batch
            let k0 = n;
            while n < positions.len() && positions[n] < end {
                n += 1;
            }
            if k0 < n {
                reader.load(g);
                for (i, &at) in positions[k0..n].iter().enumerate() {
                    reader.store_row(at - first, slot);
                    *rows.add(k0 + i) = pg_sys::ExecCopySlotHeapTuple(slot);
                }
            }
            first = end;
            pgrx::check_for_interrupts!();
        }
        reader.pop_context();
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        n as i32
    }
}
