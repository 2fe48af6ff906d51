//! GpuJoin plans: PlanCustomPath and the plan-private state.
//!
//! A GpuJoin CustomScan has `scanrelid` = the scanned heap table (EXPLAIN
//! prints `GpuJoin on t0`), the inner plans in `custom_plans`, and a
//! `custom_scan_tlist` of every Var it produces or evaluates: the scan
//! tuple the executor fills per joined row, from the heap tuple (source 0)
//! or an inner row (source d).  `custom_exprs` holds the scan quals, then
//! per depth its join quals and outer hash keys (for EXPLAIN and the
//! scan quals' CPU path), then the hoisted parameters.  Within the node
//! every Var of one column is the same Var (setrefs matches them to the
//! scan tuple by column, and an outer join's nullingrels differ above and
//! below it).  `custom_private` is [`GpuJoinInfo`] in the device plans' one encoding
//! (`customscan::private`), and
//! for a GpuPreAgg with text, bpchar or bytea grouping keys that are
//! expressions, a List of those expressions over the scan tuple (INDEX_VAR
//! Vars; kept out of `custom_exprs`, where setrefs would replace each by
//! its own output column): the executor evaluates them at each group's
//! representative combination.

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::program::Program;

use crate::codegen::{self, Inputs};
use crate::customscan::node::plan_methods;
use crate::customscan::private::{self, Reader, Writer};
use crate::errors;
use crate::gpujoin::path::JoinDesc;
use crate::gpujoin::{NAME, exec};
use crate::pg::list::{from_list, to_list};
use pgstrom_runtime::group_filter::{Cmp, GroupFilter, Num, Value};

/// Layout version of [`GpuJoinInfo`].
const INFO_VERSION: u32 = 6;

/// `scan_map` source of a scan tuple column that is not a column of a
/// source (a GpuPreAgg key expression or partial aggregate).
pub const NO_SOURCE: u8 = 255;

/// One column of a GpuPreAgg's output (the leading scan tuple columns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AggOutput {
    /// Grouping key `index`: its value as the device computed it (type
    /// OID), or read at the representative row of a source (text keys;
    /// and a column outside the GROUP BY, [`DEPENDENT_KEY`]).
    Key {
        /// Which key program.
        index: u32,
        /// The key's type.
        type_oid: u32,
        /// (source, attnum or inner resno) of a column key read on the host.
        column: Option<(u8, i16)>,
    },
    /// A partial aggregate state: operation `op`'s words in `encoding`.
    Agg {
        /// Which operation.
        op: u32,
        /// A [`crate::codegen::aggregates::Encoding`].
        encoding: u32,
        /// The first argument's type (min/max results).
        arg_type: u32,
    },
}

/// The `index` of a key output that is no key on the device: a column of
/// an inner relation outside the GROUP BY (one value per group, as
/// PostgreSQL proved), read at the group's representative inner row.
pub const DEPENDENT_KEY: u32 = u32::MAX;

/// One aggregate operation of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct AggOpInfo {
    /// A pgstrom_runtime::agg::AggKind.
    pub kind: u32,
    /// Its argument programs.
    pub args: Vec<Program>,
    /// Its FILTER, or None.
    pub filter: Option<Program>,
    /// SumNum: the scale its sum is kept at; MinNum / MaxNum: the
    /// column's scale.
    pub scale: i32,
}

/// What a GpuPreAgg plan adds to its join.
#[derive(Debug, Clone)]
pub struct AggInfo {
    /// Grouping key programs.
    pub keys: Vec<Program>,
    /// Aggregate operations.
    pub ops: Vec<AggOpInfo>,
    /// The output columns (the first ones of the scan tuple).
    pub outputs: Vec<AggOutput>,
    /// Planned rows consumed and groups.
    pub rows_in: f64,
    /// See `rows_in`.
    pub groups: f64,
    /// The group filter: HAVING terms evaluated once the node holds every
    /// group (`codegen::having`; empty: none).
    pub filters: Vec<GroupFilter>,
    /// The partial groups exchanged between the processes
    /// (`gpupreagg::exchange`): per grouping key, (its output column, its
    /// hash function, its collation); empty: not exchanged.
    pub exchange: Vec<(u32, u32, u32)>,
}

