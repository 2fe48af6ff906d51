//! The GPU cache's triggers: each heap change appended to the cache's
//! redo log as a gstore_fdw write would append it.
//!
//! - INSERT (and the new version of an UPDATE): an Insert record of the
//!   row, its hidden ctid column set, with the inserting transaction and
//!   the command id from the heap tuple's header (so that the store's
//!   MVCC rules match the heap's even when another trigger ran commands
//!   in between).
//! - DELETE (and the old version of an UPDATE): a Delete record of the
//!   row version the old tuple's ctid names (the latest one stored with
//!   it: a ctid is reused only after the version before was pruned),
//!   with the deleting transaction and command from the old tuple's
//!   header.
//!
//! Changes are gathered per table, in order, and appended in batches
//! under the log's lock, where each deletion's ctid is resolved to a row
//! version (of the rows replayed, or an insert of the same batch): when a
//! batch is large, before a query of this backend reads a cache, before a
//! TRUNCATE, and before commit.
//! - TRUNCATE: a Truncate record, and the cache re-based on the new heap
//!   file (`pgstrom.gpu_cache`'s `relfilenode` and `based_xid`, in the
//!   truncating transaction).
//!
//! A cache found stale (the table rewritten, its columns changed) is
//! marked broken in the writer's transaction instead: readers then read
//! the heap until `pgstrom.gpu_cache_enable()` rebuilds it.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgstrom_runtime::store::Record;

use super::Entry;
use crate::errors::raise_plain;
use crate::gstore::modify::{self, LogLock};
use crate::gstore::state;

/// Gathered records are appended past this many bytes.
const BATCH_BYTES: usize = 1 << 20;

/// A gathered change, in order.
enum Op {
    /// Insert records up to this end of `Pending::body`, the last one of a
    /// heap tuple at this ctid.
    Insert { end: usize, tid: i64 },
    /// The end of the row version stored with this ctid.
    Delete { tid: i64, xid: u64, cid: u32, updated: bool },
}

/// A table's gathered changes (its catalog entry is `super::lookup`'s,
/// read again after an invalidation, a rolled back (sub)transaction
/// included).
struct Pending {
    /// The relation's descriptor with the hidden ctid column (in the
    /// transaction's memory; built for the entry's layout).
    ext: pg_sys::TupleDesc,
    /// Encoded Insert records.
    body: Vec<u8>,
    ops: Vec<Op>,
}

impl Pending {
    fn new() -> Pending {
        Pending { ext: std::ptr::null_mut(), body: Vec::new(), ops: Vec::new() }
    }

    fn bytes(&self) -> usize {
        self.body.len() + self.ops.len() * 32
    }
}

thread_local! {
    static PENDING: RefCell<HashMap<pg_sys::Oid, Pending>> = RefCell::new(HashMap::new());
}

static mut CALLBACK: bool = false;

#[pg_guard]
unsafe extern "C-unwind" fn xact_callback(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    match event {
        pg_sys::XactEvent::XACT_EVENT_PRE_COMMIT | pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE => {
            flush_all();
            modify::sync_dirty();
            PENDING.with_borrow_mut(HashMap::clear);
        }
        pg_sys::XactEvent::XACT_EVENT_ABORT | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT => {
            PENDING.with_borrow_mut(HashMap::clear);
        }
        _ => {}
    }
}

/// The hidden column's value of a ctid.
pub fn tid_value(t: &pg_sys::ItemPointerData) -> i64 {
    let block = ((t.ip_blkid.bi_hi as i64) << 16) | t.ip_blkid.bi_lo as i64;
    (block << 16) | t.ip_posid as i64
}

/// The ctid of a hidden column's value.
pub fn tid_of(v: i64) -> pg_sys::ItemPointerData {
    let mut t = pg_sys::ItemPointerData::default();
    let block = (v >> 16) as u32;
    t.ip_blkid.bi_hi = (block >> 16) as u16;
    t.ip_blkid.bi_lo = block as u16;
    t.ip_posid = v as u16;
    t
}

/// Append every table's gathered inserts (before a read of this backend
/// and before commit).
pub fn flush_all() {
    let relids: Vec<pg_sys::Oid> =
        PENDING.with_borrow(|p| p.iter().filter(|(_, v)| !v.ops.is_empty()).map(|(k, _)| *k).collect());
    for relid in relids {
        // SAFETY: the table this transaction wrote holds its lock.
        unsafe {
            // (dropped by this transaction after it wrote: nothing to keep)
            let rel = pg_sys::try_relation_open(relid, pg_sys::NoLock as i32);
            if rel.is_null() {
                PENDING.with_borrow_mut(|p| p.remove(&relid));
                continue;
            }
            append(rel);
            pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        }
    }
}

/// Forget what this transaction gathered for `relid` (its cache is being
/// dropped).
pub fn forget(relid: pg_sys::Oid) {
    PENDING.with_borrow_mut(|p| p.remove(&relid));
}

