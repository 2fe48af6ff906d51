//! Correlated scalar aggregate sub-queries turned into a join with a
//! grouped sub-query, when that plan costs less.
//!
//! PostgreSQL runs `WHERE x < (SELECT 0.2 * avg(y) FROM t WHERE t.k =
//! o.k)` as a sub-plan evaluated once per outer row: an index scan of `t`
//! each time, or a whole scan of `t` each time where `t` has no index (an
//! Arrow_Fdw table).  The same rows come from joining the outer rows with
//! `SELECT k, 0.2 * avg(y) FROM t GROUP BY k` on `k` and testing `x <`
//! the grouped value: one aggregation of `t`, which a GpuPreAgg does in
//! one pass (TPC-H Q2, Q17 and Q20 have this shape).  The planner hook
//! plans the query as written and rewritten, and keeps the rewritten plan
//! where it costs less (the sub-plans as written charged only for the
//! rows that surely run them: `plan_cost::cost_as_written`) and groups on the
//! device (one GpuPreAgg more than as written) or costs a tenth;
//! otherwise PostgreSQL's plan (`pg_strom.enable_decorrelation`).
//!
//! The rewrite keeps the answer exactly where it applies, and applies only
//! where all of this holds:
//! - the sub-query is a plain `SELECT expr FROM tables WHERE ...` whose
//!   `expr` is made of `avg`, `sum`, `min` or `max` (of integers or
//!   numerics for `avg` and `sum`, of any type for `min` and `max`),
//!   constants (and immutable casts of them) and numeric `+ - *`: NULL
//!   over no rows, as the join's
//!   missing group is, and no error in groups the outer query never asks
//!   for;
//! - it refers to the outer query only by top-level `WHERE` conjuncts
//!   `inner_expr = outer_column`, with the type's own equality (the one
//!   its `GROUP BY` uses) and no other outer reference; nothing volatile,
//!   no nested sub-query, no `GROUP BY`, `HAVING`, `DISTINCT`, `LIMIT`,
//!   window function or set operation;
//! - it is an argument of a strict operator that is itself a top-level
//!   conjunct of the outer `WHERE` (`x < (SELECT ...)`): a NULL sub-query
//!   value fails the conjunct, as a row without a group fails the join.
//!
//! Each outer row meets at most one group (the groups' keys differ by the
//! same equality), so the join never repeats a row.  The grouped
//! sub-query evaluates its own `WHERE` on every row of its tables, not
//! only on those of the keys the outer query asks for, as PostgreSQL
//! itself evaluates pushed-down quals on rows a join would drop.
//!
//! Sub-queries of sub-queries are rewritten at their own level (TPC-H
//! Q20's scalar sub-query is inside an `IN` sub-query).  A second copy
//! restricts each grouped sub-query to the keys the outer query can ask
//! for, where `super::magic_set` applies.

use pgrx::pg_sys;

use super::magic_set;
use super::query::{
    Grouping, add_subquery, builtin_aggregate_name, distinct_underestimated, each_where_level, group_clause,
    grouping_of, plain_aggregation, range_tbl_ref, sublinks_of, target_entry,
};
use crate::guc;
use crate::pg::list::{from_list, to_list};

/// How many sub-queries a copy has rewritten, how many of their grouped
/// sub-queries are restricted to the outer query's keys
/// (`super::magic_set`), and how many are neither restricted nor
/// grouped by keys whose groups the statistics count right
/// (`key_underestimated`: the copy is not planned then).
#[derive(Clone, Copy, Default)]
pub(super) struct Rewritten {
    pub subqueries: usize,
    pub restricted: usize,
    guessed: usize,
}

impl std::ops::AddAssign for Rewritten {
    fn add_assign(&mut self, o: Rewritten) {
        self.subqueries += o.subqueries;
        self.restricted += o.restricted;
        self.guessed += o.guessed;
    }
}

