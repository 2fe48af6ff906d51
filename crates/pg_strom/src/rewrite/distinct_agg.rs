//! Aggregates over distinct values (`count(DISTINCT x)`) as a grouping
//! that removes the duplicates first.
//!
//! PostgreSQL computes `count(DISTINCT x) ... GROUP BY g` by sorting each
//! group's values in one process: no partial aggregation, no parallel
//! plan, nothing a GpuPreAgg can take (TPC-H Q16).  The same answer comes
//! from grouping by `g` and `x` first, which drops the duplicates (a
//! hashed, parallel, device-side grouping), and counting the rows left:
//!
//! ```text
//! SELECT g, count(DISTINCT x) FROM t WHERE .. GROUP BY g
//!   =  SELECT g, count(x) FROM (SELECT g, x FROM t WHERE .. GROUP BY g, x) pgstrom_distinct GROUP BY g
//! ```
//!
//! The grouping by `x` uses the equality of `x`'s type that DISTINCT
//! uses, so each class of equal values leaves one row, NULL one more,
//! which `count(x)` does not count.  `sum`, `avg`, `min` and `max` of
//! DISTINCT values are taken too where equal values of `x` are identical
//! (`eager_agg`'s rule: integers, dates, numerics of a declared scale,
//! text of a deterministic collation, ...), since the row left for a class
//! is any of its values.  The outer query keeps its target list, HAVING,
//! ORDER BY, LIMIT and DISTINCT, reading the grouping keys and `x` from
//! the sub-query.
//!
//! Other aggregates beside them (`count(*)`, `sum(y)`, ...) are computed
//! per group of the sub-query and combined above as eager aggregation
//! combines them (`eager_agg::aggregates`: sum of sums, sum of counts, min
//! of minima, the sum of sums over the sum of counts for `avg`).
//!
//! Applies to a query (the top level, or a sub-query in FROM not below a
//! WITH clause: views too) whose aggregates (in its target list and
//! HAVING) over DISTINCT values all have one and the same argument, and
//! whose other aggregates combine so, without FILTER or ORDER BY; without grouping sets, window
//! functions, set-returning functions, sub-links, row locks, row security,
//! a volatile function, or a column read outside the grouping keys (which
//! PostgreSQL allows where the keys hold a primary key)
//! (`pg_strom.enable_distinct_grouping`).

use pgrx::pg_sys;

use super::eager_agg::aggregates::{Combine, combination, combine_of, partial_parts};
use super::eager_agg::equal_is_identical;
use super::eager_agg::group_rte::{flatten_group_vars, grouping_exprs};
use super::query::{
    add_subquery, aggregates_of, group_clause, grouping_of, has_sublink, plain_aggregation, range_tbl_ref, target_entry,
};
use crate::pg::list::{from_list, to_list};

/// A copy of `parse` with its DISTINCT aggregations rewritten (its own,
/// and those of its sub-queries in FROM, views included); None where none
/// has the shape of the module's comment (or the setting is off).
///
/// # Safety
/// The planner's Query, not yet planned.
pub(super) unsafe fn rewritten(parse: *mut pg_sys::Query) -> Option<*mut pg_sys::Query> {
    // SAFETY: the planner's Query; only copies are changed.
    unsafe {
        if !crate::guc::ENABLE_DISTINCT_GROUPING.get() {
            return None;
        }
        let copy = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        let mut n = 0;
        let top = rewrite_tree(copy, &mut n);
        (n > 0).then_some(top)
    }
}

/// `q` (of our copy) with its sub-queries in FROM rewritten in place, and
/// itself rewritten where it has the shape; `n` counts the rewrites.  Not
/// below a WITH clause: a sub-query moved one level down would name its
/// WITH queries one level further away.
unsafe fn rewrite_tree(q: *mut pg_sys::Query, n: &mut usize) -> *mut pg_sys::Query {
    // SAFETY: a valid Query of our copy.
    unsafe {
        if (*q).commandType != pg_sys::CmdType::CMD_SELECT {
            return q;
        }
        if (*q).cteList.is_null() {
            for rte in from_list((*q).rtable) {
                let rte = rte as *mut pg_sys::RangeTblEntry;
                if (*rte).rtekind == pg_sys::RTEKind::RTE_SUBQUERY && !(*rte).security_barrier && !(*rte).lateral {
                    (*rte).subquery = rewrite_tree((*rte).subquery, n);
                }
            }
        }
        match rewrite_one(q) {
            Some(new) => {
                *n += 1;
                new
            }
            None => q,
        }
    }
}

