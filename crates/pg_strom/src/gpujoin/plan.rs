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
//! below it).  `custom_private` is one String: [`GpuJoinInfo`], hex.

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::program::Program;

use crate::codegen::{self, Inputs};
use crate::errors;
use crate::gpujoin::path::JoinDesc;
use crate::gpujoin::{NAME, exec};
use crate::gpuscan::path::{from_list, to_list};
use crate::gpuscan::plan::{hex, unhex};

/// Layout version of [`GpuJoinInfo`].
const INFO_VERSION: u32 = 1;

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
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn program(&mut self, p: Option<&Program>) {
        match p {
            None => self.u32(0),
            Some(p) => {
                let b = p.to_bytes().unwrap_or_else(|e| errors::raise("cannot serialize a device program", &e));
                self.u32(b.len() as u32);
                self.0.extend_from_slice(&b);
            }
        }
    }
    fn columns(&mut self, cols: &[(i16, u16)]) {
        self.u32(cols.len() as u32);
        for &(a, t) in cols {
            self.u32(a as u16 as u32 | (t as u32) << 16);
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u32(&mut self) -> Option<u32> {
        let (h, t) = self.0.split_at_checked(4)?;
        self.0 = t;
        Some(u32::from_le_bytes(h.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        let (h, t) = self.0.split_at_checked(8)?;
        self.0 = t;
        Some(f64::from_le_bytes(h.try_into().ok()?))
    }
    fn program(&mut self) -> Option<Option<Program>> {
        let n = self.u32()? as usize;
        if n == 0 {
            return Some(None);
        }
        let (h, t) = self.0.split_at_checked(n)?;
        self.0 = t;
        Some(Some(Program::from_bytes(h).unwrap_or_else(|e| errors::raise("cannot load the GpuJoin plan", &e))))
    }
    fn columns(&mut self) -> Option<Vec<(i16, u16)>> {
        let n = self.u32()?;
        (0..n).map(|_| self.u32().map(|v| (v as u16 as i16, (v >> 16) as u16))).collect()
    }
}

impl GpuJoinInfo {
    fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(INFO_VERSION);
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
        }
        let map: Vec<(i16, u16)> = self.scan_map.iter().map(|&(s, k)| (k, s as u16)).collect();
        w.columns(&map);
        w.u32(self.param_types.len() as u32);
        for t in &self.param_types {
            w.u32(*t as u32);
        }
        w.0
    }

    fn from_bytes(b: &[u8]) -> Option<GpuJoinInfo> {
        let mut r = Reader(b);
        if r.u32()? != INFO_VERSION {
            return None;
        }
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
            });
        }
        let scan_map = r.columns()?.into_iter().map(|(k, s)| (s as u8, k)).collect();
        let n = r.u32()?;
        let param_types = (0..n).map(|_| r.u32().map(|t| t as u16)).collect::<Option<Vec<_>>>()?;
        r.0.is_empty().then_some(GpuJoinInfo { scan_qual, nscan_quals, outer_columns, depths, scan_map, param_types })
    }

    /// Read a plan's info; a damaged plan or one from another version is
    /// an ERROR.
    ///
    /// # Safety
    /// `private` is the `custom_private` of a GpuJoin CustomScan.
    pub unsafe fn from_private(private: *mut pg_sys::List) -> GpuJoinInfo {
        let bad = || -> ! {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "invalid GpuJoin plan".into(),
                None,
                Some("Re-plan the query (for a prepared statement: DEALLOCATE and PREPARE it again)."),
            )
        };
        // SAFETY: the list came from plan_custom_path (shape checked).
        unsafe {
            if pg_sys::list_length(private) != 1 {
                bad();
            }
            let s = pg_sys::list_nth(private, 0) as *mut pg_sys::Node;
            if s.is_null() || (*s).type_ != pg_sys::NodeTag::T_String {
                bad();
            }
            let text = CStr::from_ptr((*(s as *mut pg_sys::String)).sval).to_string_lossy();
            unhex(&text).and_then(|b| Self::from_bytes(&b)).unwrap_or_else(|| bad())
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

/// The path methods (PlanCustomPath); also how our paths are recognised.
pub fn path_methods() -> *const pg_sys::CustomPathMethods {
    &raw const PATH_METHODS
}

/// Register the scan methods by name, for parallel workers.
pub fn register_methods() {
    // SAFETY: _PG_init, once; the methods live for the process.
    unsafe { pg_sys::RegisterCustomScanMethods(&raw const SCAN_METHODS) };
}

/// Every Var in `node`.
unsafe fn vars_of(node: *mut pg_sys::Node) -> Vec<*mut pg_sys::Var> {
    // SAFETY: a valid expression.
    unsafe {
        from_list(pg_sys::pull_var_clause(node, pg_sys::PVC_RECURSE_PLACEHOLDERS as i32))
            .into_iter()
            .map(|v| v.cast())
            .collect()
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
                (*copy).varnullingrels = pg_sys::bms_copy((**c).varnullingrels);
                return copy.cast();
            }
            return pg_sys::copyObjectImpl(node.cast()).cast();
        }
        pg_sys::expression_tree_mutator_impl(node, Some(canon_mutator), ctx)
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

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
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
        if plans.len() != desc.depths.len() {
            internal("inner plan count differs from depth count");
        }
        let outer = *(*root).simple_rel_array.add(desc.outer_relid as usize);
        let scan_quals = from_list(pg_sys::extract_actual_clauses((*outer).baserestrictinfo, false));
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
        let mut cols: Vec<(u8, i16, u16)> = Vec::new();
        for &e in &program_exprs {
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
        let compile =
            |e: *mut pg_sys::Node, inputs: &mut Inputs, allowed: &dyn Fn(u8) -> bool, text: bool| -> Program {
                let r = |v: *mut pg_sys::Var| resolve(v).filter(|(s, _)| allowed(*s));
                match codegen::compile_shared(e, &r, inputs, text) {
                    Ok((p, _)) => p,
                    Err(why) => errors::raise_plain(
                        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                        "GpuJoin expressions no longer compile".into(),
                        Some(why.0),
                        None,
                    ),
                }
            };
        let scan_qual = (!scan_quals.is_empty())
            .then(|| compile(pg_sys::make_ands_explicit(to_list(&scan_quals)).cast(), &mut inputs, &|s| s == 0, false));
        let mut depths = Vec::new();
        for (d, dd) in desc.depths.iter().enumerate() {
            let src = (d + 1) as u8;
            let outer_keys = dd.hash_keys.iter().map(|(o, _)| compile(*o, &mut inputs, &|s| s < src, true)).collect();
            let inner_keys = dd.hash_keys.iter().map(|(_, i)| compile(*i, &mut inputs, &|s| s == src, true)).collect();
            let qual = (!dd.quals.is_empty()).then(|| {
                compile(pg_sys::make_ands_explicit(to_list(&dd.quals)).cast(), &mut inputs, &|s| s <= src, false)
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
                inner_rows: (*plans[d]).plan_rows,
            });
        }
        if inputs.columns != cols {
            internal("programs read columns that were not collected");
        }

        // The scan tuple: the target list's Vars (their nullingrels are what
        // the nodes above expect), then those only the programs read.
        let mut canon: Vec<*mut pg_sys::Var> = Vec::new();
        // (a projection above may replace an empty `tlist` with its own,
        // over the join relation's target: those Vars come first)
        let mut all: Vec<*mut pg_sys::Var> = vars_of(tlist.cast());
        all.extend(vars_of((*(*rel).reltarget).exprs.cast()));
        for &e in &program_exprs {
            all.extend(vars_of(e));
        }
        for v in all {
            if !canon.iter().any(|c| (**c).varno == (*v).varno && (**c).varattno == (*v).varattno) {
                canon.push(v);
            }
        }
        let canon = Canon(canon);
        let mut scan_tlist: *mut pg_sys::List = std::ptr::null_mut();
        let mut scan_map = Vec::new();
        for (i, &v) in canon.0.iter().enumerate() {
            let Some(m) = resolve(v) else { internal("an output column is not produced by its relation") };
            scan_map.push(m);
            let tle = pg_sys::makeTargetEntry(
                pg_sys::copyObjectImpl(v.cast()).cast(),
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
        };
        let text = std::ffi::CString::new(hex(&info.to_bytes())).expect("hex has no NUL");

        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.plan.qual = std::ptr::null_mut();
        (*cscan).scan.scanrelid = desc.outer_relid;
        (*cscan).flags = (*best_path).flags;
        (*cscan).custom_plans = custom_plans;
        (*cscan).custom_exprs = to_list(&exprs);
        (*cscan).custom_private =
            pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeString(pg_sys::pstrdup(text.as_ptr())).cast());
        (*cscan).custom_scan_tlist = scan_tlist;
        (*cscan).methods = &raw const SCAN_METHODS;
        cscan.cast()
    }
}
