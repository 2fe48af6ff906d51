//! An aggregation over joins done partly below them ("eager aggregation").
//!
//! TPC-H Q10 sums `lineitem` rows joined with `orders`, `customer` and
//! `nation`, grouped by customer: at SF 10, 1.15 million joined rows that
//! carry the customer's text columns are grouped on the host.  The same
//! answer comes from grouping `lineitem` joined with `orders` by
//! `o_custkey` first (about 380,000 groups, made by a GpuPreAgg on the
//! device) and joining those groups with `customer` and `nation`: the sum
//! over the joined rows is the sum of the groups' sums, each counted as
//! often as its group joins.  PostgreSQL (before 19) does not plan this.
//!
//! For `SELECT .. FROM r1, .., s1, .. WHERE .. GROUP BY ..` whose
//! aggregates read only the tables R = {r1, ..}, the rewritten copy is
//!
//! ```text
//! SELECT .. FROM s1, .., (SELECT k1, .., partial aggregates FROM r1, ..
//!                         WHERE <conjuncts of R alone> GROUP BY k1, ..) pgstrom_partial
//!  WHERE <the other conjuncts> GROUP BY ..
//! ```
//!
//! where the keys k are every column of R the query reads outside its
//! aggregates (join conditions with the other tables, grouping keys,
//! output columns), and each aggregate becomes its combination of the
//! partial ones: `sum` of `sum`s, `sum` of `count`s, `min` of `min`s,
//! `max` of `max`s, the `sum` of `sum`s divided by the `sum` of `count`s
//! for `avg` (the division its final function makes).  The outer query
//! keeps its GROUP BY, HAVING, ORDER BY and LIMIT.  R is tried as the
//! tables the aggregates read and as those joined with a few of their
//! neighbours in the join graph; every copy is planned, and the cheapest
//! plan is kept (`pg_strom.enable_eager_aggregate`, [`super::plan_query`]).
//!
//! The answer is the same where it applies, and it applies only where:
//! - the query is one level of plain tables (heap, partitioned, foreign,
//!   materialized views) joined by the WHERE clause's conjuncts, grouped,
//!   without sub-links, window functions, set-returning functions,
//!   grouping sets, row locks, row security or anything volatile in its
//!   WHERE clause or its aggregates;
//! - every aggregate is a built-in `sum` (of integers, numerics, floats,
//!   intervals, money), `count`, `min`, `max`, or `avg` (of integers and
//!   numerics; PostgreSQL's `avg` divides its numeric sum by the count,
//!   as the combination does), without DISTINCT or ORDER BY (FILTER goes
//!   with the partial aggregate);
//! - every key is a column whose type's equality means identical values
//!   (integers, dates, times, timestamps, booleans, uuids, numerics of a
//!   declared scale, text and varchar of a deterministic collation,
//!   char(n)): a group's rows then meet every other table and every
//!   expression of the outer query alike, so grouping before the join
//!   merges only what the outer query cannot tell apart.  (Floats, where
//!   0 = -0, and numerics of any scale, where 1.0 = 1.00, are not keys.)
//!
//! Sums of floats add in another order, as a parallel plan's do.

use std::collections::BTreeSet;

use pgrx::pg_sys;

pub(in crate::rewrite) mod aggregates;
pub(in crate::rewrite) mod group_rte;
mod one_row;

use aggregates::{Combine, aggregates, combination, partial_parts};
use group_rte::{flatten_group_vars, group_rte_exprs, grouping_exprs, set_group_rte_exprs};
use one_row::one_row_per_group;

use super::query::{
    add_subquery, distinct_underestimated, group_clause, grouping_of, plain_aggregation, range_tbl_ref, rel_tuples_of,
    target_entry, unique_keys,
};
use crate::guc;
use crate::pg::list::{from_list, to_list};

/// At most this many sets of tables are grouped first, each planned once.
const MAX_CANDIDATES: usize = 3;

