//! Writable Arrow_Fdw: INSERT, INSERT ... SELECT and COPY FROM append
//! record batches to the table's file (`writable 'true'`, one `file`), in
//! the writing transaction only until it commits.
//!
//! - One writer at a time: the first write of a transaction locks the
//!   table in SHARE ROW EXCLUSIVE mode (as the seed says); readers are not
//!   blocked.
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

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder, Float64Builder,
    Int16Builder, Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use pgrx::pg_sys;
use pgrx::prelude::*;

use super::append::{Appender, Undo};
use super::file::ArrowFile;
use super::scan::raise;
use super::{options, types};
use crate::errors::raise_plain;

/// Rows per record batch written (a statement writes at least one batch).
const BATCH_ROWS: usize = 1 << 20;
/// Days from 1970-01-01 to PostgreSQL's epoch 2000-01-01.
const EPOCH_DAYS: i64 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const EPOCH_US: i64 = EPOCH_DAYS * 86_400_000_000;

thread_local! {
    /// The files this transaction writes, by path.
    static WRITERS: RefCell<BTreeMap<String, Appender>> = const { RefCell::new(BTreeMap::new()) };
}
static mut CALLBACK_REGISTERED: bool = false;

/// How a column's values are written.
#[derive(Debug, Clone, Copy)]
enum Kind {
    I16,
    I32,
    I64,
    F32,
    F64,
    Bool,
    Text,
    Bytea,
    Date,
    Timestamp,
    Decimal(i8),
}

/// The Arrow type a new file gets for a column of `typid` / `typmod`.
fn arrow_type(typid: pg_sys::Oid, typmod: i32) -> Result<DataType, String> {
    Ok(match typid {
        pg_sys::INT2OID => DataType::Int16,
        pg_sys::INT4OID => DataType::Int32,
        pg_sys::INT8OID => DataType::Int64,
        pg_sys::FLOAT4OID => DataType::Float32,
        pg_sys::FLOAT8OID => DataType::Float64,
        pg_sys::BOOLOID => DataType::Boolean,
        pg_sys::TEXTOID | pg_sys::VARCHAROID | pg_sys::BPCHAROID => DataType::Utf8,
        pg_sys::BYTEAOID => DataType::Binary,
        pg_sys::DATEOID => DataType::Date32,
        pg_sys::TIMESTAMPOID => DataType::Timestamp(TimeUnit::Microsecond, None),
        pg_sys::TIMESTAMPTZOID => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        pg_sys::NUMERICOID if typmod >= 4 => {
            let (p, s) = (((typmod - 4) >> 16) & 0xffff, ((typmod - 4) & 0x7ff) as i16);
            if !(1..=38).contains(&p) || s < 0 || s as i32 > p {
                return Err(format!("numeric({p},{s}) does not fit Decimal128 (precision 1-38, scale 0-precision)"));
            }
            DataType::Decimal128(p as u8, s as i8)
        }
        pg_sys::NUMERICOID => return Err("numeric without a precision has no Arrow type: declare numeric(p,s)".into()),
        other => return Err(format!("type {} cannot be written yet", types::type_name(other))),
    })
}

/// How a value of `typid` goes into a field of the file.
fn kind(field: &Field, typid: pg_sys::Oid) -> Result<Kind, String> {
    use DataType as D;
    Ok(match (field.data_type(), typid) {
        (D::Int16, pg_sys::INT2OID) => Kind::I16,
        (D::Int32, pg_sys::INT4OID) => Kind::I32,
        (D::Int64, pg_sys::INT8OID) => Kind::I64,
        (D::Float32, pg_sys::FLOAT4OID) => Kind::F32,
        (D::Float64, pg_sys::FLOAT8OID) => Kind::F64,
        (D::Boolean, pg_sys::BOOLOID) => Kind::Bool,
        (D::Utf8, pg_sys::TEXTOID | pg_sys::VARCHAROID | pg_sys::BPCHAROID) => Kind::Text,
        (D::Binary, pg_sys::BYTEAOID) => Kind::Bytea,
        (D::Date32, pg_sys::DATEOID) => Kind::Date,
        (D::Timestamp(TimeUnit::Microsecond, None), pg_sys::TIMESTAMPOID)
        | (D::Timestamp(TimeUnit::Microsecond, Some(_)), pg_sys::TIMESTAMPTZOID) => Kind::Timestamp,
        (D::Decimal128(_, s), pg_sys::NUMERICOID) => Kind::Decimal(*s),
        (dt, t) => {
            return Err(format!("{} values cannot be written into an Arrow {dt} field yet", types::type_name(t)));
        }
    })
}

