//! A GPU store table as this process sees it: its base file and redo log
//! (`pgstrom_runtime::store`) replayed into row versions, and which of
//! them a snapshot sees.
//!
//! Every row version carries the full id and command id of the
//! transaction that inserted it and of every transaction that deleted it
//! (several, when deleters aborted).  Whether a transaction committed is
//! read from PostgreSQL's commit log, never from the store's files: a
//! record whose transaction aborted, or was running when the server
//! crashed, is simply never visible.  Visibility follows heap tuples'
//! MVCC rules with the query's snapshot, command ids included, so a
//! statement sees the rows committed as of its snapshot and its own
//! transaction's earlier changes, and savepoints roll back as subtransaction
//! ids do.
//!
//! Each process keeps the replayed rows of the tables it read, by
//! relation, and before every use reads only what the log gained since;
//! a new log file (a checkpoint) makes it reload.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::ffi::CStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgstrom_runtime::store::{self, Record};

use super::key::{KeyIndex, KeySpec};
use crate::errors::raise_plain;

/// The frozen transaction id: committed for every snapshot.
pub const FROZEN_XID: u64 = 2;

/// One row version.
pub struct Row {
    /// The row as a PostgreSQL minimal tuple.
    pub tuple: Box<[u8]>,
    pub xmin: u64,
    pub cmin: u32,
    /// (transaction, command, by an UPDATE) of each deletion, aborted ones
    /// included.
    pub deleters: Vec<(u64, u32, bool)>,
}

/// A table's replayed files.
pub struct Store {
    pub base_path: PathBuf,
    pub log_path: PathBuf,
    /// The base file's generation (0 without a base file).
    pub generation: u64,
    /// The replayed log's (device, inode), None when there is none yet,
    /// and the generation in its header (None before it has one): a log
    /// replaced by a checkpoint may get the inode of an older one back.
    log_id: Option<(u64, u64)>,
    log_generation: Option<u64>,
    /// Whether the log is an older generation than the base file (read
    /// as empty; its next writer starts a new one).
    pub log_stale: bool,
    /// Bytes of the log replayed.
    pub log_pos: u64,
    /// The log file `log_id` names, held open: its inode cannot be reused
    /// while held, so a path still naming that inode names the same log,
    /// and a refresh reads only what was appended.
    log_file: Option<std::fs::File>,
    pub rows: Vec<Row>,
    /// Bytes of the rows' tuples (ANALYZE's pages, the planner's scaling).
    pub bytes: u64,
    /// (rows before it, transaction, command) of each TRUNCATE.
    pub truncates: Vec<(u64, u64, u32)>,
    /// Column type ids the files were written with (0: a dropped column).
    pub layout: Option<Vec<u32>>,
    /// The rows by key, for a table with a `primary_key`.
    pub key: Option<KeyIndex>,
    /// Every deletion replayed, in log order: (row, transaction,
    /// command); an engine's copy of the store counts how many it applied
    /// (`pgstrom_runtime::devstore`).
    pub journal: Vec<(u64, u64, u32)>,
    /// The transactions the replay met (frozen rows aside), for the views
    /// of engines' copies ([`store_view`]).
    pub xids: BTreeSet<u64>,
    last_xid: u64,
    /// Those below this one are resolved: committed, or in `aborted`.
    resolved_below: u64,
    /// Transactions of `xids` known to have aborted.
    aborted: BTreeSet<u64>,
}

thread_local! {
    static STORES: RefCell<HashMap<pg_sys::Oid, Store>> = RefCell::new(HashMap::new());
}

/// The database cluster's system identifier, which the files' headers
/// carry.
pub fn system_id() -> u64 {
    // SAFETY: a read of pg_control's copy in shared memory.
    unsafe { pg_sys::GetSystemIdentifier() }
}