/// A rewritten copy of a query, and the tables it groups first.
pub(super) struct Rewrite {
    pub query: *mut pg_sys::Query,
    pub tables: String,
}

/// The copies of `parse` rewritten with the aggregation done first over
/// some of its tables; none where the query has not the shape of the
/// module's comment (or the setting is off).
///
/// # Safety
/// The planner's Query, not yet planned.
pub(super) unsafe fn rewrites(parse: *mut pg_sys::Query) -> Vec<Rewrite> {
    // SAFETY: the planner's Query (caller); only copies are changed.
    unsafe {
        if !guc::ENABLE_EAGER_AGGREGATE.get() || !plain_shape(parse) {
            return Vec::new();
        }
        let Some(from) = base_tables(parse) else { return Vec::new() };
        let Some(aggs) = aggregates(parse) else { return Vec::new() };
        // (a volatile argument would run once per grouped row instead of
        // once per joined row)
        if aggs.iter().any(|&(a, _)| pg_sys::contain_volatile_functions(a.cast())) {
            return Vec::new();
        }
        let mut read: BTreeSet<i32> = BTreeSet::new();
        for &(a, _) in &aggs {
            for v in vars_of(a.cast(), true) {
                read.insert((*v).varno);
            }
        }
        // aggregates of no column (count(*)) alone: grouped first over the
        // largest table, by its statistics
        // (each table's statistics looked up once)
        if read.is_empty()
            && let Some((t, _)) = from.iter().map(|&t| (t, rel_tuples(parse, t))).max_by(|a, b| a.1.total_cmp(&b.1))
        {
            read.insert(t);
        }
        if read.is_empty() || read.len() >= from.len() || !read.iter().all(|r| from.contains(r)) {
            return Vec::new();
        }
        let conj = conjuncts(parse);
        if conj.iter().any(|&c| pg_sys::contain_volatile_functions(c)) {
            return Vec::new();
        }
        let rels: Vec<BTreeSet<i32>> =
            conj.iter().map(|&c| vars_of(c, true).into_iter().map(|v| (*v).varno).collect()).collect();
        let mut out = Vec::new();
        for r in candidate_sets(&from, &read, &rels) {
            if let Some(query) = rewrite_with(parse, &r) {
                out.push(Rewrite { query, tables: table_names(parse, &r) });
            }
        }
        out
    }
}

/// One level of plain tables, grouped (see the module's comment).
unsafe fn plain_shape(q: *mut pg_sys::Query) -> bool {
    // SAFETY: a valid Query.
    unsafe { plain_aggregation(q) && !(*q).hasSubLinks && !(*q).hasRecursive && (*q).cteList.is_null() }
}

/// The range table indexes of the FROM clause, when it is a list of plain
/// tables (heap, partitioned, foreign, materialized views).
unsafe fn base_tables(q: *mut pg_sys::Query) -> Option<Vec<i32>> {
    // SAFETY: a valid Query.
    unsafe {
        let mut out = Vec::new();
        for f in from_list((*(*q).jointree).fromlist) {
            if (*f).type_ != pg_sys::NodeTag::T_RangeTblRef {
                return None;
            }
            let i = (*(f as *mut pg_sys::RangeTblRef)).rtindex;
            let rte = pg_sys::list_nth((*q).rtable, i - 1) as *mut pg_sys::RangeTblEntry;
            let kind = (*rte).relkind as u8;
            if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
                || !(*rte).tablesample.is_null()
                || !(*rte).securityQuals.is_null()
                || !matches!(kind, b'r' | b'p' | b'f' | b'm')
            {
                return None;
            }
            out.push(i);
        }
        (out.len() >= 2).then_some(out)
    }
}

