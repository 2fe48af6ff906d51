//! Statistics hints: skipping record batches by their min/max.
//!
//! A hint is a scan qual `column op value` (or `value op column`,
//! commuted) where op is a btree comparison (<, <=, =, >=, >) and value
//! holds no column and nothing volatile (a constant, a parameter, a stable
//! expression evaluated once at executor start).  The planner keeps them
//! in the ForeignScan's fdw_exprs (so setrefs fixes their parameters and
//! EXPLAIN can print them); the executor parses each file's per-batch
//! `min_values` / `max_values` for the hinted columns with the column
//! type's input function and skips a batch when some hint cannot hold for
//! any value in [min, max].  The quals themselves still run on every row
//! read: hints only save reading batches that cannot match.

use pgrx::pg_sys::{self, Datum, Oid};

use super::file::ArrowFile;
use crate::pg::list::from_list;

/// The hint clauses among the quals `clauses` over the relation `relid`:
/// OpExprs with the column (a Var of `relid`) on the left.
///
/// # Safety
/// Planner or executor state; `clauses` are expressions.
pub unsafe fn hint_clauses(relid: u32, clauses: &[*mut pg_sys::Node]) -> Vec<*mut pg_sys::Node> {
    // SAFETY: caller's promise.
    unsafe {
        let own = |v: *mut pg_sys::Var| {
            ((*v).varno as u32 == relid && (*v).varattno > 0 && (*v).varlevelsup == 0).then_some((*v).varattno)
        };
        hint_clauses_by(relid, clauses, &own)
    }
}

/// As [`hint_clauses`], for quals whose Vars `resolve` maps to columns of
/// `relid` (a join's scan tuple: INDEX_VAR positions).
///
/// # Safety
/// As [`hint_clauses`].
pub unsafe fn hint_clauses_by(
    relid: u32,
    clauses: &[*mut pg_sys::Node],
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<i16>,
) -> Vec<*mut pg_sys::Node> {
    // SAFETY: caller's promise.
    unsafe {
        let mut out = Vec::new();
        for &clause in clauses {
            if (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
                continue;
            }
            let op = clause as *mut pg_sys::OpExpr;
            let args = from_list((*op).args);
            if args.len() != 2 {
                continue;
            }
            let is_col = |n: *mut pg_sys::Node| {
                (*n).type_ == pg_sys::NodeTag::T_Var
                    && (*n.cast::<pg_sys::Var>()).varlevelsup == 0
                    && resolve(n.cast()).is_some()
            };
            let is_value = |n: *mut pg_sys::Node| {
                !pg_sys::contain_var_clause(n) && !pg_sys::contain_volatile_functions(n) && !pg_sys::contain_subplans(n)
            };
            let (opno, col, value) = if is_col(args[0]) && is_value(args[1]) {
                ((*op).opno, args[0], args[1])
            } else if is_col(args[1]) && is_value(args[0]) {
                let c = pg_sys::get_commutator((*op).opno);
                if c == pg_sys::InvalidOid {
                    continue;
                }
                (c, args[1], args[0])
            } else {
                continue;
            };
            if comparison(opno, pg_sys::exprType(col)).is_none() {
                continue;
            }
            // the column as a Var of relid
            let v = col as *mut pg_sys::Var;
            let attnum = resolve(v).expect("checked");
            let col = pg_sys::makeVar(relid as i32, attnum, (*v).vartype, (*v).vartypmod, (*v).varcollid, 0);
            let e = pg_sys::make_opclause(
                opno,
                pg_sys::BOOLOID,
                false,
                col.cast(),
                value.cast(),
                (*op).opcollid,
                (*op).inputcollid,
            );
            out.push(e.cast());
        }
        out
    }
}

/// The btree comparison `opno` is over a column of `coltype`: (family,
/// compare type), or None.
unsafe fn comparison(opno: Oid, coltype: Oid) -> Option<(Oid, crate::pg::compat::cmp::Kind, Oid)> {
    // SAFETY: catalog lookups.
    unsafe {
        for (family, kind, left, right) in crate::pg::compat::btree_interpretations(opno) {
            use crate::pg::compat::cmp;
            if left == coltype && [cmp::LT, cmp::LE, cmp::EQ, cmp::GE, cmp::GT].contains(&kind) {
                return Some((family, kind, right));
            }
        }
        None
    }
}

/// Per-batch (min, max) of a column in its type (None: no statistics).
pub type BatchStats = Vec<Option<(Datum, Datum)>>;

/// A hint ready to test batches.
pub struct Hint {
    /// The file field of the column.
    field: usize,
    coltype: Oid,
    collation: Oid,
    cmp: crate::pg::compat::cmp::Kind,
    /// The operator's function, and for `=` the family's <= and >=.
    op_fn: Oid,
    le_fn: Oid,
    ge_fn: Oid,
    /// The value (None: NULL, which no row matches).
    value: Option<Datum>,
    /// The value's expression and where it is evaluated again after a
    /// rescan (its Params may have new values); null for a join-key range.
    state: *mut pg_sys::ExprState,
    ps: *mut pg_sys::PlanState,
}

