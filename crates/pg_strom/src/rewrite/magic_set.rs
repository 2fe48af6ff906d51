//! The grouped sub-query of a decorrelated sub-query restricted to the
//! keys the outer query can ask for.
//!
//! Decorrelation (`super::decorrelate`) groups the sub-query's tables by
//! the correlation keys over all their rows, though the outer query joins
//! only the groups of its own key values: TPC-H Q17 groups all of
//! `lineitem` by `l_partkey` (two million groups at SF 10) to read the
//! groups of the 2,000 parts of one brand and container.  Where one table
//! of the outer query supplies every key's outer column and has
//! conditions of its own among the outer `WHERE` conjuncts, the grouped
//! sub-query gets one more conjunct:
//!
//! ```sql
//! (key1, ...) IN (SELECT outer_col1, ... FROM that_table WHERE its conditions)
//! ```
//!
//! which PostgreSQL plans as a semi-join (on the device: a GpuJoin depth
//! of the GpuPreAgg), so only the groups the outer query can meet are
//! formed.  The answer is the same: the conjunct removes whole groups
//! only (a group's rows all have its key), and every group an outer row
//! can join has a key value of a row of that table that passes its own
//! conditions, which every result row does (they are top-level `AND`ed
//! conjuncts of the outer `WHERE`).  NULL keys join no group either way.
//!
//! Applies where the table is a plain table listed in the outer query's
//! `FROM`, or in inner joins there (not below an outer join), without
//! security barrier quals
//! (row-level security) or a sample, and a conjunct is taken when it reads
//! that table and nothing else of its query level or above, calls nothing
//! volatile and holds no correlated sub-query (which would run once per
//! row of the copy).

use pgrx::pg_sys;

use super::decorrelate::{Key, refers_outside};
use super::query::{has_sublink, range_tbl_ref, target_entry};
use crate::pg::list::{from_list, to_list};

