//! `x NOT IN (SELECT y FROM ...)` as `NOT EXISTS (SELECT y FROM ... WHERE
//! y = x)` where neither `x` nor `y` can be NULL.
//!
//! PostgreSQL keeps `NOT IN (sub-query)` as a sub-plan tested on every
//! outer row (hashed where it fits work_mem, else run once per row),
//! because with NULLs the two differ: `1 NOT IN (2, NULL)` is NULL, not
//! true, and `NULL NOT IN (...)` is NULL unless the sub-query is empty.
//! The sub-plan keeps the outer relation's scan or join from running its
//! quals on the device and from grouping there (TPC-H Q16's `ps_suppkey
//! NOT IN (SELECT s_suppkey FROM supplier WHERE ...)` held the GpuJoin's
//! rows on the host).  Where neither side can be NULL, `x NOT IN (S)` is
//! true exactly when no row of S equals `x`, which is `NOT EXISTS`, and
//! PostgreSQL plans that as an anti-join (a GpuJoin depth of its own).
//!
//! The rewrite is made on a copy of the query, before it is planned (the
//! copy is planned beside the query as written and the cheaper kept:
//! `super::plan_query`), on every top-level `WHERE` conjunct `NOT (x IN
//! (SELECT ...))` where all of this holds
//! (`pg_strom.enable_not_in_anti_join`):
//! - `x` is a column (under binary-compatible casts) of a table of the
//!   query's FROM clause, not on the nullable side of an outer join, and
//!   `y` is the sub-query's one output column, a column of a table of its
//!   own FROM clause, under inner joins only;
//! - both columns have a validated NOT NULL constraint, their tables are
//!   ordinary tables without inheritance children or partitions (a
//!   foreign table does not check its constraints on read);
//! - the comparison is one strict operator that hash or merge joins can
//!   use (an equality that never returns NULL for two values);
//! - the sub-query is a plain `SELECT` (no grouping, aggregates, window
//!   functions, set-returning functions, DISTINCT, LIMIT, set operations
//!   or row locks).

use pgrx::pg_sys;

use crate::guc;
use crate::pg::list::from_list;

/// A copy of `q` with the `NOT IN` conjuncts of the module's shape
/// rewritten (its own, those of the queries in its FROM and WITH clauses
/// and of its WHERE clause's sub-links); None where there is none (or the
/// setting is off).  The caller plans it beside `q` as written and keeps
/// the cheaper: each is planned with its own join order, and the
/// anti-join's can be the worse one.
///
/// # Safety
/// The planner's Query, before planning.
pub(super) unsafe fn rewritten(q: *mut pg_sys::Query) -> Option<*mut pg_sys::Query> {
    // SAFETY: caller's promise; the copy is ours.
    unsafe {
        if !guc::ENABLE_NOT_IN_ANTI_JOIN.get() || rewrite_query(q, true) == 0 {
            return None;
        }
        let copy = pg_sys::copyObjectImpl(q.cast()) as *mut pg_sys::Query;
        rewrite_query(copy, false);
        Some(copy)
    }
}

/// The `NOT IN` conjuncts of `q` and of the queries nested in it that have
/// the module's shape, rewritten in place unless `dry`; how many.
unsafe fn rewrite_query(q: *mut pg_sys::Query, dry: bool) -> usize {
    let mut n = 0;
    // SAFETY: a valid Query; each level is changed in place after its
    // nested queries.
    unsafe {
        super::query::each_where_level(q, &mut |q| {
            for c in from_list(pg_sys::make_ands_implicit((*(*q).jointree).quals.cast())) {
                if rewrite_conjunct(q, c, dry) {
                    n += 1;
                }
            }
        })
    };
    n
}