/// An ERROR about a store's files.
pub fn file_error(path: &Path, what: &str, e: impl std::fmt::Display) -> ! {
    raise_plain(
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!("gstore_fdw {what} \"{}\": {e}", path.display()),
        None,
        None,
    )
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> ! {
    raise_plain(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!("could not read gstore_fdw {what} \"{}\": {e}", path.display()),
        None,
        None,
    )
}

impl Store {
    fn empty(base_path: PathBuf, log_path: PathBuf) -> Store {
        Store {
            base_path,
            log_path,
            generation: 0,
            log_id: None,
            log_generation: None,
            log_stale: false,
            log_pos: store::HEADER_LEN,
            log_file: None,
            rows: Vec::new(),
            bytes: 0,
            truncates: Vec::new(),
            layout: None,
            key: None,
            journal: Vec::new(),
            xids: BTreeSet::new(),
            last_xid: FROZEN_XID,
            resolved_below: 0,
            aborted: BTreeSet::new(),
        }
    }

    /// Read the base file and the whole log.
    pub fn load(base_path: PathBuf, log_path: PathBuf) -> Store {
        let mut s = Store::empty(base_path, log_path);
        match std::fs::read(&s.base_path) {
            Ok(bytes) => {
                s.generation = store::read_header(&bytes, store::BASE_MAGIC, system_id())
                    .unwrap_or_else(|e| file_error(&s.base_path, "base file", e));
                let (recs, end) = store::records_from(&bytes, store::HEADER_LEN as usize);
                if end != bytes.len() {
                    file_error(&s.base_path, "base file", format!("a damaged record at byte {end}"));
                }
                drop(bytes);
                s.reserve(&recs);
                for r in recs {
                    s.apply(r, &s.base_path.clone());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => io_error(&s.base_path, "base file", e),
        }
        s.read_log();
        s
    }

    /// Replay what the log gained since the last read; reload when the
    /// log file is another one (a checkpoint replaced it).
    pub fn refresh(&mut self) {
        // the common case: the path still names the log held open, whose
        // header was read; one stat, and a read of what was appended
        if let (Some(f), Some(id), Some(_)) = (&self.log_file, self.log_id, self.log_generation) {
            match std::fs::metadata(&self.log_path) {
                Ok(m) if (m.dev(), m.ino()) == id => {
                    if !self.log_stale && m.len() > self.log_pos {
                        let mut tail = vec![0u8; (m.len() - self.log_pos) as usize];
                        std::os::unix::fs::FileExt::read_exact_at(f, &mut tail, self.log_pos)
                            .unwrap_or_else(|e| io_error(&self.log_path, "redo log", e));
                        self.apply_tail(&tail);
                    }
                    return;
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => io_error(&self.log_path, "redo log", e),
            }
        }
        let (id, generation) = match std::fs::File::open(&self.log_path) {
            Ok(f) => {
                let m = f.metadata().unwrap_or_else(|e| io_error(&self.log_path, "redo log", e));
                let mut head = [0u8; store::HEADER_LEN as usize];
                let generation = std::os::unix::fs::FileExt::read_exact_at(&f, &mut head, 0)
                    .ok()
                    .and_then(|_| store::read_header(&head, store::LOG_MAGIC, system_id()).ok());
                (Some((m.dev(), m.ino())), generation)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
            Err(e) => io_error(&self.log_path, "redo log", e),
        };
        if id != self.log_id || generation != self.log_generation || id.is_none() && self.base_changed() {
            *self = Store::load(self.base_path.clone(), self.log_path.clone());
            return;
        }
        if id.is_some() && !self.log_stale {
            self.read_log();
        }
    }

    /// The row versions holding `key` by `index` (this store's), in row
    /// order: the index's candidates whose key is `key` (not only its
    /// hash).
    pub fn rows_with_key<'a>(&'a self, index: &'a KeyIndex, key: &'a [u8]) -> impl Iterator<Item = u64> + 'a {
        index
            .candidates(key)
            .iter()
            .copied()
            .filter(move |&id| index.spec.of_row(&self.rows[id as usize].tuple).ok().flatten() == Some(key))
    }

    fn base_changed(&self) -> bool {
        match std::fs::read(&self.base_path) {
            Ok(b) => store::read_header(&b, store::BASE_MAGIC, system_id()).ok() != Some(self.generation),
            Err(_) => self.generation != 0,
        }
    }

    /// Read the log from `log_pos` (the whole log on the first read), and
    /// hold it open.
    fn read_log(&mut self) {
        let mut f = match std::fs::File::open(&self.log_path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.log_id = None;
                self.log_file = None;
                return;
            }
            Err(e) => io_error(&self.log_path, "redo log", e),
        };
        self.read_log_from(&mut f);
        self.log_file = Some(f);
    }

    fn read_log_from(&mut self, f: &mut std::fs::File) {
        let m = f.metadata().unwrap_or_else(|e| io_error(&self.log_path, "redo log", e));
        let id = Some((m.dev(), m.ino()));
        if self.log_id != id {
            // a log read for the first time: its header
            let head = store::read_tail(f, 0).unwrap_or_else(|e| io_error(&self.log_path, "redo log", e));
            self.log_id = id;
            self.log_pos = store::HEADER_LEN;
            if head.len() < store::HEADER_LEN as usize {
                // created, its header not yet written (or torn): empty
                self.log_generation = None;
                return;
            }
            let generation = store::read_header(&head, store::LOG_MAGIC, system_id())
                .unwrap_or_else(|e| file_error(&self.log_path, "redo log", e));
            self.log_generation = Some(generation);
            if generation < self.generation {
                self.log_stale = true;
                return;
            }
            if generation > self.generation {
                file_error(
                    &self.log_path,
                    "redo log",
                    format!(
                        "its generation {generation} is newer than the base file's ({}): the base file \"{}\" is missing or old",
                        self.generation,
                        self.base_path.display()
                    ),
                );
            }
            self.apply_bytes(&head);
            return;
        }
        let tail = store::read_tail(f, self.log_pos).unwrap_or_else(|e| io_error(&self.log_path, "redo log", e));
        self.apply_tail(&tail);
    }

    /// Apply the whole records of `tail`, the log's bytes from `log_pos`
    /// on, and move `log_pos` past them (a torn last record waits).
    fn apply_tail(&mut self, tail: &[u8]) {
        let (recs, end) = store::records_from(tail, 0);
        self.log_pos += end as u64;
        let path = self.log_path.clone();
        self.reserve(&recs);
        for r in recs {
            self.apply(r, &path);
        }
    }

    /// Apply the records of a whole log's bytes from its header on.
    fn apply_bytes(&mut self, bytes: &[u8]) {
        let (recs, end) = store::records_from(bytes, store::HEADER_LEN as usize);
        self.log_pos = end as u64;
        let path = self.log_path.clone();
        self.reserve(&recs);
        for r in recs {
            self.apply(r, &path);
        }
    }

    /// Room for the rows of `recs` (a base file's or a log's records,
    /// about to be applied): the row list and the key index grow once.
    fn reserve(&mut self, recs: &[Record]) {
        let n = recs.iter().filter(|r| matches!(r, Record::Insert { .. })).count();
        self.rows.reserve(n);
        if let Some(k) = &mut self.key {
            k.reserve(n);
        }
    }

    /// Note a transaction that wrote to the store.
    fn note_xid(&mut self, xid: u64) {
        if xid != self.last_xid && xid != FROZEN_XID {
            self.xids.insert(xid);
            self.last_xid = xid;
        }
    }

    fn apply(&mut self, r: Record, path: &Path) {
        match &r {
            Record::Insert { xid, .. } | Record::Delete { xid, .. } | Record::Truncate { xid, .. } => {
                self.note_xid(*xid)
            }
            Record::Layout { .. } => {}
        }
        match r {
            Record::Insert { xid, cid, tuple } => {
                if let Some(k) = &mut self.key {
                    k.add(self.rows.len() as u64, &tuple).unwrap_or_else(|e| file_error(path, "record", e));
                }
                self.bytes += tuple.len() as u64;
                self.rows.push(Row { tuple: tuple.into_boxed_slice(), xmin: xid, cmin: cid, deleters: Vec::new() })
            }
            Record::Delete { xid, cid, row, updated } => match self.rows.get_mut(row as usize) {
                Some(r) => {
                    r.deleters.push((xid, cid, updated));
                    self.journal.push((row, xid, cid));
                }
                None => {
                    file_error(path, "file", format!("a deletion of row {row}, beyond its {} rows", self.rows.len()))
                }
            },
            Record::Truncate { xid, cid } => self.truncates.push((self.rows.len() as u64, xid, cid)),
            Record::Layout { types } => self.layout = Some(types),
        }
    }
}

/// The column type ids of `tupdesc` as the store's layout records them.
///
/// # Safety
/// A valid tuple descriptor.
pub unsafe fn layout_of(tupdesc: pg_sys::TupleDesc) -> Vec<u32> {
    // SAFETY: caller's promise.
    unsafe {
        (0..(*tupdesc).natts)
            .map(|i| {
                let a = crate::pg::compat::tuple_desc_attr(tupdesc, i);
                if (*a).attisdropped { 0 } else { (*a).atttypid.to_u32() }
            })
            .collect()
    }
}

/// Check that the table's columns still read the stored rows: the types
/// the files were written with, columns added or dropped since aside.
///
/// # Safety
/// `rel` is an open gstore_fdw table.
pub unsafe fn check_layout(rel: pg_sys::Relation, stored: &[u32]) {
    // SAFETY: caller's promise.
    unsafe {
        let now = layout_of((*rel).rd_att);
        let changed = if stored.len() > now.len() {
            Some(now.len())
        } else {
            stored.iter().zip(&now).position(|(&s, &n)| n != 0 && s != n)
        };
        if let Some(i) = changed {
            let relname = CStr::from_ptr(pg_sys::get_rel_name((*rel).rd_id)).to_string_lossy();
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("the columns of gstore_fdw table \"{relname}\" changed since its rows were written"),
                Some(match stored.get(i) {
                    Some(&t) if t != 0 => format!(
                        "Column {} had type {} when the rows were written.",
                        i + 1,
                        CStr::from_ptr(pg_sys::format_type_be(pg_sys::Oid::from(t))).to_string_lossy()
                    ),
                    _ => format!("Column {} was dropped when the rows were written.", i + 1),
                }),
                Some(
                    "A gstore_fdw table accepts ADD COLUMN and DROP COLUMN; to change a column's type, create a new table and copy the rows.",
                ),
            );
        }
    }
}

/// Run `f` on the store of `rel`, replayed up to the log's end.
///
/// # Safety
/// `rel` is an open gstore_fdw table.
pub unsafe fn with_store<T>(rel: pg_sys::Relation, f: impl FnOnce(&mut Store) -> T) -> T {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let opts = super::options::of_table(relid);
        // out of the map while in use: an ERROR in the middle of a replay
        // drops it, and the next use loads the files again
        let mut st = match STORES.with_borrow_mut(|m| m.remove(&relid)) {
            Some(mut st)
                if st.base_path == Path::new(&opts.base_file) && st.log_path == Path::new(&opts.redo_log_file) =>
            {
                st.refresh();
                st
            }
            _ => Store::load(PathBuf::from(&opts.base_file), PathBuf::from(&opts.redo_log_file)),
        };
        if let Some(l) = &st.layout {
            check_layout(rel, l);
        }
        // the key index: built over every row once, then kept up by the
        // replay; rebuilt when the key's column or layout changed
        let spec = if opts.heap_cache {
            Some(KeySpec::hidden_tid(rel))
        } else {
            opts.primary_key.as_deref().map(|name| KeySpec::resolve(rel, name))
        };
        match spec {
            None => st.key = None,
            Some(spec) => {
                if st.key.as_ref().map(|k| &k.spec) != Some(&spec) {
                    let mut index = KeyIndex::new(spec);
                    index.reserve(st.rows.len());
                    for (id, row) in st.rows.iter().enumerate() {
                        index.add(id as u64, &row.tuple).unwrap_or_else(|e| file_error(&st.base_path, "row", e));
                    }
                    st.key = Some(index);
                }
            }
        }
        let out = f(&mut st);
        STORES.with_borrow_mut(|m| m.insert(relid, st));
        out
    }
}