/// A copy of `parse` with its correlated aggregate sub-queries rewritten,
/// and how many; None where it holds none of the shape (or the setting is
/// off).  With `restrict`, each grouped sub-query is also restricted to
/// the keys the outer query can ask for where `super::magic_set` applies,
/// and None comes where it applies nowhere (the copy would be the one
/// without).
///
/// # Safety
/// The planner's Query.
pub(super) unsafe fn rewritten(parse: *mut pg_sys::Query, restrict: bool) -> Option<(*mut pg_sys::Query, Rewritten)> {
    // SAFETY: the planner's Query (caller); the copy is ours.
    unsafe {
        if !guc::ENABLE_DECORRELATION.get() || !any_sublinks(parse) {
            return None;
        }
        let copy = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        let n = rewrite_query(copy, restrict);
        (n.subqueries > 0 && n.guessed == 0 && (!restrict || n.restricted > 0)).then_some((copy, n))
    }
}

/// Whether `q` or a query in its FROM clause or WITH clause has sub-links
/// (before a copy is made to rewrite).
unsafe fn any_sublinks(q: *mut pg_sys::Query) -> bool {
    // SAFETY: a valid Query.
    unsafe {
        if q.is_null() {
            return false;
        }
        (*q).hasSubLinks
            || from_list((*q).rtable).into_iter().any(|rte| {
                let rte = rte as *mut pg_sys::RangeTblEntry;
                (*rte).rtekind == pg_sys::RTEKind::RTE_SUBQUERY && any_sublinks((*rte).subquery)
            })
            || from_list((*q).cteList).into_iter().any(|cte| {
                let q = (*(cte as *mut pg_sys::CommonTableExpr)).ctequery;
                !q.is_null() && (*q).type_ == pg_sys::NodeTag::T_Query && any_sublinks(q.cast())
            })
    }
}

/// Rewrite the sub-queries of `q` and of its nested queries; how many.
unsafe fn rewrite_query(q: *mut pg_sys::Query, restrict: bool) -> Rewritten {
    let mut n = Rewritten::default();
    // SAFETY: a valid Query of our copy; each level is changed in place
    // after its nested queries.
    unsafe { each_where_level(q, &mut |q| n += rewrite_level(q, restrict)) };
    n
}

/// Rewrite the top-level WHERE conjuncts of `q` that compare with a
/// scalar sub-query of the shape above; how many.
unsafe fn rewrite_level(q: *mut pg_sys::Query, restrict: bool) -> Rewritten {
    // SAFETY: a valid Query of our copy with a WHERE clause.
    unsafe {
        let conj = from_list(pg_sys::make_ands_implicit((*(*q).jointree).quals.cast()));
        let mut out = Vec::with_capacity(conj.len());
        let mut n = Rewritten::default();
        for &c in &conj {
            match rewrite_conjunct(q, c, restrict.then_some(conj.as_slice())) {
                Some((new, restricted, guessed)) => {
                    out.extend(new);
                    n.subqueries += 1;
                    n.restricted += usize::from(restricted);
                    n.guessed += usize::from(guessed && !restricted);
                }
                None => out.push(c),
            }
        }
        if n.subqueries > 0 {
            (*(*q).jointree).quals = pg_sys::make_ands_explicit(to_list(&out)).cast();
        }
        n
    }
}

/// A scalar sub-link (`(SELECT ...)`), or None.
unsafe fn scalar_sublink(node: *mut pg_sys::Node) -> Option<*mut pg_sys::SubLink> {
    // SAFETY: a valid expression.
    unsafe {
        let n = crate::pg::strip_relabel(node);
        ((*n).type_ == pg_sys::NodeTag::T_SubLink
            && (*(n as *mut pg_sys::SubLink)).subLinkType == pg_sys::SubLinkType::EXPR_SUBLINK)
            .then_some(n.cast())
    }
}

/// One correlation of a sub-query: its `inner_expr = outer_column`
/// (`outer` a Var of the outer query, `varlevelsup` 1 as seen from the
/// sub-query).
pub(super) struct Key {
    pub inner: *mut pg_sys::Node,
    pub outer: *mut pg_sys::Var,
    pub opno: pg_sys::Oid,
    pub inputcollid: pg_sys::Oid,
    grouping: Grouping,
}

