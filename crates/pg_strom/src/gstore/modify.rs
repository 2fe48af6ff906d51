//! Gstore_Fdw writes: INSERT, COPY FROM, UPDATE, DELETE and TRUNCATE as
//! records appended to the table's redo log.
//!
//! - A write appends under the log's `flock`, after replaying what other
//!   writers appended, so the row it deletes is checked against every
//!   deletion written before it: a deletion by a running transaction is
//!   waited for (as a heap tuple's xmax is); one by a transaction that
//!   committed after the statement's snapshot skips the row under READ
//!   COMMITTED when it was a DELETE (as for a heap table), and otherwise
//!   raises PostgreSQL's serialization error (under READ COMMITTED a heap
//!   table would re-check the newer version an UPDATE made; a gstore_fdw
//!   table does not yet); one this command made already skips the row.
//! - Inserts are gathered per statement (up to a few MB) and appended at
//!   once; an UPDATE is a deletion and an insert in one append.
//! - Before a (sub)transaction appends its first record, its id is written
//!   to PostgreSQL's WAL and flushed (a logical decoding message), so that
//!   after a crash the server never hands the same id to another
//!   transaction: records of a transaction that did not commit stay
//!   invisible for good.
//! - PRE_COMMIT (and PRE_PREPARE) flushes the logs the transaction wrote
//!   (`fsync`) before PostgreSQL writes its commit record: a committed
//!   transaction's rows survive any crash; an aborted one's records stay in
//!   the log, never visible, until a checkpoint drops them.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::ffi::{CStr, c_char, c_int};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgstrom_runtime::store::{self, Record};

use super::key::KeySpec;
use super::state::{self, Conflict, KeyConflict, Store};
use crate::errors::raise_plain;

/// Bytes of inserts gathered before they are appended.
const INSERT_BUFFER: usize = 4 << 20;

thread_local! {
    /// The redo logs this transaction appended to.
    static DIRTY: RefCell<BTreeSet<PathBuf>> = const { RefCell::new(BTreeSet::new()) };
    /// The (sub)transaction ids already made durable in the WAL.
    static LOGGED: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
}
static mut CALLBACK_REGISTERED: bool = false;