/// Run `f` on the store of `rel` as last replayed (by [`with_store`], in
/// this statement), in place: `f` only reads it (once per row of a scan,
/// so neither a replay nor a move of the store), and must not use the
/// store of any gstore_fdw table itself.
///
/// # Safety
/// `rel` is an open gstore_fdw table.
pub unsafe fn with_store_as_is<T>(rel: pg_sys::Relation, f: impl FnOnce(&Store) -> T) -> T {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let mut f = Some(f);
        let out = STORES.with_borrow(|m| m.get(&relid).map(|st| (f.take().expect("once"))(st)));
        match out {
            Some(out) => out,
            None => with_store(rel, |st| (f.take().expect("once"))(st)),
        }
    }
}

/// A transaction's state as a snapshot sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Seen {
    /// This transaction (or one of its live subtransactions).
    Current,
    /// Committed before the snapshot.
    Committed,
    /// Running, or committed after the snapshot was taken.
    NotYet,
    /// Aborted, or running when the server stopped.
    Aborted,
}

/// Visibility of row versions for one snapshot, with each transaction's
/// state looked up once.
pub struct Visibility {
    snapshot: pg_sys::Snapshot,
    next_full: u64,
    seen: HashMap<u64, Seen>,
    /// The last lookup (rows come in runs of one transaction).
    last: (u64, Seen),
}

