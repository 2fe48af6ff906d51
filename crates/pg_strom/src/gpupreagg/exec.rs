//! GpuPreAgg execution: the groups a chunk reduces to, as rows of the
//! partial aggregate's target list.
//!
//! GpuPreAgg runs on GpuJoin's pipeline (`crate::gpujoin::exec`): the
//! outer table read chunk by chunk, its scan quals and the join depths on
//! the engine, and the aggregation in the same device pass, which returns
//! one partial state per group and chunk instead of joined combinations
//! (a scan is a join of no depth; the heap direct path feeds a GpuPreAgg
//! over a heap table).  What is GpuPreAgg's own is here: the grouping keys
//! PostgreSQL evaluates (text, bpchar and bytea expressions, at each
//! group's representative combination) and the forming of each group's
//! row from the device's key values and accumulator words.

use std::time::Instant;

use pgrx::pg_guard;
use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::agg::{AggGroups, AggKind};

use crate::codegen::aggregates::{self, Encoding};
use crate::codegen::having;
use crate::customscan::counters::{Counters, HOST_MERGE};
use crate::customscan::node::{self, DeviceNode, DeviceState};
use crate::errors;
use crate::gpujoin::exec::{GpuJoinExec, recheck};
use crate::gpujoin::plan::{AggOutput, GpuJoinInfo};
use crate::gpupreagg::NAME;
use crate::gpupreagg::exchange::Exchange;
use crate::gpupreagg::merge::GroupMerger;
use crate::gpupreagg::spill::{self, Spill};
use crate::pg::memctx::Switched;
use crate::source::Source;

/// The Rust side of a GpuPreAgg node.
pub struct GpuPreAggExec {
    /// The scan or join that feeds the aggregation, with it.
    pub(crate) join: GpuJoinExec,
    /// The grouping keys PostgreSQL evaluates (`AggOutput::host_evaluated`),
    /// in key order, and the slot holding a group's representative
    /// combination for them.
    host_keys: Vec<*mut pg_sys::ExprState>,
    key_slot: *mut pg_sys::TupleTableSlot,
    /// Per SumNumWide operation: (its index, its argument, its FILTER or
    /// NULL), which PostgreSQL evaluates at an exception combination (a
    /// value the device could not hold) in `key_slot`.
    wide: Vec<(u32, *mut pg_sys::ExprState, *mut pg_sys::ExprState)>,
    /// Per aggregate operation: its first word in a group's accumulator.
    agg_words_at: Vec<u32>,
    /// The process's partial groups merged across chunks (None: each
    /// chunk's are returned as they come).
    merger: Option<GroupMerger>,
    /// The group filter's spill (`gpupreagg::spill`): the full sets of
    /// merged groups, written to disk; after the last chunk, read back
    /// partition by partition from `drain` on (filtered where
    /// `drain_filters`).
    spill: Option<Spill>,
    drain: Option<usize>,
    drain_filters: bool,
    /// The merger's budget in bytes.
    limit: usize,
    /// The partial groups exchanged between the processes by their keys
    /// (`gpupreagg::exchange`), or None.
    exchange: Option<Exchange>,
}

node::device_node!(GpuPreAggExec, NAME, TTSOpsVirtual);