/// The top-level conjuncts of the WHERE clause.
unsafe fn conjuncts(q: *mut pg_sys::Query) -> Vec<*mut pg_sys::Node> {
    // SAFETY: a valid Query.
    unsafe {
        let quals = (*(*q).jointree).quals;
        if quals.is_null() { Vec::new() } else { from_list(pg_sys::make_ands_implicit(quals.cast())) }
    }
}

/// The Vars of this query level in `node`; with `into_aggregates` false,
/// those outside aggregates only.
unsafe fn vars_of(node: *mut pg_sys::Node, into_aggregates: bool) -> Vec<*mut pg_sys::Var> {
    struct Ctx {
        into_aggregates: bool,
        out: Vec<*mut pg_sys::Var>,
    }
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: an expression node; ctx is the Ctx below.
        unsafe {
            if node.is_null() {
                return false;
            }
            let c = &mut *(ctx as *mut Ctx);
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    if (*(node as *mut pg_sys::Var)).varlevelsup == 0 {
                        c.out.push(node.cast());
                    }
                    return false;
                }
                pg_sys::NodeTag::T_Aggref if !c.into_aggregates => return false,
                _ => {}
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    let mut ctx = Ctx { into_aggregates, out: Vec::new() };
    // SAFETY: a valid expression.
    unsafe { walker(node, (&mut ctx as *mut Ctx).cast()) };
    ctx.out
}

/// The sets of tables to group first: those the aggregates read, then
/// those joined with one and two of their neighbours (tables with a
/// condition of their own first: they shrink the groups' input), each
/// connected by the join conditions and never all the tables.
fn candidate_sets(from: &[i32], read: &BTreeSet<i32>, rels: &[BTreeSet<i32>]) -> Vec<BTreeSet<i32>> {
    let connected = |set: &BTreeSet<i32>| {
        let mut reached: BTreeSet<i32> = set.iter().take(1).copied().collect();
        loop {
            let before = reached.len();
            for r in rels {
                if r.len() >= 2 && r.is_subset(set) && !r.is_disjoint(&reached) {
                    reached.extend(r.iter().copied());
                }
            }
            if reached.len() == before {
                return reached.len() == set.len();
            }
        }
    };
    let filtered = |t: i32| rels.iter().any(|r| r.len() == 1 && r.contains(&t));
    let mut out: Vec<BTreeSet<i32>> = Vec::new();
    let mut level = vec![read.clone()];
    while !level.is_empty() && out.len() < MAX_CANDIDATES {
        let mut next: Vec<BTreeSet<i32>> = Vec::new();
        for set in &level {
            if set.len() < from.len() && connected(set) && !out.contains(set) && out.len() < MAX_CANDIDATES {
                out.push(set.clone());
            }
            // neighbours: tables a join condition links with the set
            let mut neighbours: Vec<i32> = from
                .iter()
                .copied()
                .filter(|t| !set.contains(t) && rels.iter().any(|r| r.contains(t) && !r.is_disjoint(set)))
                .collect();
            neighbours.sort_by_key(|&t| !filtered(t));
            for t in neighbours {
                let mut bigger = set.clone();
                bigger.insert(t);
                if bigger.len() < from.len() && !next.contains(&bigger) {
                    next.push(bigger);
                }
            }
        }
        level = next;
    }
    out
}

/// The rows the statistics give table `t` of `q` (`pg_class.reltuples`;
/// 0 where never analyzed).
unsafe fn rel_tuples(q: *mut pg_sys::Query, t: i32) -> f64 {
    // SAFETY: a valid Query; a syscache lookup of a locked table.
    unsafe { rel_tuples_of((*(pg_sys::list_nth((*q).rtable, t - 1) as *mut pg_sys::RangeTblEntry)).relid) }
}

