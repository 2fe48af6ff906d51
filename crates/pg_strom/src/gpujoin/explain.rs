//! GpuJoin's EXPLAIN fields (ExplainCustomScan), as PG-Strom prints them:
//!
//! ```text
//! Custom Scan (GpuJoin) on t0
//!   GPU Filter: (t0.x > 10)                       -- scan quals, if any
//!   Depth 1: GpuHashJoin (Inner), HashKeys: (t0.aid)
//!            JoinQuals: (t0.aid = t1.aid)
//!            Nrows (in/out: 98.60%), KDS-Hash (size: 13.47MB, nbatches: 1)
//!   GPU Preference: GPU0 (NVIDIA H100 80GB HBM3)
//! ```
//!
//! GpuPreAgg (the same node with an aggregation) first says how it
//! reduces: `Reduction: Local` (GROUP BY: one partial state per group and
//! chunk) or `NoGroup` (no grouping keys), and `Combined GpuJoin: enabled`
//! when the join runs in the same device pass; with ANALYZE
//! `Rows Consumed` (joined rows reduced on the device) and `Partial
//! Groups` (rows returned to the Finalize Aggregate).  A parallel node
//! whose processes finalize their own shares of the groups says `Partial
//! Groups Exchanged: by the grouping keys between the processes`.
//!
//! `Nrows` is the planner's estimate of rows out per row in; with ANALYZE
//! the actual counts follow (`actual: 1000 -> 986`), and the hash table
//! size is what the engine holds.  A depth without hash keys is a
//! `GpuNestLoop`.  Non-text formats get one group of properties per depth.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;
use pgstrom_runtime::join::JoinKind;

use crate::gpujoin::exec::query_share::Role as QueryRole;
use crate::gpujoin::exec::{GpuJoinExec, engine_of};
use crate::gpujoin::inner_cache::Outcome;
use crate::pg::explain::{prop_text, size_text_kb};
use crate::pg::list::{from_list, to_list};

/// EXPLAIN ANALYZE's `Engine Time`: how long the engine worked for the
/// node's sessions (every process), and on what
/// (pgstrom_runtime::clock): `12.345 ms (heap tuples 4.000, join probes
/// 3.000, ..., other 1.345)`; phases that took no time are left out.
fn engine_time_text(c: &crate::customscan::counters::Counters) -> String {
    use pgstrom_runtime::clock::Phase;
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut parts: Vec<String> = Phase::ALL
        .iter()
        .filter(|p| c.device_ns[**p as usize] >= 500)
        .map(|p| format!("{} {:.3}", p.label(), ms(c.device_ns[*p as usize])))
        .collect();
    let other = c.device_total_ns.saturating_sub(c.device_ns.iter().sum());
    parts.push(format!("other {:.3}", ms(other)));
    format!("{:.3} ms ({})", ms(c.device_total_ns), parts.join(", "))
}

/// EXPLAIN ANALYZE's `Host Time`: the node's own work besides waiting for
/// the engine, summed over its processes: `block checks 1.234 ms, chunk
/// reads 0.000 ms, group merging 0.100 ms`.
fn host_time_text(c: &crate::customscan::counters::Counters) -> String {
    use crate::customscan::counters::HOST_LABELS;
    HOST_LABELS
        .iter()
        .zip(c.host_ns)
        .map(|(l, ns)| format!("{l} {:.3} ms", ns as f64 / 1e6))
        .collect::<Vec<_>>()
        .join(", ")
}

fn kind_label(kind: u32) -> &'static str {
    JoinKind::from_pg(kind).map_or("?", |k| k.label())
}