/// Conjunct `c` of `q`'s WHERE clause, when it is `NOT (x IN (SELECT y
/// ...))` of the module's shape, changed in place (unless `dry`) into `NOT
/// EXISTS (SELECT y ... WHERE ... AND x = y)`; whether it has the shape.
unsafe fn rewrite_conjunct(q: *mut pg_sys::Query, c: *mut pg_sys::Node, dry: bool) -> bool {
    // SAFETY: valid nodes of the planner's Query.
    unsafe {
        if (*c).type_ != pg_sys::NodeTag::T_BoolExpr {
            return false;
        }
        let not = c as *mut pg_sys::BoolExpr;
        let args = from_list((*not).args);
        if (*not).boolop != pg_sys::BoolExprType::NOT_EXPR || args.len() != 1 {
            return false;
        }
        let sl = args[0];
        if (*sl).type_ != pg_sys::NodeTag::T_SubLink {
            return false;
        }
        let sl = sl as *mut pg_sys::SubLink;
        if (*sl).subLinkType != pg_sys::SubLinkType::ANY_SUBLINK
            || (*sl).testexpr.is_null()
            || (*(*sl).testexpr).type_ != pg_sys::NodeTag::T_OpExpr
        {
            return false;
        }
        let sq = (*sl).subselect as *mut pg_sys::Query;
        let Some(y) = plain_single_column(sq) else { return false };
        let op = (*sl).testexpr as *mut pg_sys::OpExpr;
        let opargs = from_list((*op).args);
        if opargs.len() != 2 || (*op).opretset || !equality_never_null(op) {
            return false;
        }
        // x on the left, the sub-query's column (a Param) on the right
        let (x, p) = (opargs[0], opargs[1]);
        let param = crate::pg::strip_relabel(p);
        if (*param).type_ != pg_sys::NodeTag::T_Param
            || (*(param as *mut pg_sys::Param)).paramkind != pg_sys::ParamKind::PARAM_SUBLINK
            || (*(param as *mut pg_sys::Param)).paramid != 1
        {
            return false;
        }
        let xv = crate::pg::strip_relabel(x);
        if (*xv).type_ != pg_sys::NodeTag::T_Var || !column_never_null(q, xv.cast()) || !column_never_null(sq, y) {
            return false;
        }
        if dry {
            return true;
        }
        // the comparison inside the sub-query: x one level up, the
        // sub-query's column in the Param's place
        let x_up = pg_sys::copyObjectImpl(x.cast()) as *mut pg_sys::Node;
        (*(crate::pg::strip_relabel(x_up) as *mut pg_sys::Var)).varlevelsup = 1;
        let y_expr = pg_sys::copyObjectImpl(p.cast()) as *mut pg_sys::Node;
        let y_expr = if (*y_expr).type_ == pg_sys::NodeTag::T_Param {
            pg_sys::copyObjectImpl(y.cast()).cast()
        } else {
            let mut r = y_expr as *mut pg_sys::RelabelType;
            while (*(*r).arg).type_ == pg_sys::NodeTag::T_RelabelType {
                r = (*r).arg.cast();
            }
            (*r).arg = pg_sys::copyObjectImpl(y.cast()).cast();
            y_expr
        };
        let cond = pg_sys::make_opclause(
            (*op).opno,
            pg_sys::BOOLOID,
            false,
            x_up.cast(),
            y_expr.cast(),
            pg_sys::InvalidOid,
            (*op).inputcollid,
        );
        pg_sys::set_opfuncid(cond.cast());
        let jt = (*sq).jointree;
        (*jt).quals = pg_sys::make_and_qual((*jt).quals, cond.cast());
        (*sl).subLinkType = pg_sys::SubLinkType::EXISTS_SUBLINK;
        (*sl).testexpr = std::ptr::null_mut();
        (*sl).operName = std::ptr::null_mut();
        true
    }
}

/// The one output column of plain sub-query `sq` when it is a column of
/// a table in its FROM clause; None otherwise.
unsafe fn plain_single_column(sq: *mut pg_sys::Query) -> Option<*mut pg_sys::Var> {
    // SAFETY: a valid Query.
    unsafe {
        let plain = (*sq).commandType == pg_sys::CmdType::CMD_SELECT
            && (*sq).utilityStmt.is_null()
            && (*sq).setOperations.is_null()
            && !(*sq).hasAggs
            && !(*sq).hasWindowFuncs
            && !(*sq).hasTargetSRFs
            && (*sq).groupClause.is_null()
            && (*sq).groupingSets.is_null()
            && (*sq).havingQual.is_null()
            && (*sq).distinctClause.is_null()
            && (*sq).limitCount.is_null()
            && (*sq).limitOffset.is_null()
            && (*sq).rowMarks.is_null()
            && !(*sq).hasForUpdate
            && !(*sq).hasModifyingCTE
            && !(*sq).jointree.is_null();
        if !plain {
            return None;
        }
        let tlist = from_list((*sq).targetList);
        let [te] = tlist.as_slice() else { return None };
        let te = *te as *mut pg_sys::TargetEntry;
        if (*te).resjunk {
            return None;
        }
        let y = crate::pg::strip_relabel((*te).expr.cast());
        ((*y).type_ == pg_sys::NodeTag::T_Var).then_some(y.cast())
    }
}

