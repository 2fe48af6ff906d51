//! The GPU cache of ordinary heap tables: a heap table's rows kept in the
//! same store as a gstore_fdw table's (a base file and a redo log,
//! replayed by each backend, copied into the engine), in sync with the
//! heap through triggers.
//!
//! - `pgstrom.gpu_cache_enable(regclass)` ([`enable`]) writes the table's
//!   rows into a new base file, creates two triggers (`AFTER INSERT OR
//!   UPDATE OR DELETE ... FOR EACH ROW` and `AFTER TRUNCATE`, both
//!   `ENABLE ALWAYS`, so that replication and restores with
//!   `session_replication_role = replica` are logged too) and records the
//!   cache in `pgstrom.gpu_cache`.
//! - The triggers ([`trigger`]) append each change to the redo log with
//!   the writing transaction's id and command id, exactly as a gstore_fdw
//!   write does, so that the store's MVCC rules see the rows the heap's
//!   snapshot rules see.  Each stored row carries, after the table's
//!   columns, a hidden `int8` with its heap tuple's ctid: UPDATE and
//!   DELETE find the row version they end by it.
//! - A device node over the table reads the cache instead of the heap
//!   ([`usable`]) when the query is a serial SELECT whose snapshot sees
//!   the transaction that built the cache, and nothing made the cache
//!   stale: a rewrite of the table (VACUUM FULL, CLUSTER, ALTER TABLE)
//!   changes its file and ctids, a changed column changes the rows'
//!   layout, disabled or altered triggers may have missed writes.  Then
//!   the node reads the heap, and EXPLAIN says why; a write into a stale
//!   cache marks it broken (in the writer's transaction) instead of
//!   logging.  `pgstrom.gpu_cache_disable()` and `_enable()` build it
//!   again.
//!
//! Catalog reads use the latest snapshot, never a transaction's older
//! one: a REPEATABLE READ writer must not take a cache that a committed
//! TRUNCATE re-based for stale; each process keeps what it read until the
//! table's relation cache entry is invalidated.  Catalog writes run as the
//! bootstrap superuser (only this module's functions and triggers write
//! the table).

pub mod enable;
pub mod trigger;

use std::path::PathBuf;

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::options::TableOptions;
use super::state;

/// The triggers' names.
pub const ROW_TRIGGER: &str = "pgstrom_gpu_cache_row";
pub const TRUNCATE_TRIGGER: &str = "pgstrom_gpu_cache_truncate";

/// A table's row of `pgstrom.gpu_cache`, with what the catalogs say of
/// its triggers now.
#[derive(Clone, Debug)]
pub struct Entry {
    pub gpu_device_id: i32,
    /// The transaction that built the cache, or re-based it with a
    /// TRUNCATE: snapshots that do not see it read the heap.
    pub based_xid: u64,
    /// The heap's file when the cache was (re-)based.
    pub relfilenode: u32,
    /// Column type ids (0: dropped) the stored rows were written with.
    pub layout: Vec<u32>,
    /// A write found the cache stale and logged nothing.
    pub broken: bool,
    /// Both triggers exist, fire always, and were not altered since the
    /// cache was built.
    pub triggers_ok: bool,
}

/// Does `rel` have the row trigger of a GPU cache (a cheap test of the
/// relation cache, before the catalog is read)?
///
/// # Safety
/// An open relation.
pub unsafe fn has_trigger(rel: pg_sys::Relation) -> bool {
    // SAFETY: caller's promise.
    unsafe { has_trigger_named(rel, ROW_TRIGGER) }
}

/// Does `rel` have a trigger of this name?
///
/// # Safety
/// An open relation.
pub unsafe fn has_trigger_named(rel: pg_sys::Relation, name: &str) -> bool {
    // SAFETY: caller's promise; the trigger descriptor lives in the
    // relation cache entry.
    unsafe {
        let td = (*rel).trigdesc;
        if td.is_null() {
            return false;
        }
        (0..(*td).numtriggers as usize).any(|i| {
            let t = (*td).triggers.add(i);
            std::ffi::CStr::from_ptr((*t).tgname).to_bytes() == name.as_bytes()
        })
    }
}