/// Conjunct `c` of `q`'s WHERE clause rewritten (its replacement and the
/// join's conditions), with the grouped sub-query added to `q`'s FROM,
/// whether that sub-query was restricted to the outer query's keys by
/// `q`'s conjuncts `restrict_by` (`super::magic_set`), and whether a key
/// is `key_underestimated` (allowed only where it may be restricted: a
/// restricted sub-query has at most as many groups as the outer rows
/// that pass); None where it is not of the shape (nothing changed then).
unsafe fn rewrite_conjunct(
    q: *mut pg_sys::Query,
    c: *mut pg_sys::Node,
    restrict_by: Option<&[*mut pg_sys::Node]>,
) -> Option<(Vec<*mut pg_sys::Node>, bool, bool)> {
    // SAFETY: valid nodes of our copy.
    unsafe {
        if (*c).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = c as *mut pg_sys::OpExpr;
        let args = from_list((*op).args);
        if args.len() != 2 || (*op).opretset || !pg_sys::op_strict((*op).opno) {
            return None;
        }
        let (at, sl) = match (scalar_sublink(args[0]), scalar_sublink(args[1])) {
            (Some(s), None) if sublinks_of(args[1]).is_empty() => (0, s),
            (None, Some(s)) if sublinks_of(args[0]).is_empty() => (1, s),
            _ => return None,
        };
        let sq = (*sl).subselect as *mut pg_sys::Query;
        let (keys, value, guessed) = grouped_form(q, sq, restrict_by.is_some())?;
        let restricted = restrict_by.is_some_and(|conj| magic_set::restrict(q, sq, &keys, conj, c));

        // the grouped sub-query in q's FROM
        let rtindex = add_subquery(q, sq, c"pgstrom_grouped");
        (*(*q).jointree).fromlist = pg_sys::lappend((*(*q).jointree).fromlist, range_tbl_ref(rtindex).cast());

        let column = |attno: usize, e: *mut pg_sys::Node| {
            pg_sys::makeVar(
                rtindex,
                attno as pg_sys::AttrNumber,
                pg_sys::exprType(e),
                pg_sys::exprTypmod(e),
                pg_sys::exprCollation(e),
                0,
            )
        };
        // the conjunct, the sub-query's value read from the join
        let value_var = column(keys.len() + 1, value.cast());
        let arg = pg_sys::list_nth_cell((*op).args, at as i32);
        let target = args[at];
        if (*target).type_ == pg_sys::NodeTag::T_SubLink {
            (*arg).ptr_value = value_var.cast();
        } else {
            // (RelabelType ... SubLink): the innermost RelabelType reads it
            let mut r = target as *mut pg_sys::RelabelType;
            while (*(*r).arg).type_ == pg_sys::NodeTag::T_RelabelType {
                r = (*r).arg.cast();
            }
            (*r).arg = value_var.cast();
        }
        let mut out = vec![c];
        // the join's conditions: group key = outer column
        for (i, k) in keys.iter().enumerate() {
            let outer = pg_sys::copyObjectImpl(k.outer.cast()) as *mut pg_sys::Var;
            (*outer).varlevelsup = 0;
            let cond = pg_sys::make_opclause(
                k.opno,
                pg_sys::BOOLOID,
                false,
                column(i + 1, k.inner).cast(),
                outer.cast(),
                pg_sys::InvalidOid,
                k.inputcollid,
            );
            pg_sys::set_opfuncid(cond.cast());
            out.push(cond.cast());
        }
        Some((out, restricted, guessed))
    }
}