/// Whether key `k` is equated by a conjunct of `q` with a unique column
/// of another table whose rows outnumber the key's distinct values by
/// the statistics (`query::distinct_underestimated`).
unsafe fn key_underestimated(q: *mut pg_sys::Query, k: &Key) -> bool {
    // SAFETY: a valid Query; catalog lookups of its locked tables.
    unsafe {
        let rte_of = |i: i32| pg_sys::list_nth((*q).rtable, i - 1) as *mut pg_sys::RangeTblEntry;
        let var_of = |n: *mut pg_sys::Node| {
            let n = crate::pg::strip_relabel(n);
            ((*n).type_ == pg_sys::NodeTag::T_Var && (*(n as *mut pg_sys::Var)).varlevelsup == 0)
                .then_some(n as *mut pg_sys::Var)
        };
        for c in conjuncts(q) {
            if (*c).type_ != pg_sys::NodeTag::T_OpExpr {
                continue;
            }
            let args = from_list((*(c as *mut pg_sys::OpExpr)).args);
            let [a, b] = args.as_slice() else { continue };
            let (Some(a), Some(b)) = (var_of(*a), var_of(*b)) else { continue };
            let other = if ((*a).varno, (*a).varattno) == (k.varno, k.varattno) {
                b
            } else if ((*b).varno, (*b).varattno) == (k.varno, k.varattno) {
                a
            } else {
                continue;
            };
            if (*other).varno == k.varno || (*other).varattno <= 0 {
                continue;
            }
            let (kr, or) = (rte_of(k.varno), rte_of((*other).varno));
            if (*kr).rtekind != pg_sys::RTEKind::RTE_RELATION || (*or).rtekind != pg_sys::RTEKind::RTE_RELATION {
                continue;
            }
            if distinct_underestimated((*kr).relid, k.varattno, (*kr).inh, (*or).relid, (*other).varattno) {
                return true;
            }
        }
        false
    }
}

/// The names of the tables `set` (for the planner's debug message).
unsafe fn table_names(q: *mut pg_sys::Query, set: &BTreeSet<i32>) -> String {
    // SAFETY: a valid Query.
    unsafe {
        let names: Vec<String> = set
            .iter()
            .map(|&i| {
                let rte = pg_sys::list_nth((*q).rtable, i - 1) as *mut pg_sys::RangeTblEntry;
                let n = if (*rte).eref.is_null() { std::ptr::null_mut() } else { (*(*rte).eref).aliasname };
                if n.is_null() { format!("#{i}") } else { std::ffi::CStr::from_ptr(n).to_string_lossy().into_owned() }
            })
            .collect();
        names.join(", ")
    }
}

/// Whether equal values of a column of this type, type modifier and
/// collation are identical (see the module's comment).
pub(in crate::rewrite) unsafe fn equal_is_identical(t: pg_sys::Oid, typmod: i32, coll: pg_sys::Oid) -> bool {
    use pg_sys::*;
    // SAFETY: catalog lookups.
    let deterministic = || unsafe { coll == InvalidOid || get_collation_isdeterministic(coll) };
    match t {
        BOOLOID | INT2OID | INT4OID | INT8OID | OIDOID | DATEOID | TIMEOID | TIMESTAMPOID | TIMESTAMPTZOID
        | UUIDOID | CHAROID => true,
        TEXTOID | VARCHAROID => deterministic(),
        BPCHAROID => typmod >= 0 && deterministic(),
        NUMERICOID => typmod >= 0,
        _ => false,
    }
}

/// One grouping key of the sub-query: a column of one of its tables.
struct Key {
    varno: i32,
    varattno: pg_sys::AttrNumber,
    var: *mut pg_sys::Var,
}

/// What the mutator of the outer query's expressions needs.
struct Outer<'a> {
    set: &'a BTreeSet<i32>,
    keys: &'a [Key],
    /// the sub-query's range table index
    sub: i32,
    /// each aggregate and its combination
    combined: &'a [(*mut pg_sys::Aggref, *mut pg_sys::Node)],
    failed: bool,
}