impl DeviceNode for GpuPreAggExec {
    unsafe fn begin(node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: i32) -> GpuPreAggExec {
        // SAFETY: executor callback; the plan is a GpuPreAgg CustomScan.
        unsafe {
            let join = GpuJoinExec::begin(node, estate, eflags);
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let ps = &raw mut (*node).ss.ps;
            let Some(agg) = join.info.agg.as_ref() else {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "invalid GpuPreAgg plan: no aggregation".into(),
                    None,
                    Some("Re-plan the query."),
                )
            };
            let host_key_exprs = GpuJoinInfo::host_keys((*cscan).custom_private);
            let nhost = agg.outputs.iter().filter(|o| o.host_evaluated()).count();
            if host_key_exprs.len() != nhost {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "invalid GpuPreAgg plan: grouping key expressions do not match".into(),
                    None,
                    Some("Re-plan the query."),
                );
            }
            let host_keys = host_key_exprs.iter().map(|e| pg_sys::ExecInitExpr((*e).cast(), ps)).collect();
            let (wide_args, wide_filters) = GpuJoinInfo::wide_exprs((*cscan).custom_private);
            let wide_ops: Vec<u32> = agg
                .ops
                .iter()
                .enumerate()
                .filter(|(_, o)| o.kind == AggKind::SumNumWide as u32)
                .map(|(i, _)| i as u32)
                .collect();
            if wide_ops.len() != wide_args.len() || wide_args.len() != wide_filters.len() {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "invalid GpuPreAgg plan: numeric sum expressions do not match".into(),
                    None,
                    Some("Re-plan the query."),
                );
            }
            let wide: Vec<_> = wide_ops
                .iter()
                .zip(wide_args.iter().zip(&wide_filters))
                .map(|(&op, (&a, &f))| {
                    let filter = if f.is_null() { std::ptr::null_mut() } else { pg_sys::ExecInitExpr(f.cast(), ps) };
                    (op, pg_sys::ExecInitExpr(a.cast(), ps), filter)
                })
                .collect();
            let key_slot = if nhost > 0 || !wide.is_empty() {
                pg_sys::ExecInitExtraTupleSlot(
                    estate,
                    (*(*node).ss.ss_ScanTupleSlot).tts_tupleDescriptor,
                    &raw const pg_sys::TTSOpsVirtual,
                )
            } else {
                std::ptr::null_mut()
            };
            let agg_words_at = join.agg_spec.as_ref().map(|a| a.layout().0).unwrap_or_default();
            // (a group filter needs every group: the budget of PostgreSQL's
            // own hash aggregate, hash_mem)
            let limit = if agg.filters.is_empty() {
                pg_sys::work_mem.max(64) as usize * 1024
            } else {
                pg_sys::get_hash_memory_limit()
            };
            let mut merger = join.agg_spec.as_ref().and_then(|spec| GroupMerger::new(agg, spec, limit));
            if let Some(m) = merger.as_mut()
                && !agg.filters.is_empty()
                && m.keys_by_value()
            {
                m.spill_when_full();
            }
            let exchange = (!agg.exchange.is_empty()).then(|| Exchange::new(&agg.exchange));
            let mut join = join;
            // merged groups are counted when they are returned
            join.count_groups = merger.is_none();
            GpuPreAggExec {
                join,
                host_keys,
                key_slot,
                wide,
                agg_words_at,
                merger,
                spill: None,
                drain: None,
                drain_filters: false,
                limit,
                exchange,
            }
        }
    }

    unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: executor callback.
        unsafe {
            let produce = || pg_sys::ExecScan(&raw mut (*node).ss, Some(next_group), Some(recheck));
            match state_of(node).and_then(|st| st.exchange.as_mut()) {
                Some(ex) if ex.active() => ex.next(node, produce),
                _ => produce(),
            }
        }
    }

    unsafe fn end(&mut self, node: *mut pg_sys::CustomScanState) {
        self.close_spill();
        if let Some(ex) = self.exchange.as_mut() {
            ex.restart();
        }
        // SAFETY: executor callback.
        unsafe { self.join.end(node) }
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: executor callback.
        unsafe { self.join.rescan(node) }
        if let Some(m) = self.merger.as_mut() {
            m.restart();
        }
        self.close_spill();
        if let Some(ex) = self.exchange.as_mut() {
            ex.restart();
        }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: caller's promise.
        unsafe { crate::gpujoin::explain::explain(node, &mut self.join, ancestors, es) }
    }

    fn source(&mut self) -> &mut Source {
        self.join.source()
    }

    fn device(&mut self) -> &mut DeviceState {
        self.join.device()
    }

    fn shared_size(&self) -> usize {
        let own = if self.exchange.is_some() { Exchange::shared_size() } else { 0 };
        self.join.shared_size().next_multiple_of(16) + own
    }

    unsafe fn shared_init(&mut self, area: *mut u8, seg: *mut pg_sys::dsm_segment) {
        // SAFETY: caller's promise, passed on; the exchange's part follows
        // the join's.
        unsafe {
            self.join.shared_init(area, seg);
            let at = self.join.shared_size().next_multiple_of(16);
            if let Some(ex) = self.exchange.as_mut() {
                ex.init(area.add(at), seg);
            }
        }
    }

    unsafe fn shared_reinit(&mut self, area: *mut u8) {
        // SAFETY: caller's promise, passed on.
        unsafe {
            self.join.shared_reinit(area);
            let at = self.join.shared_size().next_multiple_of(16);
            if let Some(ex) = self.exchange.as_mut() {
                ex.reinit(area.add(at));
            }
        }
    }

    unsafe fn shared_attach(&mut self, area: *mut u8, dsa: *mut pg_sys::dsa_area) {
        // SAFETY: caller's promise, passed on.
        unsafe {
            self.join.shared_attach(area, dsa);
            let at = self.join.shared_size().next_multiple_of(16);
            if let Some(ex) = self.exchange.as_mut() {
                ex.attach(area.add(at));
            }
        }
    }

    fn shared_detach(&mut self) {
        self.join.shared_detach();
        if let Some(ex) = self.exchange.as_mut() {
            ex.detach();
        }
    }

    fn finish_counters(&mut self) {
        self.join.count_device_clock();
    }
}