/// One depth of a plan.
#[derive(Debug, Clone)]
pub struct DepthInfo {
    /// PostgreSQL's JoinType.
    pub kind: u32,
    /// Hash keys over the earlier sources.
    pub outer_keys: Vec<Program>,
    /// Hash keys over the inner row.
    pub inner_keys: Vec<Program>,
    /// The join quals (hash clauses first), or None.
    pub qual: Option<Program>,
    /// Inner columns the programs read: (resno in the inner plan, type).
    pub inner_columns: Vec<(i16, u16)>,
    /// Join quals in `custom_exprs`.
    pub nquals: u32,
    /// Planned rows in and out.
    pub rows_in: f64,
    /// See `rows_in`.
    pub rows_out: f64,
    /// Planned rows of the inner relation.
    pub inner_rows: f64,
    /// The inner plan is partial: its rows are put together from every
    /// process's share (gpujoin::shared_build).
    pub partial_inner: bool,
}

/// What a GpuJoin plan knows beyond the standard fields.
#[derive(Debug, Clone)]
pub struct GpuJoinInfo {
    /// The scan quals over the heap table, AND-ed, or None.
    pub scan_qual: Option<Program>,
    /// Scan quals at the head of `custom_exprs`.
    pub nscan_quals: u32,
    /// Columns of the heap table the programs read: (attnum, type).
    pub outer_columns: Vec<(i16, u16)>,
    /// Depth 1..N.
    pub depths: Vec<DepthInfo>,
    /// Per `custom_scan_tlist` entry: (source, attnum or inner resno).
    pub scan_map: Vec<(u8, i16)>,
    /// Types of the hoisted parameters (at the end of `custom_exprs`).
    pub param_types: Vec<u16>,
    /// GpuPreAgg: the aggregation of the joined rows.
    pub agg: Option<AggInfo>,
}

impl GpuJoinInfo {
    fn to_node(&self) -> *mut pg_sys::Node {
        let mut w = Writer::new(INFO_VERSION);
        w.program(self.scan_qual.as_ref());
        w.u32(self.nscan_quals);
        w.columns(&self.outer_columns);
        w.u32(self.depths.len() as u32);
        for d in &self.depths {
            w.u32(d.kind);
            w.u32(d.outer_keys.len() as u32);
            for (o, i) in d.outer_keys.iter().zip(&d.inner_keys) {
                w.program(Some(o));
                w.program(Some(i));
            }
            w.program(d.qual.as_ref());
            w.columns(&d.inner_columns);
            w.u32(d.nquals);
            w.f64(d.rows_in);
            w.f64(d.rows_out);
            w.f64(d.inner_rows);
            w.u32(d.partial_inner as u32);
        }
        let map: Vec<(i16, u16)> = self.scan_map.iter().map(|&(s, k)| (k, s as u16)).collect();
        w.columns(&map);
        w.u32(self.param_types.len() as u32);
        for t in &self.param_types {
            w.u32(*t as u32);
        }
        match &self.agg {
            None => w.u32(0),
            Some(a) => {
                w.u32(1);
                w.u32(a.keys.len() as u32);
                for k in &a.keys {
                    w.program(Some(k));
                }
                w.u32(a.ops.len() as u32);
                for o in &a.ops {
                    w.u32(o.kind);
                    w.u32(o.scale as u32);
                    w.u32(o.args.len() as u32);
                    for p in &o.args {
                        w.program(Some(p));
                    }
                    w.program(o.filter.as_ref());
                }
                w.u32(a.outputs.len() as u32);
                for o in &a.outputs {
                    match o {
                        AggOutput::Key { index, type_oid, column } => {
                            w.u32(1);
                            w.u32(*index);
                            w.u32(*type_oid);
                            let (s, k) = column.unwrap_or((NO_SOURCE, 0));
                            w.u32(s as u32 | (k as u16 as u32) << 16);
                        }
                        AggOutput::Agg { op, encoding, arg_type } => {
                            w.u32(2);
                            w.u32(*op);
                            w.u32(*encoding);
                            w.u32(*arg_type);
                        }
                    }
                }
                w.f64(a.rows_in);
                w.f64(a.groups);
                write_filters(&mut w, &a.filters);
                w.u32(a.exchange.len() as u32);
                for &(i, f, c) in &a.exchange {
                    w.u32(i);
                    w.u32(f);
                    w.u32(c);
                }
            }
        }
        w.into_node()
    }