unsafe extern "C" {
    /// PostgreSQL's logical decoding message (replication/message.h).
    fn LogLogicalMessage(
        prefix: *const c_char,
        message: *const c_char,
        size: usize,
        transactional: bool,
        flush: bool,
    ) -> u64;
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> ! {
    raise_plain(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!("could not {what} gstore_fdw redo log \"{}\": {e}", path.display()),
        None,
        None,
    )
}

/// The transaction's full id and command id for a record, its id made
/// durable in the WAL first.
pub(crate) fn writer_ids() -> (u64, u32) {
    // SAFETY: inside a transaction that may write.
    unsafe {
        if !CALLBACK_REGISTERED {
            pg_sys::RegisterXactCallback(Some(xact_callback), std::ptr::null_mut());
            CALLBACK_REGISTERED = true;
        }
        let full = pg_sys::GetCurrentFullTransactionId().value;
        let cid = pg_sys::GetCurrentCommandId(true);
        if !LOGGED.with_borrow(|l| l.contains(&full)) {
            let msg = c"gstore_fdw";
            let lsn = pg_sys::ffi::pg_guard_ffi_boundary(|| {
                LogLogicalMessage(c"pg_strom".as_ptr(), msg.as_ptr(), msg.to_bytes().len(), true, false)
            });
            // (LogLogicalMessage flushes only non-transactional messages)
            pg_sys::XLogFlush(lsn);
            LOGGED.with_borrow_mut(|l| l.insert(full));
        }
        (full, cid)
    }
}

/// Flush the redo logs this transaction appended to (at commit; the
/// GPU cache's triggers call it after their last appends).
pub(crate) fn sync_dirty() {
    let dirty = DIRTY.with_borrow_mut(std::mem::take);
    for path in dirty {
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap_or_else(|e| io_error(&path, "open", e));
        f.sync_data().unwrap_or_else(|e| io_error(&path, "flush (fsync)", e));
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn xact_callback(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    match event {
        pg_sys::XactEvent::XACT_EVENT_PRE_COMMIT | pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE => {
            sync_dirty();
            LOGGED.with_borrow_mut(HashSet::clear);
        }
        pg_sys::XactEvent::XACT_EVENT_ABORT | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT => {
            DIRTY.with_borrow_mut(BTreeSet::clear);
            LOGGED.with_borrow_mut(HashSet::clear);
        }
        _ => {}
    }
}

/// The table's redo log, opened and locked (`flock`, released when
/// dropped), with a header of the base file's generation.
pub(crate) struct LogLock {
    file: std::fs::File,
}

impl LogLock {
    /// Lock the log of `st` (creating it, or a new one where it is older
    /// than the base file), then replay what it gained.  A new log gets
    /// the mode PostgreSQL gives its own files: the server's umask, which
    /// PostgreSQL sets from the data directory's (0600, or 0640 where the
    /// cluster allows group access).
    pub(crate) fn acquire(st: &mut Store, layout: &[u32]) -> LogLock {
        let path = st.log_path.clone();
        loop {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .unwrap_or_else(|e| io_error(&path, "open", e));
            loop {
                // SAFETY: an open descriptor.
                if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                    break;
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    io_error(&path, "lock", e);
                }
            }
            // the file locked must still be the one the path names (a
            // checkpoint may have replaced it while this process waited)
            let m = file.metadata().unwrap_or_else(|e| io_error(&path, "read", e));
            match std::fs::metadata(&path) {
                Ok(p) if p.ino() == m.ino() && p.dev() == m.dev() => {}
                _ => continue,
            }
            // what others appended (and the base file's generation, read
            // again if a checkpoint replaced the files)
            st.refresh();
            let base_generation = st.generation;
            let mut head = [0u8; store::HEADER_LEN as usize];
            let whole = m.len() >= store::HEADER_LEN && file.read_exact_at(&mut head, 0).is_ok();
            if !whole {
                // new (or its header torn by a crash): start it
                let mut body = store::header(store::LOG_MAGIC, base_generation, state::system_id()).to_vec();
                Record::Layout { types: layout.to_vec() }.encode(&mut body);
                file.set_len(0).unwrap_or_else(|e| io_error(&path, "truncate", e));
                file.write_all_at(&body, 0).unwrap_or_else(|e| io_error(&path, "write", e));
                file.sync_all().unwrap_or_else(|e| io_error(&path, "flush (fsync)", e));
                st.refresh();
            } else {
                let g = store::read_header(&head, store::LOG_MAGIC, state::system_id())
                    .unwrap_or_else(|e| state::file_error(&path, "redo log", e));
                if g < base_generation {
                    // folded into the base file by a checkpoint that
                    // stopped before it replaced the log
                    let mut body = Vec::new();
                    Record::Layout { types: layout.to_vec() }.encode(&mut body);
                    store::write_file_atomic(&path, store::LOG_MAGIC, base_generation, state::system_id(), &body)
                        .unwrap_or_else(|e| io_error(&path, "replace", e));
                    continue;
                }
            }
            return LogLock { file };
        }
    }

    /// Append `body` (whole records) at the replayed end of the log,
    /// cutting off a torn tail first, and replay it.
    pub(crate) fn append(&self, st: &mut Store, body: &[u8]) {
        let path = st.log_path.clone();
        let len = self.file.metadata().unwrap_or_else(|e| io_error(&path, "read", e)).len();
        if len > st.log_pos {
            self.file.set_len(st.log_pos).unwrap_or_else(|e| io_error(&path, "truncate", e));
        }
        self.file.write_all_at(body, st.log_pos).unwrap_or_else(|e| io_error(&path, "write", e));
        st.refresh();
        DIRTY.with_borrow_mut(|d| d.insert(path));
    }
}

/// The executor state of a write (ResultRelInfo.ri_FdwState).
pub struct ModifyState {
    rel: pg_sys::Relation,
    /// The plan's junk ctid column (UPDATE, DELETE).
    ctid_attno: pg_sys::AttrNumber,
    /// Encoded inserts not yet appended, and their count.
    inserts: Vec<u8>,
    insert_rows: u64,
    max_rows: i64,
    /// The column types a new log records (`state::layout_of`).
    layout: Vec<u32>,
    /// The table's key column, and the keys of the gathered inserts.
    key: Option<KeySpec>,
    insert_keys: Vec<Vec<u8>>,
}

unsafe fn relname(relid: pg_sys::Oid) -> String {
    // SAFETY: a valid relation oid.
    unsafe { CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned() }
}

/// What a locked append found.
enum Outcome {
    Done,
    Skipped,
    /// Wait for a transaction that deleted the row (false) or wrote a row
    /// holding a key being stored (true).
    Wait(pg_sys::TransactionId, bool),
    /// A live row holds this key (raised once the store is back in place,
    /// so that the ERROR does not make the next statement replay it all).
    Duplicate(Vec<u8>),
    /// A serialization failure (the row was updated: true, deleted: false).
    Serialization(bool),
}

impl ModifyState {
    unsafe fn new(rel: pg_sys::Relation, ctid_attno: pg_sys::AttrNumber) -> ModifyState {
        // SAFETY: an open gstore_fdw table.
        let (opts, layout) = unsafe { (super::options::of_table((*rel).rd_id), state::layout_of((*rel).rd_att)) };
        // SAFETY: as above.
        let key = opts.primary_key.as_deref().map(|name| unsafe { KeySpec::resolve(rel, name) });
        ModifyState {
            rel,
            ctid_attno,
            inserts: Vec::new(),
            insert_rows: 0,
            max_rows: opts.max_num_rows,
            layout,
            key,
            insert_keys: Vec::new(),
        }
    }

    /// The row of `slot` as stored, and its key (an ERROR for a NULL key).
    ///
    /// # Safety
    /// A slot of our relation's row type.
    unsafe fn row_and_key(&self, slot: *mut pg_sys::TupleTableSlot) -> (Vec<u8>, Option<Vec<u8>>) {
        // SAFETY: caller's promise.
        let tuple = unsafe { tuple_bytes(slot, self.key.as_ref().map(|k| k.attnum)) };
        let Some(spec) = &self.key else { return (tuple, None) };
        let key = match spec.of_row(&tuple) {
            Ok(Some(k)) => k.to_vec(),
            Ok(None) => raise_plain(
                PgSqlErrorCode::ERRCODE_NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    spec.name,
                    // SAFETY: our open relation.
                    unsafe { relname((*self.rel).rd_id) }
                ),
                Some("The column is the gstore_fdw table's primary_key.".into()),
                None,
            ),
            Err(e) => raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("gstore_fdw key: {e}"), None, None),
        };
        (tuple, Some(key))
    }

    /// Append `body` (plus the gathered inserts); with `delete`, after
    /// checking that row's deleters; with a key, after checking that no
    /// live row (but `delete`) holds it or a gathered insert's key.
    unsafe fn append(&mut self, body: &[u8], new_rows: u64, delete: Option<u64>, new_key: Option<&[u8]>) -> bool {
        // SAFETY: our open relation.
        unsafe {
            let rel = self.rel;
            loop {
                let pending = std::mem::take(&mut self.inserts);
                let pending_rows = std::mem::take(&mut self.insert_rows);
                let (max_rows, layout, key, keys) = (self.max_rows, &self.layout, &self.key, &self.insert_keys);
                let outcome = state::with_store(rel, |st| {
                    let lock = LogLock::acquire(st, layout);
                    if let Some(id) = delete {
                        match state::conflict(st, id as usize) {
                            Conflict::None => {}
                            Conflict::SelfDeleted => return (Outcome::Skipped, pending, pending_rows),
                            Conflict::Wait(x) => return (Outcome::Wait(x, false), pending, pending_rows),
                            Conflict::Committed { updated: false }
                                if pg_sys::XactIsoLevel < pg_sys::XACT_REPEATABLE_READ as i32 =>
                            {
                                return (Outcome::Skipped, pending, pending_rows);
                            }
                            Conflict::Committed { updated } => {
                                return (Outcome::Serialization(updated), pending, pending_rows);
                            }
                        }
                    }
                    let total = st.rows.len() as u64 + pending_rows + new_rows;
                    if total > max_rows as u64 {
                        raise_plain(
                            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                            format!("gstore_fdw table \"{}\" is full", relname((*rel).rd_id)),
                            Some(format!("It holds {} row versions; max_num_rows is {max_rows}.", st.rows.len())),
                            Some("Run pgstrom.gstore_fdw_checkpoint() to reclaim deleted rows, or raise max_num_rows."),
                        );
                    }
                    if key.is_some() {
                        let mut seen = HashSet::new();
                        for k in keys.iter().map(Vec::as_slice).chain(new_key) {
                            let dup = if !seen.insert(k) {
                                true
                            } else {
                                match state::key_conflict(st, k, delete) {
                                    KeyConflict::None => false,
                                    KeyConflict::Wait(x) => return (Outcome::Wait(x, true), pending, pending_rows),
                                    KeyConflict::Duplicate(_) => true,
                                }
                            };
                            if dup {
                                return (Outcome::Duplicate(k.to_vec()), pending, pending_rows);
                            }
                        }
                    }
                    let mut all = pending;
                    all.extend_from_slice(body);
                    lock.append(st, &all);
                    (Outcome::Done, Vec::new(), 0)
                });
                match outcome {
                    (Outcome::Done, ..) => {
                        self.insert_keys.clear();
                        return true;
                    }
                    (Outcome::Skipped, pending, n) => {
                        // the gathered inserts still go in
                        self.inserts = pending;
                        self.insert_rows = n;
                        return false;
                    }
                    (Outcome::Duplicate(k), ..) => {
                        duplicate_key(rel, self.key.as_ref().expect("a key"), &k);
                    }
                    (Outcome::Serialization(updated), ..) => serialization_failure(rel, updated),
                    (Outcome::Wait(x, for_key), pending, n) => {
                        self.inserts = pending;
                        self.insert_rows = n;
                        let mut tid = state::ctid_of(delete.unwrap_or(0));
                        let oper =
                            if for_key { pg_sys::XLTW_Oper::XLTW_InsertIndex } else { pg_sys::XLTW_Oper::XLTW_Update };
                        pg_sys::XactLockTableWait(x, rel, &mut tid, oper);
                    }
                }
            }
        }
    }

    /// Append the gathered inserts.
    unsafe fn flush(&mut self) {
        if !self.inserts.is_empty() {
            // SAFETY: caller's promise (our relation is open).
            unsafe { self.append(&[], 0, None, None) };
        }
    }
}

