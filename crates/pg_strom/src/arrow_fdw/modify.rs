//! Writable Arrow_Fdw: INSERT, INSERT ... SELECT and COPY FROM append
//! record batches to the table's file (`writable 'true'`, one `file`), in
//! the writing transaction only until it commits.
//!
//! - One writer at a time: the first write of a transaction locks the
//!   table in SHARE ROW EXCLUSIVE mode (as PG-Strom does), and the file
//!   with `flock` (shared with pg2arrow --append); readers are not blocked.
//! - Values are written as pg2arrow writes them (`pgstrom_arrow::column`,
//!   fed PostgreSQL's binary send format: fixed-width values from the
//!   Datum, numeric / arrays / composite values through their send
//!   functions), never rounded.
//! - Before the file is touched, its end (footer) is saved in an undo file
//!   (`append.rs`) with the transaction id; every statement ends with a
//!   new footer, so the writing transaction reads its own rows; other
//!   transactions read the file through the saved footer ([`open_for_read`]).
//! - PRE_COMMIT syncs the file and drops the undo file; ABORT puts the old
//!   end back.  After a crash (backend or server killed mid-INSERT) the
//!   undo file is still there: readers keep reading through it, and the
//!   next writer restores the file first.  Committed rows are never lost.
//! - Subtransactions (SAVEPOINT, PL/pgSQL exception blocks) cannot write,
//!   nor can a transaction that writes be PREPAREd: an ERROR says so.
//! - `pgstrom.arrow_fdw_truncate(regclass)` empties the table in the same
//!   transactional way (a footer listing no batch; the old bytes stay in
//!   the file, unlisted).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgstrom_arrow::column::Column;
use pgstrom_arrow::pgtype::{self, DEFAULT_NUMERIC, Plan};

use super::append::{Appender, Undo};
use super::file::ArrowFile;
use super::scan::raise;
use super::{options, types};
use crate::errors::raise_plain;
use crate::pg::memctx::Switched;

/// Rows per record batch written (a statement writes at least one batch).
const BATCH_ROWS: usize = 1 << 20;
thread_local! {
    /// The files this transaction writes, by path.
    static WRITERS: RefCell<BTreeMap<String, Appender>> = const { RefCell::new(BTreeMap::new()) };
    /// Files this transaction truncated, to cut once it committed.
    static TO_SHRINK: RefCell<Vec<(String, Appender)>> = const { RefCell::new(Vec::new()) };
}
static mut CALLBACK_REGISTERED: bool = false;

/// How a value of `typid` (modifier `typmod`) is written: the type's
/// plan, as pg2arrow writes it, except that char(n) and varchar(n) go as
/// Utf8 (multibyte characters fit).
unsafe fn plan_of(typid: pg_sys::Oid, typmod: i32) -> Result<Plan, String> {
    // SAFETY: catalog lookups of existing types (caller's promise).
    unsafe {
        // what Arrow_Fdw could not read back as the column's type
        if pg_sys::getBaseType(typid) != typid {
            return Err(format!("domain {} cannot be written to an arrow file", types::type_name(typid)));
        }
        let elem = pg_sys::get_element_type(typid);
        if elem != pg_sys::InvalidOid {
            return Ok(Plan::List(Box::new(plan_of(elem, typmod)?)));
        }
        match pg_sys::get_typtype(typid) as u8 {
            b'e' => return Err(format!("enum type {} cannot be written to an arrow file", types::type_name(typid))),
            b'c' => {
                let td = pg_sys::lookup_rowtype_tupdesc(typid, -1);
                let mut attrs = Vec::new();
                let mut failed = None;
                for i in 0..(*td).natts {
                    let a = crate::pg::compat::tuple_desc_attr(td, i);
                    if (*a).attisdropped {
                        continue;
                    }
                    let name = CStr::from_ptr((*a).attname.data.as_ptr()).to_string_lossy().into_owned();
                    match plan_of((*a).atttypid, (*a).atttypmod) {
                        Ok(p) => attrs.push((name, p)),
                        Err(e) => {
                            failed = Some(format!("attribute \"{name}\": {e}"));
                            break;
                        }
                    }
                }
                pg_sys::DecrTupleDescRefCount(td);
                return match failed {
                    Some(e) => Err(e),
                    None => Ok(Plan::Struct(attrs)),
                };
            }
            _ => {}
        }
        Ok(match typid {
            pg_sys::BOOLOID => Plan::Bool,
            pg_sys::INT2OID => Plan::I16,
            pg_sys::INT4OID => Plan::I32,
            pg_sys::INT8OID => Plan::I64,
            pg_sys::FLOAT4OID => Plan::F32,
            pg_sys::FLOAT8OID => Plan::F64,
            pg_sys::NUMERICOID => match pgtype::numeric_typmod(typmod) {
                Some((p, s)) if pgtype::decimal_fits(p, s) => Plan::Decimal(p as u8, s as i8),
                Some((p, s)) => {
                    return Err(format!(
                        "numeric({p},{s}) does not fit Decimal128 (precision 1-38, scale 0-precision)"
                    ));
                }
                None => Plan::Decimal(DEFAULT_NUMERIC.0, DEFAULT_NUMERIC.1),
            },
            pg_sys::TEXTOID | pg_sys::VARCHAROID | pg_sys::BPCHAROID => Plan::Text,
            pg_sys::BYTEAOID => Plan::Bytea,
            pg_sys::UUIDOID => Plan::Uuid,
            pg_sys::DATEOID => Plan::Date,
            pg_sys::TIMEOID => Plan::Time,
            pg_sys::TIMESTAMPOID => Plan::Timestamp,
            pg_sys::TIMESTAMPTZOID => Plan::TimestampTz,
            pg_sys::INTERVALOID => Plan::Interval,
            other if crate::float2::is_float2(other) => Plan::F16,
            other => return Err(format!("type {} cannot be written to an arrow file", types::type_name(other))),
        })
    }
}