    fn read(r: &mut Reader<'_>) -> Option<GpuJoinInfo> {
        let scan_qual = r.program()?;
        let nscan_quals = r.u32()?;
        let outer_columns = r.columns()?;
        let ndepths = r.u32()?;
        let mut depths = Vec::new();
        for _ in 0..ndepths {
            let kind = r.u32()?;
            let nkeys = r.u32()?;
            let mut outer_keys = Vec::new();
            let mut inner_keys = Vec::new();
            for _ in 0..nkeys {
                outer_keys.push(r.program()??);
                inner_keys.push(r.program()??);
            }
            let qual = r.program()?;
            let inner_columns = r.columns()?;
            let nquals = r.u32()?;
            let (rows_in, rows_out, inner_rows) = (r.f64()?, r.f64()?, r.f64()?);
            let partial_inner = r.u32()? != 0;
            depths.push(DepthInfo {
                kind,
                outer_keys,
                inner_keys,
                qual,
                inner_columns,
                nquals,
                rows_in,
                rows_out,
                inner_rows,
                partial_inner,
            });
        }
        let scan_map = r.columns()?.into_iter().map(|(k, s)| (s as u8, k)).collect();
        let n = r.u32()?;
        let param_types = (0..n).map(|_| r.u32().map(|t| t as u16)).collect::<Option<Vec<_>>>()?;
        let agg = match r.u32()? {
            0 => None,
            1 => {
                let nk = r.u32()?;
                let keys = (0..nk).map(|_| r.program()?).collect::<Option<Vec<_>>>()?;
                let nops = r.u32()?;
                let mut ops = Vec::new();
                for _ in 0..nops {
                    let kind = r.u32()?;
                    let scale = r.u32()? as i32;
                    let na = r.u32()?;
                    let args = (0..na).map(|_| r.program()?).collect::<Option<Vec<_>>>()?;
                    let filter = r.program()?;
                    ops.push(AggOpInfo { kind, args, filter, scale });
                }
                let no = r.u32()?;
                let mut outputs = Vec::new();
                for _ in 0..no {
                    let tag = r.u32()?;
                    let (a, b, c) = (r.u32()?, r.u32()?, r.u32()?);
                    outputs.push(match tag {
                        1 => AggOutput::Key {
                            index: a,
                            type_oid: b,
                            column: ((c & 0xff) as u8 != NO_SOURCE)
                                .then_some(((c & 0xff) as u8, (c >> 16) as u16 as i16)),
                        },
                        2 => AggOutput::Agg { op: a, encoding: b, arg_type: c },
                        _ => return None,
                    });
                }
                let (rows_in, groups) = (r.f64()?, r.f64()?);
                let filters = read_filters(r)?;
                let nex = r.u32()?;
                let exchange = (0..nex).map(|_| Some((r.u32()?, r.u32()?, r.u32()?))).collect::<Option<Vec<_>>>()?;
                Some(AggInfo { keys, ops, outputs, rows_in, groups, filters, exchange })
            }
            _ => return None,
        };
        Some(GpuJoinInfo { scan_qual, nscan_quals, outer_columns, depths, scan_map, param_types, agg })
    }

    /// Read a plan's info; a damaged plan or one from another version is
    /// an ERROR.
    ///
    /// # Safety
    /// `private` is the `custom_private` of a GpuJoin CustomScan.
    pub unsafe fn from_private(private: *mut pg_sys::List) -> GpuJoinInfo {
        // SAFETY: caller's promise.
        unsafe { private::read(private, 4, "GpuJoin", INFO_VERSION, Self::read) }
    }

    /// The grouping keys PostgreSQL evaluates at a group's representative
    /// combination (see the module comment), in key order.
    ///
    /// # Safety
    /// `private` is the `custom_private` of a GpuJoin CustomScan.
    pub unsafe fn host_keys(private: *mut pg_sys::List) -> Vec<*mut pg_sys::Node> {
        // SAFETY: the list came from plan_custom_path.
        unsafe {
            if pg_sys::list_length(private) < 2 {
                return Vec::new();
            }
            from_list(pg_sys::list_nth(private, 1) as *mut pg_sys::List)
        }
    }