fn duplicate_key(rel: pg_sys::Relation, spec: &KeySpec, key: &[u8]) -> ! {
    // SAFETY: our open relation; a backend.
    let (name, mut value) = unsafe { (relname((*rel).rd_id), spec.text_of(key)) };
    if let Some((cut, _)) = value.char_indices().nth(64) {
        value.truncate(cut);
        value.push_str("...");
    }
    raise_plain(
        PgSqlErrorCode::ERRCODE_UNIQUE_VIOLATION,
        format!("duplicate key value violates the primary key of gstore_fdw table \"{name}\""),
        Some(format!("Key ({})=({value}) already exists.", spec.name)),
        None,
    )
}

fn serialization_failure(rel: pg_sys::Relation, updated: bool) -> ! {
    // SAFETY: our open relation.
    let name = unsafe { relname((*rel).rd_id) };
    let what = if updated { "update" } else { "delete" };
    raise_plain(
        PgSqlErrorCode::ERRCODE_T_R_SERIALIZATION_FAILURE,
        format!("could not serialize access due to concurrent {what}"),
        Some(format!(
            "A row of gstore_fdw table \"{name}\" was {what}d by a transaction that committed after this statement's \
             snapshot was taken."
        )),
        Some("Retry the transaction."),
    )
}

/// The row of `slot` as minimal tuple bytes, external and expanded values
/// flattened in, and the key column's (`key`, 1-based) decompressed too.
///
/// # Safety
/// A slot of the relation's row type.
unsafe fn tuple_bytes(slot: *mut pg_sys::TupleTableSlot, key: Option<i16>) -> Vec<u8> {
    // SAFETY: caller's promise.
    unsafe { tuple_bytes_with(slot, key, None) }
}