/// Turn scalar sub-query `sq` (of `q`'s WHERE clause) into its grouped form in place (the keys'
/// columns first, then the value, grouped by the keys), when it has the
/// shape of the module's comment: its keys, its value expression, and
/// whether a key is `key_underestimated` (None for such a key unless
/// `may_restrict`).  Nothing changes where it returns None.
unsafe fn grouped_form(
    q: *mut pg_sys::Query,
    sq: *mut pg_sys::Query,
    may_restrict: bool,
) -> Option<(Vec<Key>, *mut pg_sys::Expr, bool)> {
    // SAFETY: a valid Query of our copy.
    unsafe {
        let plain = plain_aggregation(sq)
            && (*sq).groupClause.is_null()
            && (*sq).havingQual.is_null()
            && !(*sq).hasSubLinks
            && !(*sq).hasDistinctOn
            && (*sq).distinctClause.is_null()
            && (*sq).limitCount.is_null()
            && (*sq).limitOffset.is_null()
            && (*sq).cteList.is_null()
            && !(*sq).hasRecursive;
        if !plain {
            return None;
        }
        // plain tables, joined in the WHERE clause
        let from = from_list((*(*sq).jointree).fromlist);
        if from.is_empty() || from.iter().any(|&f| (*f).type_ != pg_sys::NodeTag::T_RangeTblRef) {
            return None;
        }
        for rte in from_list((*sq).rtable) {
            let rte = rte as *mut pg_sys::RangeTblEntry;
            if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION || !(*rte).tablesample.is_null() {
                return None;
            }
        }
        let tlist = from_list((*sq).targetList);
        let [value_tle] = tlist.as_slice() else { return None };
        let value_tle = *value_tle as *mut pg_sys::TargetEntry;
        let value = (*value_tle).expr;
        if (*value_tle).resjunk || !null_over_no_rows(value.cast()) || pg_sys::contain_volatile_functions(value.cast())
        {
            return None;
        }
        // the WHERE conjuncts: correlations become keys, the others stay
        let mut keys = Vec::new();
        let mut rest = Vec::new();
        let quals = (*(*sq).jointree).quals;
        let conj = if quals.is_null() { Vec::new() } else { from_list(pg_sys::make_ands_implicit(quals.cast())) };
        for c in conj {
            if pg_sys::contain_volatile_functions(c) {
                return None;
            }
            if !pg_sys::contain_vars_of_level(c, 1) {
                rest.push(c);
                continue;
            }
            keys.push(correlation(c)?);
        }
        if keys.is_empty() {
            return None;
        }
        // a key whose groups PostgreSQL's statistics may count far too
        // few (query::distinct_underestimated): the grouped plan's cost
        // would be a guess, unless the grouping is restricted to the
        // outer query's keys (TPC-H Q2 at SF 10: ps_partkey, each value
        // in four neighbouring rows, counted 451,000 times of 2 million)
        let guessed = keys.iter().any(|k| key_underestimated(q, sq, k));
        if guessed && !may_restrict {
            return None;
        }
        // the grouped form
        let mut new_tlist = Vec::new();
        let mut groups = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let tle = target_entry(pg_sys::copyObjectImpl(k.inner.cast()).cast(), i + 1, &format!("key{}", i + 1));
            (*tle).ressortgroupref = (i + 1) as pg_sys::Index;
            new_tlist.push(tle.cast());
            groups.push(group_clause(i + 1, k.grouping));
        }
        let saved = ((*value_tle).resno, (*value_tle).resname);
        (*value_tle).resno = (keys.len() + 1) as pg_sys::AttrNumber;
        (*value_tle).resname = pg_sys::pstrdup(c"value".as_ptr());
        new_tlist.push(value_tle.cast());
        let saved_quals = (*(*sq).jointree).quals;
        let saved_tlist = (*sq).targetList;
        (*sq).targetList = to_list(&new_tlist);
        (*sq).groupClause = to_list(&groups);
        (*(*sq).jointree).quals =
            if rest.is_empty() { std::ptr::null_mut() } else { pg_sys::make_ands_explicit(to_list(&rest)).cast() };
        // nothing of another query level may remain
        if refers_outside(sq.cast()) {
            (*sq).targetList = saved_tlist;
            (*sq).groupClause = std::ptr::null_mut();
            (*(*sq).jointree).quals = saved_quals;
            ((*value_tle).resno, (*value_tle).resname) = saved;
            return None;
        }
        let value = with_argument_typmod(value);
        (*value_tle).expr = value;
        Some((keys, value, guessed))
    }
}

/// Whether key `k` of sub-query `sq` (in `q`) is a column whose
/// distinct values the statistics count far fewer than the rows of the
/// outer table whose unique column it is equated with
/// (`query::distinct_underestimated`).
unsafe fn key_underestimated(q: *mut pg_sys::Query, sq: *mut pg_sys::Query, k: &Key) -> bool {
    // SAFETY: valid Queries of our copy; catalog lookups of locked tables.
    unsafe {
        let inner = crate::pg::strip_relabel(k.inner);
        if (*inner).type_ != pg_sys::NodeTag::T_Var {
            return false;
        }
        let iv = inner as *mut pg_sys::Var;
        if (*iv).varlevelsup != 0 || (*iv).varattno <= 0 || (*k.outer).varattno <= 0 {
            return false;
        }
        let ir = pg_sys::list_nth((*sq).rtable, (*iv).varno - 1) as *mut pg_sys::RangeTblEntry;
        let or = pg_sys::list_nth((*q).rtable, (*k.outer).varno - 1) as *mut pg_sys::RangeTblEntry;
        (*ir).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*or).rtekind == pg_sys::RTEKind::RTE_RELATION
            && distinct_underestimated((*ir).relid, (*iv).varattno, (*ir).inh, (*or).relid, (*k.outer).varattno)
    }
}