    /// Per SumNumWide operation (in operation order): its argument and
    /// its FILTER (NULL: none), over the scan tuple, which PostgreSQL
    /// evaluates at an exception combination (a value the device could
    /// not hold).
    ///
    /// # Safety
    /// `private` is the `custom_private` of a GpuJoin CustomScan.
    pub unsafe fn wide_exprs(private: *mut pg_sys::List) -> (Vec<*mut pg_sys::Node>, Vec<*mut pg_sys::Node>) {
        // SAFETY: the list came from plan_custom_path.
        unsafe {
            if pg_sys::list_length(private) < 4 {
                return (Vec::new(), Vec::new());
            }
            (
                from_list(pg_sys::list_nth(private, 2) as *mut pg_sys::List),
                from_list(pg_sys::list_nth(private, 3) as *mut pg_sys::List),
            )
        }
    }
}

impl AggOutput {
    /// A grouping key PostgreSQL evaluates at the representative
    /// combination: a text, bpchar or bytea expression (not a column).
    pub fn host_evaluated(&self) -> bool {
        match *self {
            AggOutput::Key { type_oid, column: None, .. } => crate::codegen::device_type_of(type_oid.into())
                .and_then(pgstrom_runtime::catalog::type_info)
                .is_some_and(|t| t.width == 0),
            _ => false,
        }
    }
}

/// Context of [`index_mutator`]: the scan tuple's position (resno) of each
/// (varno, varattno).
struct ScanIndex(Vec<(i32, i16, i16)>);

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn index_mutator(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
    if node.is_null() {
        return node;
    }
    // SAFETY: the mutator protocol; ctx is a ScanIndex.
    unsafe {
        if (*node).type_ == pg_sys::NodeTag::T_Var {
            let v = node as *mut pg_sys::Var;
            let index = &*(ctx as *const ScanIndex);
            let Some(&(_, _, resno)) = index.0.iter().find(|e| (e.0, e.1) == ((*v).varno, (*v).varattno)) else {
                internal("a grouping key reads a column outside the scan tuple")
            };
            let copy = pg_sys::copyObjectImpl(v.cast()) as *mut pg_sys::Var;
            (*copy).varno = pg_sys::INDEX_VAR;
            (*copy).varattno = resno;
            crate::pg::compat::set_nullingrels(copy, None);
            (*copy).varlevelsup = 0;
            return copy.cast();
        }
        crate::pg::compat::mutate(node, index_mutator, ctx)
    }
}

plan_methods!(NAME, plan_custom_path, exec::create_scan_state);

/// Every Var in `node` (inside aggregates too).
unsafe fn vars_of(node: *mut pg_sys::Node) -> Vec<*mut pg_sys::Var> {
    // SAFETY: a valid expression.
    unsafe {
        let flags = pg_sys::PVC_RECURSE_PLACEHOLDERS | pg_sys::PVC_RECURSE_AGGREGATES;
        from_list(pg_sys::pull_var_clause(node, flags as i32)).into_iter().map(|v| v.cast()).collect()
    }
}

/// The canonical Vars of the scan tuple, keyed by (varno, varattno).
struct Canon(Vec<*mut pg_sys::Var>);

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn canon_mutator(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
    if node.is_null() {
        return node;
    }
    // SAFETY: the mutator protocol; ctx is a Canon.
    unsafe {
        if (*node).type_ == pg_sys::NodeTag::T_Var {
            let v = node as *mut pg_sys::Var;
            let canon = &*(ctx as *const Canon);
            if let Some(c) = canon.0.iter().find(|c| (***c).varno == (*v).varno && (***c).varattno == (*v).varattno) {
                let copy = pg_sys::copyObjectImpl(v.cast()) as *mut pg_sys::Var;
                crate::pg::compat::set_nullingrels(copy, Some(*c));
                return copy.cast();
            }
            return pg_sys::copyObjectImpl(node.cast()).cast();
        }
        crate::pg::compat::mutate(node, canon_mutator, ctx)
    }
}

/// A copy of `node` whose Vars carry the canonical nullingrels.
unsafe fn canonical(node: *mut pg_sys::Node, canon: &Canon) -> *mut pg_sys::Node {
    // SAFETY: valid expression; canon outlives the call.
    unsafe { canon_mutator(node, canon as *const Canon as *mut std::ffi::c_void) }
}

fn internal(msg: &str) -> ! {
    errors::raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("GpuJoin plan: {msg}"), None, None)
}

