//! Checkpoints of gstore_fdw tables (and of heap tables' GPU caches,
//! `super::cache`) taken in the background, so that a redo log does not
//! grow without bound.
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
//!
//! A statement that leaves anything in a log also makes sure the
//! database's checkpoint timer runs (once per backend, table and log
//! generation): one worker per database that watches every gstore_fdw
//! table's redo log (its size and modification time, nothing else) and
//! checkpoints each table whose log has not been written for
//! `pg_strom.gstore_checkpoint_timeout`, so that a table written to and
//! then left alone is not replayed from its log at every load.  It ends
//! when no log holds anything.  One timer per database: a session
//! advisory lock (`pg_locks`: classid 1346851668 = 0x50475354, objid 0,
//! objsubid 3) that a writer probes before it starts one.
//!
//! Both kinds of worker make room for a session that waits to drop the
//! database, to copy it (`CREATE DATABASE ... TEMPLATE`), or to rename or
//! move it: PostgreSQL waits 5 s for the database's other sessions to go
//! and then fails, and a timer stays for minutes.  Every second (a timer)
//! or every try (a checkpoint waiting for its table) a worker looks for a
//! lock on the database that a new connection would wait for, and ends
//! when there is one; the next write starts a timer again.

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
    /// Tables whose timer this backend made sure of, by log generation.
    static ARMED: RefCell<HashMap<pg_sys::Oid, u64>> = RefCell::new(HashMap::new());
}

/// The second key of a timer's advisory lock ("PGST"), and its kind
/// (objsubid: 1 and 2 are SQL's advisory locks).
const TIMER_KEY: u32 = 0x5047_5354;
const TIMER_LOCK_KIND: u16 = 3;

/// How long a worker tries to take the table's lock.
const LOCK_TRIES: u32 = 600;
const LOCK_PAUSE: Duration = Duration::from_millis(100);
/// How often a waiting timer looks whether a session waits for its
/// database (PostgreSQL waits 5 s for it).
const TIMER_SLICE: Duration = Duration::from_secs(1);

/// The log size that starts a background checkpoint, in bytes (None: off).
fn threshold() -> Option<u64> {
    let kb = guc::GSTORE_CHECKPOINT_LOG_SIZE.get();
    (kb > 0).then_some(kb as u64 * 1024)
}

/// The idle time that starts a background checkpoint (None: off).
fn timeout() -> Option<Duration> {
    let s = guc::GSTORE_CHECKPOINT_TIMEOUT.get();
    (s > 0).then_some(Duration::from_secs(s as u64))
}

/// After a statement wrote to `rel`: start a background checkpoint when
/// its redo log passed the threshold, and arm the timer while the log
/// holds anything (each once per log generation in this backend).
///
/// # Safety
/// Backend; `rel` an open gstore_fdw table.
pub unsafe fn after_write(rel: pg_sys::Relation) {
    let (limit, idle) = (threshold(), timeout());
    if limit.is_none() && idle.is_none() {
        return;
    }
    // the store as the statement's appends left it (each append replays
    // the log to its end): no second look at the file on the write path
    // SAFETY: caller's promise.
    let (relid, (bytes, generation)) =
        unsafe { ((*rel).rd_id, state::with_store_as_is(rel, |st| (st.log_pos, st.generation))) };
    if let Some(limit) = limit
        && bytes >= limit
        && ASKED.with_borrow(|a| a.get(&relid) != Some(&generation))
    {
        ASKED.with_borrow_mut(|a| a.insert(relid, generation));
        start(relid, &format!("{limit} 0"), &format!("a background checkpoint of table {}", relid.to_u32()));
    }
    if idle.is_some()
        && bytes > pgstrom_runtime::store::HEADER_LEN
        && ARMED.with_borrow(|a| a.get(&relid) != Some(&generation))
        // (a timer that runs sees this write: it looks at the log once
        // more after it lets its lock go)
        && (timer_runs()
            || start(pg_sys::InvalidOid, "0 1", &format!("the checkpoint timer of table {}'s database", relid.to_u32())))
    {
        ARMED.with_borrow_mut(|a| a.insert(relid, generation));
    }
}