/// The cache's files: `$PGDATA/pg_strom/gpu_cache/<database>/<relid>.base`
/// and `.redo`.
pub fn paths(relid: pg_sys::Oid) -> (PathBuf, PathBuf) {
    // SAFETY: DataDir and MyDatabaseId are set in every backend.
    let (dir, db) = unsafe {
        (std::ffi::CStr::from_ptr(pg_sys::DataDir).to_string_lossy().into_owned(), pg_sys::MyDatabaseId.to_u32())
    };
    let d = PathBuf::from(dir).join("pg_strom").join("gpu_cache").join(db.to_string());
    (d.join(format!("{}.base", relid.to_u32())), d.join(format!("{}.redo", relid.to_u32())))
}

/// The store options of a cached heap table: its files (no catalog
/// read: every use of the store asks; the GPU is [`lookup`]'s).
pub fn options_of(relid: pg_sys::Oid) -> TableOptions {
    let (base, log) = paths(relid);
    TableOptions {
        base_file: base.to_string_lossy().into_owned(),
        redo_log_file: log.to_string_lossy().into_owned(),
        gpu_device_id: 0,
        max_num_rows: i64::MAX,
        primary_key: None,
        heap_cache: true,
    }
}

/// Is `relid` a heap table (the kind a GPU cache may belong to)?
pub fn is_heap_table(relid: pg_sys::Oid) -> bool {
    // SAFETY: a syscache lookup.
    unsafe { pg_sys::get_rel_relkind(relid) == pg_sys::RELKIND_RELATION as std::ffi::c_char }
}

/// Does the planner plan heap table `relid` as read from its GPU cache
/// (a cache that is not stale; the executor checks the query's snapshot
/// again): serial device paths, priced as a GPU store's.  A relation
/// cache probe for tables without one; [`lookup`]'s kept entry for those
/// with one.
pub fn planned(relid: pg_sys::Oid) -> bool {
    if !is_heap_table(relid) {
        return false;
    }
    // SAFETY: the planner holds a lock on the relations it plans.
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return false;
        }
        if !has_trigger(rel) {
            pg_sys::RelationClose(rel);
            return false;
        }
        let out = lookup(relid).is_some_and(|e| stale(rel, &e).is_none());
        pg_sys::RelationClose(rel);
        out
    }
}