/// PlanCustomPath of GpuJoin, and of GpuPreAgg (whose plan is this one,
/// its aggregation stage filled in, with GpuPreAgg's scan methods).
#[pgrx::pg_guard]
pub unsafe extern "C-unwind" fn plan_custom_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    _clauses: *mut pg_sys::List,
    custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: planner callback arguments are valid.
    unsafe {
        let desc = JoinDesc::from_list((*best_path).custom_private);
        let plans: Vec<*mut pg_sys::Plan> = from_list(custom_plans).into_iter().map(|p| p.cast()).collect();
        let inner_paths: Vec<*mut pg_sys::Path> =
            from_list((*best_path).custom_paths).into_iter().map(|p| p.cast()).collect();
        if plans.len() != desc.depths.len() || inner_paths.len() != plans.len() {
            internal("inner plan count differs from depth count");
        }
        let outer = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let scan_quals = desc.device_scan_quals(outer);
        // where each Var is read
        let resolve = |v: *mut pg_sys::Var| -> Option<(u8, i16)> {
            if (*v).varno == desc.outer_relid as i32 {
                return Some((0, (*v).varattno));
            }
            for (d, p) in plans.iter().enumerate() {
                for tle in from_list((**p).targetlist) {
                    let e = (*(tle as *mut pg_sys::TargetEntry)).expr as *mut pg_sys::Node;
                    if (*e).type_ == pg_sys::NodeTag::T_Var {
                        let iv = e as *mut pg_sys::Var;
                        if (*iv).varno == (*v).varno && (*iv).varattno == (*v).varattno && (*iv).varlevelsup == 0 {
                            return Some(((d + 1) as u8, (*(tle as *mut pg_sys::TargetEntry)).resno));
                        }
                    }
                }
            }
            None
        };

        // Columns the programs read, ordered by source (what the engine
        // expects), collected before compiling so every program agrees.
        let mut program_exprs: Vec<*mut pg_sys::Node> = scan_quals.clone();
        for d in &desc.depths {
            program_exprs.extend(&d.quals);
            program_exprs.extend(d.hash_keys.iter().flat_map(|(o, i)| [*o, *i]));
        }
        // GpuPreAgg: the output (keys and partial Aggrefs) is the target
        let lead: Vec<*mut pg_sys::Node> = match &desc.agg {
            Some(_) => from_list(tlist)
                .into_iter()
                .map(|t| (*(t as *mut pg_sys::TargetEntry)).expr as *mut pg_sys::Node)
                .collect(),
            None => Vec::new(),
        };
        // (a column outside the GROUP BY of an inner relation is read from
        // the group's representative row, not by a program)
        let dependent: Vec<bool> = match &desc.agg {
            Some(_) => from_list(tlist)
                .into_iter()
                .map(|t| {
                    let te = t as *mut pg_sys::TargetEntry;
                    (*te).ressortgroupref == 0
                        && crate::codegen::aggregates::dependent_column((*te).expr.cast(), desc.outer_relid)
                })
                .collect(),
            None => Vec::new(),
        };
        let mut cols: Vec<(u8, i16, u16)> = Vec::new();
        let read_by_programs = lead.iter().zip(&dependent).filter(|(_, d)| !**d).map(|(e, _)| e);
        for &e in program_exprs.iter().chain(read_by_programs) {
            for v in vars_of(e) {
                let Some((s, k)) = resolve(v) else { internal("a join column is not produced by its relation") };
                let Some(t) = codegen::device_type_of((*v).vartype) else {
                    internal("a join column has no device type")
                };
                if !cols.iter().any(|c| (c.0, c.1) == (s, k)) {
                    cols.push((s, k, t));
                }
            }
        }
        cols.sort_by_key(|c| (c.0, c.1));
        let mut inputs = Inputs { columns: cols.clone(), params: Vec::new() };
        // `text`: a text result (a hash key); `fallback`: the scan quals,
        // whose rows PostgreSQL evaluates when the device cannot
        let compile = |e: *mut pg_sys::Node,
                       inputs: &mut Inputs,
                       allowed: &dyn Fn(u8) -> bool,
                       text: bool,
                       fallback: bool|
         -> Program {
            let r = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| allowed(*s));
            let compiled = if fallback {
                codegen::compile_shared_fallback(e, &r, inputs)
            } else {
                codegen::compile_shared(e, &r, inputs, text)
            };
            match compiled {
                Ok((p, _)) => p,
                Err(why) => errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "GpuJoin expressions no longer compile".into(),
                    Some(why.0),
                    None,
                ),
            }
        };
        let scan_qual = (!scan_quals.is_empty()).then(|| {
            compile(pg_sys::make_ands_explicit(to_list(&scan_quals)).cast(), &mut inputs, &|s| s == 0, false, true)
        });
        let mut depths = Vec::new();
        for (d, dd) in desc.depths.iter().enumerate() {
            let src = (d + 1) as u8;
            let outer_keys =
                dd.hash_keys.iter().map(|(o, _)| compile(*o, &mut inputs, &|s| s < src, true, false)).collect();
            let inner_keys =
                dd.hash_keys.iter().map(|(_, i)| compile(*i, &mut inputs, &|s| s == src, true, false)).collect();
            let qual = (!dd.quals.is_empty()).then(|| {
                compile(pg_sys::make_ands_explicit(to_list(&dd.quals)).cast(), &mut inputs, &|s| s <= src, false, false)
            });
            depths.push(DepthInfo {
                kind: dd.kind,
                outer_keys,
                inner_keys,
                qual,
                inner_columns: cols.iter().filter(|c| c.0 == src).map(|c| (c.1, c.2)).collect(),
                nquals: dd.quals.len() as u32,
                rows_in: dd.rows_in,
                rows_out: dd.rows_out,
                inner_rows: crate::gpujoin::path::inner_rows_of(inner_paths[d]),
                partial_inner: dd.partial_inner,
            });
        }
        let mut host_keys: Vec<*mut pg_sys::Node> = Vec::new();
        // per SumNumWide operation, its argument and FILTER (or NULL)
        let (mut wide_args, mut wide_filters): (Vec<*mut pg_sys::Node>, Vec<*mut pg_sys::Node>) =
            (Vec::new(), Vec::new());
        let agg = desc.agg.as_ref().map(|_| {
            let all = |_: u8| true;
            let mut keys = Vec::new();
            let mut ops = Vec::new();
            let mut outputs = Vec::new();
            for (i, &e) in lead.iter().enumerate() {
                if dependent[i] {
                    let v = e.cast::<pg_sys::Var>();
                    let column = resolve(v).unwrap_or_else(|| internal("a grouping column has no source"));
                    outputs.push(AggOutput::Key {
                        index: DEPENDENT_KEY,
                        type_oid: pg_sys::exprType(e).to_u32(),
                        column: Some(column),
                    });
                    continue;
                }
                if (*e).type_ == pg_sys::NodeTag::T_Aggref {
                    let a = e as *mut pg_sys::Aggref;
                    let Ok(crate::codegen::aggregates::AggrefInfo { args, types, kind, enc, .. }) =
                        crate::codegen::aggregates::classify_aggref(a)
                    else {
                        internal("an aggregate is no longer supported")
                    };
                    let mut scale = 0;
                    let mut op_kind = kind;
                    let first_arg: *mut pg_sys::Node = args.first().copied().unwrap_or(std::ptr::null_mut());
                    let r = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| all(*s));
                    let args = args
                        .iter()
                        .map(|&x| match crate::codegen::aggregates::compile_agg_arg(kind, x, &r, &mut inputs) {
                            Ok((p, s, k)) => {
                                scale = s;
                                op_kind = k;
                                p
                            }
                            Err(why) => internal(&format!("an aggregate argument no longer compiles: {}", why.0)),
                        })
                        .collect::<Vec<_>>();
                    let op = AggOpInfo {
                        kind: op_kind as u32,
                        scale,
                        args,
                        filter: (!(*a).aggfilter.is_null())
                            .then(|| compile((*a).aggfilter.cast(), &mut inputs, &all, false, false)),
                    };
                    // aggregates of one state (sum(x) and avg(x), the same
                    // aggregate twice) share one operation, as PostgreSQL's
                    // own executor shares their transition state
                    let index = match ops.iter().position(|o| *o == op) {
                        Some(i) => i,
                        None => {
                            if op_kind == pgstrom_runtime::agg::AggKind::SumNumWide {
                                // PostgreSQL computes an exception row's value
                                wide_args.push(first_arg);
                                wide_filters.push((*a).aggfilter.cast());
                            }
                            ops.push(op);
                            ops.len() - 1
                        }
                    };
                    outputs.push(AggOutput::Agg {
                        op: index as u32,
                        encoding: enc as u32,
                        arg_type: types.first().map_or(0, |t| t.to_u32()),
                    });
                } else {
                    let t = pg_sys::exprType(e);
                    use crate::codegen::aggregates::KeySource;
                    let column = match crate::codegen::aggregates::key_source(e) {
                        KeySource::Device => None,
                        KeySource::Column(v) => {
                            Some(resolve(v).unwrap_or_else(|| internal("a grouping column has no source")))
                        }
                        KeySource::Expr => {
                            host_keys.push(e);
                            None
                        }
                    };
                    outputs.push(AggOutput::Key { index: keys.len() as u32, type_oid: t.to_u32(), column });
                    let r = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| all(*s));
                    keys.push(match codegen::compile_group_key(e, &r, &mut inputs) {
                        Ok((p, _)) => p,
                        Err(why) => internal(&format!("a grouping key no longer compiles: {}", why.0)),
                    });
                }
            }
            let a = desc.agg.as_ref().expect("matched above");
            // (None where the terms no longer compile: no filter, which is
            // always correct)
            let filters = if a.having.is_empty() {
                Vec::new()
            } else {
                crate::codegen::having::compile(to_list(&a.having).cast(), &lead).unwrap_or_default()
            };
            let filters = filters
                .into_iter()
                .filter(|f| matches!(outputs.get(f.output as usize), Some(AggOutput::Agg { .. })))
                .collect::<Vec<_>>();
            let exchange = a.exchange.iter().map(|&(i, f, c)| (i, f.to_u32(), c.to_u32())).collect();
            AggInfo { keys, ops, outputs, rows_in: a.rows_in, groups: a.groups, filters, exchange }
        });
        if inputs.columns != cols {
            internal("programs read columns that were not collected");
        }

        // The scan tuple: the target list's Vars (their nullingrels are what
        // the nodes above expect), then those only the programs read.
        let mut canon: Vec<*mut pg_sys::Var> = Vec::new();
        let mut all: Vec<*mut pg_sys::Var> = Vec::new();
        if desc.agg.is_some() {
            // GpuPreAgg: its output columns lead; those that are Vars are
            // the canonical ones
            all.extend(lead.iter().filter(|e| (***e).type_ == pg_sys::NodeTag::T_Var).map(|e| e.cast()));
        } else {
            // (a projection above may replace an empty `tlist` with its
            // own, over the join relation's target: those Vars come first)
            all.extend(vars_of(tlist.cast()));
            all.extend(vars_of((*(*rel).reltarget).exprs.cast()));
        }
        for &e in program_exprs.iter().chain(&host_keys).chain(&wide_args).chain(&wide_filters).chain(&desc.host_quals)
        {
            if !e.is_null() {
                all.extend(vars_of(e));
            }
        }
        for v in all {
            if !canon.iter().any(|c| (**c).varno == (*v).varno && (**c).varattno == (*v).varattno) {
                canon.push(v);
            }
        }
        let canon = Canon(canon);
        let mut scan_tlist: *mut pg_sys::List = std::ptr::null_mut();
        let mut scan_map = Vec::new();
        let mut entries: Vec<*mut pg_sys::Node> = lead.clone();
        for &v in &canon.0 {
            let in_lead = lead.iter().any(|&e| {
                (*e).type_ == pg_sys::NodeTag::T_Var && {
                    let l = e as *mut pg_sys::Var;
                    (*l).varno == (*v).varno && (*l).varattno == (*v).varattno
                }
            });
            if !in_lead {
                entries.push(v.cast());
            }
        }
        for (i, &e) in entries.iter().enumerate() {
            if (*e).type_ == pg_sys::NodeTag::T_Var {
                let Some(m) = resolve(e.cast()) else { internal("an output column is not produced by its relation") };
                scan_map.push(m);
            } else {
                scan_map.push((NO_SOURCE, 0));
            }
            let tle = pg_sys::makeTargetEntry(
                pg_sys::copyObjectImpl(e.cast()).cast(),
                (i + 1) as i16,
                std::ptr::null_mut(),
                false,
            );
            scan_tlist = pg_sys::lappend(scan_tlist, tle.cast());
        }
        let mut exprs: Vec<*mut pg_sys::Node> = scan_quals.iter().map(|&q| canonical(q, &canon)).collect();
        for d in &desc.depths {
            exprs.extend(d.quals.iter().map(|&q| canonical(q, &canon)));
            exprs.extend(d.hash_keys.iter().map(|(o, _)| canonical(*o, &canon)));
        }
        exprs.extend(inputs.params.iter().map(|(e, _)| canonical(*e, &canon)));
        let info = GpuJoinInfo {
            scan_qual,
            nscan_quals: scan_quals.len() as u32,
            outer_columns: cols.iter().filter(|c| c.0 == 0).map(|c| (c.1, c.2)).collect(),
            depths,
            scan_map,
            param_types: inputs.params.iter().map(|(_, t)| *t).collect(),
            agg,
        };

        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        // the host quals: ExecScan evaluates them on each joined row
        // (setrefs turns their Vars into the scan tuple's columns)
        (*cscan).scan.plan.qual = to_list(&desc.host_quals.iter().map(|&q| canonical(q, &canon)).collect::<Vec<_>>());
        (*cscan).scan.scanrelid = desc.outer_relid;
        (*cscan).flags = (*best_path).flags;
        (*cscan).custom_plans = custom_plans;
        (*cscan).custom_exprs = to_list(&exprs);
        (*cscan).custom_private = pg_sys::lappend(std::ptr::null_mut(), info.to_node().cast());
        if !host_keys.is_empty() || !wide_args.is_empty() {
            let index = ScanIndex(
                entries
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| (***e).type_ == pg_sys::NodeTag::T_Var)
                    .map(|(i, &e)| {
                        let v = e as *mut pg_sys::Var;
                        ((*v).varno, (*v).varattno, (i + 1) as i16)
                    })
                    .collect(),
            );
            let over_scan = |exprs: &[*mut pg_sys::Node]| -> *mut pg_sys::List {
                let mut list: *mut pg_sys::List = std::ptr::null_mut();
                for &e in exprs {
                    let m = if e.is_null() {
                        e
                    } else {
                        index_mutator(e, &index as *const ScanIndex as *mut std::ffi::c_void)
                    };
                    list = pg_sys::lappend(list, m.cast());
                }
                list
            };
            // [1] host keys, [2] SumNumWide arguments, [3] their filters
            for exprs in [&host_keys, &wide_args, &wide_filters] {
                (*cscan).custom_private = pg_sys::lappend((*cscan).custom_private, over_scan(exprs).cast());
            }
        }
        (*cscan).custom_scan_tlist = scan_tlist;
        (*cscan).methods = &raw const SCAN_METHODS;
        cscan.cast()
    }
}