/// A descriptor of `tupdesc`'s columns and then a GPU cache's hidden
/// ctid column (`int8`), in the current memory context.
///
/// # Safety
/// A valid tuple descriptor.
pub(crate) unsafe fn with_hidden_tid(tupdesc: pg_sys::TupleDesc) -> pg_sys::TupleDesc {
    // SAFETY: caller's promise.
    unsafe {
        let natts = (*tupdesc).natts;
        let ext = pg_sys::CreateTemplateTupleDesc(natts + 1);
        for i in 1..=natts {
            pg_sys::TupleDescCopyEntry(ext, i as pg_sys::AttrNumber, tupdesc, i as pg_sys::AttrNumber);
        }
        pg_sys::TupleDescInitEntry(ext, (natts + 1) as pg_sys::AttrNumber, c"ctid".as_ptr(), pg_sys::INT8OID, -1, 0);
        ext
    }
}

/// [`tuple_bytes`], with a GPU cache's hidden ctid column after the
/// table's columns where `tid` is given (with the descriptor of
/// [`with_hidden_tid`]).
///
/// # Safety
/// A slot of the relation's row type.
pub(crate) unsafe fn tuple_bytes_with(
    slot: *mut pg_sys::TupleTableSlot,
    key: Option<i16>,
    tid: Option<(i64, pg_sys::TupleDesc)>,
) -> Vec<u8> {
    // SAFETY: caller's promise.
    unsafe {
        pg_sys::slot_getallattrs(slot);
        let tupdesc = (*slot).tts_tupleDescriptor;
        let natts = (*tupdesc).natts as usize;
        let mut values: Vec<pg_sys::Datum> = std::slice::from_raw_parts((*slot).tts_values, natts).to_vec();
        let isnull: Vec<bool> = std::slice::from_raw_parts((*slot).tts_isnull, natts).to_vec();
        for (i, v) in values.iter_mut().enumerate() {
            let a = crate::pg::compat::tuple_desc_attr(tupdesc, i as c_int);
            if !isnull[i] && (*a).attlen == -1 && pgrx::varlena::varatt_is_1b_e(v.cast_mut_ptr()) {
                *v = pg_sys::Datum::from(pg_sys::detoast_external_attr(v.cast_mut_ptr()));
            }
            if !isnull[i] && (*a).attlen == -1 && key == Some(i as i16 + 1) {
                *v = pg_sys::Datum::from(pg_sys::pg_detoast_datum_packed(v.cast_mut_ptr()));
            }
        }
        let mut isnull = isnull;
        let mut tupdesc = tupdesc;
        if let Some((tid, ext)) = tid {
            tupdesc = ext;
            values.push(pg_sys::Datum::from(tid));
            isnull.push(false);
        }
        let mt = crate::pg::compat::form_minimal_tuple(tupdesc, values.as_ptr(), isnull.as_ptr());
        let bytes = std::slice::from_raw_parts(mt as *const u8, (*mt).t_len as usize).to_vec();
        pg_sys::heap_free_minimal_tuple(mt);
        bytes
    }
}

