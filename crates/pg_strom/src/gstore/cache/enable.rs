//! `pgstrom.gpu_cache_enable()`, `gpu_cache_disable()` and the state the
//! `pgstrom.gpu_cache_info` view shows.
//!
//! Enabling holds ACCESS EXCLUSIVE on the table (no writer runs, and no
//! query reads a store being replaced): the table's rows visible to the
//! latest snapshot are stored frozen, with their ctids; snapshots that do
//! not see the enabling transaction read the heap.  Rows this transaction
//! wrote are among them: the cache's entry is written in the same
//! (sub)transaction as the last of them or a deeper one, so a rollback
//! that takes them away takes the cache away too.  A partitioned table's
//! heap partitions are enabled (disabled) one by one.  Disabling drops the
//! triggers and the catalog row, and the files when the transaction
//! commits (a savepoint rolled back keeps them).

use std::cell::RefCell;
use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgstrom_runtime::store::{self, Record};

use super::{ROW_TRIGGER, TRUNCATE_TRIGGER};
use crate::errors::raise_plain;
use crate::gstore::state::{self, FROZEN_XID};

thread_local! {
    /// Caches disabled by this transaction: (table, subtransaction).
    static DROPPED: RefCell<Vec<(pg_sys::Oid, pg_sys::SubTransactionId)>> = const { RefCell::new(Vec::new()) };
}

static mut CALLBACKS: bool = false;

#[pg_guard]
unsafe extern "C-unwind" fn xact_callback(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    match event {
        pg_sys::XactEvent::XACT_EVENT_COMMIT => {
            for (relid, _) in DROPPED.with_borrow_mut(std::mem::take) {
                let (base, log) = super::paths(relid);
                let _ = std::fs::remove_file(base);
                let _ = std::fs::remove_file(log);
            }
        }
        pg_sys::XactEvent::XACT_EVENT_ABORT => DROPPED.with_borrow_mut(Vec::clear),
        _ => {}
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn subxact_callback(
    event: pg_sys::SubXactEvent::Type,
    my: pg_sys::SubTransactionId,
    parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    match event {
        pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB => DROPPED.with_borrow_mut(|d| d.retain(|&(_, s)| s != my)),
        pg_sys::SubXactEvent::SUBXACT_EVENT_COMMIT_SUB => DROPPED.with_borrow_mut(|d| {
            for e in d.iter_mut().filter(|e| e.1 == my) {
                e.1 = parent;
            }
        }),
        _ => {}
    }
}

fn register() {
    // SAFETY: once per backend.
    unsafe {
        if !CALLBACKS {
            pg_sys::RegisterXactCallback(Some(xact_callback), std::ptr::null_mut());
            pg_sys::RegisterSubXactCallback(Some(subxact_callback), std::ptr::null_mut());
            CALLBACKS = true;
        }
    }
}

unsafe fn relname(relid: pg_sys::Oid) -> String {
    // SAFETY: an existing relation.
    unsafe { CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned() }
}

/// The schema-qualified, quoted name of `relid`.
unsafe fn qualified(relid: pg_sys::Oid) -> String {
    // SAFETY: an existing relation.
    unsafe {
        let q = pg_sys::quote_qualified_identifier(
            pg_sys::get_namespace_name(pg_sys::get_rel_namespace(relid)),
            pg_sys::get_rel_name(relid),
        );
        CStr::from_ptr(q).to_string_lossy().into_owned()
    }
}

/// Open `relid` under `lockmode`, a heap table its owner calls on.
unsafe fn open_owned(relid: pg_sys::Oid, lockmode: u32) -> pg_sys::Relation {
    // SAFETY: opening checks the relation exists.
    unsafe {
        // ownership before the lock: no one else's table waits on this
        if pg_sys::get_rel_name(relid).is_null() {
            raise_plain(
                PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
                format!("relation with OID {} does not exist", relid.to_u32()),
                None,
                None,
            );
        }
        crate::gstore::require_owner(relid);
        if pg_sys::IsCatalogRelationOid(relid) {
            raise_plain(
                PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                format!("\"{}\" is a system catalog", relname(relid)),
                Some("System catalogs have no GPU cache.".into()),
                None,
            );
        }
        let rel = pg_sys::relation_open(relid, lockmode as i32);
        let kind = (*(*rel).rd_rel).relkind as u8;
        if kind != pg_sys::RELKIND_RELATION {
            raise_plain(
                PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a table", relname(relid)),
                Some(
                    "Only ordinary heap tables have a GPU cache; a gstore_fdw table is kept in the store already."
                        .into(),
                ),
                None,
            );
        }
        if (*(*rel).rd_rel).relpersistence as u8 == pg_sys::RELPERSISTENCE_TEMP {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("cannot keep a GPU cache of temporary table \"{}\"", relname(relid)),
                None,
                None,
            );
        }
        rel
    }
}

fn spi(sql: &str) {
    Spi::run(sql).unwrap_or_else(|e| {
        raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("GPU cache: {sql}: {e}"), None, None)
    });
}