/// A copy of `parse` with its aggregation done first over the tables `set`
/// (module's comment); None where a key cannot be grouped so.
unsafe fn rewrite_with(parse: *mut pg_sys::Query, set: &BTreeSet<i32>) -> Option<*mut pg_sys::Query> {
    // SAFETY: the planner's Query, copied before any change.
    unsafe {
        let q = pg_sys::copyObjectImpl(parse.cast()) as *mut pg_sys::Query;
        let in_set = |v: *mut pg_sys::Var| set.contains(&(*v).varno);
        let (mut inside, mut outside) = (Vec::new(), Vec::new());
        for c in conjuncts(q) {
            let vars = vars_of(c, true);
            if !vars.is_empty() && vars.iter().all(|&v| in_set(v)) {
                inside.push(c);
            } else {
                outside.push(c);
            }
        }
        // the keys: the set's columns read outside its aggregates
        let mut exprs: Vec<*mut pg_sys::Node> = outside.clone();
        exprs.push((*q).targetList.cast());
        exprs.push((*q).havingQual);
        exprs.extend(group_rte_exprs(q));
        let mut keys: Vec<Key> = Vec::new();
        for e in exprs {
            for v in vars_of(e, false) {
                if !in_set(v) || keys.iter().any(|k| k.varno == (*v).varno && k.varattno == (*v).varattno) {
                    continue;
                }
                if (*v).varattno <= 0 || !equal_is_identical((*v).vartype, (*v).vartypmod, (*v).varcollid) {
                    return None;
                }
                keys.push(Key { varno: (*v).varno, varattno: (*v).varattno, var: v });
            }
        }
        // a key whose groups PostgreSQL's statistics may count far too
        // few (query::distinct_underestimated): the rewritten plan's cost
        // would be a guess
        if keys.iter().any(|k| key_underestimated(q, k)) {
            return None;
        }
        // one table grouped by a unique key of its own: a group per row,
        // nothing to gain (TPC-H Q12's `orders` by `o_orderkey`)
        if let [t] = set.iter().copied().collect::<Vec<_>>()[..] {
            let rte = pg_sys::list_nth((*q).rtable, t - 1) as *mut pg_sys::RangeTblEntry;
            let unique = unique_keys((*rte).relid)
                .into_iter()
                .any(|cols| cols.iter().all(|&c| keys.iter().any(|k| k.varno == t && k.varattno == c)));
            if unique {
                return None;
            }
        }
        let aggs = aggregates(q)?;
        let (sub_query, partial_types) = grouped_subquery(q, set, &inside, &keys, &aggs)?;

        // the sub-query in the FROM clause, in place of the set's tables
        let sub = add_subquery(q, sub_query, c"pgstrom_partial");
        let mut from: Vec<*mut pg_sys::Node> = from_list((*(*q).jointree).fromlist)
            .into_iter()
            .filter(|&f| !set.contains(&(*(f as *mut pg_sys::RangeTblRef)).rtindex))
            .collect();
        from.push(range_tbl_ref(sub));
        (*(*q).jointree).fromlist = to_list(&from);

        // the outer query's conditions and grouping keys read the
        // sub-query's columns
        let mut ctx = Outer { set, keys: &keys, sub, combined: &[], failed: false };
        let ctxp = (&mut ctx as *mut Outer).cast();
        let mut outside: Vec<*mut pg_sys::Node> = outside.into_iter().map(|c| outer_mutator(c, ctxp)).collect();
        set_group_rte_exprs(q, ctxp);
        let groups: Vec<*mut pg_sys::Node> = grouping_exprs(q).into_iter().map(|e| outer_mutator(e, ctxp)).collect();
        if ctx.failed {
            return None;
        }
        // one joined row per group: no aggregation left above the join
        let single = !(*q).groupClause.is_null() && one_row_per_group(q, sub, &keys, &groups, &outside);

        // each aggregate's combination of the sub-query's partial columns
        let mut combined = Vec::with_capacity(aggs.len());
        let mut column = keys.len();
        for &(a, how) in &aggs {
            let n = if how == Combine::Avg { 2 } else { 1 };
            let cols: Vec<*mut pg_sys::Node> = (0..n)
                .map(|i| {
                    let (t, typmod, coll) = partial_types[column - keys.len() + i];
                    pg_sys::makeVar(sub, (column + i + 1) as pg_sys::AttrNumber, t, typmod, coll, 0).cast()
                })
                .collect();
            column += n;
            combined.push((a, combination(a, how, &cols, single)?));
        }
        let mut ctx = Outer { set, keys: &keys, sub, combined: &combined, failed: false };
        let ctxp = (&mut ctx as *mut Outer).cast();
        (*q).targetList = outer_mutator((*q).targetList.cast(), ctxp).cast();
        (*q).havingQual = outer_mutator((*q).havingQual, ctxp);
        if ctx.failed {
            return None;
        }
        if single {
            // HAVING becomes a condition of the row
            flatten_group_vars(q);
            if !(*q).havingQual.is_null() {
                outside.extend(from_list(pg_sys::make_ands_implicit((*q).havingQual.cast())));
            }
            (*q).havingQual = std::ptr::null_mut();
            (*q).groupClause = std::ptr::null_mut();
            (*q).hasAggs = false;
        }
        (*(*q).jointree).quals = if outside.is_empty() {
            std::ptr::null_mut()
        } else {
            pg_sys::make_ands_explicit(to_list(&outside)).cast()
        };
        Some(q)
    }
}