/// The 32-bit id of a full transaction id, checked to be within
/// PostgreSQL's window of comparable ids.
fn xid32(full: u64, next_full: u64) -> pg_sys::TransactionId {
    if full != FROZEN_XID && next_full.saturating_sub(full) >= 1 << 31 {
        raise_plain(
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!("a gstore_fdw row was written by transaction {full}, too old to look up"),
            None,
            Some("Run pgstrom.gstore_fdw_checkpoint() on gstore_fdw tables regularly: it freezes old rows."),
        )
    }
    pg_sys::TransactionId::from(full as u32)
}

impl Visibility {
    /// For `snapshot` (an MVCC snapshot of this transaction).
    pub fn new(snapshot: pg_sys::Snapshot) -> Visibility {
        // SAFETY: reading the next transaction id.
        let next_full = unsafe { pg_sys::ReadNextFullTransactionId().value };
        Visibility { snapshot, next_full, seen: HashMap::new(), last: (FROZEN_XID, Seen::Committed) }
    }

    /// The state of transaction `full` for this snapshot.
    pub fn seen(&mut self, full: u64) -> Seen {
        if full == self.last.0 {
            return self.last.1;
        }
        if full == FROZEN_XID {
            return Seen::Committed;
        }
        if let Some(&s) = self.seen.get(&full) {
            self.last = (full, s);
            return s;
        }
        let xid = xid32(full, self.next_full);
        // SAFETY: transaction status lookups of a backend in a transaction.
        let s = unsafe {
            if pg_sys::TransactionIdIsCurrentTransactionId(xid) {
                Seen::Current
            } else if pg_sys::XidInMVCCSnapshot(xid, self.snapshot) {
                Seen::NotYet
            } else if pg_sys::TransactionIdDidCommit(xid) {
                Seen::Committed
            } else {
                Seen::Aborted
            }
        };
        self.seen.insert(full, s);
        self.last = (full, s);
        s
    }