impl Hint {
    /// Hints from hint clauses (see [`hint_clauses`]); their values are
    /// evaluated by [`Self::refresh`] before the first batch is chosen.
    ///
    /// # Safety
    /// Executor start, `ps` the scan's PlanState; `columns` the scan's
    /// (field, attribute index) list.
    pub unsafe fn prepare(
        exprs: &[*mut pg_sys::Node],
        columns: &[(usize, usize)],
        ps: *mut pg_sys::PlanState,
    ) -> Vec<Hint> {
        // SAFETY: caller's promise.
        unsafe {
            let mut out = Vec::new();
            for &e in exprs {
                let op = e as *mut pg_sys::OpExpr;
                let args = from_list((*op).args);
                let var = args[0] as *mut pg_sys::Var;
                let Some(&(field, _)) = columns.iter().find(|&&(_, a)| a == ((*var).varattno - 1) as usize) else {
                    continue;
                };
                let coltype = (*var).vartype;
                let Some((family, cmp, righttype)) = comparison((*op).opno, coltype) else { continue };
                let member = |strategy: u32| {
                    let o = pg_sys::get_opfamily_member(family, coltype, righttype, strategy as i16);
                    if o == pg_sys::InvalidOid { pg_sys::InvalidOid } else { pg_sys::get_opcode(o) }
                };
                let (le_fn, ge_fn) = if cmp == crate::pg::compat::cmp::EQ {
                    (member(pg_sys::BTLessEqualStrategyNumber), member(pg_sys::BTGreaterEqualStrategyNumber))
                } else {
                    (pg_sys::InvalidOid, pg_sys::InvalidOid)
                };
                if cmp == crate::pg::compat::cmp::EQ && (le_fn == pg_sys::InvalidOid || ge_fn == pg_sys::InvalidOid) {
                    continue;
                }
                if pg_sys::contain_var_clause(args[1]) {
                    continue;
                }
                // Evaluated at the scan's first batch (`refresh`), not now:
                // at executor start the Params of the query's initplans
                // hold no value yet (their plans are set up after this
                // node's), and a function of one read a NULL pointer.
                let state = pg_sys::ExecInitExpr(args[1].cast(), ps);
                out.push(Hint {
                    field,
                    coltype,
                    collation: (*op).inputcollid,
                    cmp,
                    op_fn: pg_sys::get_opcode((*op).opno),
                    le_fn,
                    ge_fn,
                    value: None,
                    state,
                    ps,
                });
            }
            out
        }
    }

    /// Evaluate the value: before the scan's first batch (the initplans'
    /// Params are computed then, on first use), and again after a rescan,
    /// whose Params (a correlated sub-query's, a nested loop's) may have
    /// new values.  Once a value held the Param's first value, and every
    /// later rescan skipped the batches by it.
    ///
    /// # Safety
    /// A backend, during the scan of `ps`'s node.
    pub unsafe fn refresh(&mut self) {
        if self.state.is_null() {
            return;
        }
        // SAFETY: caller's promise.
        self.value = unsafe { crate::pg::eval_for_scan(self.state, self.ps) };
    }

    /// `column >= lo` and `column <= hi` for file field `field` of type
    /// `coltype` (None for both: no value, so no batch with statistics can
    /// match): the range of a join's inner keys, which outer rows outside
    /// it cannot meet.  None when the type has no default btree opclass.
    ///
    /// # Safety
    /// Catalog lookups in a backend.
    pub unsafe fn range(field: usize, coltype: Oid, lo: Option<Datum>, hi: Option<Datum>) -> Option<[Hint; 2]> {
        // SAFETY: caller's promise.
        unsafe {
            let opclass = pg_sys::GetDefaultOpClass(coltype, pg_sys::BTREE_AM_OID);
            if opclass == pg_sys::InvalidOid {
                return None;
            }
            let family = pg_sys::get_opclass_family(opclass);
            let func = |strategy: u32| {
                let o = pg_sys::get_opfamily_member(family, coltype, coltype, strategy as i16);
                (o != pg_sys::InvalidOid).then(|| pg_sys::get_opcode(o))
            };
            let hint = |cmp, op_fn, value| Hint {
                field,
                coltype,
                collation: pg_sys::InvalidOid,
                cmp,
                op_fn,
                le_fn: pg_sys::InvalidOid,
                ge_fn: pg_sys::InvalidOid,
                value,
                state: std::ptr::null_mut(),
                ps: std::ptr::null_mut(),
            };
            Some([
                hint(crate::pg::compat::cmp::GE, func(pg_sys::BTGreaterEqualStrategyNumber)?, lo),
                hint(crate::pg::compat::cmp::LE, func(pg_sys::BTLessEqualStrategyNumber)?, hi),
            ])
        }
    }

    /// This hint's column's statistics in `file`, parsed (None when the
    /// file has none for it).
    pub fn parse_stats(&self, file: &ArrowFile) -> Option<BatchStats> {
        let text = file.stats(self.field)?;
        // SAFETY: catalog lookup and the type's input function; values
        // live in the query's memory context.
        unsafe {
            let (mut input, mut ioparam) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
            pg_sys::getTypeInputInfo(self.coltype, &mut input, &mut ioparam);
            let parse = |s: &str| {
                let c = std::ffi::CString::new(s).ok()?;
                Some(pg_sys::OidInputFunctionCall(input, c.as_ptr().cast_mut(), ioparam, -1))
            };
            Some(text.into_iter().map(|mm| mm.and_then(|(lo, hi)| Some((parse(&lo)?, parse(&hi)?)))).collect())
        }
    }

    /// Can a batch with these statistics hold a matching row?  Without
    /// statistics it can.
    pub fn may_match(&self, minmax: Option<(Datum, Datum)>) -> bool {
        let Some((min, max)) = minmax else { return true };
        let Some(value) = self.value else { return false };
        let call = |f: Oid, a: Datum| {
            // SAFETY: a strict btree comparison function of these types.
            unsafe { pg_sys::OidFunctionCall2Coll(f, self.collation, a, value).value() != 0 }
        };
        use crate::pg::compat::cmp;
        match self.cmp {
            cmp::LT | cmp::LE => call(self.op_fn, min),
            cmp::GT | cmp::GE => call(self.op_fn, max),
            cmp::EQ => call(self.le_fn, min) && call(self.ge_fn, max),
            _ => true,
        }
    }
}