/// The heap tables among the partitions of partitioned table `relid`
/// (every level), after checking ownership of the partitioned table.
fn leaves(relid: pg_sys::Oid) -> Vec<pg_sys::Oid> {
    crate::gstore::require_owner(relid);
    let sql = format!(
        "SELECT c.oid FROM pg_catalog.pg_partition_tree({}::regclass) t JOIN pg_catalog.pg_class c ON c.oid = t.relid \
          WHERE t.isleaf AND c.relkind = 'r' ORDER BY c.oid",
        relid.to_u32()
    );
    super::with_safe_path(|| {
        Spi::connect(|c| {
            c.select(&sql, None, &[])
                .map(|rows| rows.filter_map(|r| r.get::<pg_sys::Oid>(1).ok().flatten()).collect())
                .unwrap_or_default()
        })
    })
}

fn is_partitioned(relid: pg_sys::Oid) -> bool {
    // SAFETY: a syscache lookup.
    unsafe { pg_sys::get_rel_relkind(relid) == pg_sys::RELKIND_PARTITIONED_TABLE as std::ffi::c_char }
}

/// `pgstrom.gpu_cache_enable(regclass, int)`: the rows stored (of every
/// heap partition, for a partitioned table).
pub fn enable(relid: pg_sys::Oid, gpu_device_id: i32) -> i64 {
    if is_partitioned(relid) {
        return leaves(relid).into_iter().map(|leaf| enable(leaf, gpu_device_id)).sum();
    }
    register();
    if !(0..=1023).contains(&gpu_device_id) {
        raise_plain(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("gpu_device_id must be between 0 and 1023, not {gpu_device_id}"),
            None,
            None,
        );
    }
    // SAFETY: the relation opened and locked here; a scan with a
    // registered snapshot.
    unsafe {
        let rel = open_owned(relid, pg_sys::AccessExclusiveLock);
        // (the files are rewritten in place: were this transaction rolled
        // back, the dropped cache's entry would come back over them)
        if DROPPED.with_borrow(|d| d.iter().any(|&(r, _)| r == relid)) {
            raise_plain(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("the GPU cache of table \"{}\" was dropped by this transaction", relname(relid)),
                None,
                Some("Commit, then run pgstrom.gpu_cache_enable() in a new transaction."),
            );
        }
        let row_trigger = super::has_trigger(rel);
        if row_trigger && super::lookup(relid).is_some() {
            raise_plain(
                PgSqlErrorCode::ERRCODE_DUPLICATE_OBJECT,
                format!("table \"{}\" has a GPU cache already", relname(relid)),
                None,
                Some("To build it again, run pgstrom.gpu_cache_disable() first."),
            );
        }
        // the entry of a dropped table whose oid this one got again, or of
        // a cache whose triggers were dropped: gone; so are the entries of
        // dropped tables, and their files at commit
        super::as_superuser(|| spi(&format!("DELETE FROM pgstrom.gpu_cache WHERE relid = {}", relid.to_u32())));
        let gone: Vec<pg_sys::Oid> = super::as_superuser(|| {
            Spi::connect_mut(|c| {
                c.update(
                    "DELETE FROM pgstrom.gpu_cache c \
                      WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class r WHERE r.oid = c.relid) RETURNING c.relid",
                    None,
                    &[],
                )
                .map(|rows| rows.filter_map(|r| r.get::<pg_sys::Oid>(1).ok().flatten()).collect())
                .unwrap_or_default()
            })
        });
        let sub = pg_sys::GetCurrentSubTransactionId();
        DROPPED.with_borrow_mut(|d| d.extend(gone.into_iter().map(|r| (r, sub))));

        let layout = state::layout_of((*rel).rd_att);
        let mut body = Vec::new();
        Record::Layout { types: layout.clone() }.encode(&mut body);
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        let slot = pg_sys::table_slot_create(rel, std::ptr::null_mut());
        let scan = pg_sys::table_beginscan(rel, snapshot, 0, std::ptr::null_mut());
        let mut rows = 0i64;
        let ext = crate::gstore::modify::with_hidden_tid((*rel).rd_att);
        let cxt = pg_sys::AllocSetContextCreateExtended(
            pg_sys::CurrentMemoryContext,
            c"gpu cache load".as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        );
        while pg_sys::table_scan_getnextslot(scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
            let _c = crate::pg::memctx::Switched::to(cxt);
            let tid = super::trigger::tid_value(&(*slot).tts_tid);
            let bytes = crate::gstore::modify::tuple_bytes_with(slot, None, Some((tid, ext)));
            Record::Insert { xid: FROZEN_XID, cid: 0, tuple: bytes }.encode(&mut body);
            rows += 1;
            pg_sys::MemoryContextReset(cxt);
            pgrx::check_for_interrupts!();
        }
        pg_sys::table_endscan(scan);
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::UnregisterSnapshot(snapshot);
        pg_sys::MemoryContextDelete(cxt);
        let node = super::relfilenode(rel);
        // triggers without an entry (a table restored by pg_dump, whose
        // triggers came along), or one of them alone: made anew
        let truncate_trigger = super::has_trigger_named(rel, TRUNCATE_TRIGGER);
        // (DDL on a table this function holds open is refused: the lock
        // stays until commit)
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);

        let q = qualified(relid);
        if row_trigger {
            spi(&format!("DROP TRIGGER {ROW_TRIGGER} ON {q}"));
        }
        if truncate_trigger {
            spi(&format!("DROP TRIGGER {TRUNCATE_TRIGGER} ON {q}"));
        }
        spi(&format!(
            "CREATE TRIGGER {ROW_TRIGGER} AFTER INSERT OR UPDATE OR DELETE ON {q} \
             FOR EACH ROW EXECUTE FUNCTION pgstrom.gpu_cache_trigger()"
        ));
        spi(&format!(
            "CREATE TRIGGER {TRUNCATE_TRIGGER} AFTER TRUNCATE ON {q} \
             FOR EACH STATEMENT EXECUTE FUNCTION pgstrom.gpu_cache_trigger()"
        ));
        spi(&format!("ALTER TABLE {q} ENABLE ALWAYS TRIGGER {ROW_TRIGGER}"));
        spi(&format!("ALTER TABLE {q} ENABLE ALWAYS TRIGGER {TRUNCATE_TRIGGER}"));
        let full = pg_sys::GetTopFullTransactionId().value;
        // a generation no earlier cache of this table had: the engines
        // know copies by it
        let generation = full << 20;
        let (base, log) = super::paths(relid);
        let write = |path: &std::path::Path, magic, body: &[u8]| {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).unwrap_or_else(|e| io_error(dir, e));
            }
            store::write_file_atomic(path, magic, generation, state::system_id(), body)
                .unwrap_or_else(|e| io_error(path, e));
        };
        write(&base, store::BASE_MAGIC, &body);
        drop(body);
        let mut head = Vec::new();
        Record::Layout { types: layout.clone() }.encode(&mut head);
        write(&log, store::LOG_MAGIC, &head);
        let layout_sql = layout.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(",");
        super::as_superuser(|| {
            spi(&format!(
                "INSERT INTO pgstrom.gpu_cache (relid, gpu_device_id, based_xid, relfilenode, layout, trigger_xmins) \
                 SELECT {rel}, {gpu_device_id}, '{full}', {node}, '{{{layout_sql}}}', \
                        (SELECT array_agg(t.xmin::text ORDER BY t.tgname) FROM pg_catalog.pg_trigger t \
                          WHERE t.tgrelid = {rel} AND t.tgname IN ('{ROW_TRIGGER}', '{TRUNCATE_TRIGGER}'))",
                rel = relid.to_u32()
            ))
        });
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        super::invalidate(rel);
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        rows
    }
}

