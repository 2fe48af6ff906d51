//! BRIN block-range skipping for the heap scans of GpuScan, GpuJoin and
//! GpuPreAgg: the block ranges a BRIN index on the table rules out for
//! the scan's quals are never read, by the buffer manager path or the
//! heap direct path alike (both take their blocks from
//! `heap_pages::PageReader`, which asks [`BrinFilter::allows`]).
//!
//! The quals used are the statistics-hint clauses of the scan (`column op
//! value`, the value free of the table's columns and volatile functions,
//! `arrow_fdw::stats::hint_clauses`) whose operator belongs to the index
//! column's operator family (minmax, minmax-multi, bloom, inclusion
//! opclasses alike: the index's own consistent functions decide).  Of
//! several BRIN indexes the one with the most usable clauses is taken.
//! The ranges come from PostgreSQL's own bitmap scan of the index
//! (`index_getbitmap`, lossy pages): unsummarized ranges are always in
//! it, and a summary covers every tuple version of its range, so the
//! result is right for any MVCC snapshot, and each parallel process may
//! compute its own.  The values are evaluated when the scan starts and
//! again after a rescan (a Param's new value).
//!
//! Planning asks [`kept_fraction`] (through
//! `customscan::cost::brin_fraction`): the share of the table's blocks
//! the index keeps for the quals with constant values (the same bitmap
//! scan, run at plan time: the summaries say it, not statistics), unless
//! those hold only a few chunks' rows or the device is priced as
//! PostgreSQL's executor (the CPU engine).

use std::ffi::CStr;

use pgrx::pg_sys;

use crate::pg::list::from_list;

/// One index column's condition, ready for a scan key.
struct Key {
    /// The index column (1-based).
    attno: i16,
    strategy: u16,
    subtype: pg_sys::Oid,
    collation: pg_sys::Oid,
    proc_oid: pg_sys::Oid,
    /// The value's expression (evaluated at the scan's start and after a
    /// rescan), or at plan time a constant.
    state: *mut pg_sys::ExprState,
    value: Option<pg_sys::Datum>,
}

/// The blocks a BRIN index keeps for a scan.
pub struct BrinFilter {
    index: pg_sys::Oid,
    /// The clauses used, for EXPLAIN.
    clauses: Vec<*mut pg_sys::Node>,
    keys: Vec<Key>,
    ps: *mut pg_sys::PlanState,
    pages_per_range: u32,
    /// One bit per block of the table when the bitmap was taken; blocks
    /// past it (the table grew since) are read.
    allowed: Option<Vec<u64>>,
    nblocks: u32,
    /// The bitmap's ranges: kept, ruled out.
    pub ranges_read: u64,
    pub ranges_skipped: u64,
}

/// `BrinOptions` (access/brin.h): the index's reloptions.
#[repr(C)]
struct BrinOptions {
    vl_len: i32,
    pages_per_range: pg_sys::BlockNumber,
    autosummarize: bool,
}

/// The index's pages per range (128 unless its reloptions say).
///
/// # Safety
/// `index` is an open BRIN index.
unsafe fn pages_per_range(index: pg_sys::Relation) -> u32 {
    // SAFETY: a BRIN index's rd_options are BrinOptions (or NULL).
    unsafe {
        let o = (*index).rd_options as *const BrinOptions;
        if o.is_null() || (*o).pages_per_range == 0 { 128 } else { (*o).pages_per_range }
    }
}

/// A usable clause: the clause, its scan key (value not set), and its
/// value's expression.
type Usable = (*mut pg_sys::Node, Key, *mut pg_sys::Node);