/// Whether `op` is a strict equality that hash or merge joins may use:
/// never NULL for two values.
unsafe fn equality_never_null(op: *mut pg_sys::OpExpr) -> bool {
    // SAFETY: a valid OpExpr; catalog lookups.
    unsafe {
        let left = pg_sys::exprType(pg_sys::list_nth((*op).args, 0).cast());
        pg_sys::op_strict((*op).opno)
            && (pg_sys::op_hashjoinable((*op).opno, left) || pg_sys::op_mergejoinable((*op).opno, left))
    }
}

/// Whether Var `v` of query `q` (its own level) is a column that can
/// never be NULL in `q`'s rows: a NOT NULL column (the constraint
/// validated) of an ordinary table without inheritance children, not on
/// the nullable side of an outer join of `q`.
unsafe fn column_never_null(q: *mut pg_sys::Query, v: *mut pg_sys::Var) -> bool {
    // SAFETY: a valid Query and one of its Vars; the table is locked by
    // the query already.
    unsafe {
        if (*v).varlevelsup != 0 || (*v).varattno <= 0 || (*v).varno < 1 {
            return false;
        }
        let rtes = from_list((*q).rtable);
        let Some(&rte) = rtes.get((*v).varno as usize - 1) else { return false };
        let rte = rte as *mut pg_sys::RangeTblEntry;
        if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
            || nullable_in((*q).jointree.cast(), (*v).varno, false) != Some(false)
        {
            return false;
        }
        let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
        let rel = pg_sys::table_open((*rte).relid, lock);
        let form = (*rel).rd_rel;
        let ok = (*form).relkind == pg_sys::RELKIND_RELATION as std::ffi::c_char
            && !(*form).relhassubclass
            && ((*v).varattno as i32) <= (*(*rel).rd_att).natts
            && crate::pg::compat::attribute_proven_not_null((*rel).rd_att, (*v).varattno as i32 - 1);
        pg_sys::table_close(rel, lock);
        ok
    }
}

/// Where range table entry `varno` stands in join tree `node`: Some(true)
/// on the nullable side of an outer join, Some(false) elsewhere in it,
/// None when it is not in it (`nullable`: the part walked is on a
/// nullable side).
unsafe fn nullable_in(node: *mut pg_sys::Node, varno: i32, nullable: bool) -> Option<bool> {
    // SAFETY: a valid join tree node.
    unsafe {
        if node.is_null() {
            return None;
        }
        match (*node).type_ {
            pg_sys::NodeTag::T_RangeTblRef => {
                ((*(node as *mut pg_sys::RangeTblRef)).rtindex == varno).then_some(nullable)
            }
            pg_sys::NodeTag::T_FromExpr => from_list((*(node as *mut pg_sys::FromExpr)).fromlist)
                .into_iter()
                .find_map(|n| nullable_in(n.cast(), varno, nullable)),
            pg_sys::NodeTag::T_JoinExpr => {
                let j = node as *mut pg_sys::JoinExpr;
                use pg_sys::JoinType::*;
                let (l, r) = match (*j).jointype {
                    JOIN_INNER => (false, false),
                    JOIN_LEFT => (false, true),
                    JOIN_RIGHT => (true, false),
                    // a full join, or one PostgreSQL's parser does not
                    // make: both sides taken as nullable
                    _ => (true, true),
                };
                nullable_in((*j).larg, varno, nullable || l).or_else(|| nullable_in((*j).rarg, varno, nullable || r))
            }
            _ => Some(true),
        }
    }
}
