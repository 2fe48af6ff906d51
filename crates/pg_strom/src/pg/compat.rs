//! What differs between the PostgreSQL major versions pg_strom builds for
//! (15 to 18, by the cargo features `pg15` ... `pg18`): one function or
//! type per difference, so that the rest of the code reads as one version.
//! Each says in which version the difference came.

use pgrx::pg_sys;

/// A relation's file: (tablespace, database, relfilenode) by their
/// PostgreSQL 16+ names (15 calls them spcNode, dbNode, relNode).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FileLocator {
    pub spc: pg_sys::Oid,
    pub db: pg_sys::Oid,
    pub rel: u32,
}

/// The file of an open relation (`rd_locator`, `rd_node` before 16).
///
/// # Safety
/// `rel` is an open relation.
pub unsafe fn rel_file(rel: pg_sys::Relation) -> FileLocator {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            let n = (*rel).rd_node;
            FileLocator { spc: n.spcNode, db: n.dbNode, rel: n.relNode.to_u32() }
        }
        #[cfg(not(feature = "pg15"))]
        {
            let n = (*rel).rd_locator;
            FileLocator { spc: n.spcOid, db: n.dbOid, rel: n.relNumber.to_u32() }
        }
    }
}

/// Whether the relation got a new file in the current transaction
/// (`rd_firstRelfilelocatorSubid`, `rd_firstRelfilenodeSubid` before 16).
///
/// # Safety
/// `rel` is an open relation.
pub unsafe fn rel_new_file_subid(rel: pg_sys::Relation) -> pg_sys::SubTransactionId {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            (*rel).rd_firstRelfilenodeSubid
        }
        #[cfg(not(feature = "pg15"))]
        {
            (*rel).rd_firstRelfilelocatorSubid
        }
    }
}

/// The path of a relation file's main fork, relative to the data
/// directory (`GetRelationPath`: a struct from 18, a palloc'd string
/// before).
///
/// # Safety
/// Backend.
pub unsafe fn relation_path(f: FileLocator) -> String {
    // SAFETY: caller's promise; the string is copied out.
    unsafe {
        #[cfg(feature = "pg15")]
        let p = pg_sys::GetRelationPath(f.db, f.spc, pg_sys::Oid::from(f.rel), -1, pg_sys::ForkNumber::MAIN_FORKNUM);
        #[cfg(any(feature = "pg16", feature = "pg17"))]
        let p = pg_sys::GetRelationPath(
            f.db,
            f.spc,
            pg_sys::RelFileNumber::from(f.rel),
            -1,
            pg_sys::ForkNumber::MAIN_FORKNUM,
        );
        #[cfg(any(feature = "pg15", feature = "pg16", feature = "pg17"))]
        {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
        #[cfg(feature = "pg18")]
        {
            let p = pg_sys::GetRelationPath(
                f.db,
                f.spc,
                pg_sys::RelFileNumber::from(f.rel),
                -1,
                pg_sys::ForkNumber::MAIN_FORKNUM,
            );
            std::ffi::CStr::from_ptr(p.str_.as_ptr()).to_string_lossy().into_owned()
        }
    }
}

/// Whether a shared buffer's tag names a block of the main fork of `f`.
pub fn tag_is(tag: &pg_sys::BufferTag, f: FileLocator) -> bool {
    #[cfg(feature = "pg15")]
    {
        tag.rnode.relNode.to_u32() == f.rel
            && tag.rnode.dbNode == f.db
            && tag.rnode.spcNode == f.spc
            && tag.forkNum == pg_sys::ForkNumber::MAIN_FORKNUM
    }
    #[cfg(not(feature = "pg15"))]
    {
        tag.relNumber.to_u32() == f.rel
            && tag.dbOid == f.db
            && tag.spcOid == f.spc
            && tag.forkNum == pg_sys::ForkNumber::MAIN_FORKNUM
    }
}

/// The tag of block `blk` of the main fork of `f`.
pub fn tag_of(f: FileLocator, blk: pg_sys::BlockNumber) -> pg_sys::BufferTag {
    #[cfg(feature = "pg15")]
    {
        pg_sys::BufferTag {
            rnode: pg_sys::RelFileNode { spcNode: f.spc, dbNode: f.db, relNode: pg_sys::Oid::from(f.rel) },
            forkNum: pg_sys::ForkNumber::MAIN_FORKNUM,
            blockNum: blk,
        }
    }
    #[cfg(not(feature = "pg15"))]
    {
        pg_sys::BufferTag {
            spcOid: f.spc,
            dbOid: f.db,
            relNumber: pg_sys::RelFileNumber::from(f.rel),
            forkNum: pg_sys::ForkNumber::MAIN_FORKNUM,
            blockNum: blk,
        }
    }
}

/// A relation's pgstat counts (`counts`, `t_counts` before 16).
///
/// # Safety
/// `info` is the relation's live statistics entry.
pub unsafe fn count_scan(info: &mut pg_sys::PgStat_TableStatus, scans: i64, tuples: i64) {
    #[cfg(feature = "pg15")]
    {
        info.t_counts.t_numscans += scans;
        info.t_counts.t_tuples_returned += tuples;
    }
    #[cfg(not(feature = "pg15"))]
    {
        info.counts.numscans += scans;
        info.counts.tuples_returned += tuples;
    }
}

/// `heap_form_minimal_tuple` (18 added the extra bytes to leave before
/// the tuple: none here).
///
/// # Safety
/// `values` and `isnull` hold `desc`'s attributes.
pub unsafe fn form_minimal_tuple(
    desc: pg_sys::TupleDesc,
    values: *const pg_sys::Datum,
    isnull: *const bool,
) -> pg_sys::MinimalTuple {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg18")]
        {
            pg_sys::heap_form_minimal_tuple(desc, values, isnull, 0)
        }
        #[cfg(not(feature = "pg18"))]
        {
            pg_sys::heap_form_minimal_tuple(desc, values.cast_mut(), isnull.cast_mut())
        }
    }
}