/// The advisory lock tag of the database's timer.
fn timer_tag() -> pg_sys::LOCKTAG {
    pg_sys::LOCKTAG {
        // SAFETY: the process's database, set once connected.
        locktag_field1: unsafe { pg_sys::MyDatabaseId }.to_u32(),
        locktag_field2: TIMER_KEY,
        locktag_field3: 0,
        locktag_field4: TIMER_LOCK_KIND,
        locktag_type: pg_sys::LockTagType::LOCKTAG_ADVISORY as u8,
        locktag_lockmethodid: pg_sys::USER_LOCKMETHOD as u8,
    }
}

/// Take the timer lock if it is free (a session lock: held until
/// released or the process exits).
fn take_timer_lock(session: bool) -> bool {
    let tag = timer_tag();
    // SAFETY: a lock of this process, never waited for.
    unsafe {
        pg_sys::LockAcquire(&tag, pg_sys::ExclusiveLock as pg_sys::LOCKMODE, session, true)
            != pg_sys::LockAcquireResult::LOCKACQUIRE_NOT_AVAIL
    }
}

fn release_timer_lock(session: bool) {
    let tag = timer_tag();
    // SAFETY: a lock this process holds.
    unsafe { pg_sys::LockRelease(&tag, pg_sys::ExclusiveLock as pg_sys::LOCKMODE, session) };
}

/// Whether the database's timer runs (its lock is taken).
fn timer_runs() -> bool {
    if take_timer_lock(false) {
        release_timer_lock(false);
        false
    } else {
        true
    }
}

/// True when a session holds or waits for a lock on this worker's
/// database that a new connection would wait for: DROP DATABASE, CREATE
/// DATABASE with it as the template, ALTER DATABASE ... RENAME or SET
/// TABLESPACE, each of which fails while another session is connected.
fn database_wanted() -> bool {
    let tag = pg_sys::LOCKTAG {
        // (a shared object: no database of its own)
        locktag_field1: 0,
        locktag_field2: pg_sys::DatabaseRelationId.to_u32(),
        // SAFETY: the process's database, set once connected.
        locktag_field3: unsafe { pg_sys::MyDatabaseId }.to_u32(),
        locktag_field4: 0,
        locktag_type: pg_sys::LockTagType::LOCKTAG_OBJECT as u8,
        locktag_lockmethodid: pg_sys::DEFAULT_LOCKMETHOD as u8,
    };
    // the lock a connection takes on its database (a request that
    // conflicts with a waiting one is refused too)
    let mode = pg_sys::RowExclusiveLock as pg_sys::LOCKMODE;
    BackgroundWorker::transaction(|| {
        // SAFETY: a transaction's lock, never waited for, released here.
        unsafe {
            if pg_sys::LockAcquire(&tag, mode, false, true) == pg_sys::LockAcquireResult::LOCKACQUIRE_NOT_AVAIL {
                return true;
            }
            pg_sys::LockRelease(&tag, mode, false);
        }
        false
    })
}

/// Log that a worker ended to let a session drop, copy, rename or move
/// its database.
fn log_made_room(what: &str) {
    pgrx::log!(
        "gstore_fdw: {what} ended: a session waits to drop, copy, rename or move database {}",
        // SAFETY: the process's database, set once connected.
        unsafe { pg_sys::MyDatabaseId }.to_u32()
    );
}

/// Start a worker for table `relid` (`args`: size limit, idle seconds);
/// false (with a LOG line) when none could start.
fn start(relid: pg_sys::Oid, args: &str, what: &str) -> bool {
    // SAFETY: the backend's database.
    let db = unsafe { pg_sys::MyDatabaseId };
    let started = BackgroundWorkerBuilder::new("pg_strom gstore_fdw checkpoint")
        .set_type("pg_strom gstore_fdw checkpoint")
        .set_library("pg_strom")
        .set_function("pgstrom_gstore_checkpoint_worker")
        .set_extra(&format!("{} {} {args}", db.to_u32(), relid.to_u32()))
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(None)
        .load_dynamic();
    if let Err(e) = &started {
        pgrx::log!(
            "gstore_fdw: could not start {what} ({e:?}; is max_worker_processes large enough?): run pgstrom.gstore_fdw_checkpoint() on the table"
        );
    }
    started.is_ok()
}