/// `value` cast to its argument's numeric(p,s) where it is `min` or
/// `max` of a numeric(p,s) expression: every value it can take has that
/// scale and fits those digits, so the cast changes none, and the join
/// reading the grouped sub-query knows the digits (a device join key or
/// qual on it: TPC-H Q2's `ps_supplycost = min(ps_supplycost)`).
unsafe fn with_argument_typmod(value: *mut pg_sys::Expr) -> *mut pg_sys::Expr {
    // SAFETY: a valid expression of our copy; catalog lookups.
    unsafe {
        if (*value).type_ != pg_sys::NodeTag::T_Aggref || pg_sys::exprTypmod(value.cast()) >= 0 {
            return value;
        }
        let a = value as *mut pg_sys::Aggref;
        let Some(name) = builtin_aggregate_name(a) else { return value };
        let args = from_list((*a).args);
        let [arg] = args.as_slice() else { return value };
        let arg = (*(*arg as *mut pg_sys::TargetEntry)).expr.cast::<pg_sys::Node>();
        let typmod = pg_sys::exprTypmod(arg);
        if !matches!(name.as_slice(), b"min" | b"max")
            || (*a).aggtype != pg_sys::NUMERICOID
            || pg_sys::exprType(arg) != pg_sys::NUMERICOID
            || typmod < 0
        {
            return value;
        }
        let cast = pg_sys::coerce_to_target_type(
            std::ptr::null_mut(),
            value.cast(),
            pg_sys::NUMERICOID,
            pg_sys::NUMERICOID,
            typmod,
            pg_sys::CoercionContext::COERCION_IMPLICIT,
            pg_sys::CoercionForm::COERCE_IMPLICIT_CAST,
            -1,
        );
        if cast.is_null() { value } else { cast.cast() }
    }
}

/// Conjunct `c` (which refers to the outer query) as a key: `inner =
/// outer_column` (either order) with the type's own equality; None
/// otherwise.
unsafe fn correlation(c: *mut pg_sys::Node) -> Option<Key> {
    // SAFETY: a valid expression.
    unsafe {
        if (*c).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = c as *mut pg_sys::OpExpr;
        let args = from_list((*op).args);
        if args.len() != 2 {
            return None;
        }
        let outer_var = |n: *mut pg_sys::Node| {
            ((*n).type_ == pg_sys::NodeTag::T_Var && (*(n as *mut pg_sys::Var)).varlevelsup == 1)
                .then_some(n as *mut pg_sys::Var)
        };
        let (inner, outer) = match (outer_var(args[0]), outer_var(args[1])) {
            (None, Some(v)) => (args[0], v),
            (Some(v), None) => (args[1], v),
            _ => return None,
        };
        let t = pg_sys::exprType(inner);
        if refers_outside(inner) || (*outer).vartype != t {
            return None;
        }
        // the type's own equality, which its GROUP BY uses
        let grouping = grouping_of(t)?;
        if grouping.eqop != (*op).opno {
            return None;
        }
        // a collation the grouping shares
        if (*op).inputcollid != pg_sys::exprCollation(inner) {
            return None;
        }
        Some(Key { inner, outer, opno: (*op).opno, inputcollid: (*op).inputcollid, grouping })
    }
}