fn io_error(path: &std::path::Path, e: impl std::fmt::Display) -> ! {
    raise_plain(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!("could not write GPU cache file \"{}\": {e}", path.display()),
        None,
        None,
    )
}

/// `pgstrom.gpu_cache_disable(regclass)`: false when the table had no
/// cache.
pub fn disable(relid: pg_sys::Oid) -> bool {
    if is_partitioned(relid) {
        // (every partition: not an early exit at the first)
        let dropped: Vec<bool> = leaves(relid).into_iter().map(disable).collect();
        return dropped.contains(&true);
    }
    register();
    // SAFETY: the relation opened and locked here.
    unsafe {
        let rel = open_owned(relid, pg_sys::AccessExclusiveLock);
        let had = super::lookup(relid).is_some() || super::has_trigger(rel);
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        if had {
            let q = qualified(relid);
            spi(&format!("DROP TRIGGER IF EXISTS {ROW_TRIGGER} ON {q}"));
            spi(&format!("DROP TRIGGER IF EXISTS {TRUNCATE_TRIGGER} ON {q}"));
            super::as_superuser(|| spi(&format!("DELETE FROM pgstrom.gpu_cache WHERE relid = {}", relid.to_u32())));
            DROPPED.with_borrow_mut(|d| d.push((relid, pg_sys::GetCurrentSubTransactionId())));
            super::trigger::forget(relid);
            let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
            super::invalidate(rel);
            pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        }
        had
    }
}