impl GpuPreAggExec {
    /// The next groups of the spill: a partition merged and (where every
    /// group was kept) filtered, or, of one larger than the merger holds,
    /// the next of its groups as written, unfiltered; None once every
    /// partition was read (the spill is closed then).
    fn next_partition(&mut self) -> Option<(AggGroups, Counters)> {
        let mut c = Counters::default();
        // (the scan's merger: what one holds)
        let capacity = self.merger.as_ref()?.capacity();
        loop {
            let p = self.drain?;
            let sp = self.spill.as_mut()?;
            if p >= spill::PARTITIONS {
                self.close_spill();
                return None;
            }
            let left = sp.left(p);
            if left == 0 {
                self.drain = Some(p + 1);
                continue;
            }
            if !self.drain_filters || left >= capacity || sp.read_in_pieces(p) {
                // a merger's worth at a time; a partition read in pieces
                // goes up unfiltered to its end (a group's records may lie
                // in several pieces)
                let g = sp.read(p, capacity);
                c.groups_unfiltered = g.count as u64;
                return Some((g, c));
            }
            let g = sp.read(p, left);
            self.drain = Some(p + 1);
            let agg = self.join.info.agg.as_ref().expect("GpuPreAgg");
            let spec = self.join.agg_spec.as_ref().expect("GpuPreAgg");
            let Some(mut m) = GroupMerger::new(agg, spec, self.limit) else { return Some((g, c)) };
            let mut no_bytes = |_: u8, _: i16, _: u32| -> Option<Vec<u8>> { None };
            return match m.add(g, &mut no_bytes) {
                Some(mut over) => {
                    // (fewer groups than it holds: not reached)
                    if let Some(rest) = m.take() {
                        over.append(rest);
                    }
                    c.groups_unfiltered = over.count as u64;
                    Some((over, c))
                }
                None => {
                    let g = m.take().unwrap_or_default();
                    let (g, removed) = self.filter_groups(g);
                    c.groups_filtered = removed;
                    Some((g, c))
                }
            };
        }
    }

