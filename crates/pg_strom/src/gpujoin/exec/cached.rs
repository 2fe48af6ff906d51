//! A GpuJoin's use of the cross-query cache of inner builds
//! (`gpujoin::inner_cache`): before the inner plans run, look for a kept
//! build of the relations as they are now and take its rows (one process
//! for all in a parallel plan, publishing them as the build's); when the
//! session opens, open it over the kept build, or load the rows and keep
//! the new build when the relations did not change meanwhile (once the
//! other processes of a parallel plan have opened their sessions).

use pgrx::pg_sys;
use pgstrom_runtime::join::JoinSession;
use pgstrom_runtime::{DeviceError, Engine};

use super::{GpuJoinExec, InnerRows, engine_of};
use crate::gpujoin::inner_cache::{self, CachePlan, KeptRows, Outcome};
use crate::gpujoin::shared_build::{self, SharedInner};
use crate::guc;

/// A build opened after a cache miss (or a hit whose build was gone),
/// to be kept once the other processes have their sessions.
pub(crate) struct KeepPending {
    eng: &'static dyn Engine,
    share: u64,
    key: Vec<u8>,
    /// After a miss: keep only when the relations' key is still `key`.
    check_key: bool,
    /// Keep the rows this process holds, not those published for the
    /// query (after a summary: published without rows).
    own_rows: bool,
}

impl GpuJoinExec {
    /// The inner relations' key in the cache as they are now, or why
    /// there is none.
    ///
    /// # Safety
    /// `children` are the node's live inner plans.
    unsafe fn cache_key_now(&mut self, children: &[*mut pg_sys::PlanState]) -> Result<Vec<u8>, Outcome> {
        if !guc::INNER_CACHE.get() {
            return Err(Outcome::Off);
        }
        if !engine_of(self).shared_by_processes() {
            return Err(Outcome::OwnEngine);
        }
        // SAFETY: caller's promise.
        match unsafe { self.cache_plan(children) } {
            // SAFETY: the node's relations are open.
            Ok(p) => unsafe { p.key() },
            Err(o) => Err(*o),
        }
    }

    /// What the inner plans are for the cache (made the first time).
    ///
    /// # Safety
    /// As [`Self::cache_key_now`].
    unsafe fn cache_plan(&mut self, children: &[*mut pg_sys::PlanState]) -> &Result<CachePlan, Outcome> {
        if self.cache_plan.is_none() {
            let columns: Vec<Vec<(i16, u16)>> = self.info.depths.iter().map(|d| d.inner_columns.clone()).collect();
            // SAFETY: caller's promise.
            self.cache_plan = Some(unsafe { inner_cache::plan(children, &columns) });
        }
        self.cache_plan.as_ref().expect("made above")
    }

    /// A process of no parallel plan: look into the cache; true when the
    /// inner rows came from it (`inners` holds them).
    ///
    /// # Safety
    /// As [`Self::cache_key_now`].
    pub(super) unsafe fn inners_from_cache(&mut self, children: &[*mut pg_sys::PlanState]) -> bool {
        self.cache_key = None;
        // SAFETY: caller's promise.
        let key = match unsafe { self.cache_key_now(children) } {
            Ok(k) => k,
            Err(o) => {
                self.cache_outcome = o;
                return false;
            }
        };
        // (a lost service shows at the session's opening)
        let mut hit = false;
        let eng = engine_of(self);
        // SAFETY: the node's inner memory, reset with the rows.
        let _ = eng.join_cache_rows(&key, &mut |r| hit = unsafe { self.inners_from_rows(r) });
        self.cache_outcome = if hit { Outcome::Hit } else { Outcome::Miss };
        self.cache_key = Some(key);
        hit
    }