/// How the inner relations were read (EXPLAIN ANALYZE `Inner Build`):
/// once for every process of a parallel plan (or taken from the inner
/// cache), with how many processes took part (and, with TIMING, the
/// longest time one spent), or by this process alone; the depths whose
/// inner plans were scanned in shares; with TIMING, how long this process
/// waited for all the rows; for a
/// shared build, how many processes loaded the rows into their engine and
/// how many opened their sessions over another's load (and, with TIMING,
/// when this process's session was open).
fn inner_build_text(st: &GpuJoinExec, timing: bool) -> String {
    let partial: Vec<String> =
        st.info.depths.iter().enumerate().filter(|(_, d)| d.partial_inner).map(|(i, _)| (i + 1).to_string()).collect();
    let mut text = match st.build_stats {
        Some(b) => {
            let who = if b.builders == 1 { "1 process".to_string() } else { format!("{} processes", b.builders) };
            // (a build the inner cache held: no inner plan ran)
            let how = if matches!(b.cache, Outcome::Hit | Outcome::HitSummary | Outcome::HitLoaded) {
                "taken from the inner cache by"
            } else {
                "built by"
            };
            let mut t = format!("shared, {how} {who}");
            if timing {
                t.push_str(&format!(" in {:.3} ms", b.build_ns as f64 / 1e6));
            }
            t
        }
        None => match st.query_role {
            QueryRole::Later { attached: true } => {
                "the rows of an earlier node of this query, its build in the engine attached".to_string()
            }
            QueryRole::Later { attached: false } => "the rows of an earlier node of this query".to_string(),
            QueryRole::First if st.query_takers() > 0 => match st.query_takers() {
                1 => "this process, its rows taken by 1 later node of this query".to_string(),
                n => format!("this process, its rows taken by {n} later nodes of this query"),
            },
            QueryRole::First | QueryRole::None => "this process".to_string(),
        },
    };
    if !partial.is_empty() {
        text.push_str(&format!(", partial scans of depth {}", partial.join(", ")));
    }
    if timing {
        text.push_str(&format!("; rows ready after {:.3} ms", st.load_ns as f64 / 1e6));
    }
    if let Some(b) = st.build_stats
        && b.loads + b.attaches > 0
    {
        let loads = if !b.shared_load {
            "by each process".to_string()
        } else if b.loads == 1 {
            "once".to_string()
        } else {
            format!("{} times", b.loads)
        };
        text.push_str(&format!("; loaded into the engine {loads}"));
        if b.attaches > 0 {
            let who = if b.attaches == 1 { "1 process".to_string() } else { format!("{} processes", b.attaches) };
            text.push_str(&format!(", attached by {who}"));
        }
        if timing {
            text.push_str(&format!(", sessions open after {:.3} ms", st.open_ns as f64 / 1e6));
        }
    }
    text
}