    /// The groups of `g` that pass the group filter (all where the plan
    /// has none), and how many it removed.
    fn filter_groups(&self, g: AggGroups) -> (AggGroups, u64) {
        let Some(agg) = self.join.info.agg.as_ref() else { return (g, 0) };
        let Some(spec) = self.join.agg_spec.as_ref() else { return (g, 0) };
        if agg.filters.is_empty() {
            return (g, 0);
        }
        // per output: its operation's words and how to read them
        struct Op {
            words: std::ops::Range<usize>,
            enc: Encoding,
            kind: AggKind,
            arg: pg_sys::Oid,
            scale: i32,
        }
        let outs: Vec<Option<Op>> = agg
            .outputs
            .iter()
            .map(|o| match *o {
                AggOutput::Agg { op, encoding, arg_type } => {
                    let kind = spec.ops[op as usize].kind;
                    let at = self.agg_words_at[op as usize] as usize;
                    Some(Op {
                        words: at..at + kind.nwords(),
                        enc: Encoding::from_u32(encoding)?,
                        kind,
                        arg: arg_type.into(),
                        scale: spec.ops[op as usize].scale,
                    })
                }
                AggOutput::Key { .. } => None,
            })
            .collect();
        let keep: Vec<usize> = (0..g.count)
            .filter(|&i| {
                let w = g.group_words(i);
                // a group whose states raise an error when formed is kept
                // (the error is raised as without the filter)
                if outs.iter().flatten().any(|o| having::state_raises(o.enc, o.kind, &w[o.words.clone()])) {
                    return true;
                }
                !agg.filters.iter().any(|f| {
                    let Some(Some(o)) = outs.get(f.output as usize) else { return false };
                    let v = having::final_value(o.enc, o.kind, o.arg, o.scale, &w[o.words.clone()]);
                    having::decide(f, v) == Some(false)
                })
            })
            .collect();
        let removed = (g.count - keep.len()) as u64;
        if removed == 0 {
            return (g, 0);
        }
        (g.select(&keep), removed)
    }

    /// Close the spill's files and forget it (a scan that ends, restarts
    /// or read every partition).
    fn close_spill(&mut self) {
        if let Some(mut sp) = self.spill.take() {
            sp.close();
        }
        self.drain = None;
    }

    /// The partial state of SumNumWide operation `op` for the combination
    /// in `key_slot`: its argument's value where `filter` (NULL: none)
    /// passes and the value is not NULL, else the state of no value.  In
    /// the per-tuple memory.
    unsafe fn wide_state(
        &mut self,
        econtext: *mut pg_sys::ExprContext,
        arg: *mut pg_sys::ExprState,
        filter: *mut pg_sys::ExprState,
        op: u32,
    ) -> pg_sys::Datum {
        // SAFETY: expressions over the scan tuple, evaluated with the
        // combination's row in key_slot.
        unsafe {
            let saved = (*econtext).ecxt_scantuple;
            (*econtext).ecxt_scantuple = self.key_slot;
            let mut isnull = false;
            let passes = filter.is_null() || {
                let d = pg_sys::ExecEvalExprSwitchContext(filter, econtext, &mut isnull);
                !isnull && d.value() != 0
            };
            let value = if passes {
                let d = pg_sys::ExecEvalExprSwitchContext(arg, econtext, &mut isnull);
                (!isnull).then_some(d)
            } else {
                None
            };
            (*econtext).ecxt_scantuple = saved;
            let bytes = match value {
                Some(d) => {
                    let text = pg_sys::OidOutputFunctionCall(pg_sys::F_NUMERIC_OUT.into(), d);
                    let s = std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned();
                    pgstrom_runtime::agg::num_avg_state_of_text(&s).unwrap_or_else(|| {
                        errors::raise_plain(
                            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                            format!("numeric_out gave {s:?}"),
                            None,
                            None,
                        )
                    })
                }
                None => {
                    // the operation's empty state, as a group with no rows
                    let spec = self.join.agg_spec.as_ref().expect("GpuPreAgg");
                    let at = self.agg_words_at[op as usize] as usize;
                    let kind = spec.ops[op as usize].kind;
                    let init = spec.init_words();
                    pgstrom_runtime::agg::num_avg_state(&init[at..at + kind.nwords()], spec.ops[op as usize].scale)
                }
            };
            crate::codegen::datum::varlena_datum(&bytes)
        }
    }