/// Row `id` of `rel` as a heap tuple (in the current memory context) whose
/// ctid is the row's id.
///
/// # Safety
/// `rel` is an open gstore_fdw table; `bytes` a minimal tuple of it.
pub unsafe fn heap_tuple(relid: pg_sys::Oid, id: u64, bytes: &[u8]) -> pg_sys::HeapTuple {
    // As heap_tuple_from_minimal_tuple, in one allocation and one copy:
    // the header's fields before t_infomask2 zeroed, the minimal tuple's
    // bytes from MINIMAL_TUPLE_OFFSET on.
    const HEAPTUPLESIZE: usize = (std::mem::size_of::<pg_sys::HeapTupleData>() + 7) & !7;
    const MINIMAL_TUPLE_OFFSET: usize = (std::mem::offset_of!(pg_sys::HeapTupleHeaderData, t_infomask2) - 4) / 8 * 8;
    const HEAD: usize = std::mem::offset_of!(pg_sys::HeapTupleHeaderData, t_infomask2);
    // SAFETY: a fresh allocation of the tuple's size.
    unsafe {
        let len = bytes.len() + MINIMAL_TUPLE_OFFSET;
        let ht = pg_sys::palloc(HEAPTUPLESIZE + len) as pg_sys::HeapTuple;
        let data = (ht as *mut u8).add(HEAPTUPLESIZE);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.add(MINIMAL_TUPLE_OFFSET), bytes.len());
        std::ptr::write_bytes(data, 0, HEAD);
        (*ht).t_len = len as u32;
        (*ht).t_data = data.cast();
        (*ht).t_self = state::ctid_of(id);
        (*ht).t_tableOid = relid;
        ht
    }
}