/// Append the gathered changes of `rel`, under the log's lock: each
/// deletion names the row version its ctid was last stored with (among
/// the rows replayed, or the inserts of this batch).
///
/// # Safety
/// An open, cached table.
unsafe fn append(rel: pg_sys::Relation) {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let Some((body, ops)) = PENDING
            .with_borrow_mut(|p| p.get_mut(&relid).map(|v| (std::mem::take(&mut v.body), std::mem::take(&mut v.ops))))
        else {
            return;
        };
        if ops.is_empty() {
            return;
        }
        let layout = state::layout_of((*rel).rd_att);
        let missing = state::with_store(rel, |st| {
            let lock = LogLock::acquire(st, &layout);
            let first = st.rows.len() as u64;
            let mut out = Vec::with_capacity(body.len() + ops.len() * 32);
            let mut fresh: HashMap<i64, u64> = HashMap::new();
            let (mut from, mut n) = (0usize, 0u64);
            for op in &ops {
                match *op {
                    Op::Insert { end, tid } => {
                        out.extend_from_slice(&body[from..end]);
                        from = end;
                        fresh.insert(tid, first + n);
                        n += 1;
                    }
                    Op::Delete { tid, xid, cid, updated } => {
                        let row = fresh.get(&tid).copied().or_else(|| {
                            let index = st.key.as_ref()?;
                            st.rows_with_key(index, &tid.to_ne_bytes()).last()
                        });
                        let Some(row) = row else { return Some(tid) };
                        Record::Delete { xid, cid, row, updated }.encode(&mut out);
                    }
                }
            }
            lock.append(st, &out);
            None
        });
        if let Some(tid) = missing {
            raise_plain(
                PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                format!(
                    "the GPU cache of \"{}\" holds no row at ctid ({},{})",
                    std::ffi::CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy(),
                    tid >> 16,
                    tid & 0xffff
                ),
                None,
                Some(
                    "pgstrom.gpu_cache_disable() lets the write go through; pgstrom.gpu_cache_enable() builds the cache again.",
                ),
            );
        }
        crate::gstore::autockpt::after_write(rel);
    }
}

/// Gather `op` (with `record`'s bytes for an insert) for `rel`, appending
/// when the batch is large.
///
/// # Safety
/// An open, cached table whose entry [`entry`] read.
unsafe fn gather(rel: pg_sys::Relation, op: Op, record: &[u8]) {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let full = PENDING.with_borrow_mut(|p| {
            let v = p.entry(relid).or_insert_with(Pending::new);
            v.body.extend_from_slice(record);
            v.ops.push(match op {
                Op::Insert { tid, .. } => Op::Insert { end: v.body.len(), tid },
                d => d,
            });
            v.bytes() >= BATCH_BYTES
        });
        if full {
            append(rel);
        }
    }
}

/// The entry of `rel` for this transaction's writes: None when the table
/// has no cache, or it is broken (then nothing is logged).
///
/// # Safety
/// An open relation, in a trigger.
unsafe fn entry(rel: pg_sys::Relation) -> Option<Entry> {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        if !CALLBACK {
            pg_sys::RegisterXactCallback(Some(xact_callback), std::ptr::null_mut());
            CALLBACK = true;
        }
        let e = super::lookup(relid)?;
        if e.broken {
            return None;
        }
        // the table's file and columns, at every row (an ALTER TABLE of
        // this transaction may have changed them)
        if super::relfilenode(rel) != e.relfilenode || state::layout_of((*rel).rd_att) != e.layout {
            mark_broken(rel);
            return None;
        }
        Some(e)
    }
}

/// Mark the cache of `rel` broken in this transaction.
///
/// # Safety
/// An open relation.
unsafe fn mark_broken(rel: pg_sys::Relation) {
    // SAFETY: caller's promise.
    let relid = unsafe { (*rel).rd_id };
    super::as_superuser(|| {
        Spi::run(&format!("UPDATE pgstrom.gpu_cache SET broken = true WHERE relid = {}", relid.to_u32()))
            .unwrap_or_else(|e| internal(format!("could not mark the GPU cache broken: {e}")));
    });
    // SAFETY: caller's promise.
    unsafe { super::invalidate(rel) };
    // (what was gathered before stays: were the marking rolled back with
    // a savepoint, those writes belong in the cache)
}

fn internal(msg: String) -> ! {
    raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, msg, None, None)
}

/// The writing transaction's full id (durable in the WAL), and the check
/// that it wrote the heap tuple `xid`.
fn writer(xid: pg_sys::TransactionId) -> u64 {
    let (full, _) = modify::writer_ids();
    if full as u32 != u32::from(xid) {
        internal(format!("a GPU cache trigger saw transaction {xid:?} write a row, not {full}"));
    }
    full
}