    /// Does the snapshot see row `id`?
    pub fn visible(&mut self, st: &Store, id: usize) -> bool {
        let row = &st.rows[id];
        // SAFETY: the snapshot outlives the scan.
        let curcid = unsafe { (*self.snapshot).curcid };
        match self.seen(row.xmin) {
            Seen::Current if row.cmin >= curcid => return false,
            Seen::Current | Seen::Committed => {}
            Seen::NotYet | Seen::Aborted => return false,
        }
        for &(xid, cid, _) in &row.deleters {
            match self.seen(xid) {
                Seen::Current if cid < curcid => return false,
                Seen::Committed => return false,
                _ => {}
            }
        }
        // TRUNCATE is not MVCC-safe, as for heap tables: once committed it
        // hides the rows from every snapshot
        for &(before, xid, cid) in &st.truncates {
            if (id as u64) < before {
                match self.seen(xid) {
                    Seen::Current if cid < curcid => return false,
                    Seen::Committed => return false,
                    Seen::NotYet if self.committed(xid) => return false,
                    _ => {}
                }
            }
        }
        true
    }

    /// Whether transaction `full` committed (the commit log, now).
    pub fn committed(&self, full: u64) -> bool {
        // SAFETY: a commit-log lookup.
        unsafe { pg_sys::TransactionIdDidCommit(xid32(full, self.next_full)) }
    }
}