/// `vacuum_delay_point` of ANALYZE (18 asks which).
///
/// # Safety
/// Backend.
pub unsafe fn analyze_delay_point() {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg18")]
        pg_sys::vacuum_delay_point(true);
        #[cfg(not(feature = "pg18"))]
        pg_sys::vacuum_delay_point();
    }
}

/// `stringToQualifiedNameList` (16 added an error-save context: none
/// here, errors are raised).
///
/// # Safety
/// Backend; `name` a NUL-terminated string.
pub unsafe fn qualified_name_list(name: *const std::ffi::c_char) -> *mut pg_sys::List {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::stringToQualifiedNameList(name)
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::stringToQualifiedNameList(name, std::ptr::null_mut())
        }
    }
}

/// The GROUP BY clauses the planner groups by (17 keeps the ones left
/// after removing redundant keys in `processed_groupClause`; before, the
/// query's own).
///
/// # Safety
/// Planner state.
pub unsafe fn group_clause(root: *mut pg_sys::PlannerInfo) -> *mut pg_sys::List {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        {
            (*(*root).parse).groupClause
        }
        #[cfg(not(any(feature = "pg15", feature = "pg16")))]
        {
            (*root).processed_groupClause
        }
    }
}

/// The nodes disabled by an `enable_*` setting that a path holds: 18
/// counts them in the path and compares the counts before the costs
/// (add_path keeps a path with fewer); earlier versions add
/// `disable_cost` to the costs instead, so 0 here.
///
/// # Safety
/// A valid Path.
pub unsafe fn disabled_nodes(path: *const pg_sys::Path) -> i32 {
    #[cfg(feature = "pg18")]
    {
        // SAFETY: caller's promise.
        unsafe { (*path).disabled_nodes }
    }
    #[cfg(not(feature = "pg18"))]
    {
        let _ = path;
        0
    }
}