/// The trigger.
///
/// # Safety
/// Called by PostgreSQL as a trigger.
pub unsafe fn fire(td: &pg_sys::TriggerData) {
    // SAFETY: caller's promise: the trigger data's relation and tuples are
    // valid for the call.
    unsafe {
        let ev = td.tg_event;
        if ev & pg_sys::TRIGGER_EVENT_TIMINGMASK != pg_sys::TRIGGER_EVENT_AFTER {
            raise_plain(
                PgSqlErrorCode::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED,
                "pgstrom.gpu_cache_trigger() must be an AFTER trigger".into(),
                None,
                Some("pgstrom.gpu_cache_enable() creates its triggers."),
            );
        }
        let rel = td.tg_relation;
        let op = ev & pg_sys::TRIGGER_EVENT_OPMASK;
        if op == pg_sys::TRIGGER_EVENT_TRUNCATE {
            return truncate(rel);
        }
        if ev & pg_sys::TRIGGER_EVENT_ROW == 0 {
            return;
        }
        if entry(rel).is_none() {
            return;
        }
        if op == pg_sys::TRIGGER_EVENT_DELETE || op == pg_sys::TRIGGER_EVENT_UPDATE {
            let old = td.tg_trigtuple;
            let hdr = (*old).t_data;
            let xmax = if (*hdr).t_infomask & pg_sys::HEAP_XMAX_IS_MULTI as u16 != 0 {
                pg_sys::HeapTupleGetUpdateXid(hdr)
            } else {
                (*hdr).t_choice.t_heap.t_xmax
            };
            let xid = writer(xmax);
            let cid = pg_sys::HeapTupleHeaderGetCmax(hdr);
            let updated = op == pg_sys::TRIGGER_EVENT_UPDATE;
            gather(rel, Op::Delete { tid: tid_value(&(*old).t_self), xid, cid, updated }, &[]);
            if updated {
                insert(rel, td.tg_newslot, td.tg_newtuple);
            }
        } else {
            insert(rel, td.tg_trigslot, td.tg_trigtuple);
        }
    }
}

/// Gather the insert of heap tuple `tuple` (whose values `slot` holds).
///
/// # Safety
/// The trigger's relation, new tuple and slot.
unsafe fn insert(rel: pg_sys::Relation, slot: *mut pg_sys::TupleTableSlot, tuple: pg_sys::HeapTuple) {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let mut ext = PENDING.with_borrow(|p| p.get(&relid).map_or(std::ptr::null_mut(), |v| v.ext));
        if ext.is_null() {
            let _c = crate::pg::memctx::Switched::to(pg_sys::TopTransactionContext);
            ext = modify::with_hidden_tid((*rel).rd_att);
            PENDING.with_borrow_mut(|p| p.entry(relid).or_insert_with(Pending::new).ext = ext);
        }
        let mut record = Vec::new();
        let tid = tid_value(&(*tuple).t_self);
        insert_record(slot, tuple, ext, &mut record);
        gather(rel, Op::Insert { end: 0, tid }, &record);
    }
}

/// An Insert record of the heap tuple `tuple` (whose values `slot` holds).
///
/// # Safety
/// The trigger's new tuple and slot.
unsafe fn insert_record(
    slot: *mut pg_sys::TupleTableSlot,
    tuple: pg_sys::HeapTuple,
    ext: pg_sys::TupleDesc,
    body: &mut Vec<u8>,
) {
    // SAFETY: caller's promise.
    unsafe {
        let hdr = (*tuple).t_data;
        let full = writer((*hdr).t_choice.t_heap.t_xmin);
        let cid = pg_sys::HeapTupleHeaderGetCmin(hdr);
        let bytes = modify::tuple_bytes_with(slot, None, Some((tid_value(&(*tuple).t_self), ext)));
        Record::Insert { xid: full, cid, tuple: bytes }.encode(body);
    }
}

/// TRUNCATE: a Truncate record, and the cache re-based on the new file.
///
/// # Safety
/// The trigger's relation.
unsafe fn truncate(rel: pg_sys::Relation) {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        // this transaction's gathered inserts come before the Truncate
        // record; then a fresh look (the relation's file changed)
        if PENDING.with_borrow(|p| p.get(&relid).is_some_and(|v| !v.ops.is_empty())) {
            append(rel);
        }
        PENDING.with_borrow_mut(|p| p.remove(&relid));
        let Some(e) = super::lookup(relid) else { return };
        if state::layout_of((*rel).rd_att) != e.layout {
            if !e.broken {
                mark_broken(rel);
            }
            return;
        }
        // (the rows before it are hidden from every snapshot that reads
        // the cache from now on: a broken cache is sound again)
        let (full, cid) = modify::writer_ids();
        let mut body = Vec::new();
        Record::Truncate { xid: full, cid }.encode(&mut body);
        let layout = e.layout.clone();
        state::with_store(rel, |st| {
            let lock = LogLock::acquire(st, &layout);
            lock.append(st, &body);
        });
        let node = super::relfilenode(rel);
        super::as_superuser(|| {
            Spi::run(&format!(
                "UPDATE pgstrom.gpu_cache SET relfilenode = {node}, based_xid = '{full}', broken = false \
                 WHERE relid = {}",
                relid.to_u32()
            ))
            .unwrap_or_else(|e| internal(format!("could not re-base the GPU cache: {e}")));
        });
        super::invalidate(rel);
    }
}