/// The background worker: checkpoint one table (`bgw_extra`: database
/// and table OIDs, and the log size of the statement that asked: its
/// session's setting), or (table 0, size 0, then 1) be the database's
/// checkpoint timer.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pgstrom_gstore_checkpoint_worker(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGTERM | SignalWakeFlags::SIGHUP);
    let mut ids = BackgroundWorker::get_extra().split(' ').map(|s| s.parse::<u64>().unwrap_or(0));
    let mut next = || ids.next().unwrap_or(0);
    let (db, relid, limit, timer_mode) = (next() as u32, next() as u32, next(), next());
    if db == 0 || (limit == 0 && timer_mode == 0) || (limit > 0 && relid == 0) {
        return;
    }
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(pg_sys::Oid::from(db)), None);
    if limit == 0 {
        timer();
        return;
    }
    let relid = pg_sys::Oid::from(relid);
    let why = Why::Size(limit);
    let t0 = Instant::now();
    for _ in 0..LOCK_TRIES {
        if BackgroundWorker::sigterm_received() {
            return;
        }
        if database_wanted() {
            log_made_room(&format!("the background checkpoint of table {}", relid.to_u32()));
            return;
        }
        let done = BackgroundWorker::transaction(|| {
            // SAFETY: a transaction of this worker's database.
            unsafe { attempt(relid, &why) }
        });
        if done {
            return;
        }
        // (false: SIGTERM, or the postmaster died)
        if !BackgroundWorker::wait_latch(Some(LOCK_PAUSE)) {
            return;
        }
    }
    pgrx::log!(
        "gstore_fdw: background checkpoint of table {} gave up after {:.0} s: the table was never free of queries and writers; run pgstrom.gstore_fdw_checkpoint() on it",
        relid.to_u32(),
        t0.elapsed().as_secs_f64()
    );
}

/// Why a worker checkpoints.
enum Why {
    /// The log passed this size.
    Size(u64),
    /// The log was not written for this long.
    Idle(Duration),
}

/// The database's timer: checkpoint each gstore_fdw table whose redo log
/// holds something and has not been written for
/// `pg_strom.gstore_checkpoint_timeout` (the server's setting, read again
/// on SIGHUP), until no log holds anything, the setting is 0, or SIGTERM.
/// A table busy with queries or writers is tried again at the next look.
/// Holds the timer lock while it runs; where another timer holds it, ends
/// at once (that one sees every write: it looks at the logs once more
/// after it lets the lock go), so that writers racing to start a timer
/// keep no worker slots.
fn timer() {
    'lock: loop {
        if BackgroundWorker::sigterm_received() || !BackgroundWorker::transaction(|| take_timer_lock(true)) {
            return;
        }
        loop {
            if BackgroundWorker::sigterm_received() {
                return;
            }
            if BackgroundWorker::sighup_received() {
                // SAFETY: the worker's own configuration, between
                // transactions.
                unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
            }
            let Some(idle) = timeout() else { return };
            // the tables whose log holds anything, with how long it has
            // not been written
            let logs = BackgroundWorker::transaction(written_logs);
            if logs.is_empty() {
                // done, unless a write came while its writer saw this
                // timer's lock taken
                BackgroundWorker::transaction(|| release_timer_lock(true));
                if !BackgroundWorker::transaction(written_logs).is_empty() {
                    continue 'lock;
                }
                return;
            }
            let mut wait = Duration::from_secs(10);
            for (relid, quiet) in logs {
                if quiet >= idle {
                    let done = BackgroundWorker::transaction(|| {
                        // SAFETY: a transaction of this worker's database.
                        unsafe { attempt(relid, &Why::Idle(idle)) }
                    });
                    // checkpointed: the next writes are due `idle` after
                    // they come; busy: tried again soon
                    wait = wait.min(if done { idle } else { Duration::from_secs(1) });
                } else {
                    wait = wait.min(idle - quiet);
                }
            }
            // (in slices of a second, to make room for a session that
            // waits for the database; false: SIGTERM, or the postmaster
            // died)
            let until = Instant::now() + wait.max(LOCK_PAUSE);
            loop {
                if database_wanted() {
                    BackgroundWorker::transaction(|| release_timer_lock(true));
                    log_made_room("the checkpoint timer");
                    return;
                }
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                if !BackgroundWorker::wait_latch(Some(left.min(TIMER_SLICE))) || BackgroundWorker::sigterm_received() {
                    return;
                }
                if BackgroundWorker::sighup_received() {
                    // SAFETY: the worker's own configuration, between
                    // transactions.
                    unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
                    // (the new timeout applies from the next look)
                    break;
                }
            }
        }
    }
}