/// A `pgstrom.gpu_cache_info` row: usable, why not, row versions, bytes
/// of rows, bytes of the redo log replayed, generation.
pub type CacheState = (bool, Option<String>, Option<i64>, Option<i64>, Option<i64>, Option<i64>);

/// The `pgstrom.gpu_cache_info` row of `relid`: whether a query may read
/// the cache (why not), and the store as this process replays it.
pub fn state_of(relid: pg_sys::Oid) -> CacheState {
    // SAFETY: the relation opened and locked here.
    unsafe {
        let lockmode = pg_sys::AccessShareLock as i32;
        let rel = pg_sys::try_relation_open(relid, lockmode);
        if rel.is_null() {
            return (false, Some("the table is gone".into()), None, None, None, None);
        }
        let out = if pg_sys::pg_class_aclcheck(relid, pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
            != pg_sys::AclResult::ACLCHECK_OK
        {
            (false, Some("permission denied".into()), None, None, None, None)
        } else {
            match super::lookup(relid) {
                None => (false, Some("no GPU cache".into()), None, None, None, None),
                Some(e) => match super::stale(rel, &e) {
                    Some(why) => (false, Some(why.into()), None, None, None, None),
                    None => {
                        super::trigger::flush_all();
                        let (n, bytes, pos, generation) = state::with_store(rel, |st| {
                            (st.rows.len() as i64, st.bytes as i64, st.log_pos as i64, st.generation as i64)
                        });
                        (true, None, Some(n), Some(bytes), Some(pos), Some(generation))
                    }
                },
            }
        };
        pg_sys::relation_close(rel, lockmode);
        out
    }
}