/// Whether `e` is NULL over no rows and raises no error of its own: made
/// of `avg` / `sum` (of integers or numerics), `min` / `max`, constants
/// and numeric `+ - *`, with at least one aggregate.
unsafe fn null_over_no_rows(e: *mut pg_sys::Node) -> bool {
    unsafe fn walk(e: *mut pg_sys::Node, aggs: &mut usize) -> bool {
        // SAFETY: a valid expression.
        unsafe {
            if e.is_null() {
                return false;
            }
            // constants, and immutable functions of them (the cast of an
            // integer literal to numeric): folded when planned, in the
            // sub-plan as in the grouped sub-query
            if constant(e) {
                return true;
            }
            match (*e).type_ {
                pg_sys::NodeTag::T_RelabelType => walk((*(e as *mut pg_sys::RelabelType)).arg.cast(), aggs),
                pg_sys::NodeTag::T_OpExpr => {
                    let op = e as *mut pg_sys::OpExpr;
                    let f = pg_sys::get_opcode((*op).opno).to_u32();
                    [pg_sys::F_NUMERIC_ADD, pg_sys::F_NUMERIC_SUB, pg_sys::F_NUMERIC_MUL].contains(&f)
                        && from_list((*op).args).into_iter().all(|a| walk(a, aggs))
                }
                pg_sys::NodeTag::T_Aggref => {
                    *aggs += 1;
                    aggregate_is_null_over_no_rows(e.cast())
                }
                _ => false,
            }
        }
    }
    let mut aggs = 0;
    // SAFETY: a valid expression.
    unsafe { walk(e, &mut aggs) && aggs > 0 }
}

/// Whether `e` is made of constants and immutable functions of them.
unsafe fn constant(e: *mut pg_sys::Node) -> bool {
    // SAFETY: a valid expression.
    unsafe {
        match (*e).type_ {
            pg_sys::NodeTag::T_Const => true,
            pg_sys::NodeTag::T_RelabelType => constant((*(e as *mut pg_sys::RelabelType)).arg.cast()),
            pg_sys::NodeTag::T_FuncExpr => {
                let f = e as *mut pg_sys::FuncExpr;
                !(*f).funcretset
                    && pg_sys::func_volatile((*f).funcid) == pg_sys::PROVOLATILE_IMMUTABLE as std::ffi::c_char
                    && from_list((*f).args).into_iter().all(|a| constant(a))
            }
            _ => false,
        }
    }
}

/// `avg` or `sum` of an integer or numeric, `min` or `max` of anything:
/// built-in, plain (no ORDER BY or DISTINCT needed; FILTER allowed), of
/// this query level.
unsafe fn aggregate_is_null_over_no_rows(a: *mut pg_sys::Aggref) -> bool {
    // SAFETY: a valid Aggref.
    unsafe {
        if (*a).aggstar {
            return false;
        }
        let Some(name) = builtin_aggregate_name(a) else { return false };
        let args = from_list((*a).args);
        let [arg] = args.as_slice() else { return false };
        let t = pg_sys::exprType((*(*arg as *mut pg_sys::TargetEntry)).expr.cast());
        let exact = [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID, pg_sys::NUMERICOID].contains(&t);
        match name.as_slice() {
            b"avg" | b"sum" => exact,
            b"min" | b"max" => true,
            _ => false,
        }
    }
}

/// Whether `node` (an expression or a Query) refers to a query level
/// outside itself: a Var, PlaceHolderVar, Aggref or GroupingFunc of an
/// outer level.
pub(super) unsafe fn refers_outside(node: *mut pg_sys::Node) -> bool {
    struct Ctx {
        depth: u32,
    }
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: a valid node; ctx is the Ctx below.
        unsafe {
            if node.is_null() {
                return false;
            }
            let c = &mut *(ctx as *mut Ctx);
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => return (*(node as *mut pg_sys::Var)).varlevelsup > c.depth,
                pg_sys::NodeTag::T_PlaceHolderVar => {
                    return (*(node as *mut pg_sys::PlaceHolderVar)).phlevelsup > c.depth;
                }
                pg_sys::NodeTag::T_Aggref if (*(node as *mut pg_sys::Aggref)).agglevelsup > c.depth => return true,
                pg_sys::NodeTag::T_GroupingFunc if (*(node as *mut pg_sys::GroupingFunc)).agglevelsup > c.depth => {
                    return true;
                }
                pg_sys::NodeTag::T_Query => {
                    c.depth += 1;
                    let r = pg_sys::query_tree_walker(node.cast(), Some(walker), ctx, 0);
                    c.depth -= 1;
                    return r;
                }
                _ => {}
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    // SAFETY: a valid node.
    unsafe {
        if node.is_null() {
            return false;
        }
        let mut ctx = Ctx { depth: 0 };
        let ctx_p = (&mut ctx as *mut Ctx).cast();
        if (*node).type_ == pg_sys::NodeTag::T_Query {
            // its own level is depth 0
            pg_sys::query_tree_walker(node.cast(), Some(walker), ctx_p, 0)
        } else {
            walker(node, ctx_p)
        }
    }
}