/// The plan that writes a column of plan `ours` into an existing file's
/// `field`: the same Arrow type, or one the values convert to exactly.
fn plan_for_field(field: &Field, ours: Plan, typid: pg_sys::Oid) -> Result<Plan, String> {
    use DataType as D;
    let have = field.data_type();
    if pgtype::field("", &ours).data_type() == have {
        return Ok(ours);
    }
    Ok(match (have, ours) {
        (D::Decimal128(p, s), Plan::Decimal(..)) => Plan::Decimal(*p, *s),
        (D::Timestamp(arrow_schema::TimeUnit::Microsecond, Some(_)), Plan::TimestampTz) => Plan::TimestampTz,
        (D::FixedSizeBinary(n), Plan::Text) if typid == pg_sys::BPCHAROID => Plan::Bpchar(*n),
        (dt, _) => {
            return Err(format!("{} values cannot be written into an Arrow {dt} field", types::type_name(typid)));
        }
    })
}

/// Does `plan` hold text inside an array or a composite value?
fn nested_text(plan: &Plan, nested: bool) -> bool {
    match plan {
        Plan::Text | Plan::Bpchar(_) => nested,
        Plan::List(e) => nested_text(e, true),
        Plan::Struct(a) => a.iter().any(|(_, p)| nested_text(p, true)),
        _ => false,
    }
}

/// A value of a column as PostgreSQL's binary send format, for
/// [`Column::append`]: with `send` (numeric, arrays, composite types)
/// through the type's send function, in the current memory context
/// (reset per row by the caller); else fixed-width values from the Datum
/// itself, text and bytea as their bytes.
unsafe fn send_bytes<'a>(
    plan: &Plan,
    d: pg_sys::Datum,
    send: Option<pg_sys::Oid>,
    scratch: &'a mut [u8; 16],
) -> &'a [u8] {
    // SAFETY: `d` is a non-NULL value of the column's type (caller).
    unsafe {
        let fixed = |scratch: &'a mut [u8; 16], b: &[u8]| -> &'a [u8] {
            scratch[..b.len()].copy_from_slice(b);
            &scratch[..b.len()]
        };
        if let Some(f) = send {
            let b = pg_sys::OidSendFunctionCall(f, d);
            return <&[u8] as FromDatum>::from_datum(pg_sys::Datum::from(b), false).expect("a bytea");
        }
        match plan {
            Plan::Bool => fixed(scratch, &[(d.value() != 0) as u8]),
            Plan::I16 => fixed(scratch, &(d.value() as i16).to_be_bytes()),
            Plan::I32 | Plan::Date => fixed(scratch, &(d.value() as i32).to_be_bytes()),
            Plan::I64 | Plan::Time | Plan::Timestamp | Plan::TimestampTz => {
                fixed(scratch, &(d.value() as i64).to_be_bytes())
            }
            Plan::F16 => fixed(scratch, &(d.value() as u16).to_be_bytes()),
            Plan::F32 => fixed(scratch, &(d.value() as u32).to_be_bytes()),
            Plan::F64 => fixed(scratch, &(d.value() as u64).to_be_bytes()),
            Plan::Interval => {
                let iv = d.cast_mut_ptr::<pg_sys::Interval>();
                scratch[..8].copy_from_slice(&(*iv).time.to_be_bytes());
                scratch[8..12].copy_from_slice(&(*iv).day.to_be_bytes());
                scratch[12..16].copy_from_slice(&(*iv).month.to_be_bytes());
                &scratch[..]
            }
            Plan::Uuid => std::slice::from_raw_parts(d.cast_mut_ptr::<u8>(), 16),
            Plan::Text | Plan::Bpchar(_) | Plan::Bytea => <&[u8] as FromDatum>::from_datum(d, false).expect("not NULL"),
            Plan::U32 => fixed(scratch, &(d.value() as u32).to_be_bytes()),
            Plan::Decimal(..) | Plan::List(_) | Plan::Struct(_) => unreachable!("written through the send function"),
        }
    }
}