/// The grouped sub-query over the tables `set`: `inside` as its WHERE
/// clause, the keys as its first columns (grouped by), then each
/// aggregate's partial columns (two for `avg`); with the partial columns'
/// types (type, modifier, collation).
#[allow(clippy::type_complexity)]
unsafe fn grouped_subquery(
    q: *mut pg_sys::Query,
    set: &BTreeSet<i32>,
    inside: &[*mut pg_sys::Node],
    keys: &[Key],
    aggs: &[(*mut pg_sys::Aggref, Combine)],
) -> Option<(*mut pg_sys::Query, Vec<(pg_sys::Oid, i32, pg_sys::Oid)>)> {
    // SAFETY: valid nodes of our copy; new nodes are ours.
    unsafe {
        let sub = pg_sys::palloc0(std::mem::size_of::<pg_sys::Query>()) as *mut pg_sys::Query;
        (*sub).type_ = pg_sys::NodeTag::T_Query;
        (*sub).commandType = pg_sys::CmdType::CMD_SELECT;
        (*sub).querySource = pg_sys::QuerySource::QSRC_ORIGINAL;
        (*sub).canSetTag = true;
        (*sub).hasAggs = true;
        // the set's tables, numbered from 1 in their order
        let map: Vec<(i32, i32)> = set.iter().enumerate().map(|(i, &r)| (r, i as i32 + 1)).collect();
        let mut rtable = Vec::with_capacity(map.len());
        #[cfg(not(feature = "pg15"))]
        let mut perms: Vec<*mut pg_sys::Node> = Vec::new();
        for &(r, _) in &map {
            let rte = pg_sys::copyObjectImpl(pg_sys::list_nth((*q).rtable, r - 1).cast()) as *mut pg_sys::RangeTblEntry;
            #[cfg(not(feature = "pg15"))]
            if (*rte).perminfoindex > 0 {
                perms.push(pg_sys::copyObjectImpl(
                    pg_sys::list_nth((*q).rteperminfos, (*rte).perminfoindex as i32 - 1).cast(),
                ) as *mut pg_sys::Node);
                (*rte).perminfoindex = perms.len() as pg_sys::Index;
            }
            rtable.push(rte.cast());
        }
        (*sub).rtable = to_list(&rtable);
        #[cfg(not(feature = "pg15"))]
        {
            (*sub).rteperminfos = to_list(&perms);
        }
        let renumber = |n: *mut pg_sys::Node| renumbered(n, &map);
        let from: Vec<*mut pg_sys::Node> = map.iter().map(|&(_, i)| range_tbl_ref(i)).collect();
        let quals: Vec<*mut pg_sys::Node> = inside.iter().map(|&c| renumber(c)).collect();
        (*sub).jointree = pg_sys::makeFromExpr(
            to_list(&from),
            if quals.is_empty() { std::ptr::null_mut() } else { pg_sys::make_ands_explicit(to_list(&quals)).cast() },
        );
        // the keys, grouped by
        let mut tlist: Vec<*mut pg_sys::Node> = Vec::new();
        let mut groups: Vec<*mut pg_sys::Node> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let tle = target_entry(renumber(k.var.cast()).cast(), i + 1, &format!("k{}", i + 1));
            (*tle).ressortgroupref = (i + 1) as pg_sys::Index;
            tlist.push(tle.cast());
            groups.push(group_clause(i + 1, grouping_of((*k.var).vartype)?));
        }
        (*sub).groupClause = to_list(&groups);
        // the partial aggregates
        let mut types = Vec::new();
        for &(a, how) in aggs {
            // (avg(x) as sum(x) and count(x), with its FILTER)
            for p in partial_parts(renumber(a.cast()) as *mut pg_sys::Aggref, how)? {
                let resno = tlist.len() + 1;
                tlist.push(target_entry(p.cast(), resno, &format!("p{resno}")).cast());
                types.push(((*p).aggtype, -1, (*p).aggcollid));
            }
        }
        (*sub).targetList = to_list(&tlist);
        Some((sub, types))
    }
}