thread_local! {
    /// [`lookup`]'s answers, by table, until the table's relation cache
    /// entry is invalidated: every change of a table's entry comes with
    /// one (the triggers created, dropped or altered, TRUNCATE, and
    /// [`invalidate`] where nothing else sends one), and each lookup takes
    /// in the committed ones first.
    static MEMO: std::cell::RefCell<std::collections::HashMap<pg_sys::Oid, Option<Entry>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

static mut MEMO_CALLBACK: bool = false;

#[pg_guard]
unsafe extern "C-unwind" fn relcache_callback(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    MEMO.with_borrow_mut(|m| {
        if relid == pg_sys::InvalidOid {
            m.clear();
        } else {
            m.remove(&relid);
        }
    });
}

#[pg_guard]
unsafe extern "C-unwind" fn memo_xact_callback(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    // (an aborted transaction's own changes of an entry: read again)
    if matches!(event, pg_sys::XactEvent::XACT_EVENT_ABORT | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT) {
        MEMO.with_borrow_mut(std::collections::HashMap::clear);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn memo_subxact_callback(
    event: pg_sys::SubXactEvent::Type,
    _my: pg_sys::SubTransactionId,
    _parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    if event == pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB {
        MEMO.with_borrow_mut(std::collections::HashMap::clear);
    }
}

/// Make every process read the entry of `rel` again (this one at once,
/// the others when this transaction commits).
///
/// # Safety
/// An open relation.
pub unsafe fn invalidate(rel: pg_sys::Relation) {
    // SAFETY: caller's promise.
    unsafe { pg_sys::CacheInvalidateRelcache(rel) };
    // SAFETY: as above.
    let relid = unsafe { (*rel).rd_id };
    MEMO.with_borrow_mut(|m| m.remove(&relid));
}

/// The catalog's entry of `relid`, read with the latest snapshot (once
/// per relation cache invalidation: `MEMO`); None when the table has no
/// cache (or the extension's table is not there), and in parallel mode,
/// which takes no new snapshot: a parallel worker reads the heap (the
/// leader decided for itself at its executor start, before parallel mode
/// began).
pub fn lookup(relid: pg_sys::Oid) -> Option<Entry> {
    // SAFETY: a backend's transaction state.
    if unsafe { pg_sys::IsInParallelMode() } {
        return None;
    }
    // what other transactions committed meanwhile (a process that holds
    // its lock on the table since an earlier statement took in none: a
    // trigger disabled by ALTER TABLE, which does not wait for readers,
    // and the writes it then missed, would go unseen)
    // SAFETY: a backend in a transaction, as at any lock acquisition.
    unsafe { pg_sys::AcceptInvalidationMessages() };
    if let Some(known) = MEMO.with_borrow(|m| m.get(&relid).cloned()) {
        return known;
    }
    // SAFETY: once per backend.
    unsafe {
        if !MEMO_CALLBACK {
            pg_sys::CacheRegisterRelcacheCallback(Some(relcache_callback), pg_sys::Datum::from(0));
            pg_sys::RegisterXactCallback(Some(memo_xact_callback), std::ptr::null_mut());
            pg_sys::RegisterSubXactCallback(Some(memo_subxact_callback), std::ptr::null_mut());
            MEMO_CALLBACK = true;
        }
    }
    let out = read_entry(relid);
    MEMO.with_borrow_mut(|m| m.insert(relid, out.clone()));
    out
}

/// [`lookup`]'s catalog read.
fn read_entry(relid: pg_sys::Oid) -> Option<Entry> {
    let sql = format!(
        "SELECT c.gpu_device_id, c.based_xid::text, c.relfilenode::bigint, c.layout::bigint[], c.broken, \
                (SELECT array_agg(t.xmin::text ORDER BY t.tgname) FROM pg_catalog.pg_trigger t \
                  WHERE t.tgrelid = c.relid AND t.tgname IN ('{ROW_TRIGGER}', '{TRUNCATE_TRIGGER}') \
                    AND t.tgenabled = 'A') IS NOT DISTINCT FROM c.trigger_xmins \
           FROM pgstrom.gpu_cache c WHERE c.relid = {}",
        relid.to_u32()
    );
    // SAFETY: a snapshot pushed and popped around a read-only query.
    unsafe {
        pg_sys::PushActiveSnapshot(pg_sys::GetLatestSnapshot());
    }
    let out = with_safe_path(|| {
        Spi::connect(|c| {
            let rows = c.select(&sql, Some(1), &[]).ok()?;
            let r = rows.first();
            let gpu = r.get::<i32>(1).ok().flatten()?;
            let xid = r.get::<String>(2).ok().flatten()?.parse::<u64>().ok()?;
            let node = r.get::<i64>(3).ok().flatten()?;
            let layout = r.get::<Vec<i64>>(4).ok().flatten()?;
            let broken = r.get::<bool>(5).ok().flatten()?;
            let triggers_ok = r.get::<bool>(6).ok().flatten().unwrap_or(false);
            Some(Entry {
                gpu_device_id: gpu,
                based_xid: xid,
                relfilenode: node as u32,
                layout: layout.into_iter().map(|t| t as u32).collect(),
                broken,
                triggers_ok,
            })
        })
    });
    // SAFETY: the snapshot pushed above.
    unsafe { pg_sys::PopActiveSnapshot() };
    out
}

/// Run `f` (this module's SQL) with `search_path` set to `pg_catalog,
/// pg_temp`: no function or operator a user created is taken for the
/// catalog's (a hostile path could otherwise make a writer's trigger find
/// no cache and leave its writes out of it, or run a user's function as
/// the superuser in [`as_superuser`]).
pub fn with_safe_path<T>(f: impl FnOnce() -> T) -> T {
    crate::pg::with_settings(&[(c"search_path", c"pg_catalog, pg_temp")], f)
}

/// Run `f` as the bootstrap superuser (the catalog's writes), with
/// [`with_safe_path`]'s `search_path`.
pub fn as_superuser<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: the user id switched and restored as PostgreSQL's own
    // referential-integrity triggers do; an ERROR restores it at abort.
    unsafe {
        let (mut uid, mut ctx) = (pg_sys::InvalidOid, 0);
        pg_sys::GetUserIdAndSecContext(&mut uid, &mut ctx);
        pg_sys::SetUserIdAndSecContext(
            pg_sys::Oid::from(pg_sys::BOOTSTRAP_SUPERUSERID),
            ctx | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32 | pg_sys::SECURITY_NOFORCE_RLS as i32,
        );
        let out = with_safe_path(f);
        pg_sys::SetUserIdAndSecContext(uid, ctx);
        out
    }
}

/// The heap file of `rel` now.
///
/// # Safety
/// An open relation.
pub unsafe fn relfilenode(rel: pg_sys::Relation) -> u32 {
    // SAFETY: caller's promise.
    unsafe { (*(*rel).rd_rel).relfilenode.to_u32() }
}

/// Why the cache of `rel` is stale for every query (None: it is not).
///
/// # Safety
/// An open relation.
pub unsafe fn stale(rel: pg_sys::Relation, e: &Entry) -> Option<&'static str> {
    // SAFETY: caller's promise.
    unsafe {
        if e.broken {
            Some("a write found it stale")
        } else if !e.triggers_ok {
            Some("its triggers were disabled, dropped or altered")
        } else if relfilenode(rel) != e.relfilenode {
            Some("the table was rewritten (VACUUM FULL, CLUSTER or ALTER TABLE)")
        } else if state::layout_of((*rel).rd_att) != e.layout {
            Some("the table's columns changed")
        } else {
            None
        }
    }
}

/// Whether a device node reads a heap table's GPU cache: Ok when it does,
/// Err(why not) when the table has a cache the node does not read, None
/// when it has none.
pub type Choice = Option<Result<(), String>>;

/// [`Choice`] of a device node over relation `rel` (asked once per node
/// and executor start: a later answer may differ).
///
/// # Safety
/// Executor start of `node` (a scan node over `rel`).
pub unsafe fn usable(node: *mut pg_sys::CustomScanState, rel: pg_sys::Relation) -> Choice {
    // SAFETY: caller's promise.
    unsafe {
        if !has_trigger(rel) {
            return None;
        }
        let e = lookup((*rel).rd_id)?;
        if let Some(why) = stale(rel, &e) {
            return Some(Err(format!("stale: {why}")));
        }
        let estate = (*node).ss.ps.state;
        let stmt = (*estate).es_plannedstmt;
        if (*(*node).ss.ps.plan).parallel_aware {
            return Some(Err("a parallel scan reads the heap".into()));
        }
        if !stmt.is_null() && ((*stmt).commandType != pg_sys::CmdType::CMD_SELECT || !(*stmt).rowMarks.is_null()) {
            return Some(Err("the statement writes or locks rows".into()));
        }
        // (a transaction older than any snapshot's horizon can be: seen)
        let next_full = pg_sys::ReadNextFullTransactionId().value;
        let mut vis = state::Visibility::new((*estate).es_snapshot);
        if next_full.saturating_sub(e.based_xid) < 1 << 30 {
            match vis.seen(e.based_xid) {
                state::Seen::Committed => {}
                // built in this transaction: from the latest snapshot, which
                // a REPEATABLE READ snapshot may not be
                state::Seen::Current if pg_sys::XactIsoLevel < pg_sys::XACT_REPEATABLE_READ as i32 => {}
                state::Seen::Current => {
                    return Some(Err("built by this transaction after its snapshot was taken".into()));
                }
                _ => return Some(Err("the query's snapshot is older than the cache".into())),
            }
        }
        // this transaction's own writes, gathered by the triggers
        trigger::flush_all();
        Some(Ok(()))
    }
}

#[pg_schema]
mod pgstrom {
    use super::*;

    /// Build (or rebuild) the GPU cache of a heap table; the rows stored.
    #[pg_extern(volatile, parallel_unsafe)]
    fn gpu_cache_enable_oid(rel: pg_sys::Oid, gpu_device_id: i32) -> i64 {
        enable::enable(rel, gpu_device_id)
    }

    /// Drop the GPU cache of a heap table.
    #[pg_extern(volatile, parallel_unsafe)]
    fn gpu_cache_disable_oid(rel: pg_sys::Oid) -> bool {
        enable::disable(rel)
    }

    /// The state of a table's GPU cache as this process replays it (not in
    /// parallel workers: they take no new snapshot to read the catalog).
    #[allow(clippy::type_complexity)]
    #[pg_extern(volatile, parallel_restricted)]
    fn gpu_cache_state_oid(
        rel: pg_sys::Oid,
    ) -> TableIterator<
        'static,
        (
            name!(usable, bool),
            name!(why_not, Option<String>),
            name!(row_versions, Option<i64>),
            name!(bytes, Option<i64>),
            name!(redo_log_bytes, Option<i64>),
            name!(generation, Option<i64>),
        ),
    > {
        TableIterator::new(vec![enable::state_of(rel)])
    }

    /// The GPU cache's trigger.
    #[pg_trigger]
    fn gpu_cache_trigger<'a>(
        t: &'a pgrx::PgTrigger<'a>,
    ) -> Result<Option<PgHeapTuple<'a, pgrx::AllocatedByPostgres>>, std::convert::Infallible> {
        // SAFETY: PostgreSQL's trigger call.
        unsafe { trigger::fire(t.trigger_data()) };
        Ok(None)
    }
}