    /// Fill the scan slot with group `g`: its keys and partial states
    /// (made in the per-tuple memory, which lives until the next row).
    unsafe fn fill_group_slot(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        slot: *mut pg_sys::TupleTableSlot,
        g: usize,
    ) {
        // SAFETY: the slot has the custom_scan_tlist's descriptor, whose
        // first columns are the outputs.
        unsafe {
            pg_sys::ExecClearTuple(slot);
            let natts = (*(*slot).tts_tupleDescriptor).natts as usize;
            for i in 0..natts {
                *(*slot).tts_isnull.add(i) = true;
                *(*slot).tts_values.add(i) = pg_sys::Datum::from(0);
            }
            let econtext = (*node).ss.ps.ps_ExprContext;
            let cxt = Switched::to((*econtext).ecxt_per_tuple_memory);
            let nout = self.join.info.agg.as_ref().map_or(0, |a| a.outputs.len()).min(natts);
            let mut host_key = 0;
            let mut filled = false;
            let exception = self.join.groups.is_exception(g);
            for i in 0..nout {
                let out = self.join.info.agg.as_ref().expect("GpuPreAgg").outputs[i];
                let (isnull, value) = match out {
                    _ if out.host_evaluated() => {
                        // PostgreSQL's value of the key at the group's
                        // representative combination (a member of the group)
                        if !filled {
                            self.join.fill_slot_group(self.key_slot, g);
                            filled = true;
                        }
                        let st = self.host_keys[host_key];
                        host_key += 1;
                        let saved = (*econtext).ecxt_scantuple;
                        (*econtext).ecxt_scantuple = self.key_slot;
                        let mut isnull = false;
                        let d = pg_sys::ExecEvalExprSwitchContext(st, econtext, &mut isnull);
                        (*econtext).ecxt_scantuple = saved;
                        (isnull, d)
                    }
                    AggOutput::Key { index, type_oid, column: None } => {
                        let v = self.join.groups.key_value(g, index as usize);
                        if v.isnull {
                            (true, pg_sys::Datum::from(0))
                        } else {
                            (false, aggregates::device_datum(type_oid.into(), &v))
                        }
                    }
                    AggOutput::Key { column: Some((s, key)), .. } => {
                        let row = self.join.groups.row(s as usize, g);
                        self.join.source_value(s, key, row)
                    }
                    AggOutput::Agg { op, .. } if exception && self.wide.iter().any(|w| w.0 == op) => {
                        // an exception combination: PostgreSQL's value of
                        // the sum's argument there, the state of that one
                        // value (or of none)
                        if !filled {
                            self.join.fill_slot_group(self.key_slot, g);
                            filled = true;
                        }
                        let &(_, arg, filter) = self.wide.iter().find(|w| w.0 == op).expect("matched above");
                        (false, self.wide_state(econtext, arg, filter, op))
                    }
                    AggOutput::Agg { op, encoding, arg_type } => {
                        let spec = self.join.agg_spec.as_ref().expect("GpuPreAgg");
                        let kind = spec.ops[op as usize].kind;
                        let at = self.agg_words_at[op as usize] as usize;
                        let words = &self.join.groups.group_words(g)[at..at + kind.nwords()];
                        let Some(enc) = Encoding::from_u32(encoding) else {
                            errors::raise_plain(
                                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                                "invalid GpuPreAgg plan: unknown partial state".into(),
                                None,
                                Some("Re-plan the query."),
                            )
                        };
                        let scale = spec.ops[op as usize].scale;
                        let (d, n) = aggregates::partial_datum(enc, kind, arg_type.into(), scale, words);
                        (n, d)
                    }
                };
                *(*slot).tts_isnull.add(i) = isnull;
                *(*slot).tts_values.add(i) = value;
            }
            drop(cxt);
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }
}

/// ExecScan's access method: the next group as a scan tuple.
#[pg_guard]
unsafe extern "C-unwind" fn next_group(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    let node = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan calls this with our node.
    unsafe {
        let Some(st) = state_of(node) else { return std::ptr::null_mut() };
        let slot = (*ss).ss_ScanTupleSlot;
        st.join.prepare(node);
        loop {
            if st.join.cursor < st.join.groups.count {
                let g = st.join.cursor;
                st.join.cursor += 1;
                st.fill_group_slot(node, slot, g);
                return slot;
            }
            if st.drain.is_some() {
                // after the last chunk: the spill's partitions
                let merging = Instant::now();
                let next = st.next_partition();
                let Some((g, mut c)) = next else { return pg_sys::ExecClearTuple(slot) };
                c.groups = g.count as u64;
                c.host_ns[HOST_MERGE] = merging.elapsed().as_nanos() as u64;
                st.join.dev.add_counters(c);
                st.join.groups = g;
                st.join.cursor = 0;
                continue;
            }
            let more = st.join.fill_chunk(node) || st.join.next_unmatched();
            let Some(mut m) = st.merger.take() else {
                if more {
                    continue;
                }
                return pg_sys::ExecClearTuple(slot);
            };
            // merge the chunk's groups; return them when the merger is
            // full, and what it holds after the last chunk
            let merging = Instant::now();
            let mut filter = Counters::default();
            let filters = st.join.info.agg.as_ref().is_some_and(|a| !a.filters.is_empty());
            let ready = if more {
                let g = std::mem::take(&mut st.join.groups);
                let join = &mut st.join;
                // a merger that spills and barely merges: the chunk's
                // groups go to the spill as they come (merged when read
                // back)
                let direct =
                    m.spilled_poorly() && m.holds_every_group() && st.spill.as_ref().is_some_and(|sp| sp.fits(&g));
                let added = if direct {
                    filter.groups_spilled = g.count as u64;
                    st.spill.as_mut().expect("checked above").write(&g);
                    None
                } else {
                    m.add(g, &mut |s, key, row| join.inner_bytes_of(s, key, row))
                };
                let ready = match added {
                    // a full set of a merger that spills: to the spill
                    Some(full) if m.holds_every_group() => {
                        let sp = st.spill.get_or_insert_with(|| Spill::new(&full));
                        if sp.fits(&full) {
                            filter.groups_spilled = full.count as u64;
                            sp.write(&full);
                            None
                        } else {
                            // (groups gone up unfiltered: none is filtered
                            // after them)
                            m.give_up();
                            Some(full)
                        }
                    }
                    r => r,
                };
                if filters && let Some(g) = &ready {
                    filter.groups_unfiltered = g.count as u64;
                }
                ready
            } else {
                // after the last chunk: every group once, or the rest of
                // them (the group filter applies to the former only)
                let every = m.holds_every_group();
                match (m.take(), st.spill.as_mut()) {
                    (g, Some(sp)) => {
                        // the spill's partitions come next, filtered where
                        // the merger and the spill hold every group
                        let g = g.unwrap_or_default();
                        st.drain = Some(0);
                        st.drain_filters = every && sp.fits(&g);
                        if st.drain_filters {
                            filter.groups_spilled = g.count as u64;
                            sp.write(&g);
                            None
                        } else {
                            filter.groups_unfiltered = g.count as u64;
                            Some(g)
                        }
                    }
                    (Some(g), None) if filters && every => {
                        let (g, removed) = st.filter_groups(g);
                        filter.groups_filtered = removed;
                        Some(g)
                    }
                    (g, None) => {
                        if filters && let Some(g) = &g {
                            filter.groups_unfiltered = g.count as u64;
                        }
                        g
                    }
                }
            };
            filter.host_ns[HOST_MERGE] = merging.elapsed().as_nanos() as u64;
            st.join.dev.add_counters(filter);
            st.merger = Some(m);
            st.join.cursor = 0;
            match ready {
                Some(g) => {
                    st.join.dev.add_counters(Counters { groups: g.count as u64, ..Counters::default() });
                    st.join.groups = g;
                }
                None if more || st.drain.is_some() => {}
                None => return pg_sys::ExecClearTuple(slot),
            }
        }
    }
}