/// Write a GpuPreAgg's group filter (`codegen::having`) into its plan.
fn write_filters(w: &mut Writer, filters: &[GroupFilter]) {
    w.u32(filters.len() as u32);
    for f in filters {
        w.u32(f.output);
        w.u32(f.cmp as u32);
        let (tag, m, s) = match f.value {
            Value::Int(v) => (1, v, 0),
            Value::Float(v) => (2, v.to_bits() as i128, 0),
            Value::Num(Num::Fin(m, s)) => (3, m, s),
            Value::Num(Num::NaN) => (4, 0, 0),
            Value::Num(Num::PInf) => (5, 0, 0),
            Value::Num(Num::NInf) => (6, 0, 0),
        };
        w.u32(tag);
        for i in 0..4 {
            w.u32((m >> (32 * i)) as u32);
        }
        w.u32(s as u32);
    }
}

/// Read what [`write_filters`] wrote.
fn read_filters(r: &mut Reader<'_>) -> Option<Vec<GroupFilter>> {
    let n = r.u32()?;
    let mut out = Vec::new();
    for _ in 0..n {
        let output = r.u32()?;
        let cmp = Cmp::from_u32(r.u32()?)?;
        let tag = r.u32()?;
        let mut m: u128 = 0;
        for i in 0..4 {
            m |= (r.u32()? as u128) << (32 * i);
        }
        let (m, s) = (m as i128, r.u32()? as i32);
        let value = match tag {
            1 => Value::Int(m),
            2 => Value::Float(f64::from_bits(m as u64)),
            3 => Value::Num(Num::Fin(m, s)),
            4 => Value::Num(Num::NaN),
            5 => Value::Num(Num::PInf),
            6 => Value::Num(Num::NInf),
            _ => return None,
        };
        out.push(GroupFilter { output, cmp, value });
    }
    Some(out)
}