    /// Make `inners` from kept rows, copied into the node's inner memory
    /// (MAXALIGNed, as the tuples need); false when they are damaged.
    ///
    /// # Safety
    /// Backend; `inner_cxt` lives as long as the rows.
    unsafe fn inners_from_rows(&mut self, rows: &[u8]) -> bool {
        // SAFETY: a fresh allocation of rows.len() bytes; the copy lives
        // until the inner memory is reset, with the rows made of it.
        let copy: &'static [u8] = unsafe {
            let p = pg_sys::MemoryContextAllocHuge(self.inner_cxt, rows.len().max(1)) as *mut u8;
            std::ptr::copy_nonoverlapping(rows.as_ptr(), p, rows.len());
            std::slice::from_raw_parts(p, rows.len())
        };
        let Some(parts) = inner_cache::decode_rows(copy, self.info.depths.len()) else { return false };
        self.kept_ranges = inner_cache::decode_ranges(copy, self.info.depths.len());
        self.inners = parts
            .iter()
            .enumerate()
            .map(|(d, parts)| {
                let mut inner = InnerRows::new(&self.info.depths[d].inner_columns, self.inner_slots[d]);
                for &(_, tuples, columns) in parts {
                    shared_build::for_each_tuple(tuples, |t| inner.add(t.as_ptr() as pg_sys::MinimalTuple));
                    inner.published.push(columns);
                }
                inner
            })
            .collect();
        true
    }

    /// A process of a parallel plan, before the build: the first looks
    /// into the cache for all and publishes the kept rows as the build's;
    /// the others wait for its decision.  Afterwards every process knows
    /// the key and the outcome.
    ///
    /// # Safety
    /// `sh` is the node's part of the DSM area, `children` its live inner
    /// plans; `dsa` is the query's area.
    pub(super) unsafe fn consult_cache_shared(&mut self, sh: &SharedInner, children: &[*mut pg_sys::PlanState]) {
        if sh.claim_cache_check() {
            let looked = if self.shared_load().is_none() {
                Err(Outcome::NoSharedLoad)
            } else {
                // SAFETY: caller's promise.
                unsafe { self.cache_key_now(children) }
            };
            let (key, outcome) = match looked {
                Err(o) => (None, o),
                Ok(key) if self.rows_stay_in_service() => {
                    // only the rows' counts and key ranges: the rows stay
                    // in the service unless a fallback needs them
                    let (ndepths, dsa) = (self.info.depths.len(), self.dsa);
                    let mut counts = None;
                    let mut kept = None;
                    let _ = engine_of(self).join_cache_summary(&key, &mut |r| {
                        counts = inner_cache::decode_counts(r, ndepths);
                        kept = inner_cache::decode_ranges(r, ndepths);
                    });
                    match counts {
                        Some(counts) => {
                            for (d, &n) in counts.iter().enumerate() {
                                // SAFETY: the query's area (caller); nobody
                                // reads it before the decision.
                                unsafe { sh.publish(dsa, d, &[], &[], n) };
                            }
                            if kept.is_some() {
                                self.kept_ranges = kept;
                                // SAFETY: the ranges are kept (no rows are read).
                                let ranges = unsafe { self.join_key_ranges() };
                                sh.keep_cached_ranges(&ranges);
                            }
                            (Some(key), Outcome::HitSummary)
                        }
                        None => (Some(key), Outcome::Miss),
                    }
                }
                Ok(key) => {
                    let (ndepths, dsa) = (self.info.depths.len(), self.dsa);
                    let mut hit = false;
                    let mut kept = None;
                    let _ = engine_of(self).join_cache_rows(&key, &mut |r| {
                        let Some(parts) = inner_cache::decode_rows(r, ndepths) else { return };
                        kept = inner_cache::decode_ranges(r, ndepths);
                        for (d, parts) in parts.into_iter().enumerate() {
                            // the kept build numbers the rows in the order
                            // they were kept, the order the lists give them
                            // in: the list gives the last published part
                            // first, so the parts go in last to first
                            for (nrows, tuples, columns) in parts.into_iter().rev() {
                                // SAFETY: the query's area (caller); nobody
                                // reads the rows before the decision.
                                unsafe { sh.publish(dsa, d, tuples, columns, nrows) };
                            }
                        }
                        hit = true;
                    });
                    if hit && kept.is_some() {
                        // the join key ranges for the loader, from those
                        // kept: no columns made to find them
                        self.kept_ranges = kept;
                        // SAFETY: the ranges are kept (no rows are read).
                        let ranges = unsafe { self.join_key_ranges() };
                        sh.keep_cached_ranges(&ranges);
                    }
                    (Some(key), if hit { Outcome::Hit } else { Outcome::Miss })
                }
            };
            // SAFETY: caller's promise; this process claimed the look.
            unsafe { sh.cache_decided(self.dsa, key.as_deref(), outcome) };
        } else {
            // SAFETY: caller's promise; another process claimed the look.
            unsafe { sh.wait_cache_decided() };
        }
        // SAFETY: the area the key was stored in.
        self.cache_key = unsafe { sh.cache_key(self.dsa) };
        if self.cache_key.is_some() {
            // (for the check after the build, should this process load)
            // SAFETY: caller's promise.
            unsafe { self.cache_plan(children) };
        }
    }

    /// Whether a hit leaves the kept rows in the service: a GpuPreAgg
    /// whose grouping keys are device values or columns of the scanned
    /// table reads no inner row on the host, but where a fallback needs
    /// them ([`Self::ensure_inner_rows`]).  TPC-H Q14 at SF 10: the 2
    /// million rows of `part` (150 MB) were sent to the backend and
    /// published for every process at each hit, 218-300 ms of a 335-409
    /// ms query, and never read.
    pub(super) fn rows_stay_in_service(&self) -> bool {
        use crate::gpujoin::plan::AggOutput;
        self.info.agg.as_ref().is_some_and(|a| {
            a.outputs.iter().all(|o| match o {
                AggOutput::Key { column: Some((s, _)), .. } => *s == 0,
                o => !o.host_evaluated(),
            })
        })
    }

    /// Take the inner rows a hit left in the service
    /// ([`Self::rows_stay_in_service`]) from its cache, where something is
    /// about to read them (a row the device hands back, a session on
    /// another engine); an ERROR when the service no longer holds them.
    pub(crate) fn ensure_inner_rows(&mut self) {
        if !self.inners.iter().any(|i| i.absent) {
            return;
        }
        let want: Vec<usize> = self.inners.iter().map(|i| i.nrows).collect();
        let ranges = self.kept_ranges.take();
        let mut taken = false;
        if let Some(key) = self.cache_key.clone() {
            let eng = engine_of(self);
            // SAFETY: the node's inner memory, which the rows are copied
            // into and live in.
            let _ = eng.join_cache_rows(&key, &mut |r| taken = unsafe { self.inners_from_rows(r) });
        }
        if ranges.is_some() {
            self.kept_ranges = ranges;
        }
        let got: Vec<usize> = self.inners.iter().map(|i| i.nrows).collect();
        if !taken || got != want || self.inners.iter().any(|i| i.absent) {
            crate::errors::raise_plain(
                pgrx::PgSqlErrorCode::ERRCODE_SYSTEM_ERROR,
                format!(
                    "the GPU service no longer holds the inner rows {} took from its cache of inner relations",
                    self.name()
                ),
                Some(
                    "They were left there because no grouping key reads them; a row computed on the host needed them."
                        .into(),
                ),
                Some("Run the query again, or set pg_strom.inner_cache to off for it."),
            );
        }
    }

    /// The cache's outcome for this node so far.
    pub(crate) fn cache_outcome(&self) -> Outcome {
        // SAFETY: NULL or the node's part of the mapped DSM area.
        match unsafe { self.shared.as_ref() } {
            Some(sh) => sh.cache_outcome(),
            None => self.cache_outcome,
        }
    }

    fn set_cache_state(&mut self, o: Outcome) {
        // SAFETY: NULL or the node's part of the mapped DSM area.
        match unsafe { self.shared.as_ref() } {
            Some(sh) => sh.set_cache_outcome(o),
            None => self.cache_outcome = o,
        }
    }

    /// Open this process's session on `eng` as the loader of the inner
    /// relations (kept under share key `share`, or a new one): over the
    /// kept build after a hit, else by loading the rows.  A new build is
    /// kept across queries by [`Self::keep_opened_build`], which the
    /// caller calls once the other processes need not wait for it.
    pub(super) fn open_session_cached(
        &mut self,
        eng: &'static dyn Engine,
        share: Option<u64>,
    ) -> Result<Box<dyn JoinSession>, DeviceError> {
        let Some(key) = self.cache_key.clone() else { return self.open_session(eng, share) };
        let share = share.unwrap_or_else(shared_build::new_key);
        match self.cache_outcome() {
            Outcome::Hit | Outcome::HitSummary => {
                let summary = self.cache_outcome() == Outcome::HitSummary;
                // SAFETY: the node's loaded rows.
                let spec = unsafe { self.join_spec(false) };
                if let Some(s) = eng.join_open_cached(&spec, &key, share)? {
                    return Ok(s);
                }
                // the build went (memory ran short, or it was kept for a
                // request of another shape) while its rows stayed: the rows
                // are the key's, so the new build is kept again (after a
                // summary, with the rows this process took for the load)
                self.set_cache_state(Outcome::HitLoaded);
                let s = self.open_session(eng, Some(share))?;
                self.keep_pending = Some(KeepPending { eng, share, key, check_key: false, own_rows: summary });
                Ok(s)
            }
            Outcome::Miss => {
                let s = self.open_session(eng, Some(share))?;
                self.keep_pending = Some(KeepPending { eng, share, key, check_key: true, own_rows: false });
                Ok(s)
            }
            _ => self.open_session(eng, Some(share)),
        }
    }

    /// Keep the build [`Self::open_session_cached`] loaded in the cache,
    /// when the relations did not change during the build (after a miss)
    /// and it fits; the outcome says what happened.
    pub(super) fn keep_opened_build(&mut self) {
        let Some(KeepPending { eng, share, key, check_key, own_rows }) = self.keep_pending.take() else { return };
        if check_key {
            let now = match self.cache_plan.as_ref() {
                // SAFETY: the node's relations are open.
                Some(Ok(p)) => unsafe { p.key() }.ok(),
                _ => None,
            };
            if now.as_deref() != Some(&key[..]) {
                self.set_cache_state(Outcome::Changed);
                return;
            }
        }
        let outcome = self.keep_in_cache(eng, share, &key, own_rows);
        if check_key {
            self.set_cache_state(outcome);
        }
    }

    /// The parts of the build's rows and the bytes they would take in
    /// the cache (the columns at their size in memory where they are not
    /// encoded yet).
    fn kept_rows_size(&mut self, own_rows: bool) -> (usize, usize) {
        let (mut nparts, mut bytes) = (0, 0);
        // SAFETY: NULL or the node's part of the mapped DSM area.
        match unsafe { self.shared.as_ref() }.filter(|_| !own_rows) {
            Some(sh) => {
                for d in 0..self.info.depths.len() {
                    // SAFETY: the query's area; the build is over.
                    unsafe {
                        sh.for_each_published(self.dsa, d, |_, tuples, columns| {
                            nparts += 1;
                            bytes += KeptRows::part_bytes(tuples.len(), columns.len());
                        })
                    };
                }
            }
            None => {
                for inner in &mut self.inners {
                    nparts += 1;
                    // SAFETY: live minimal tuples of the node's rows.
                    let tuples: usize =
                        inner.tuples.iter().map(|&t| shared_build::max_align(unsafe { (*t).t_len } as usize)).sum();
                    // SAFETY: the node's loaded rows.
                    bytes += KeptRows::part_bytes(tuples, unsafe { inner.chunk() }.bytes());
                }
            }
        }
        (nparts, bytes)
    }

    /// Keep the build this process's session holds under `share` in the
    /// cache under `key`, with the rows: Kept, Refused by the engine, or
    /// TooBig (not sent: the build and its rows are larger than the cache);
    /// `own_rows`: the rows this process holds, not those published for
    /// the query.
    fn keep_in_cache(&mut self, eng: &'static dyn Engine, share: u64, key: &[u8], own_rows: bool) -> Outcome {
        let (nparts, bytes) = self.kept_rows_size(own_rows);
        if !pgstrom_runtime::join::cache_fits(self.inner_bytes + bytes + key.len()) {
            return Outcome::TooBig;
        }
        let mut rows = KeptRows::with_capacity(self.info.depths.len(), nparts, bytes);
        // SAFETY: NULL or the node's part of the mapped DSM area.
        match unsafe { self.shared.as_ref() }.filter(|_| !own_rows) {
            Some(sh) => {
                for d in 0..self.info.depths.len() {
                    // SAFETY: the query's area; the build is over.
                    unsafe { sh.for_each_published(self.dsa, d, |n, tuples, columns| rows.add(d, n, tuples, columns)) };
                }
            }
            None => {
                for (d, inner) in self.inners.iter_mut().enumerate() {
                    // SAFETY: the node's loaded rows.
                    let columns = unsafe { inner.chunk() }.encode();
                    // SAFETY: live minimal tuples of the node's rows.
                    let tuples = inner
                        .tuples
                        .iter()
                        .map(|&t| unsafe { std::slice::from_raw_parts(t as *const u8, (*t).t_len as usize) });
                    rows.add_tuples(d, inner.nrows as u64, tuples, &columns);
                }
            }
        }
        // SAFETY: the node's loaded rows.
        let ranges = unsafe { self.inner_key_ranges() };
        // SAFETY: the node's loaded rows.
        let spec = unsafe { self.join_spec(false) };
        match eng.join_cache_keep(&spec, share, key, &rows.encode(&ranges)) {
            Ok(true) => Outcome::Kept,
            _ => Outcome::Refused,
        }
    }
}