/// `q` rewritten (a new Query over a copy of it), or None.
unsafe fn rewrite_one(parse: *mut pg_sys::Query) -> Option<*mut pg_sys::Query> {
    // SAFETY: a valid Query of our copy; it is copied again before changes.
    unsafe {
        if !plain_shape(parse) {
            return None;
        }
        // the aggregates over DISTINCT values, all of one argument; the
        // others combined from partial ones (eager aggregation's)
        let aggs = aggrefs(parse)?;
        let x = aggs.iter().find(|&&a| !(*a).aggdistinct.is_null()).map(|&a| distinct_argument(a))??;
        let identical = equal_is_identical(pg_sys::exprType(x), pg_sys::exprTypmod(x), pg_sys::exprCollation(x));
        for &a in &aggs {
            if (*a).aggdistinct.is_null() {
                combine_of(a)?;
                continue;
            }
            let arg = distinct_argument(a)?;
            if !pg_sys::equal(arg.cast(), x.cast()) {
                return None;
            }
            let name = super::query::builtin_aggregate_name(a)?;
            match name.as_slice() {
                b"count" => {}
                b"sum" | b"avg" | b"min" | b"max" if identical => {}
                _ => return None,
            }
        }
        if pg_sys::contain_volatile_functions((*parse).targetList.cast())
            || pg_sys::contain_volatile_functions((*parse).havingQual)
            || pg_sys::contain_volatile_functions((*(*parse).jointree).quals)
        {
            return None;
        }
        // x grouped with the keys: by the type's grouping operators
        let xg = grouping_of(pg_sys::exprType(x))?;

        // the sub-query: a copy grouped by the keys and x, no aggregate
        let sub = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        let keys = grouping_exprs(sub);
        let mut tlist = Vec::with_capacity(keys.len() + 1);
        let mut groups = Vec::with_capacity(keys.len() + 1);
        for (i, &k) in keys.iter().enumerate() {
            let tle = target_entry(k, i + 1, &format!("g{}", i + 1));
            (*tle).ressortgroupref = (i + 1) as pg_sys::Index;
            tlist.push(tle.cast());
            groups.push(group_clause(i + 1, grouping_of(pg_sys::exprType(k))?));
        }
        let n = keys.len() + 1;
        let tle = target_entry(pg_sys::copyObjectImpl(x.cast()).cast(), n, "x");
        (*tle).ressortgroupref = n as pg_sys::Index;
        tlist.push(tle.cast());
        groups.push(group_clause(n, xg));

        // the outer query: a copy whose target list and HAVING read the
        // sub-query's columns
        let q = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        flatten_group_vars(q);
        // each other aggregate's partial columns in the sub-query (two for
        // avg: sum and count), and its combination above
        let outer_aggs = aggrefs(q)?;
        let mut partial_of: Vec<(*mut pg_sys::Aggref, Combine, Vec<usize>)> = Vec::new();
        for &a in &outer_aggs {
            if !(*a).aggdistinct.is_null() {
                continue;
            }
            let how = combine_of(a)?;
            let mut cols = Vec::new();
            for part in partial_parts(pg_sys::copyObjectImpl(a.cast()) as *mut pg_sys::Aggref, how)? {
                let at = tlist.len() + 1;
                tlist.push(target_entry(part.cast(), at, &format!("p{at}")).cast());
                cols.push(at);
            }
            partial_of.push((a, how, cols));
        }
        flatten_group_vars(sub);
        (*sub).targetList = to_list(&tlist);
        (*sub).groupClause = to_list(&groups);
        (*sub).havingQual = std::ptr::null_mut();
        (*sub).sortClause = std::ptr::null_mut();
        (*sub).distinctClause = std::ptr::null_mut();
        (*sub).limitCount = std::ptr::null_mut();
        (*sub).limitOffset = std::ptr::null_mut();
        (*sub).hasAggs = !partial_of.is_empty();
        (*sub).canSetTag = true;

        (*q).rtable = std::ptr::null_mut();
        #[cfg(not(feature = "pg15"))]
        {
            (*q).rteperminfos = std::ptr::null_mut();
        }
        (*q).cteList = std::ptr::null_mut();
        (*q).hasRecursive = false;
        (*q).hasSubLinks = false;
        let rti = add_subquery(q, sub, c"pgstrom_distinct");
        (*q).jointree = pg_sys::makeFromExpr(to_list(&[range_tbl_ref(rti)]), std::ptr::null_mut());
        let mut combined = Vec::with_capacity(partial_of.len());
        for (a, how, cols) in partial_of {
            let vars: Vec<*mut pg_sys::Node> = cols
                .iter()
                .map(|&at| {
                    let e = (*(pg_sys::list_nth((*sub).targetList, at as i32 - 1) as *mut pg_sys::TargetEntry)).expr;
                    pg_sys::makeVar(
                        rti,
                        at as pg_sys::AttrNumber,
                        pg_sys::exprType(e.cast()),
                        pg_sys::exprTypmod(e.cast()),
                        pg_sys::exprCollation(e.cast()),
                        0,
                    )
                    .cast()
                })
                .collect();
            combined.push((a, combination(a, how, &vars, false)?));
        }
        let mut ctx = Outer { keys: &keys, x, sub: rti, combined: &combined, failed: false };
        let ctxp = (&mut ctx as *mut Outer).cast();
        (*q).targetList = outer_mutator((*q).targetList.cast(), ctxp).cast();
        (*q).havingQual = outer_mutator((*q).havingQual, ctxp);
        if ctx.failed {
            return None;
        }
        Some(q)
    }
}