fn builder(k: Kind) -> Box<dyn ArrayBuilder> {
    match k {
        Kind::I16 => Box::new(Int16Builder::new()),
        Kind::I32 => Box::new(Int32Builder::new()),
        Kind::I64 => Box::new(Int64Builder::new()),
        Kind::F32 => Box::new(Float32Builder::new()),
        Kind::F64 => Box::new(Float64Builder::new()),
        Kind::Bool => Box::new(BooleanBuilder::new()),
        Kind::Text => Box::new(StringBuilder::new()),
        Kind::Bytea => Box::new(BinaryBuilder::new()),
        Kind::Date => Box::new(Date32Builder::new()),
        Kind::Timestamp => Box::new(TimestampMicrosecondBuilder::new()),
        Kind::Decimal(..) => Box::new(Decimal128Builder::new()),
    }
}

/// An exact decimal of `scale` digits after the point from numeric_out's
/// text (which writes the column's scale).
fn parse_decimal(s: &str, scale: i8) -> Option<i128> {
    let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > scale as usize || int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v: i128 = 0;
    for c in int.chars().chain(frac.chars()).chain(std::iter::repeat_n('0', scale as usize - frac.len())) {
        v = v.checked_mul(10)?.checked_add(c.to_digit(10)? as i128)?;
    }
    Some(if neg { -v } else { v })
}

fn bad_value(what: String) -> ! {
    raise_plain(PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, what, None, None)
}

/// The state of one INSERT / COPY into an Arrow table.
struct ModifyState {
    path: String,
    /// (attribute index, kind, type, builder) per column in file order.
    cols: Vec<(usize, Kind, pg_sys::Oid, Box<dyn ArrayBuilder>)>,
    rows: usize,
}