/// The scan keys `index` (a BRIN index) can use among the hint clauses
/// `clauses` (`Var op value` over the table's columns): (clause, index
/// column, strategy, subtype, collation, operator function, value).
///
/// # Safety
/// `index` is open; `clauses` are hint clauses.
unsafe fn usable(index: pg_sys::Relation, clauses: &[*mut pg_sys::Node]) -> Vec<Usable> {
    // SAFETY: caller's promise; catalog lookups.
    unsafe {
        let mut out = Vec::new();
        let ind = (*index).rd_index;
        let nkeys = (*ind).indnkeyatts as usize;
        let indkey = (*ind).indkey.values.as_slice(nkeys);
        for &c in clauses {
            let op = c as *mut pg_sys::OpExpr;
            let args = from_list((*op).args);
            let var = args[0] as *mut pg_sys::Var;
            let Some(col) = indkey.iter().position(|&a| a == (*var).varattno) else { continue };
            let family = *(*index).rd_opfamily.add(col);
            if !pg_sys::op_in_opfamily((*op).opno, family) {
                continue;
            }
            // the summaries order values by the index column's collation: a
            // comparison by another one may not be judged by them
            let coll = *(*index).rd_indcollation.add(col);
            if coll != pg_sys::InvalidOid && coll != (*op).inputcollid {
                continue;
            }
            let (mut strategy, mut left, mut right) = (0, pg_sys::InvalidOid, pg_sys::InvalidOid);
            pg_sys::get_op_opfamily_properties((*op).opno, family, false, &mut strategy, &mut left, &mut right);
            let key = Key {
                attno: (col + 1) as i16,
                strategy: strategy as u16,
                subtype: right,
                collation: (*op).inputcollid,
                proc_oid: pg_sys::get_opcode((*op).opno),
                state: std::ptr::null_mut(),
                value: None,
            };
            out.push((c, key, args[1]));
        }
        out
    }
}

/// The BRIN index of `rel` with the most clauses usable among `clauses`,
/// opened (AccessShareLock, kept until the transaction ends), with them.
///
/// # Safety
/// `rel` is open; `clauses` are hint clauses over it.
unsafe fn best_index(rel: pg_sys::Relation, clauses: &[*mut pg_sys::Node]) -> Option<(pg_sys::Relation, Vec<Usable>)> {
    // SAFETY: caller's promise.
    unsafe {
        let mut best: Option<(pg_sys::Relation, Vec<_>)> = None;
        for oid in crate::pg::list::from_oid_list(pg_sys::RelationGetIndexList(rel)) {
            let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            if (*(*index).rd_rel).relam != pg_sys::BRIN_AM_OID {
                pg_sys::index_close(index, pg_sys::NoLock as pg_sys::LOCKMODE);
                continue;
            }
            // (a partial index summarizes only the rows its predicate holds)
            if !(*(*index).rd_index).indisvalid
                || !pg_sys::heap_attisnull(
                    (*index).rd_indextuple,
                    pg_sys::Anum_pg_index_indpred as i32,
                    std::ptr::null_mut(),
                )
            {
                pg_sys::index_close(index, pg_sys::NoLock as pg_sys::LOCKMODE);
                continue;
            }
            let keys = usable(index, clauses);
            if keys.is_empty() || best.as_ref().is_some_and(|(_, k)| k.len() >= keys.len()) {
                pg_sys::index_close(index, pg_sys::NoLock as pg_sys::LOCKMODE);
                continue;
            }
            if let Some((old, _)) = best.take() {
                pg_sys::index_close(old, pg_sys::NoLock as pg_sys::LOCKMODE);
            }
            best = Some((index, keys));
        }
        best
    }
}