/// A plain grouped query of one level (the module's comment).
unsafe fn plain_shape(q: *mut pg_sys::Query) -> bool {
    // SAFETY: a valid Query.
    unsafe {
        plain_aggregation(q)
            // (sub-links of the WHERE clause stay with it in the sub-query;
            // those of the target list or HAVING would read the outer
            // query's tables, which are gone)
            && !has_sublink((*q).targetList.cast())
            && !has_sublink((*q).havingQual)
            && !(*q).hasDistinctOn
            && !super::decorrelate::refers_outside(q.cast())
    }
}

/// The aggregates of `q`'s target list and HAVING clause, in the order a
/// walk meets them; None where there is a GROUPING() call.
unsafe fn aggrefs(q: *mut pg_sys::Query) -> Option<Vec<*mut pg_sys::Aggref>> {
    // SAFETY: a valid Query.
    unsafe {
        let mut found = aggregates_of((*q).targetList.cast());
        found.extend(aggregates_of((*q).havingQual));
        found.into_iter().map(|n| ((*n).type_ == pg_sys::NodeTag::T_Aggref).then_some(n.cast())).collect()
    }
}

/// The argument of aggregate `a` where it is a plain aggregate over
/// DISTINCT values of one argument, of this level, without FILTER or
/// ORDER BY; None otherwise.
unsafe fn distinct_argument(a: *mut pg_sys::Aggref) -> Option<*mut pg_sys::Node> {
    // SAFETY: a valid Aggref.
    unsafe {
        if (*a).agglevelsup != 0
            || (*a).aggstar
            || (*a).aggdistinct.is_null()
            || !(*a).aggfilter.is_null()
            || !(*a).aggdirectargs.is_null()
            || (*a).aggkind != b'n' as std::ffi::c_char
        {
            return None;
        }
        let args = from_list((*a).args);
        let [arg] = args.as_slice() else { return None };
        let tle = *arg as *mut pg_sys::TargetEntry;
        // (the DISTINCT clause sorts by the argument itself, nothing else)
        if from_list((*a).aggdistinct).len() != 1 || !(*a).aggorder.is_null() && from_list((*a).aggorder).len() > 1 {
            return None;
        }
        Some((*tle).expr.cast())
    }
}

struct Outer<'a> {
    keys: &'a [*mut pg_sys::Node],
    x: *mut pg_sys::Node,
    sub: i32,
    /// Each aggregate not over DISTINCT values, and its combination.
    combined: &'a [(*mut pg_sys::Aggref, *mut pg_sys::Node)],
    failed: bool,
}

/// The outer query's expression `node` over the sub-query: each grouping
/// key its column, each aggregate over the sub-query's `x` without
/// DISTINCT; a Var that is neither fails the rewrite.
unsafe extern "C-unwind" fn outer_mutator(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
    // SAFETY: an expression of our copy; ctx is an Outer.
    unsafe {
        if node.is_null() {
            return node;
        }
        let c = &mut *(ctx as *mut Outer);
        let column = |attno: usize, e: *mut pg_sys::Node| {
            pg_sys::makeVar(
                c.sub,
                attno as pg_sys::AttrNumber,
                pg_sys::exprType(e),
                pg_sys::exprTypmod(e),
                pg_sys::exprCollation(e),
                0,
            )
            .cast::<pg_sys::Node>()
        };
        if let Some(i) = c.keys.iter().position(|&k| pg_sys::equal(k.cast(), node.cast())) {
            return column(i + 1, node);
        }
        match (*node).type_ {
            pg_sys::NodeTag::T_Aggref if (*(node as *mut pg_sys::Aggref)).aggdistinct.is_null() => {
                return match c.combined.iter().find(|&&(a, _)| std::ptr::eq(a.cast(), node)) {
                    Some(&(_, e)) => pg_sys::copyObjectImpl(e.cast()).cast(),
                    None => {
                        c.failed = true;
                        node
                    }
                };
            }
            pg_sys::NodeTag::T_Aggref => {
                let a = pg_sys::copyObjectImpl(node.cast()) as *mut pg_sys::Aggref;
                let x = column(c.keys.len() + 1, c.x.cast());
                let tle = pg_sys::makeTargetEntry(x.cast(), 1, std::ptr::null_mut(), false);
                (*a).args = to_list(&[tle.cast()]);
                (*a).aggdistinct = std::ptr::null_mut();
                (*a).aggorder = std::ptr::null_mut();
                return a.cast();
            }
            pg_sys::NodeTag::T_Var | pg_sys::NodeTag::T_PlaceHolderVar | pg_sys::NodeTag::T_GroupingFunc => {
                c.failed = true;
                return node;
            }
            _ => {}
        }
        crate::pg::compat::mutate(node, outer_mutator, ctx)
    }
}