/// One column being written.
struct WriteColumn {
    /// Attribute index in the table's tuple descriptor.
    att: usize,
    name: String,
    plan: Plan,
    /// The type's send function, for values not taken from the Datum
    /// directly (numeric, arrays, composite types).
    send: Option<pg_sys::Oid>,
    column: Column,
}

/// The state of one INSERT / COPY into an Arrow table.
struct ModifyState {
    path: String,
    cols: Vec<WriteColumn>,
    rows: usize,
    /// Reset after every row (send functions' results).
    row_cxt: pg_sys::MemoryContext,
}

impl ModifyState {
    /// Append a row.
    unsafe fn push(&mut self, slot: *mut pg_sys::TupleTableSlot) {
        // SAFETY: a slot of the table's row type (executor); the row
        // context is ours.
        unsafe {
            pg_sys::slot_getallattrs(slot);
            let cxt = Switched::to(self.row_cxt);
            let mut scratch = [0u8; 16];
            for c in &mut self.cols {
                let v = (!*(*slot).tts_isnull.add(c.att))
                    .then(|| send_bytes(&c.plan, *(*slot).tts_values.add(c.att), c.send, &mut scratch));
                if let Err(e) = c.column.append(v) {
                    let code = if ["date", "timestamp", "interval"].iter().any(|w| e.contains(w)) {
                        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW
                    } else if e.contains("UTF-8") {
                        PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE
                    } else {
                        PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE
                    };
                    raise_plain(
                        code,
                        format!(
                            "value of column \"{}\" cannot be written to arrow file \"{}\": {e}",
                            c.name, self.path
                        ),
                        None,
                        None,
                    );
                }
            }
            drop(cxt);
            pg_sys::MemoryContextReset(self.row_cxt);
            self.rows += 1;
        }
    }

    /// Write the rows gathered so far as one record batch.
    fn flush(&mut self) {
        if self.rows == 0 {
            return;
        }
        WRITERS.with_borrow_mut(|w| {
            let app = w.get_mut(&self.path).expect("the transaction's writer");
            let schema = Arc::new(app.schema().clone());
            let arrays: Vec<ArrayRef> = self
                .cols
                .iter_mut()
                .zip(schema.fields())
                .map(|(c, f)| {
                    let a = c.column.finish();
                    // a file's time zone name may be another than ours
                    match f.data_type() {
                        DataType::Timestamp(_, Some(tz)) => Arc::new(
                            a.as_any()
                                .downcast_ref::<arrow_array::TimestampMicrosecondArray>()
                                .expect("timestamp")
                                .clone()
                                .with_timezone(tz.clone()),
                        ) as ArrayRef,
                        _ => a,
                    }
                })
                .collect();
            let batch = RecordBatch::try_new(schema, arrays).unwrap_or_else(|e| {
                raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("arrow record batch: {e}"), None, None)
            });
            app.write_batch(&batch).unwrap_or_else(|e| raise(e));
        });
        self.rows = 0;
    }
}

fn my_xid() -> u32 {
    // SAFETY: inside a transaction (an executor or SQL function call).
    unsafe { pg_sys::GetTopTransactionId().into_inner() }
}