/// The blocks the index keeps for `keys`: (bits, table blocks, ranges
/// kept, ranges ruled out).  A key whose value is NULL matches nothing
/// (a strict operator): every range is ruled out.
///
/// # Safety
/// A backend with an active snapshot; `index` open.
unsafe fn bitmap(index: pg_sys::Relation, heap: pg_sys::Relation, keys: &[Key]) -> (Vec<u64>, u32, u64, u64) {
    // SAFETY: caller's promise; the scan keys live until the scan ends.
    unsafe {
        let nblocks = pg_sys::RelationGetNumberOfBlocksInFork(heap, pg_sys::ForkNumber::MAIN_FORKNUM);
        let ppr = pages_per_range(index).max(1);
        let nranges = nblocks.div_ceil(ppr) as u64;
        let mut bits = vec![0u64; (nblocks as usize).div_ceil(64)];
        if keys.iter().any(|k| k.value.is_none()) {
            return (bits, nblocks, 0, nranges);
        }
        let mut skeys: Vec<pg_sys::ScanKeyData> = Vec::with_capacity(keys.len());
        for k in keys {
            let mut s = pg_sys::ScanKeyData::default();
            pg_sys::ScanKeyEntryInitialize(
                &mut s,
                0,
                k.attno,
                k.strategy,
                k.subtype,
                k.collation,
                k.proc_oid,
                k.value.expect("checked"),
            );
            skeys.push(s);
        }
        let snapshot = pg_sys::GetActiveSnapshot();
        let scan = crate::pg::compat::index_beginscan_bitmap(index, snapshot, skeys.len() as i32);
        pg_sys::index_rescan(scan, skeys.as_mut_ptr(), skeys.len() as i32, std::ptr::null_mut(), 0);
        let tbm = crate::pg::compat::tbm_create(pg_sys::work_mem as usize * 1024);
        pg_sys::index_getbitmap(scan, tbm);
        pg_sys::index_endscan(scan);
        crate::pg::compat::tbm_each_block(tbm, &mut |b| {
            if b < nblocks {
                bits[b as usize / 64] |= 1 << (b % 64);
            }
        });
        pg_sys::tbm_free(tbm);
        let mut kept = 0;
        for r in 0..nranges {
            let (lo, hi) = (r as u32 * ppr, ((r as u32 + 1) * ppr).min(nblocks));
            if (lo..hi).any(|b| bits[b as usize / 64] & (1 << (b % 64)) != 0) {
                kept += 1;
            }
        }
        (bits, nblocks, kept, nranges - kept)
    }
}

impl BrinFilter {
    /// The filter of a scan of `rel` with the hint clauses `clauses`, or
    /// None (`pg_strom.enable_brin` off, no BRIN index usable).  Values
    /// are evaluated in `ps`.
    ///
    /// # Safety
    /// Executor start (query memory context); `rel` the scan's relation.
    pub unsafe fn prepare(
        rel: pg_sys::Relation,
        clauses: &[*mut pg_sys::Node],
        ps: *mut pg_sys::PlanState,
    ) -> Option<Box<BrinFilter>> {
        if !crate::guc::ENABLE_BRIN.get() || clauses.is_empty() {
            return None;
        }
        // SAFETY: caller's promise.
        unsafe {
            let (index, found) = best_index(rel, clauses)?;
            let ppr = pages_per_range(index);
            let oid = (*index).rd_id;
            pg_sys::index_close(index, pg_sys::NoLock as pg_sys::LOCKMODE);
            let mut out = Vec::new();
            let mut keys = Vec::new();
            for (c, mut k, value) in found {
                k.state = pg_sys::ExecInitExpr(value.cast(), ps);
                keys.push(k);
                out.push(c);
            }
            Some(Box::new(BrinFilter {
                index: oid,
                clauses: out,
                keys,
                ps,
                pages_per_range: ppr,
                allowed: None,
                nblocks: 0,
                ranges_read: 0,
                ranges_skipped: 0,
            }))
        }
    }

    /// Take the bitmap again at the next block (a rescan: Params may have
    /// new values).
    pub fn rescan(&mut self) {
        self.allowed = None;
    }