/// `node` with the Vars of `parent` (an appendrel: a partitioned table
/// or an inheritance parent, or one of its sub-partitioned children)
/// translated to those of its descendant `child`, through every level
/// between them.  16 takes the relations, 15 their relids.
///
/// # Safety
/// Planner state; `child` descends from `parent`.
pub unsafe fn translate_to_child(
    root: *mut pg_sys::PlannerInfo,
    node: *mut pg_sys::Node,
    child: *mut pg_sys::RelOptInfo,
    parent: *mut pg_sys::RelOptInfo,
) -> *mut pg_sys::Node {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::adjust_appendrel_attrs_multilevel(root, node, (*child).relids, (*parent).relids)
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::adjust_appendrel_attrs_multilevel(root, node, child, parent)
        }
    }
}

/// Make `rel` a child of join relation `parent` as PostgreSQL's child
/// joins are: its topmost parent's relids (and, from 16, its parent and
/// topmost parent).
///
/// # Safety
/// Valid relations in planner memory.
pub unsafe fn set_child_of(rel: *mut pg_sys::RelOptInfo, parent: *mut pg_sys::RelOptInfo) {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(not(feature = "pg15"))]
        {
            (*rel).parent = parent;
            (*rel).top_parent = if (*parent).top_parent.is_null() { parent } else { (*parent).top_parent };
        }
        (*rel).top_parent_relids =
            if (*parent).top_parent_relids.is_null() { (*parent).relids } else { (*parent).top_parent_relids };
    }
}

/// Give `copy` the nulling relids of `from` (None: none); a no-op before
/// 16, whose Vars have none.
///
/// # Safety
/// Valid Vars.
pub unsafe fn set_nullingrels(copy: *mut pg_sys::Var, from: Option<*const pg_sys::Var>) {
    #[cfg(not(feature = "pg15"))]
    // SAFETY: caller's promise.
    unsafe {
        (*copy).varnullingrels = match from {
            Some(v) => pg_sys::bms_copy((*v).varnullingrels),
            None => std::ptr::null_mut(),
        };
    }
    #[cfg(feature = "pg15")]
    {
        let _ = (copy, from);
    }
}

/// `create_foreignscan_path` without a target, pathkeys, outer relids,
/// outer path or restrictions (17 added the restrictions, 18 the count
/// of disabled nodes).
///
/// # Safety
/// Planner state.
pub unsafe fn foreignscan_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rows: f64,
    startup: f64,
    total: f64,
    fdw_private: *mut pg_sys::List,
) -> *mut pg_sys::ForeignPath {
    use std::ptr::null_mut;
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg18")]
        {
            pg_sys::create_foreignscan_path(
                root,
                rel,
                null_mut(),
                rows,
                0,
                startup,
                total,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                fdw_private,
            )
        }
        #[cfg(feature = "pg17")]
        {
            pg_sys::create_foreignscan_path(
                root,
                rel,
                null_mut(),
                rows,
                startup,
                total,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                fdw_private,
            )
        }
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        {
            pg_sys::create_foreignscan_path(
                root,
                rel,
                null_mut(),
                rows,
                startup,
                total,
                null_mut(),
                null_mut(),
                null_mut(),
                fdw_private,
            )
        }
    }
}

/// A btree comparison's kind as the catalog's operator interpretation
/// gives it: 18's CompareType, the btree strategy number before.
#[cfg(feature = "pg18")]
pub mod cmp {
    use pgrx::pg_sys;
    pub type Kind = pg_sys::CompareType::Type;
    pub const LT: Kind = pg_sys::CompareType::COMPARE_LT;
    pub const LE: Kind = pg_sys::CompareType::COMPARE_LE;
    pub const EQ: Kind = pg_sys::CompareType::COMPARE_EQ;
    pub const GE: Kind = pg_sys::CompareType::COMPARE_GE;
    pub const GT: Kind = pg_sys::CompareType::COMPARE_GT;
}

/// A btree comparison's kind as the catalog's operator interpretation
/// gives it: 18's CompareType, the btree strategy number before.
#[cfg(not(feature = "pg18"))]
pub mod cmp {
    use pgrx::pg_sys;
    pub type Kind = i32;
    pub const LT: Kind = pg_sys::BTLessStrategyNumber as i32;
    pub const LE: Kind = pg_sys::BTLessEqualStrategyNumber as i32;
    pub const EQ: Kind = pg_sys::BTEqualStrategyNumber as i32;
    pub const GE: Kind = pg_sys::BTGreaterEqualStrategyNumber as i32;
    pub const GT: Kind = pg_sys::BTGreaterStrategyNumber as i32;
}