/// Open `path` as this transaction may see it: through the saved footer
/// while another (or a crashed) transaction's append is not committed.
/// None: the file does not exist (yet), for a writable table.
pub fn open_for_read(path: &str, writable: bool) -> Option<ArrowFile> {
    let undo = Undo::read(path).unwrap_or_else(|e| raise(e));
    // SAFETY: inside a transaction.
    let mine = unsafe { pg_sys::GetTopTransactionIdIfAny().into_inner() };
    let result = match &undo {
        Some(u) if u.xid != mine || mine == 0 => {
            if !u.existed {
                return None;
            }
            ArrowFile::open_view(path, Some((u.at, &u.tail)))
        }
        _ => ArrowFile::open(path),
    };
    match result {
        Ok(f) => Some(f),
        Err(_) if writable && !std::path::Path::new(path).exists() => None,
        Err(e) => raise(e),
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn xact_callback(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    match event {
        pg_sys::XactEvent::XACT_EVENT_PRE_COMMIT => {
            let writers = WRITERS.with_borrow_mut(std::mem::take);
            for (path, app) in writers {
                app.sync().unwrap_or_else(|e| raise(e));
                Undo::forget(&path).unwrap_or_else(|e| raise(e));
                if app.can_shrink() {
                    TO_SHRINK.with_borrow_mut(|v| v.push((path, app)));
                }
            }
        }
        pg_sys::XactEvent::XACT_EVENT_COMMIT => {
            // a committed truncation: cut the unlisted batches' bytes (the
            // relation's lock is still held); never ERROR after commit, the
            // file stays valid, only larger, when this fails
            for (path, mut app) in TO_SHRINK.with_borrow_mut(std::mem::take) {
                if let Err(e) = app.shrink() {
                    pgrx::warning!("could not shrink arrow file \"{path}\" after its truncation: {}", e.message);
                }
            }
        }
        pg_sys::XactEvent::XACT_EVENT_PRE_PREPARE if WRITERS.with_borrow(|w| !w.is_empty()) => {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "cannot PREPARE a transaction that wrote to an arrow_fdw table".into(),
                None,
                None,
            );
        }
        pg_sys::XactEvent::XACT_EVENT_ABORT => {
            TO_SHRINK.with_borrow_mut(Vec::clear);
            let writers = WRITERS.with_borrow_mut(std::mem::take);
            for (path, app) in writers {
                drop(app);
                // never ERROR during abort: a failed restore is logged and
                // left to the next writer (the undo file stays)
                if let Ok(Some(u)) = Undo::read(&path)
                    && let Err(e) = u.restore(&path)
                {
                    pgrx::warning!("could not restore arrow file \"{path}\" after abort: {}", e.message);
                }
            }
        }
        _ => {}
    }
}

/// The table's file, checked writable; the caller holds `lockmode`.
unsafe fn writable_file(relid: pg_sys::Oid, what: &str) -> String {
    // SAFETY: a valid relation oid.
    unsafe {
        let opts = options::of_table(relid);
        let name = CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned();
        if !opts.writable || opts.files.len() != 1 {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("cannot {what} foreign table \"{name}\": it is not writable"),
                None,
                Some("Create it with OPTIONS (file '...', writable 'true')."),
            );
        }
        if pg_sys::GetCurrentTransactionNestLevel() > 1 {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("cannot {what} arrow_fdw table \"{name}\" inside a subtransaction"),
                None,
                Some("Write outside SAVEPOINTs and PL/pgSQL exception blocks."),
            );
        }
        opts.files[0].clone()
    }
}