/// What a writer finds on a row it is about to delete or update.
pub enum Conflict {
    /// Nobody else deleted it: go ahead.
    None,
    /// This transaction deleted it already (in this command).
    SelfDeleted,
    /// A running transaction deleted it: wait for it and look again.
    Wait(pg_sys::TransactionId),
    /// A transaction that committed after this statement's snapshot
    /// (`updated`: by an UPDATE).
    Committed { updated: bool },
}

/// The deleters of row `id` as a writer sees them now.
pub fn conflict(st: &Store, id: usize) -> Conflict {
    // SAFETY: transaction status lookups of a backend in a transaction.
    unsafe {
        let next_full = pg_sys::ReadNextFullTransactionId().value;
        for &(full, _, updated) in &st.rows[id].deleters {
            let xid = xid32(full, next_full);
            if pg_sys::TransactionIdIsCurrentTransactionId(xid) {
                return Conflict::SelfDeleted;
            }
            if pg_sys::TransactionIdIsInProgress(xid) {
                return Conflict::Wait(xid);
            }
            if pg_sys::TransactionIdDidCommit(xid) {
                return Conflict::Committed { updated };
            }
        }
        Conflict::None
    }
}

/// What a writer finds among the rows holding a key it is about to
/// store.
pub enum KeyConflict {
    /// No live row holds it: go ahead.
    None,
    /// A running transaction inserted or deleted a row holding it: wait for
    /// it and look again.
    Wait(pg_sys::TransactionId),
    /// Row `id`, live (committed, or this transaction's), holds it.
    Duplicate(u64),
}

/// Whether a live row other than `except` (the row an UPDATE replaces)
/// holds `key`, by the transactions' states now (as a unique index is
/// checked: rows committed after the snapshot count too).
pub fn key_conflict(st: &Store, key: &[u8], except: Option<u64>) -> KeyConflict {
    let Some(index) = &st.key else { return KeyConflict::None };
    // SAFETY: transaction status lookups of a backend in a transaction.
    unsafe {
        let next_full = pg_sys::ReadNextFullTransactionId().value;
        // Ok(true): committed or this transaction's; Ok(false): aborted;
        // Err: running (the id to wait for)
        let state = |full: u64| -> Result<bool, pg_sys::TransactionId> {
            if full == FROZEN_XID {
                return Ok(true);
            }
            let xid = xid32(full, next_full);
            if pg_sys::TransactionIdIsCurrentTransactionId(xid) {
                Ok(true)
            } else if pg_sys::TransactionIdIsInProgress(xid) {
                Err(xid)
            } else {
                Ok(pg_sys::TransactionIdDidCommit(xid))
            }
        };
        for id in st.rows_with_key(index, key) {
            if Some(id) == except {
                continue;
            }
            let row = &st.rows[id as usize];
            match state(row.xmin) {
                Err(x) => return KeyConflict::Wait(x),
                Ok(false) => continue,
                Ok(true) => {}
            }
            let mut wait = None;
            let mut dead = false;
            for &(full, _, _) in &row.deleters {
                match state(full) {
                    Ok(true) => dead = true,
                    Ok(false) => {}
                    Err(x) => wait = Some(x),
                }
            }
            for &(before, full, _) in &st.truncates {
                if id < before {
                    match state(full) {
                        Ok(true) => dead = true,
                        Ok(false) => {}
                        Err(x) => wait = Some(x),
                    }
                }
            }
            if dead {
                continue;
            }
            if let Some(x) = wait {
                return KeyConflict::Wait(x);
            }
            return KeyConflict::Duplicate(id);
        }
        KeyConflict::None
    }
}