/// A custom scan node's scan slot type: set at creation from 16
/// (`slotOps`); 15 always makes a virtual slot, replaced by
/// [`scan_slot_after_init`] when the node needs another.
///
/// # Safety
/// A node being created.
pub unsafe fn set_custom_slot_ops(css: *mut pg_sys::CustomScanState, ops: *const pg_sys::TupleTableSlotOps) {
    #[cfg(not(feature = "pg15"))]
    // SAFETY: caller's promise.
    unsafe {
        (*css).slotOps = ops;
    }
    #[cfg(feature = "pg15")]
    {
        let _ = (css, ops);
    }
}

/// On 15 only: give a custom scan node the scan slot of type `ops` that
/// 16 and later make from `slotOps`, and rebuild what ExecInitCustomScan
/// compiled against its virtual slot (the projection and the quals: an
/// expression over a virtual slot reads its values without taking the
/// tuple apart).  Called first thing in BeginCustomScan.
///
/// # Safety
/// BeginCustomScan of `css`.
pub unsafe fn scan_slot_after_init(
    css: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    ops: *const pg_sys::TupleTableSlotOps,
) {
    #[cfg(feature = "pg15")]
    // SAFETY: caller's promise.
    unsafe {
        if std::ptr::eq(ops, &raw const pg_sys::TTSOpsVirtual) {
            return;
        }
        let ss = &raw mut (*css).ss;
        let desc = (*(*ss).ss_ScanTupleSlot).tts_tupleDescriptor;
        pg_sys::ExecInitScanTupleSlot(estate, ss, desc, ops);
        let cscan = (*css).ss.ps.plan as *mut pg_sys::CustomScan;
        let varno = if !(*cscan).custom_scan_tlist.is_null() || (*cscan).scan.scanrelid == 0 {
            pg_sys::INDEX_VAR
        } else {
            (*cscan).scan.scanrelid as i32
        };
        pg_sys::ExecAssignScanProjectionInfoWithVarno(ss, varno);
        (*css).ss.ps.qual = pg_sys::ExecInitQual((*cscan).scan.plan.qual, css.cast());
    }
    #[cfg(not(feature = "pg15"))]
    {
        let _ = (css, estate, ops);
    }
}

/// Attribute `i` of a tuple descriptor (`TupleDescAttr`: a function from
/// 18, whose descriptors put compact attributes first; a macro over
/// `attrs` before).
///
/// # Safety
/// `desc` valid, `i` below its natts.
pub unsafe fn tuple_desc_attr(desc: pg_sys::TupleDesc, i: i32) -> *mut pg_sys::FormData_pg_attribute {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg18")]
        {
            pg_sys::TupleDescAttr(desc, i)
        }
        #[cfg(not(feature = "pg18"))]
        {
            (*desc).attrs.as_mut_ptr().add(i as usize)
        }
    }
}

/// Whether column `i` (0-based) of a table's descriptor `desc` (from the
/// relation cache) has a NOT NULL constraint that holds for every row:
/// from 18 a NOT NULL constraint may be NOT VALID (`attnotnull` set, rows
/// not checked), which the compact attribute tells.
///
/// # Safety
/// `desc` a relation's descriptor, `i` below its natts.
pub unsafe fn attribute_proven_not_null(desc: pg_sys::TupleDesc, i: i32) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg18")]
        {
            (*tuple_desc_attr(desc, i)).attnotnull
                && (*pg_sys::TupleDescCompactAttr(desc, i)).attnullability
                    == pg_sys::ATTNULLABLE_VALID as std::ffi::c_char
        }
        #[cfg(not(feature = "pg18"))]
        {
            (*tuple_desc_attr(desc, i)).attnotnull
        }
    }
}