extension_sql!(
    r#"
CREATE TABLE pgstrom.gpu_cache (
  relid oid PRIMARY KEY,
  gpu_device_id int NOT NULL,
  based_xid xid8 NOT NULL,
  relfilenode oid NOT NULL,
  layout oid[] NOT NULL,
  trigger_xmins text[],
  broken bool NOT NULL DEFAULT false
);
REVOKE ALL ON pgstrom.gpu_cache FROM PUBLIC;
GRANT SELECT ON pgstrom.gpu_cache TO PUBLIC;
COMMENT ON TABLE pgstrom.gpu_cache IS 'heap tables with a GPU cache (pg_strom; written by pgstrom.gpu_cache_enable and its triggers)';

CREATE FUNCTION pgstrom.gpu_cache_enable(rel regclass, gpu_device_id int DEFAULT 0) RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT pgstrom.gpu_cache_enable_oid(rel, gpu_device_id) $$;
COMMENT ON FUNCTION pgstrom.gpu_cache_enable(regclass, int) IS
  'keep a columnar copy of a heap table in the GPU store, in sync through triggers; returns the rows stored';

CREATE FUNCTION pgstrom.gpu_cache_disable(rel regclass) RETURNS bool
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT pgstrom.gpu_cache_disable_oid(rel) $$;
COMMENT ON FUNCTION pgstrom.gpu_cache_disable(regclass) IS
  'drop a heap table''s GPU cache, its triggers and its files';

CREATE VIEW pgstrom.gpu_cache_info AS
  SELECT c.relid::regclass AS relation, c.gpu_device_id, c.based_xid, s.*
    FROM pgstrom.gpu_cache c, LATERAL pgstrom.gpu_cache_state_oid(c.relid) s
   WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = c.relid);
GRANT SELECT ON pgstrom.gpu_cache_info TO PUBLIC;
COMMENT ON VIEW pgstrom.gpu_cache_info IS 'heap tables with a GPU cache, and whether queries can read it';
"#,
    name = "gpu_cache",
    requires = [
        pgstrom::gpu_cache_enable_oid,
        pgstrom::gpu_cache_disable_oid,
        pgstrom::gpu_cache_state_oid,
        pgstrom::gpu_cache_trigger
    ]
);