/// Restrict grouped sub-query `sq` (grouped by the `keys`' inner
/// expressions, to be joined in `q`) to the key values of the table that
/// supplies the keys' outer columns, by its conjuncts among `conj` (the
/// top-level `WHERE` conjuncts of `q`, less `skip`, the one being
/// rewritten); whether it was.
///
/// # Safety
/// Valid Query trees of our copy; the planner's memory context.
pub(super) unsafe fn restrict(
    q: *mut pg_sys::Query,
    sq: *mut pg_sys::Query,
    keys: &[Key],
    conj: &[*mut pg_sys::Node],
    skip: *mut pg_sys::Node,
) -> bool {
    // SAFETY: caller's promise; new nodes are ours.
    unsafe {
        let Some(first) = keys.first() else { return false };
        let r = (*first.outer).varno;
        if keys.iter().any(|k| (*k.outer).varno != r || (*k.outer).varlevelsup != 1) {
            return false;
        }
        // a plain table of q's FROM list, or of inner joins in it
        let in_from = from_list((*(*q).jointree).fromlist).into_iter().any(|f| inner_joined(f, r));
        if !in_from || r < 1 || r > pg_sys::list_length((*q).rtable) {
            return false;
        }
        let rte = pg_sys::list_nth((*q).rtable, r - 1) as *mut pg_sys::RangeTblEntry;
        if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
            || !(*rte).tablesample.is_null()
            || !(*rte).securityQuals.is_null()
            || (*q).hasRowSecurity
        {
            return false;
        }
        #[cfg(not(feature = "pg15"))]
        if keys.iter().any(|k| !(*k.outer).varnullingrels.is_null()) {
            return false;
        }
        let own: Vec<*mut pg_sys::Node> =
            conj.iter().copied().filter(|&c| !std::ptr::eq(c, skip) && own_condition(c, r)).collect();
        if own.is_empty() {
            return false;
        }

        // the copy of the table's rows: SELECT outer columns FROM it WHERE own
        let m = pg_sys::palloc0(std::mem::size_of::<pg_sys::Query>()) as *mut pg_sys::Query;
        (*m).type_ = pg_sys::NodeTag::T_Query;
        (*m).commandType = pg_sys::CmdType::CMD_SELECT;
        (*m).querySource = pg_sys::QuerySource::QSRC_ORIGINAL;
        (*m).canSetTag = true;
        let copy = pg_sys::copyObjectImpl(rte.cast()) as *mut pg_sys::RangeTblEntry;
        #[cfg(not(feature = "pg15"))]
        {
            if (*copy).perminfoindex > 0 {
                let perm = pg_sys::copyObjectImpl(
                    pg_sys::list_nth((*q).rteperminfos, (*copy).perminfoindex as i32 - 1).cast(),
                ) as *mut pg_sys::Node;
                (*m).rteperminfos = to_list(&[perm]);
                (*copy).perminfoindex = 1;
            }
        }
        (*m).rtable = to_list(&[copy.cast()]);
        let quals: Vec<*mut pg_sys::Node> = own.iter().map(|&c| renumbered(c, r)).collect();
        (*m).hasSubLinks = quals.iter().any(|&c| has_sublink(c));
        (*m).jointree = pg_sys::makeFromExpr(
            to_list(&[range_tbl_ref(1)]),
            if quals.len() == 1 { quals[0] } else { pg_sys::make_andclause(to_list(&quals)).cast() },
        );
        let mut tlist = Vec::with_capacity(keys.len());
        let mut tests = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            let v = pg_sys::copyObjectImpl(k.outer.cast()) as *mut pg_sys::Var;
            (*v).varlevelsup = 0;
            (*v).varno = 1;
            (*v).varnosyn = 1;
            tlist.push(target_entry(v.cast(), i + 1, &format!("key{}", i + 1)).cast());
            // inner = the sub-select's column i + 1
            let p = pg_sys::palloc0(std::mem::size_of::<pg_sys::Param>()) as *mut pg_sys::Param;
            (*p).xpr.type_ = pg_sys::NodeTag::T_Param;
            (*p).paramkind = pg_sys::ParamKind::PARAM_SUBLINK;
            (*p).paramid = (i + 1) as i32;
            (*p).paramtype = (*v).vartype;
            (*p).paramtypmod = (*v).vartypmod;
            (*p).paramcollid = (*v).varcollid;
            (*p).location = -1;
            let test = pg_sys::make_opclause(
                k.opno,
                pg_sys::BOOLOID,
                false,
                pg_sys::copyObjectImpl(k.inner.cast()).cast(),
                p.cast(),
                pg_sys::InvalidOid,
                k.inputcollid,
            );
            pg_sys::set_opfuncid(test.cast());
            tests.push(test.cast());
        }
        (*m).targetList = to_list(&tlist);
        if refers_outside(m.cast()) {
            return false;
        }

        // (keys) IN (the copy), a conjunct of the grouped sub-query
        let sl = pg_sys::palloc0(std::mem::size_of::<pg_sys::SubLink>()) as *mut pg_sys::SubLink;
        (*sl).xpr.type_ = pg_sys::NodeTag::T_SubLink;
        (*sl).subLinkType = pg_sys::SubLinkType::ANY_SUBLINK;
        (*sl).testexpr = if tests.len() == 1 { tests[0] } else { pg_sys::make_andclause(to_list(&tests)).cast() };
        let eq: Vec<*mut pg_sys::Node> =
            keys.iter().map(|_| pg_sys::makeString(pg_sys::pstrdup(c"=".as_ptr())).cast()).collect();
        (*sl).operName = to_list(&eq);
        (*sl).subselect = m.cast();
        (*sl).location = -1;
        let quals = (*(*sq).jointree).quals;
        let mut conjuncts =
            if quals.is_null() { Vec::new() } else { from_list(pg_sys::make_ands_implicit(quals.cast())) };
        conjuncts.push(sl.cast());
        (*(*sq).jointree).quals = pg_sys::make_ands_explicit(to_list(&conjuncts)).cast();
        (*sq).hasSubLinks = true;
        true
    }
}

/// Whether FROM item `f` is table `r`, or an inner join (`JOIN ... ON`)
/// with `r` on either side, at any depth of inner joins (not below an
/// outer join: a row of `r` there may be NULL-extended).
unsafe fn inner_joined(f: *mut pg_sys::Node, r: i32) -> bool {
    // SAFETY: a FROM item of a valid Query.
    unsafe {
        match (*f).type_ {
            pg_sys::NodeTag::T_RangeTblRef => (*(f as *mut pg_sys::RangeTblRef)).rtindex == r,
            pg_sys::NodeTag::T_JoinExpr => {
                let j = f as *mut pg_sys::JoinExpr;
                (*j).jointype == pg_sys::JoinType::JOIN_INNER
                    && (inner_joined((*j).larg, r) || inner_joined((*j).rarg, r))
            }
            _ => false,
        }
    }
}