/// The btree interpretations of operator `opno`: (operator family, kind,
/// left type, right type) each (`get_op_index_interpretation` from 18,
/// `get_op_btree_interpretation` before).
///
/// # Safety
/// Backend; catalog lookups.
pub unsafe fn btree_interpretations(opno: pg_sys::Oid) -> Vec<(pg_sys::Oid, cmp::Kind, pg_sys::Oid, pg_sys::Oid)> {
    // SAFETY: caller's promise; the list's cells are interpretations.
    unsafe {
        #[cfg(feature = "pg18")]
        {
            crate::pg::list::from_list(pg_sys::get_op_index_interpretation(opno))
                .into_iter()
                .map(|n| {
                    let i = &*(n as *const pg_sys::OpIndexInterpretation);
                    (i.opfamily_id, i.cmptype, i.oplefttype, i.oprighttype)
                })
                .collect()
        }
        #[cfg(not(feature = "pg18"))]
        {
            crate::pg::list::from_list(pg_sys::get_op_btree_interpretation(opno))
                .into_iter()
                .map(|n| {
                    let i = &*(n as *const pg_sys::OpBtreeInterpretation);
                    (i.opfamily_id, i.strategy, i.oplefttype, i.oprighttype)
                })
                .collect()
        }
    }
}

/// An expression walker callback.
pub type Walker = unsafe extern "C-unwind" fn(*mut pg_sys::Node, *mut std::ffi::c_void) -> bool;
/// An expression mutator callback.
pub type Mutator = unsafe extern "C-unwind" fn(*mut pg_sys::Node, *mut std::ffi::c_void) -> *mut pg_sys::Node;

/// `expression_tree_walker` (a macro over `expression_tree_walker_impl`
/// from 16, a function before).
///
/// # Safety
/// A valid expression; `f` a walker of `ctx`.
pub unsafe fn walk(node: *mut pg_sys::Node, f: Walker, ctx: *mut std::ffi::c_void) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::expression_tree_walker(node, Some(f), ctx)
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::expression_tree_walker_impl(node, Some(f), ctx)
        }
    }
}

/// `expression_tree_mutator` (as [`walk`]; 15 declares its callback
/// without a prototype).
///
/// # Safety
/// A valid expression; `f` a mutator of `ctx`.
pub unsafe fn mutate(node: *mut pg_sys::Node, f: Mutator, ctx: *mut std::ffi::c_void) -> *mut pg_sys::Node {
    // SAFETY: as walk.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            // 15 declares the callback without a prototype; it is called
            // with these two arguments
            let f = std::mem::transmute::<Mutator, unsafe extern "C-unwind" fn() -> *mut pg_sys::Node>(f);
            pg_sys::expression_tree_mutator(node, Some(f), ctx)
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::expression_tree_mutator_impl(node, Some(f), ctx)
        }
    }
}

/// Whether `transaction_timeout` fired (17 brought the setting).
///
/// # Safety
/// Backend.
pub unsafe fn transaction_timeout_pending() -> bool {
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    {
        false
    }
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    // SAFETY: a signal flag read once.
    unsafe {
        std::ptr::read_volatile(&raw const pg_sys::TransactionTimeoutPending) != 0
    }
}

/// A wait event of the extension named `name` (custom names from 17;
/// `Extension` before).
///
/// # Safety
/// A backend with shared memory.
pub unsafe fn extension_wait_event(name: &std::ffi::CStr) -> u32 {
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    {
        let _ = name;
        pg_sys::PG_WAIT_EXTENSION
    }
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    // SAFETY: caller's promise.
    unsafe {
        pg_sys::WaitEventExtensionNew(name.as_ptr())
    }
}

/// Whether the current user owns table `relid` (`object_ownercheck` from
/// 16, `pg_class_ownercheck` before).
///
/// # Safety
/// Backend.
pub unsafe fn owns_table(relid: pg_sys::Oid) -> bool {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::pg_class_ownercheck(relid, pg_sys::GetUserId())
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::object_ownercheck(pg_sys::RelationRelationId, relid, pg_sys::GetUserId())
        }
    }
}

/// What `AT TIME ZONE name` names.
pub enum TzName {
    /// An abbreviation of one fixed offset (its offset in seconds, as
    /// DecodeTimezoneName gives it).
    Fixed(i32),
    /// A full zone.
    Zone(*mut pg_sys::pg_tz),
}

