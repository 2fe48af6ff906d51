//! Checkpoints of gstore_fdw tables taken in the background, so that a
//! redo log does not grow without bound.
//!
//! A statement that leaves a table's redo log larger than
//! `pg_strom.gstore_checkpoint_log_size` (once per backend and log
//! generation) starts a dynamic background worker in its database, which
//! checkpoints the table as `pgstrom.gstore_fdw_checkpoint()` does
//! ([`super::checkpoint`]).  The worker never queues for the table's lock
//! (ACCESS EXCLUSIVE would make every new query wait behind it): it takes
//! the lock only when it is free at once, trying every 100 ms for up to a
//! minute while queries or writers hold it, and then gives up with a LOG
//! line (a later write asks again).  It checks the log's size again under
//! the lock, so that of several workers asked for one log, one
//! checkpoints.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags};
use pgrx::pg_sys;
use pgrx::prelude::*;

use super::state;
use crate::guc;

thread_local! {
    /// Tables this backend asked a checkpoint of, by the log generation
    /// it asked for.
    static ASKED: RefCell<HashMap<pg_sys::Oid, u64>> = RefCell::new(HashMap::new());
}

/// How long a worker tries to take the table's lock.
const LOCK_TRIES: u32 = 600;
const LOCK_PAUSE: Duration = Duration::from_millis(100);

/// The log size that starts a background checkpoint, in bytes (None: off).
fn threshold() -> Option<u64> {
    let kb = guc::GSTORE_CHECKPOINT_LOG_SIZE.get();
    (kb > 0).then_some(kb as u64 * 1024)
}

/// After a statement wrote to `rel`: start a background checkpoint when
/// its redo log passed the threshold (once per log generation in this
/// backend).
///
/// # Safety
/// Backend; `rel` an open gstore_fdw table.
pub unsafe fn after_write(rel: pg_sys::Relation) {
    let Some(limit) = threshold() else { return };
    // the store as the statement's appends left it (each append replays
    // the log to its end): no second look at the file on the write path
    // SAFETY: caller's promise.
    let (relid, (bytes, generation)) =
        unsafe { ((*rel).rd_id, state::with_store_as_is(rel, |st| (st.log_pos, st.generation))) };
    if bytes < limit || ASKED.with_borrow(|a| a.get(&relid) == Some(&generation)) {
        return;
    }
    ASKED.with_borrow_mut(|a| a.insert(relid, generation));
    // SAFETY: the backend's database.
    let db = unsafe { pg_sys::MyDatabaseId };
    let started = BackgroundWorkerBuilder::new("pg_strom gstore_fdw checkpoint")
        .set_type("pg_strom gstore_fdw checkpoint")
        .set_library("pg_strom")
        .set_function("pgstrom_gstore_checkpoint_worker")
        .set_extra(&format!("{} {} {limit}", db.to_u32(), relid.to_u32()))
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(None)
        .load_dynamic();
    if let Err(e) = started {
        pgrx::log!(
            "gstore_fdw: could not start a background checkpoint of table {} ({e:?}; is max_worker_processes large enough?): run pgstrom.gstore_fdw_checkpoint() on it",
            relid.to_u32()
        );
    }
}

/// The background worker: checkpoint one table (`bgw_extra`: database
/// and table OIDs, and the log size of the statement that asked: its
/// session's setting).
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pgstrom_gstore_checkpoint_worker(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGTERM);
    let mut ids = BackgroundWorker::get_extra().split(' ').map(|s| s.parse::<u64>().unwrap_or(0));
    let (db, relid, limit) = (ids.next().unwrap_or(0) as u32, ids.next().unwrap_or(0) as u32, ids.next().unwrap_or(0));
    if db == 0 || relid == 0 || limit == 0 {
        return;
    }
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(pg_sys::Oid::from(db)), None);
    let relid = pg_sys::Oid::from(relid);
    let t0 = Instant::now();
    for _ in 0..LOCK_TRIES {
        if BackgroundWorker::sigterm_received() {
            return;
        }
        let done = BackgroundWorker::transaction(|| {
            // SAFETY: a transaction of this worker's database.
            unsafe { attempt(relid, limit) }
        });
        if done {
            return;
        }
        BackgroundWorker::wait_latch(Some(LOCK_PAUSE));
    }
    pgrx::log!(
        "gstore_fdw: background checkpoint of table {} gave up after {:.0} s: the table was never free of queries and writers; run pgstrom.gstore_fdw_checkpoint() on it",
        relid.to_u32(),
        t0.elapsed().as_secs_f64()
    );
}

/// One try: true when done (checkpointed, no longer needed, or the table
/// is gone), false when the table's lock was not free.
///
/// # Safety
/// Inside a transaction.
unsafe fn attempt(relid: pg_sys::Oid, limit: u64) -> bool {
    // SAFETY: caller's promise; the lock is released at the end of the
    // transaction.
    unsafe {
        if !pg_sys::ConditionalLockRelationOid(relid, pg_sys::AccessExclusiveLock as pg_sys::LOCKMODE) {
            return false;
        }
        // dropped meanwhile, or no longer a gstore_fdw table
        if pg_sys::get_rel_name(relid).is_null() || !super::is_gstore_table(relid) {
            return true;
        }
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        let before = state::with_store(rel, |st| (st.log_pos, st.generation));
        let name = std::ffi::CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned();
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        if before.0 >= limit {
            let t = Instant::now();
            let kept = super::checkpoint::checkpoint(relid);
            pgrx::log!(
                "gstore_fdw: background checkpoint of \"{name}\": redo log of generation {} ({} bytes) folded into the base file, {kept} row versions kept, in {} ms",
                before.1,
                before.0,
                t.elapsed().as_millis()
            );
        }
        pg_sys::PopActiveSnapshot();
        true
    }
}