/// Whether conjunct `c` of the outer query is a condition of table `r`
/// alone: it reads a column of `r`, no other table of its query level
/// (at any depth of its sub-queries) and no level above, names no WITH
/// query of its level or above, calls nothing volatile, and holds no
/// correlated sub-query.
unsafe fn own_condition(c: *mut pg_sys::Node, r: i32) -> bool {
    struct Ctx {
        depth: u32,
        r: i32,
        reads_r: bool,
        other: bool,
    }
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: a valid node; ctx is the Ctx below.
        unsafe {
            if node.is_null() {
                return false;
            }
            let c = &mut *(ctx as *mut Ctx);
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    let v = node as *mut pg_sys::Var;
                    if (*v).varlevelsup == c.depth {
                        if (*v).varno == c.r {
                            c.reads_r = true;
                        } else {
                            c.other = true;
                        }
                    } else if (*v).varlevelsup > c.depth {
                        c.other = true;
                    }
                    return false;
                }
                pg_sys::NodeTag::T_PlaceHolderVar
                | pg_sys::NodeTag::T_Aggref
                | pg_sys::NodeTag::T_GroupingFunc
                | pg_sys::NodeTag::T_WindowFunc
                | pg_sys::NodeTag::T_CurrentOfExpr => {
                    c.other = true;
                    return true;
                }
                pg_sys::NodeTag::T_SubLink => {
                    // a sub-query that reads this level would run once per row
                    let sub = (*(node as *mut pg_sys::SubLink)).subselect;
                    if refers_outside(sub) {
                        c.other = true;
                        return true;
                    }
                }
                pg_sys::NodeTag::T_Query => {
                    c.depth += 1;
                    // a WITH query of this level or above, named inside,
                    // would be one level further away in the copy
                    let q = node as *mut pg_sys::Query;
                    let outer_cte = from_list((*q).rtable).into_iter().any(|rte| {
                        let rte = rte as *mut pg_sys::RangeTblEntry;
                        (*rte).rtekind == pg_sys::RTEKind::RTE_CTE && (*rte).ctelevelsup >= c.depth
                    });
                    if outer_cte {
                        c.other = true;
                        c.depth -= 1;
                        return true;
                    }
                    let found = pg_sys::query_tree_walker(node.cast(), Some(walker), ctx, 0);
                    c.depth -= 1;
                    return found;
                }
                _ => {}
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    // SAFETY: a valid expression.
    unsafe {
        if pg_sys::contain_volatile_functions(c) {
            return false;
        }
        let mut ctx = Ctx { depth: 0, r, reads_r: false, other: false };
        walker(c, (&mut ctx as *mut Ctx).cast());
        ctx.reads_r && !ctx.other
    }
}

/// A copy of conjunct `c` of table `r` (`own_condition`) reading `r` as
/// range table entry 1 of its new query level, at every depth.
unsafe fn renumbered(c: *mut pg_sys::Node, r: i32) -> *mut pg_sys::Node {
    struct Ctx {
        depth: u32,
        r: i32,
    }
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
        // SAFETY: a node of our copy; ctx is the Ctx below.
        unsafe {
            if node.is_null() {
                return false;
            }
            let c = &mut *(ctx as *mut Ctx);
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    let v = node as *mut pg_sys::Var;
                    if (*v).varlevelsup == c.depth && (*v).varno == c.r {
                        (*v).varno = 1;
                        (*v).varnosyn = 1;
                    }
                    return false;
                }
                pg_sys::NodeTag::T_Query => {
                    c.depth += 1;
                    let found = pg_sys::query_tree_walker(node.cast(), Some(walker), ctx, 0);
                    c.depth -= 1;
                    return found;
                }
                _ => {}
            }
            crate::pg::compat::walk(node, walker, ctx)
        }
    }
    // SAFETY: a valid expression; the copy is ours.
    unsafe {
        let copy = pg_sys::copyObjectImpl(c.cast()) as *mut pg_sys::Node;
        let mut ctx = Ctx { depth: 0, r };
        walker(copy, (&mut ctx as *mut Ctx).cast());
        copy
    }
}