/// A row id as a ctid: 15 bits of offset (1-based), the rest the block.
pub fn ctid_of(id: u64) -> pg_sys::ItemPointerData {
    let mut t = pg_sys::ItemPointerData::default();
    let block = (id >> 15) as u32;
    t.ip_blkid.bi_hi = (block >> 16) as u16;
    t.ip_blkid.bi_lo = block as u16;
    t.ip_posid = (id & 0x7fff) as u16 + 1;
    t
}

/// The row id of a ctid made by [`ctid_of`].
pub fn id_of(t: &pg_sys::ItemPointerData) -> u64 {
    let block = ((t.ip_blkid.bi_hi as u64) << 16) | t.ip_blkid.bi_lo as u64;
    (block << 15) | (t.ip_posid.saturating_sub(1) as u64)
}

/// The full id of `xid`, a transaction id no older than the next one's
/// window (a snapshot's xmin).
fn full_of(xid: pg_sys::TransactionId, next_full: u64) -> u64 {
    let x = xid.into_inner() as u64;
    let epoch = next_full >> 32;
    if x > next_full & 0xffff_ffff && epoch > 0 { ((epoch - 1) << 32) | x } else { (epoch << 32) | x }
}

/// What `vis`'s snapshot makes of the transactions that wrote to `st`, for
/// an engine that decides visibility where the rows are
/// (`pgstrom_runtime::devstore::StoreView`, device_store.h): every
/// transaction below the snapshot's xmin has finished, and the aborted
/// ones among them are looked up once per process; those at or above it
/// are listed with their state for this snapshot.
pub fn store_view(st: &mut Store, vis: &mut Visibility) -> pgstrom_runtime::devstore::StoreView {
    use pgstrom_runtime::devstore::{StoreView, XID_COMMITTED, XID_CURRENT, XID_INVISIBLE};
    // SAFETY: the snapshot outlives the scan.
    let (xmin, curcid) = unsafe { ((*vis.snapshot).xmin, (*vis.snapshot).curcid) };
    let horizon = full_of(xmin, vis.next_full);
    if horizon > st.resolved_below {
        let newly: Vec<u64> = st.xids.range(st.resolved_below..horizon).copied().collect();
        for x in newly {
            if !vis.committed(x) {
                st.aborted.insert(x);
            }
        }
        st.resolved_below = horizon;
    }
    let window: Vec<u64> = st.xids.range(horizon..).copied().collect();
    let states = window
        .iter()
        .map(|&x| match vis.seen(x) {
            Seen::Current => XID_CURRENT,
            Seen::Committed => XID_COMMITTED,
            Seen::NotYet | Seen::Aborted => XID_INVISIBLE,
        })
        .collect();
    // TRUNCATE hides the rows before it, as Visibility::visible decides
    let mut hide_below = 0;
    for &(before, xid, cid) in &st.truncates {
        let hides = match vis.seen(xid) {
            Seen::Current => cid < curcid,
            Seen::Committed => true,
            Seen::NotYet => vis.committed(xid),
            Seen::Aborted => false,
        };
        if hides {
            hide_below = hide_below.max(before);
        }
    }
    StoreView { horizon, hide_below, curcid, aborted: st.aborted.iter().copied().collect(), window, states }
}

/// As [`with_store_as_is`], with the store writable (for what a scan
/// keeps in it: [`store_view`]'s lookups).
///
/// # Safety
/// As [`with_store_as_is`].
pub unsafe fn with_store_as_is_mut<T>(rel: pg_sys::Relation, f: impl FnOnce(&mut Store) -> T) -> T {
    // SAFETY: caller's promise.
    unsafe {
        let relid = (*rel).rd_id;
        let mut f = Some(f);
        let out = STORES.with_borrow_mut(|m| m.get_mut(&relid).map(|st| (f.take().expect("once"))(st)));
        match out {
            Some(out) => out,
            None => with_store(rel, |st| (f.take().expect("once"))(st)),
        }
    }
}