impl ModifyState {
    /// Append a row.
    unsafe fn push(&mut self, slot: *mut pg_sys::TupleTableSlot) {
        // SAFETY: a slot of the table's row type (executor).
        unsafe {
            pg_sys::slot_getallattrs(slot);
            for (att, k, typid, b) in &mut self.cols {
                let isnull = *(*slot).tts_isnull.add(*att);
                let d = *(*slot).tts_values.add(*att);
                let b = b.as_any_mut();
                macro_rules! put {
                    ($t:ty, $v:expr) => {{
                        let b = b.downcast_mut::<$t>().expect("builder of its kind");
                        if isnull { b.append_null() } else { b.append_value($v) }
                    }};
                }
                match *k {
                    Kind::I16 => put!(Int16Builder, d.value() as i16),
                    Kind::I32 => put!(Int32Builder, d.value() as i32),
                    Kind::I64 => put!(Int64Builder, d.value() as i64),
                    Kind::F32 => put!(Float32Builder, f32::from_bits(d.value() as u32)),
                    Kind::F64 => put!(Float64Builder, f64::from_bits(d.value() as u64)),
                    Kind::Bool => put!(BooleanBuilder, d.value() != 0),
                    Kind::Text | Kind::Bytea => {
                        let bytes = if isnull {
                            &[][..]
                        } else {
                            <&[u8] as FromDatum>::from_datum(d, false).expect("not NULL")
                        };
                        if matches!(k, Kind::Text) {
                            let s = std::str::from_utf8(bytes).unwrap_or_else(|_| {
                                raise_plain(
                                    PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE,
                                    "arrow files hold UTF-8 text; this value is not".into(),
                                    None,
                                    None,
                                )
                            });
                            put!(StringBuilder, s)
                        } else {
                            put!(BinaryBuilder, bytes)
                        }
                    }
                    Kind::Date => {
                        let v = d.value() as i32;
                        if !isnull && (v == i32::MIN || v == i32::MAX) {
                            bad_value("infinite dates cannot be written into an arrow file".into());
                        }
                        let days = i32::try_from(v as i64 + EPOCH_DAYS)
                            .unwrap_or_else(|_| bad_value("date out of range for an arrow Date32 field".into()));
                        put!(Date32Builder, if isnull { 0 } else { days })
                    }
                    Kind::Timestamp => {
                        let v = d.value() as i64;
                        if !isnull && (v == i64::MIN || v == i64::MAX) {
                            bad_value("infinite timestamps cannot be written into an arrow file".into());
                        }
                        let us = if isnull {
                            0
                        } else {
                            v.checked_add(EPOCH_US).unwrap_or_else(|| {
                                bad_value("timestamp out of range for an arrow Timestamp field".into())
                            })
                        };
                        put!(TimestampMicrosecondBuilder, us)
                    }
                    Kind::Decimal(scale) => {
                        let v = if isnull {
                            0
                        } else {
                            let mut out_fn = pg_sys::Oid::INVALID;
                            let mut varlena = false;
                            pg_sys::getTypeOutputInfo(*typid, &mut out_fn, &mut varlena);
                            let text = CStr::from_ptr(pg_sys::OidOutputFunctionCall(out_fn, d)).to_string_lossy();
                            parse_decimal(&text, scale).unwrap_or_else(|| {
                                raise_plain(
                                    PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                                    format!("numeric value {text} does not fit the file's Decimal128 column"),
                                    None,
                                    None,
                                )
                            })
                        };
                        put!(Decimal128Builder, v)
                    }
                }
            }
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
                .map(|((.., b), f)| {
                    let a = b.finish();
                    match f.data_type() {
                        DataType::Decimal128(p, s) => Arc::new(
                            a.as_any()
                                .downcast_ref::<arrow_array::Decimal128Array>()
                                .expect("decimal")
                                .clone()
                                .with_precision_and_scale(*p, *s)
                                .expect("checked at open"),
                        ) as ArrayRef,
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
                let a = pg_sys::TupleDescAttr(tupdesc, i as i32);
                let name = CStr::from_ptr((*a).attname.data.as_ptr()).to_string_lossy().into_owned();
                let dt = arrow_type(typid, (*a).atttypmod).unwrap_or_else(|e| {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                        format!("column \"{name}\" cannot be written to an arrow file: {e}"),
                        None,
                        None,
                    )
                });
                Field::new(name, dt, true)
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
                let k = kind(f, typid).unwrap_or_else(|e| {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                        format!("column \"{}\" cannot be written to an arrow file: {e}", f.name()),
                        None,
                        None,
                    )
                });
                if matches!(k, Kind::Text) && pg_sys::GetDatabaseEncoding() != pg_sys::pg_enc::PG_UTF8 as i32 {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                        "writing text to arrow files needs a UTF8 database".into(),
                        None,
                        None,
                    );
                }
                (i, k, typid, builder(k))
            })
            .collect();
        let st = Box::new(ModifyState { path, cols, rows: 0 });
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

#[cfg(test)]
mod tests {
    use super::parse_decimal;

    #[test]
    fn decimals_parse_at_their_scale() {
        assert_eq!(parse_decimal("12.34", 2), Some(1234));
        assert_eq!(parse_decimal("-0.5", 3), Some(-500));
        assert_eq!(parse_decimal("7", 2), Some(700));
        assert_eq!(parse_decimal("1.234", 2), None);
        assert_eq!(parse_decimal("NaN", 2), None);
    }
}