/// A copy of `node` with the Vars of this level renumbered by `map`
/// (old range table index, new).
unsafe fn renumbered(node: *mut pg_sys::Node, map: &[(i32, i32)]) -> *mut pg_sys::Node {
    // SAFETY: a valid expression; the copy is ours.
    unsafe {
        let copy = pg_sys::copyObjectImpl(node.cast()) as *mut pg_sys::Node;
        for v in vars_of(copy, true) {
            if let Some(&(_, new)) = map.iter().find(|&&(old, _)| old == (*v).varno) {
                (*v).varno = new;
                (*v).varnosyn = new as pg_sys::Index;
            }
        }
        copy
    }
}

/// The outer query's expression `node` reading the sub-query: each
/// aggregate its combination, each column of the set its key.
unsafe extern "C-unwind" fn outer_mutator(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
    // SAFETY: an expression node of our copy; ctx is an Outer.
    unsafe {
        if node.is_null() {
            return node;
        }
        let c = &mut *(ctx as *mut Outer);
        match (*node).type_ {
            pg_sys::NodeTag::T_Aggref => {
                return match c.combined.iter().find(|&&(a, _)| std::ptr::eq(a.cast(), node)) {
                    Some(&(_, e)) => pg_sys::copyObjectImpl(e.cast()).cast(),
                    None => {
                        c.failed = true;
                        node
                    }
                };
            }
            pg_sys::NodeTag::T_Var => {
                let v = node as *mut pg_sys::Var;
                if (*v).varlevelsup != 0 || !c.set.contains(&(*v).varno) {
                    return pg_sys::copyObjectImpl(node.cast()).cast();
                }
                return match c.keys.iter().position(|k| k.varno == (*v).varno && k.varattno == (*v).varattno) {
                    Some(i) => pg_sys::makeVar(
                        c.sub,
                        (i + 1) as pg_sys::AttrNumber,
                        (*v).vartype,
                        (*v).vartypmod,
                        (*v).varcollid,
                        0,
                    )
                    .cast(),
                    None => {
                        c.failed = true;
                        node
                    }
                };
            }
            _ => {}
        }
        crate::pg::compat::mutate(node, outer_mutator, ctx)
    }
}