    /// The bitmap, taken now unless it is there.
    ///
    /// # Safety
    /// A backend, during the scan (an active snapshot).
    pub unsafe fn ensure(&mut self, heap: pg_sys::Relation) {
        if self.allowed.is_some() {
            return;
        }
        // SAFETY: caller's promise.
        unsafe {
            for k in &mut self.keys {
                k.value = crate::pg::eval_for_scan(k.state, self.ps);
            }
            let index = pg_sys::index_open(self.index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let (bits, nblocks, read, skipped) = bitmap(index, heap, &self.keys);
            pg_sys::index_close(index, pg_sys::NoLock as pg_sys::LOCKMODE);
            self.allowed = Some(bits);
            self.nblocks = nblocks;
            self.ranges_read = read;
            self.ranges_skipped = skipped;
        }
    }

    /// Whether block `b` of `heap` must be read.
    ///
    /// # Safety
    /// As [`Self::ensure`].
    pub unsafe fn allows(&mut self, heap: pg_sys::Relation, b: pg_sys::BlockNumber) -> bool {
        // SAFETY: caller's promise.
        unsafe { self.ensure(heap) };
        if b >= self.nblocks {
            return true;
        }
        self.allowed.as_ref().is_none_or(|bits| bits[b as usize / 64] & (1 << (b % 64)) != 0)
    }

    /// EXPLAIN: `BRIN cond`, `BRIN index`, and with ANALYZE `BRIN
    /// ranges: N read, M skipped` (as the bitmap of the last scan said).
    ///
    /// # Safety
    /// `plan` is the scan's plan, `es` the ExplainState.
    pub unsafe fn explain(&self, plan: *mut pg_sys::Plan, es: *mut pg_sys::ExplainState) {
        // SAFETY: caller's promise.
        unsafe {
            let cond = crate::pg::explain::deparse_list(&self.clauses, plan, es);
            crate::pg::explain::prop_text(c"BRIN cond", &cond, es);
            let name = pg_sys::get_rel_name(self.index);
            let name = if name.is_null() {
                format!("{}", self.index.to_u32())
            } else {
                CStr::from_ptr(name).to_string_lossy().into_owned()
            };
            crate::pg::explain::prop_text(
                c"BRIN index",
                &format!("{name} (pages per range: {})", self.pages_per_range),
                es,
            );
            if (*es).analyze && self.allowed.is_some() {
                crate::pg::explain::prop_text(
                    c"BRIN ranges",
                    &format!("{} read, {} skipped", self.ranges_read, self.ranges_skipped),
                    es,
                );
            }
        }
    }
}

/// The share of `rel`'s blocks a BRIN index on it keeps for its quals
/// with constant values (1.0: no index applies, or `enable_brin` off),
/// from a bitmap scan of the index now, at plan time.
///
/// # Safety
/// Planner state of a heap base relation (`relid` its table).
pub unsafe fn kept_fraction(rel: *mut pg_sys::RelOptInfo, relid: pg_sys::Oid) -> f64 {
    // SAFETY: caller's promise; the planner holds a lock on the table.
    unsafe {
        if !crate::guc::ENABLE_BRIN.get() || (*rel).indexlist.is_null() || !pg_sys::ActiveSnapshotSet() {
            return 1.0;
        }
        let has_brin = from_list((*rel).indexlist)
            .iter()
            .any(|&i| (*(i as *mut pg_sys::IndexOptInfo)).relam == pg_sys::BRIN_AM_OID);
        if !has_brin {
            return 1.0;
        }
        let quals = from_list(pg_sys::extract_actual_clauses((*rel).baserestrictinfo, false));
        let hints = crate::arrow_fdw::stats::hint_clauses((*rel).relid, &quals);
        // constants only (a Param's value is not known yet)
        let consts: Vec<_> = hints
            .into_iter()
            .filter(|&h| {
                let args = from_list((*(h as *mut pg_sys::OpExpr)).args);
                (*args[1]).type_ == pg_sys::NodeTag::T_Const
            })
            .collect();
        if consts.is_empty() {
            return 1.0;
        }
        let heap = pg_sys::table_open(relid, pg_sys::NoLock as pg_sys::LOCKMODE);
        let fraction = match best_index(heap, &consts) {
            None => 1.0,
            Some((index, found)) => {
                let keys: Vec<Key> = found
                    .into_iter()
                    .map(|(_, mut k, v)| {
                        let c = v as *mut pg_sys::Const;
                        k.value = (!(*c).constisnull).then_some((*c).constvalue);
                        k
                    })
                    .collect();
                let (_, nblocks, read, skipped) = bitmap(index, heap, &keys);
                pg_sys::index_close(index, pg_sys::NoLock as pg_sys::LOCKMODE);
                if pg_sys::message_level_is_interesting(pg_sys::DEBUG2 as i32) {
                    pgrx::debug2!(
                        "BRIN: {read} of {} ranges of {nblocks} blocks kept for the scan's constant quals",
                        read + skipped
                    );
                }
                if nblocks == 0 { 1.0 } else { read as f64 / (read + skipped).max(1) as f64 }
            }
        };
        pg_sys::table_close(heap, pg_sys::NoLock as pg_sys::LOCKMODE);
        fraction
    }
}