/// The database's gstore_fdw tables and GPU caches whose redo log holds a
/// record, each with the time since its log was last written.  In a
/// transaction.
fn written_logs() -> Vec<(pg_sys::Oid, Duration)> {
    let sql = "SELECT ft.ftrelid FROM pg_catalog.pg_foreign_table ft \
               JOIN pg_catalog.pg_foreign_server s ON s.oid = ft.ftserver \
               JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid = s.srvfdw \
               WHERE w.fdwname = 'gstore_fdw' \
               UNION ALL SELECT relid FROM pgstrom.gpu_cache WHERE NOT broken";
    let tables: Vec<pg_sys::Oid> = Spi::connect(|c| {
        c.select(sql, None, &[])
            .map(|rows| rows.filter_map(|r| r.get::<pg_sys::Oid>(1).ok().flatten()).collect())
            .unwrap_or_default()
    });
    tables
        .into_iter()
        .filter_map(|relid| {
            let quiet = log_quiet(&super::options::of_table(relid).redo_log_file)?;
            Some((relid, quiet))
        })
        .collect()
}

/// How long the redo log at `path` has not been written, where it holds a
/// record (beyond the Layout record a checkpoint leaves); None otherwise.
fn log_quiet(path: &str) -> Option<Duration> {
    let mut f = std::fs::File::open(path).ok()?;
    let meta = f.metadata().ok()?;
    let mut head = Vec::with_capacity(pgstrom_runtime::store::HEAD_BYTES);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut f, pgstrom_runtime::store::HEAD_BYTES as u64), &mut head)
        .ok()?;
    pgstrom_runtime::store::holds_records(&head, meta.len())
        .then(|| meta.modified().ok().and_then(|t| t.elapsed().ok()).unwrap_or_default())
}

/// One try: true when done (checkpointed, no longer needed, or the table
/// is gone), false when the table's lock was not free.
///
/// # Safety
/// Inside a transaction.
unsafe fn attempt(relid: pg_sys::Oid, why: &Why) -> bool {
    // SAFETY: caller's promise; the lock is released at the end of the
    // transaction.
    unsafe {
        if !pg_sys::ConditionalLockRelationOid(relid, pg_sys::AccessExclusiveLock as pg_sys::LOCKMODE) {
            return false;
        }
        // dropped meanwhile, or no longer a gstore_fdw table
        if pg_sys::get_rel_name(relid).is_null() || !super::is_store_table(relid) {
            return true;
        }
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        // a heap table's GPU cache gone stale: nothing to fold until it
        // is built again
        if super::cache::is_heap_table(relid)
            && super::cache::lookup(relid).is_none_or(|e| super::cache::stale(rel, &e).is_some())
        {
            pg_sys::relation_close(rel, pg_sys::NoLock as i32);
            pg_sys::PopActiveSnapshot();
            return true;
        }
        let before = state::with_store(rel, |st| (st.log_pos, st.generation));
        let name = std::ffi::CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned();
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        let (needed, after) = match *why {
            Why::Size(limit) => (before.0 >= limit, String::new()),
            Why::Idle(idle) => (
                log_quiet(&super::options::of_table(relid).redo_log_file).is_some(),
                format!(" after {} s without writes", idle.as_secs()),
            ),
        };
        if needed {
            let t = Instant::now();
            let kept = super::checkpoint::checkpoint(relid);
            pgrx::log!(
                "gstore_fdw: background checkpoint of \"{name}\"{after}: redo log of generation {} ({} bytes) folded into the base file, {kept} row versions kept, in {} ms",
                before.1,
                before.0,
                t.elapsed().as_millis()
            );
        }
        pg_sys::PopActiveSnapshot();
        true
    }
}