/// This transaction's writer of `rel`'s file, created on first use: the
/// undo file saved, then the file continued (or created).
unsafe fn ensure_writer(rel: pg_sys::Relation, path: &str, keep_batches: bool) {
    if WRITERS.with_borrow(|w| w.contains_key(path)) {
        if !keep_batches {
            WRITERS.with_borrow_mut(|w| w.get_mut(path).expect("present").drop_batches());
        }
        return;
    }
    // SAFETY: registering a callback in the backend's main thread.
    unsafe {
        if !CALLBACK_REGISTERED {
            pg_sys::RegisterXactCallback(Some(xact_callback), std::ptr::null_mut());
            CALLBACK_REGISTERED = true;
        }
    }
    let xid = my_xid();
    let io_error = |what: &str, e: std::io::Error| -> ! {
        raise_plain(PgSqlErrorCode::ERRCODE_IO_ERROR, format!("could not {what} file \"{path}\": {e}"), None, None)
    };
    // the write lock first: pg2arrow --append may be writing the file
    let handle = match std::fs::OpenOptions::new().read(true).write(true).open(path) {
        Ok(h) => {
            super::append::lock(&h, path).unwrap_or_else(|e| raise(e));
            Some(h)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => io_error("open", e),
    };
    // a writer that crashed (or whose abort could not restore) left its
    // undo file: we hold the locks, so it is not running; put the file back
    if let Some(u) = Undo::read(path).unwrap_or_else(|e| raise(e)) {
        u.restore(path).unwrap_or_else(|e| raise(e));
    }
    let app = if let Some(h) = handle.filter(|_| std::path::Path::new(path).exists()) {
        let f = ArrowFile::open(path).unwrap_or_else(|e| raise(e));
        // SAFETY: an open relation.
        unsafe { super::scan::check_columns(rel, &f) };
        let mut tail = vec![0u8; (f.size - f.footer_at) as usize];
        std::os::unix::fs::FileExt::read_exact_at(&h, &mut tail, f.footer_at).unwrap_or_else(|e| io_error("read", e));
        Undo { xid, existed: true, at: f.footer_at, tail }.write(path).unwrap_or_else(|e| raise(e));
        Appender::continue_file(&f, h, keep_batches).unwrap_or_else(|e| raise(e))
    } else {
        // SAFETY: an open relation.
        let schema = unsafe { new_schema(rel) };
        Undo { xid, existed: false, at: 0, tail: Vec::new() }.write(path).unwrap_or_else(|e| raise(e));
        Appender::create(path, schema).unwrap_or_else(|e| raise(e))
    };
    WRITERS.with_borrow_mut(|w| w.insert(path.to_string(), app));
}

/// The schema of a new file for `rel`'s columns.
unsafe fn new_schema(rel: pg_sys::Relation) -> Schema {
    // SAFETY: an open relation.
    unsafe {
        let tupdesc = (*rel).rd_att;
        let fields: Vec<Field> = types::live_attrs(tupdesc)
            .into_iter()
            .map(|(i, typid)| {
                let a = crate::pg::compat::tuple_desc_attr(tupdesc, i as i32);
                let name = CStr::from_ptr((*a).attname.data.as_ptr()).to_string_lossy().into_owned();
                let plan = plan_of(typid, (*a).atttypmod).unwrap_or_else(|e| {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                        format!("column \"{name}\" cannot be written to an arrow file: {e}"),
                        None,
                        None,
                    )
                });
                pgtype::field(&name, &plan)
            })
            .collect();
        Schema::new(fields)
    }
}

unsafe fn begin(rinfo: *mut pg_sys::ResultRelInfo) {
    // SAFETY: executor callback arguments.
    unsafe {
        let rel = (*rinfo).ri_RelationDesc;
        let relid = (*rel).rd_id;
        let path = writable_file(relid, "insert into");
        pg_sys::LockRelationOid(relid, pg_sys::ShareRowExclusiveLock as i32);
        ensure_writer(rel, &path, true);
        let tupdesc = (*rel).rd_att;
        let fields: Vec<Field> = WRITERS.with_borrow(|w| {
            w.get(&path).expect("ensured").schema().fields().iter().map(|f| f.as_ref().clone()).collect()
        });
        let cols = types::live_attrs(tupdesc)
            .into_iter()
            .zip(&fields)
            .map(|((i, typid), f)| {
                let not_supported = |e: String| -> ! {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                        format!("column \"{}\" cannot be written to an arrow file: {e}", f.name()),
                        None,
                        None,
                    )
                };
                let a = crate::pg::compat::tuple_desc_attr(tupdesc, i as i32);
                let plan = plan_of(typid, (*a).atttypmod)
                    .and_then(|p| plan_for_field(f, p, typid))
                    .unwrap_or_else(|e| not_supported(e));
                if nested_text(&plan, false) && pg_sys::GetDatabaseEncoding() != pg_sys::pg_enc::PG_UTF8 as i32 {
                    not_supported("writing text to arrow files needs a UTF8 database".into());
                }
                let send = matches!(plan, Plan::Decimal(..) | Plan::List(_) | Plan::Struct(_)).then(|| {
                    let (mut f, mut varlena) = (pg_sys::Oid::INVALID, false);
                    pg_sys::getTypeBinaryOutputInfo(typid, &mut f, &mut varlena);
                    f
                });
                // send functions convert text inside arrays and composites
                // to the client's encoding
                if send.is_some()
                    && nested_text(&plan, false)
                    && pg_sys::pg_get_client_encoding() != pg_sys::pg_enc::PG_UTF8 as i32
                {
                    not_supported(
                        "text inside arrays or composite values is written with client_encoding UTF8 only".into(),
                    );
                }
                let column = Column::new_exact(&plan);
                WriteColumn { att: i, name: f.name().clone(), plan, send, column }
            })
            .collect();
        let row_cxt = pg_sys::AllocSetContextCreateInternal(
            pg_sys::CurrentMemoryContext,
            c"arrow_fdw insert row".as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        );
        let st = Box::new(ModifyState { path, cols, rows: 0, row_cxt });
        (*rinfo).ri_FdwState = Box::into_raw(st).cast();
    }
}