/// GpuJoin's (and GpuPreAgg's) EXPLAIN fields of a node whose state is `st`.
///
/// # Safety
/// EXPLAIN callback of `node`, whose executor state `st` is.
pub unsafe fn explain(
    node: *mut pg_sys::CustomScanState,
    st: &mut GpuJoinExec,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: caller's promise; a valid ExplainState.
    unsafe {
        let plan = (*node).ss.ps.plan;
        let cscan = plan as *mut pg_sys::CustomScan;
        let exprs = from_list((*cscan).custom_exprs);
        let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, ancestors);
        let deparse = |nodes: &[*mut pg_sys::Node]| -> String {
            let e = if nodes.len() == 1 { nodes[0] } else { pg_sys::make_ands_explicit(to_list(nodes)).cast() };
            let t = pg_sys::deparse_expression(e, context, true, false);
            CStr::from_ptr(t).to_string_lossy().into_owned()
        };
        let c = st.dev.counters;
        // A whole (not parallel-aware) node under a Parallel Append may run
        // in a worker: its counters stay there, and this process's are
        // zero; say so instead of printing them.
        let counted = (*es).analyze && (st.ran_here() || (*plan).parallel_aware);
        if (*es).analyze && !counted {
            let instr = (*node).ss.ps.instrument;
            if !instr.is_null() && (*instr).nloops > 0.0 {
                prop_text(c"Run By", "another process of the parallel plan (its counters are not collected)", es);
            }
        }
        if let Some(a) = &st.info.agg {
            prop_text(c"Reduction", if a.keys.is_empty() { "NoGroup" } else { "Local" }, es);
            if !st.info.depths.is_empty() {
                prop_text(c"Combined GpuJoin", "enabled", es);
            }
            if !a.exchange.is_empty() {
                // (gpupreagg::exchange: each process finalizes its share)
                prop_text(c"Partial Groups Exchanged", "by the grouping keys between the processes", es);
            }
            if !a.filters.is_empty() {
                // each term's aggregate as the scan tuple's column shows it
                let tlist = (*cscan).custom_scan_tlist;
                let terms: Vec<String> = a
                    .filters
                    .iter()
                    .map(|f| {
                        let tle = pg_sys::list_nth(tlist, f.output as i32) as *mut pg_sys::TargetEntry;
                        let e = (*tle).expr as *mut pg_sys::Node;
                        let var = pg_sys::makeVar(
                            pg_sys::INDEX_VAR,
                            (f.output + 1) as i16,
                            pg_sys::exprType(e),
                            pg_sys::exprTypmod(e),
                            pg_sys::exprCollation(e),
                            0,
                        );
                        // ("(PARTIAL sum(x))": the group's final value)
                        let agg = deparse(&[var.cast()]);
                        let agg = agg.strip_prefix('(').and_then(|a| a.strip_suffix(')')).unwrap_or(&agg);
                        let agg = agg.strip_prefix("PARTIAL ").unwrap_or(agg);
                        format!("{agg} {} {}", f.cmp.symbol(), f.value.text())
                    })
                    .collect();
                prop_text(c"Group Filter", &format!("({})", terms.join(" AND ")), es);
            }
            if counted {
                let consumed = c.stage[st.info.depths.len()] + c.unmatched;
                pg_sys::ExplainPropertyInteger(c"Rows Consumed".as_ptr(), std::ptr::null(), consumed as i64, es);
                pg_sys::ExplainPropertyInteger(c"Partial Groups".as_ptr(), std::ptr::null(), c.groups as i64, es);
                if !a.filters.is_empty() {
                    let removed = c.groups_filtered as i64;
                    pg_sys::ExplainPropertyInteger(
                        c"Rows Removed by Group Filter".as_ptr(),
                        std::ptr::null(),
                        removed,
                        es,
                    );
                    if c.groups_spilled > 0 {
                        let spilled = c.groups_spilled as i64;
                        pg_sys::ExplainPropertyInteger(c"Groups Spilled".as_ptr(), std::ptr::null(), spilled, es);
                    }
                    if c.groups_unfiltered > 0 {
                        // (they outgrew hash_mem: the Finalize Aggregate's
                        // HAVING filters them)
                        let n = c.groups_unfiltered as i64;
                        pg_sys::ExplainPropertyInteger(c"Groups Not Filtered".as_ptr(), std::ptr::null(), n, es);
                    }
                }
            }
        }
        let mut at = st.info.nscan_quals as usize;
        if at > 0 {
            prop_text(c"GPU Filter", &deparse(&exprs[..at]), es);
        }
        let text = (*es).format == pg_sys::ExplainFormat::EXPLAIN_FORMAT_TEXT;
        let analyze = counted;
        for (i, d) in st.info.depths.iter().enumerate() {
            let quals = &exprs[at..at + d.nquals as usize];
            at += d.nquals as usize;
            let keys = &exprs[at..at + d.outer_keys.len()];
            at += d.outer_keys.len();
            let method = if keys.is_empty() { "GpuNestLoop" } else { "GpuHashJoin" };
            let key_text = keys.iter().map(|k| deparse(&[*k])).collect::<Vec<_>>().join(", ");
            let qual_text = if quals.is_empty() { String::new() } else { deparse(quals) };
            let ratio = if d.rows_in > 0.0 { 100.0 * d.rows_out / d.rows_in } else { 0.0 };
            let mut nrows = format!("Nrows (in/out: {ratio:.2}%");
            if analyze {
                let (rin, rout) = (c.stage[i], c.stage[i + 1]);
                nrows.push_str(&format!(", actual: {rin} -> {rout}"));
            }
            nrows.push(')');
            let inner_rows = st.inner_rows.get(i).copied().map_or(d.inner_rows, |n| n as f64);
            let table = if analyze {
                format!(
                    "{} (inner rows: {inner_rows}, engine memory: {}, nbatches: 1)",
                    if keys.is_empty() { "KDS-Heap" } else { "KDS-Hash" },
                    size_text_kb(st.inner_bytes as f64)
                )
            } else {
                format!(
                    "{} (planned inner rows: {inner_rows}, nbatches: 1)",
                    if keys.is_empty() { "KDS-Heap" } else { "KDS-Hash" }
                )
            };
            if text {
                let label = format!("Depth {}", i + 1);
                let pad = " ".repeat(label.len() + 2);
                let mut s = format!("{label}: {method} ({})", kind_label(d.kind));
                if !keys.is_empty() {
                    s.push_str(&format!(", HashKeys: ({key_text})"));
                }
                let indent = " ".repeat((*es).indent as usize * 2);
                let mut out = format!("{indent}{s}\n");
                if !qual_text.is_empty() {
                    out.push_str(&format!("{indent}{pad}JoinQuals: {qual_text}\n"));
                }
                out.push_str(&format!("{indent}{pad}{nrows}, {table}\n"));
                let cs = CString::new(out.replace('\0', "")).expect("NULs removed");
                pg_sys::appendStringInfoString((*es).str_, cs.as_ptr());
            } else {
                let label = CString::new(format!("Depth {}", i + 1)).expect("no NUL");
                pg_sys::ExplainOpenGroup(label.as_ptr(), label.as_ptr(), true, es);
                prop_text(c"Join Method", method, es);
                prop_text(c"Join Type", kind_label(d.kind), es);
                if !keys.is_empty() {
                    prop_text(c"HashKeys", &key_text, es);
                }
                if !qual_text.is_empty() {
                    prop_text(c"JoinQuals", &qual_text, es);
                }
                pg_sys::ExplainPropertyFloat(c"Plan Rows In".as_ptr(), std::ptr::null(), d.rows_in, 0, es);
                pg_sys::ExplainPropertyFloat(c"Plan Rows Out".as_ptr(), std::ptr::null(), d.rows_out, 0, es);
                if analyze {
                    pg_sys::ExplainPropertyInteger(c"Actual Rows In".as_ptr(), std::ptr::null(), c.stage[i] as i64, es);
                    pg_sys::ExplainPropertyInteger(
                        c"Actual Rows Out".as_ptr(),
                        std::ptr::null(),
                        c.stage[i + 1] as i64,
                        es,
                    );
                }
                pg_sys::ExplainPropertyInteger(c"Batches".as_ptr(), std::ptr::null(), 1, es);
                pg_sys::ExplainCloseGroup(label.as_ptr(), label.as_ptr(), true, es);
            }
        }
        if analyze && !st.info.depths.is_empty() && st.inners_were_loaded() {
            prop_text(c"Inner Build", &inner_build_text(st, (*es).timing), es);
            let cache = st.build_stats.map_or(st.cache_outcome(), |b| b.cache);
            if cache != crate::gpujoin::inner_cache::Outcome::Unknown {
                prop_text(c"Inner Cache", cache.text(), es);
            }
        }
        let eng = engine_of(st);
        let mut pref = crate::engine::describe(eng);
        if st.over_limit {
            pref.push_str(", inner relations over pg_strom.gpu_join_memory_limit");
        }
        if let Some(r) = st.arrow_reader()
            && crate::arrow_fdw::gpudirect_used(r, eng)
        {
            pref.push_str(" with GPUDirect SQL");
        }
        if crate::customscan::explain::heap_gpudirect(st.direct.as_deref(), &c, eng) {
            pref.push_str(" with GPUDirect SQL");
        }
        prop_text(c"GPU Preference", &pref, es);
        crate::customscan::explain::explain_placement(st.dev.candidates.as_ref(), st.dev.counters.gpus, es);
        if let Some(r) = st.arrow_reader() {
            r.explain((*node).ss.ps.plan, es);
        }
        if let Some(text) = st.source.gstore_text() {
            prop_text(c"GPU Store", &text, es);
        }
        st.source.explain_brin((*node).ss.ps.plan, es);
        if analyze {
            pg_sys::ExplainPropertyInteger(c"GPU Chunks".as_ptr(), std::ptr::null(), c.chunks as i64, es);
            pg_sys::ExplainPropertyInteger(c"GPU Input Rows".as_ptr(), std::ptr::null(), c.rows_in as i64, es);
            pg_sys::ExplainPropertyInteger(c"CPU Path Rows".as_ptr(), std::ptr::null(), c.rows_cpu_path as i64, es);
            if let Some(mode) = st.source.heap_read_mode() {
                prop_text(c"Heap Read", &crate::source::read_mode_text(mode, c.chunks, c.tid_chunks, c.ahead), es);
            }
            crate::customscan::explain::explain_heap_direct(st.direct.as_deref(), &c, eng, es);
            if c.file_bytes > 0 {
                // Arrow columns the engine read from the files itself (the
                // GPU service: from its device-memory cache, or the file)
                prop_text(c"Columns From Files", &size_text_kb(c.file_bytes as f64), es);
                if let Some(r) = st.arrow_reader()
                    && eng.kind() == pgstrom_runtime::EngineKind::Gpu
                {
                    let text = crate::arrow_fdw::storage_read_text(r, c.cufile_bytes, c.pinned_bytes, c.cached_bytes);
                    prop_text(c"Storage Read", &text, es);
                }
            }
            if c.unmatched > 0 {
                // (the inner rows a depth returns after the last chunk: a
                // RIGHT SEMI depth's are those that matched)
                let semi = st.info.depths.iter().any(|d| JoinKind::from_pg(d.kind) == Some(JoinKind::RightSemi));
                pg_sys::ExplainPropertyInteger(
                    if semi { c"Matched Inner Rows".as_ptr() } else { c"Unmatched Inner Rows".as_ptr() },
                    std::ptr::null(),
                    c.unmatched as i64,
                    es,
                );
            }
            if (*es).timing {
                pg_sys::ExplainPropertyFloat(c"GPU Time".as_ptr(), c"ms".as_ptr(), c.engine_ns as f64 / 1e6, 3, es);
                if c.device_total_ns > 0 {
                    prop_text(c"Engine Time", &engine_time_text(&c), es);
                }
                if c.host_ns.iter().any(|&n| n > 0) {
                    prop_text(c"Host Time", &host_time_text(&c), es);
                }
            }
        }
    }
}