/// `DecodeTimezoneName` (16 and later): None for an abbreviation whose
/// offset depends on the date, and always on 15, which has no such
/// function (named zones then stay with PostgreSQL).
///
/// # Safety
/// Backend; a name `pg_tzset` knows (DecodeTimezoneName raises for
/// others).
pub unsafe fn decode_timezone_name(name: &std::ffi::CStr) -> Option<TzName> {
    #[cfg(feature = "pg15")]
    {
        let _ = name;
        None
    }
    #[cfg(not(feature = "pg15"))]
    // SAFETY: caller's promise.
    unsafe {
        let (mut offset, mut zone) = (0, std::ptr::null_mut());
        let kind = pg_sys::DecodeTimezoneName(name.as_ptr(), &mut offset, &mut zone) as u32;
        if kind == pg_sys::TZNAME_FIXED_OFFSET {
            return Some(TzName::Fixed(offset));
        }
        (kind == pg_sys::TZNAME_ZONE && !zone.is_null()).then_some(TzName::Zone(zone))
    }
}

/// The device's number of PostgreSQL's join type `jointype`
/// (`pgstrom_runtime::join::JoinKind`, numbered as 18's JoinType), or None
/// for a type the device does not run.  16 and 17 number JOIN_RIGHT_ANTI
/// 6 (18 put JOIN_RIGHT_SEMI there); 15 has neither.
pub fn device_join_kind(jointype: pg_sys::JoinType::Type) -> Option<u32> {
    use pg_sys::JoinType as J;
    match jointype {
        J::JOIN_INNER | J::JOIN_LEFT | J::JOIN_FULL | J::JOIN_RIGHT | J::JOIN_SEMI | J::JOIN_ANTI => Some(jointype),
        #[cfg(feature = "pg18")]
        J::JOIN_RIGHT_SEMI => Some(6),
        #[cfg(not(feature = "pg15"))]
        J::JOIN_RIGHT_ANTI => Some(7),
        _ => None,
    }
}

/// `index_beginscan_bitmap` (PostgreSQL 18 adds the instrumentation
/// argument).
///
/// # Safety
/// As `index_beginscan_bitmap`.
pub unsafe fn index_beginscan_bitmap(
    index: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    nkeys: i32,
) -> pg_sys::IndexScanDesc {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16", feature = "pg17"))]
        {
            pg_sys::index_beginscan_bitmap(index, snapshot, nkeys)
        }
        #[cfg(feature = "pg18")]
        {
            pg_sys::index_beginscan_bitmap(index, snapshot, std::ptr::null_mut(), nkeys)
        }
    }
}

/// A private TID bitmap of at most `maxbytes`.
///
/// # Safety
/// A backend; freed by `tbm_free`.
pub unsafe fn tbm_create(maxbytes: usize) -> *mut pg_sys::TIDBitmap {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16", feature = "pg17"))]
        {
            pg_sys::tbm_create(maxbytes as std::ffi::c_long, std::ptr::null_mut())
        }
        #[cfg(feature = "pg18")]
        {
            pg_sys::tbm_create(maxbytes, std::ptr::null_mut())
        }
    }
}

/// Each block of a TID bitmap, ascending (exact and lossy pages alike).
///
/// # Safety
/// `tbm` is a private bitmap, not iterated before.
pub unsafe fn tbm_each_block(tbm: *mut pg_sys::TIDBitmap, f: &mut dyn FnMut(pg_sys::BlockNumber)) {
    // SAFETY: caller's promise.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16", feature = "pg17"))]
        {
            let it = pg_sys::tbm_begin_iterate(tbm);
            loop {
                let r = pg_sys::tbm_iterate(it);
                if r.is_null() {
                    break;
                }
                f((*r).blockno);
            }
            pg_sys::tbm_end_iterate(it);
        }
        #[cfg(feature = "pg18")]
        {
            let it = pg_sys::tbm_begin_private_iterate(tbm);
            let mut r = pg_sys::TBMIterateResult::default();
            while pg_sys::tbm_private_iterate(it, &mut r) {
                f(r.blockno);
            }
            pg_sys::tbm_end_private_iterate(it);
        }
    }
}