unsafe fn state_of<'a>(rinfo: *mut pg_sys::ResultRelInfo) -> Option<&'a mut ModifyState> {
    // SAFETY: ri_FdwState is null or our ModifyState.
    unsafe { ((*rinfo).ri_FdwState as *mut ModifyState).as_mut() }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn is_updatable(_rel: pg_sys::Relation) -> c_int {
    (1 << pg_sys::CmdType::CMD_INSERT) | (1 << pg_sys::CmdType::CMD_UPDATE) | (1 << pg_sys::CmdType::CMD_DELETE)
}

#[pg_guard]
pub unsafe extern "C-unwind" fn add_update_targets(
    root: *mut pg_sys::PlannerInfo,
    rtindex: pg_sys::Index,
    _rte: *mut pg_sys::RangeTblEntry,
    _rel: pg_sys::Relation,
) {
    // SAFETY: planner callback arguments.
    unsafe {
        let var = pg_sys::makeVar(
            rtindex as _,
            pg_sys::SelfItemPointerAttributeNumber as pg_sys::AttrNumber,
            pg_sys::TIDOID,
            -1,
            pg_sys::InvalidOid,
            0,
        );
        pg_sys::add_row_identity_var(root, var, rtindex, c"ctid".as_ptr());
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn plan_modify(
    _root: *mut pg_sys::PlannerInfo,
    _plan: *mut pg_sys::ModifyTable,
    _rti: pg_sys::Index,
    _subplan_index: c_int,
) -> *mut pg_sys::List {
    std::ptr::null_mut()
}

unsafe extern "C-unwind" fn free_state(arg: *mut std::ffi::c_void) {
    // SAFETY: registered once per state.
    unsafe {
        let rinfo = arg as *mut pg_sys::ResultRelInfo;
        let p = (*rinfo).ri_FdwState as *mut ModifyState;
        if !p.is_null() {
            (*rinfo).ri_FdwState = std::ptr::null_mut();
            drop(Box::from_raw(p));
        }
    }
}

unsafe fn install(estate: *mut pg_sys::EState, rinfo: *mut pg_sys::ResultRelInfo, ctid_attno: pg_sys::AttrNumber) {
    // SAFETY: executor state; the Box is freed with the query's context.
    unsafe {
        let st = ModifyState::new((*rinfo).ri_RelationDesc, ctid_attno);
        (*rinfo).ri_FdwState = Box::into_raw(Box::new(st)).cast();
        crate::pg::memctx::on_reset((*estate).es_query_cxt, free_state, rinfo.cast());
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn begin_modify(
    mtstate: *mut pg_sys::ModifyTableState,
    rinfo: *mut pg_sys::ResultRelInfo,
    _fdw_private: *mut pg_sys::List,
    _subplan_index: c_int,
    eflags: c_int,
) {
    // SAFETY: executor callback arguments.
    unsafe {
        if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as c_int != 0 {
            return;
        }
        let mut ctid_attno = 0;
        if (*mtstate).operation != pg_sys::CmdType::CMD_INSERT {
            let sub = (*mtstate).ps.lefttree;
            ctid_attno = pg_sys::ExecFindJunkAttributeInTlist((*(*sub).plan).targetlist, c"ctid".as_ptr());
            if ctid_attno <= 0 {
                raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "could not find the junk ctid column of a gstore_fdw update".into(),
                    None,
                    None,
                );
            }
        }
        install((*mtstate).ps.state, rinfo, ctid_attno);
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn exec_insert(
    _estate: *mut pg_sys::EState,
    rinfo: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    _plan_slot: *mut pg_sys::TupleTableSlot,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback arguments.
    unsafe {
        let Some(st) = state_of(rinfo) else { return std::ptr::null_mut() };
        let (tuple, key) = st.row_and_key(slot);
        let (xid, cid) = writer_ids();
        Record::Insert { xid, cid, tuple }.encode(&mut st.inserts);
        st.insert_rows += 1;
        st.insert_keys.extend(key);
        if st.inserts.len() >= INSERT_BUFFER {
            st.flush();
        }
        slot
    }
}

/// The row id a plan slot's junk ctid names.
unsafe fn row_of(st: &ModifyState, plan_slot: *mut pg_sys::TupleTableSlot) -> u64 {
    // SAFETY: a plan slot with the junk column.
    unsafe {
        let mut isnull = false;
        let d = pg_sys::ExecGetJunkAttribute(plan_slot, st.ctid_attno, &mut isnull);
        if isnull {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "a NULL ctid in a gstore_fdw update".into(),
                None,
                None,
            );
        }
        state::id_of(&*(d.cast_mut_ptr::<pg_sys::ItemPointerData>()))
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn exec_update(
    estate: *mut pg_sys::EState,
    rinfo: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    plan_slot: *mut pg_sys::TupleTableSlot,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback arguments.
    unsafe {
        let Some(st) = state_of(rinfo) else { return std::ptr::null_mut() };
        // PostgreSQL moves no row out of a foreign partition: a new row
        // that belongs to another partition is an ERROR (SQLSTATE 23514),
        // never a row kept where it does not belong
        if (*(*st.rel).rd_rel).relispartition {
            pg_sys::ExecPartitionCheck(rinfo, slot, estate, true);
        }
        let row = row_of(st, plan_slot);
        let (tuple, key) = st.row_and_key(slot);
        let (xid, cid) = writer_ids();
        let mut body = Vec::new();
        Record::Delete { xid, cid, row, updated: true }.encode(&mut body);
        Record::Insert { xid, cid, tuple }.encode(&mut body);
        if st.append(&body, 1, Some(row), key.as_deref()) { slot } else { std::ptr::null_mut() }
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn exec_delete(
    _estate: *mut pg_sys::EState,
    rinfo: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    plan_slot: *mut pg_sys::TupleTableSlot,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: executor callback arguments.
    unsafe {
        let Some(st) = state_of(rinfo) else { return std::ptr::null_mut() };
        let row = row_of(st, plan_slot);
        let (xid, cid) = writer_ids();
        let mut body = Vec::new();
        Record::Delete { xid, cid, row, updated: false }.encode(&mut body);
        if !st.append(&body, 0, Some(row), None) {
            return std::ptr::null_mut();
        }
        // the deleted row, for RETURNING
        let rel = st.rel;
        let relid = (*rel).rd_id;
        let tuple = state::with_store(rel, |s| s.rows[row as usize].tuple.clone());
        let old = pg_sys::MemoryContextSwitchTo((*slot).tts_mcxt);
        let ht = heap_tuple(relid, row, &tuple);
        pg_sys::MemoryContextSwitchTo(old);
        pg_sys::ExecForceStoreHeapTuple(ht, slot, true);
        (*slot).tts_tid = state::ctid_of(row);
        slot
    }
}

/// EndForeignModify, and EndForeignInsert (COPY FROM, tuple routing).
#[pg_guard]
pub unsafe extern "C-unwind" fn end_modify(_estate: *mut pg_sys::EState, rinfo: *mut pg_sys::ResultRelInfo) {
    // SAFETY: executor callback arguments.
    unsafe {
        if let Some(st) = state_of(rinfo) {
            st.flush();
            super::autockpt::after_write((*rinfo).ri_RelationDesc);
        }
        free_state(rinfo.cast());
    }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn begin_insert(
    mtstate: *mut pg_sys::ModifyTableState,
    rinfo: *mut pg_sys::ResultRelInfo,
) {
    // SAFETY: executor callback arguments (COPY FROM and tuple routing
    // pass a ModifyTableState whose estate is the statement's).
    unsafe { install((*mtstate).ps.state, rinfo, 0) }
}

#[pg_guard]
pub unsafe extern "C-unwind" fn exec_truncate(
    rels: *mut pg_sys::List,
    _behavior: pg_sys::DropBehavior::Type,
    _restart: bool,
) {
    // SAFETY: the relations are open and locked AccessExclusive by TRUNCATE.
    unsafe {
        for r in crate::pg::list::from_list(rels) {
            let rel = r as pg_sys::Relation;
            let (xid, cid) = writer_ids();
            let mut body = Vec::new();
            Record::Truncate { xid, cid }.encode(&mut body);
            let mut st = ModifyState::new(rel, 0);
            st.append(&body, 0, None, None);
        }
    }
}