unsafe fn end(rinfo: *mut pg_sys::ResultRelInfo) {
    // SAFETY: ri_FdwState is NULL or our Box.
    unsafe {
        let p = (*rinfo).ri_FdwState as *mut ModifyState;
        if p.is_null() {
            return;
        }
        (*rinfo).ri_FdwState = std::ptr::null_mut();
        let mut st = Box::from_raw(p);
        st.flush();
        // a footer after every statement: this transaction reads its rows
        WRITERS
            .with_borrow_mut(|w| w.get_mut(&st.path).expect("the transaction's writer").finish())
            .unwrap_or_else(|e| raise(e));
    }
}

/// IsForeignRelUpdatable: INSERT on writable tables.
#[pg_guard]
pub unsafe extern "C-unwind" fn is_updatable(rel: pg_sys::Relation) -> i32 {
    // SAFETY: an open relation.
    let opts = unsafe { options::of_table((*rel).rd_id) };
    if opts.writable { 1 << pg_sys::CmdType::CMD_INSERT } else { 0 }
}

/// BeginForeignModify (INSERT).
#[pg_guard]
pub unsafe extern "C-unwind" fn begin_modify(
    _mtstate: *mut pg_sys::ModifyTableState,
    rinfo: *mut pg_sys::ResultRelInfo,
    _fdw_private: *mut pg_sys::List,
    _subplan_index: i32,
    eflags: i32,
) {
    if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as i32 != 0 {
        return;
    }
    // SAFETY: executor callback.
    unsafe { begin(rinfo) }
}

/// BeginForeignInsert (COPY FROM, partition routing).
#[pg_guard]
pub unsafe extern "C-unwind" fn begin_insert(
    _mtstate: *mut pg_sys::ModifyTableState,
    rinfo: *mut pg_sys::ResultRelInfo,
) {
    // SAFETY: executor callback.
    unsafe { begin(rinfo) }
}

/// ExecForeignInsert.
#[pg_guard]
pub unsafe extern "C-unwind" fn exec_insert(
    _estate: *mut pg_sys::EState,
    rinfo: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    _plan_slot: *mut pg_sys::TupleTableSlot,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: ri_FdwState is our state (begin ran).
    unsafe {
        let st = &mut *((*rinfo).ri_FdwState as *mut ModifyState);
        st.push(slot);
        if st.rows >= BATCH_ROWS {
            st.flush();
        }
    }
    slot
}

/// EndForeignModify.
#[pg_guard]
pub unsafe extern "C-unwind" fn end_modify(_estate: *mut pg_sys::EState, rinfo: *mut pg_sys::ResultRelInfo) {
    // SAFETY: executor callback.
    unsafe { end(rinfo) }
}

/// EndForeignInsert.
#[pg_guard]
pub unsafe extern "C-unwind" fn end_insert(_estate: *mut pg_sys::EState, rinfo: *mut pg_sys::ResultRelInfo) {
    // SAFETY: executor callback.
    unsafe { end(rinfo) }
}

/// `pgstrom.arrow_fdw_truncate(regclass)`: empty a writable Arrow table
/// (transactional; the file keeps the old bytes, unlisted).
pub fn truncate(relid: pg_sys::Oid) {
    // SAFETY: a relation oid from a regclass argument.
    unsafe {
        pg_sys::LockRelationOid(relid, pg_sys::AccessExclusiveLock as i32);
        if !super::is_arrow_table(relid) {
            raise_plain(
                PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                "arrow_fdw_truncate: not an arrow_fdw foreign table".into(),
                None,
                None,
            );
        }
        let path = writable_file(relid, "truncate");
        if pg_sys::pg_class_aclcheck(relid, pg_sys::GetUserId(), pg_sys::ACL_TRUNCATE as pg_sys::AclMode)
            != pg_sys::AclResult::ACLCHECK_OK
        {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to truncate this arrow_fdw table".into(),
                None,
                None,
            );
        }
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        ensure_writer(rel, &path, false);
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        WRITERS.with_borrow_mut(|w| w.get_mut(&path).expect("ensured").finish()).unwrap_or_else(|e| raise(e));
    }
}
