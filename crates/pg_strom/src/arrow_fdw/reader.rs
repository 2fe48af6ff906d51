//! The executor side of reading an Arrow_Fdw table, shared by the FDW's
//! own scan (scan.rs) and GpuScan over an Arrow table.
//!
//! Owns: the files of a running scan with their decoders, the referenced
//! columns and how to convert them, the statistics hints and their parsed
//! per-batch min/max, the order of record batches (handed out by a shared
//! counter in parallel scans), the current batch, rows into a slot, the
//! device columns of a slice of the batch, the error context (file,
//! batch, column, row) and the EXPLAIN lines.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int16Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ipc::reader::FileDecoder;
use arrow_schema::DataType;
use pgrx::pg_sys;

use pgstrom_runtime::DeviceError;
use pgstrom_runtime::engine::{ColumnData, FileForm, FileSlice};
use pgstrom_runtime::fileread::FileAccess;
use pgstrom_runtime::join::JoinSession;

use super::file::ArrowFile;
use super::scan::{open_files, raise};
use super::{stats, types};
use crate::chunk::ColumnChunk;
use crate::pg::explain::{prop_text, size_text};
use crate::pg::memctx::Switched;

/// Rows of a chunk of an Arrow table whose columns the engine reads from
/// the files itself (a record batch, unless larger): a multiple of 64.
pub const FILE_CHUNK_ROWS: usize = 1 << 24;

/// Shared state of a parallel scan (in the DSM).
#[repr(C)]
pub struct Shared {
    next: AtomicU64,
    loaded: AtomicU64,
    skipped: AtomicU64,
}

/// One file of a running scan.
struct FileScan {
    file: ArrowFile,
    decoder: Option<FileDecoder>,
    /// Per hint: each batch's (min, max) in the column's type.
    stats: Vec<Option<stats::BatchStats>>,
}

/// Where the scan is, for error messages.
#[derive(Default, Clone, Copy)]
struct Position {
    file: usize,
    batch: usize,
    column: Option<usize>,
    row: usize,
}

/// A running read of an Arrow table.
pub struct ArrowReader {
    relid: pg_sys::Oid,
    files: Vec<FileScan>,
    /// Referenced (field index, attribute index), ascending by field.
    columns: Vec<(usize, usize)>,
    fields: Vec<usize>,
    targets: Vec<types::Target>,
    hints: Vec<stats::Hint>,
    /// The hint clauses, for EXPLAIN.
    hint_exprs: Vec<*mut pg_sys::Node>,
    /// Hints from the scan's quals (the first ones); the rest are join-key
    /// ranges ([`Self::set_join_hints`]), shown as `join_hint_text`.
    static_hints: usize,
    /// The hints' values are evaluated again before the next batch is
    /// chosen (set by a rescan).
    hints_stale: bool,
    join_hint_text: Vec<String>,
    /// (file, batch) in scan order.
    order: Vec<(usize, usize)>,
    next: usize,
    shared: *mut Shared,
    /// The current batch: (file, batch), and its columns once read
    /// (read when needed while an engine reads the files itself).
    current: Option<(usize, usize)>,
    pub batch: Option<RecordBatch>,
    /// Per file: its number in the engine's session, when the engine
    /// reads fixed-width columns from the files itself (empty: it does not).
    handles: Vec<Option<u32>>,
    /// Per file, with `handles`: how the engine reads it (cuFile or pinned
    /// buffers).
    access: Vec<FileAccess>,
    pos: Position,
    pub loaded: u64,
    pub skipped: u64,
    errcb: pg_sys::ErrorContextCallback,
    /// GpuScan/GpuJoin: the device columns of the current slice.
    dev: ColumnChunk,
    device_columns: usize,
    /// Memory for values converted into device columns (reset per slice).
    dev_cxt: pg_sys::MemoryContext,
}

unsafe extern "C" {
    fn errcontext_msg(fmt: *const c_char, ...) -> c_int;
}

/// The error context of a scan: "arrow_fdw scan of file ..., record batch ...".
unsafe extern "C-unwind" fn error_context(arg: *mut c_void) {
    // SAFETY: arg is the ArrowReader that pushed this callback.
    unsafe {
        let st = &*(arg as *const ArrowReader);
        let Some(f) = st.files.get(st.pos.file) else { return };
        let mut s = format!("arrow_fdw scan of file \"{}\", record batch {}", f.file.path, st.pos.batch);
        if let Some(c) = st.pos.column {
            let field = f.file.schema.field(st.columns[c].0);
            s.push_str(&format!(", column \"{}\", row {}", field.name(), st.pos.row));
        }
        let c = CString::new(s.replace('\0', "")).expect("NULs removed");
        pg_sys::set_errcontext_domain(c"pg_strom".as_ptr());
        errcontext_msg(c"%s".as_ptr(), c.as_ptr());
    }
}

/// The field indexes of live attributes `attnums` (files map columns by
/// position, dropped columns skipped), ascending.
///
/// # Safety
/// `tupdesc` is valid.
pub unsafe fn fields_of(tupdesc: pg_sys::TupleDesc, attnums: &[i16]) -> Vec<(usize, usize)> {
    // SAFETY: valid descriptor.
    let live = unsafe { types::live_attrs(tupdesc) };
    let mut out: Vec<(usize, usize)> = attnums
        .iter()
        .filter_map(|&a| live.iter().position(|&(i, _)| i == (a - 1) as usize).map(|f| (f, (a - 1) as usize)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether an engine reading the files itself takes a column of Arrow
/// type `dt` read as `typid` as the file holds it (the device's layout).
pub fn file_native(dt: &DataType, typid: pg_sys::Oid) -> bool {
    matches!(
        (dt, typid),
        (DataType::Int16, pg_sys::INT2OID)
            | (DataType::Int32, pg_sys::INT4OID)
            | (DataType::Int64, pg_sys::INT8OID)
            | (DataType::Float32, pg_sys::FLOAT4OID)
            | (DataType::Float64, pg_sys::FLOAT8OID)
    )
}

/// How an engine reading the files itself takes a column of Arrow type
/// `dt` read as (`typid`, `typmod`): as the file holds it ([`file_native`]),
/// or widened: Decimal128 into the device's numeric where the typmod keeps
/// the file's scale, Date32 into date, FixedSizeBinary(n) as char(n) (a
/// value the type cannot hold is PostgreSQL's error, a char(n) value not
/// all ASCII is padded by bpchar's input: the backend converts the rows
/// then); None when the backend hands the column over in memory.
pub fn file_form(dt: &DataType, typid: pg_sys::Oid, typmod: i32) -> Option<FileForm> {
    if file_native(dt, typid) {
        return Some(FileForm::AsIs);
    }
    match (dt, typid) {
        (DataType::Decimal128(p, s), pg_sys::NUMERICOID) if *s >= 0 => {
            let digits = types::numeric_typmod_digits(typmod, *p, *s)?;
            let strict = pgstrom_arrow::pgtype::numeric_typmod(typmod).is_some_and(|(p, _)| p <= 38);
            Some(FileForm::Decimal128 { scale: *s as u8, digits: digits as u8, strict })
        }
        (DataType::Date32, pg_sys::DATEOID) => Some(FileForm::Date32),
        // char(n) as pg2arrow writes it, in a UTF-8 database (as the bytes
        // handed over in memory: ArrowReader::text_as_is)
        (DataType::FixedSizeBinary(size), pg_sys::BPCHAROID)
            if *size > 0
                && typmod == size + pg_sys::VARHDRSZ as i32
                // SAFETY: a backend with a database.
                && unsafe { pg_sys::GetDatabaseEncoding() } == pg_sys::pg_enc::PG_UTF8 as i32 =>
        {
            Some(FileForm::FixedText { size: *size as u32 })
        }
        _ => None,
    }
}

/// Whether the backend converts a column of Arrow type `dt` read as
/// (`typid`, `typmod`) for the device: every type but those an engine
/// reads from the files ([`file_form`]) and text-like bytes it hands over
/// as they are (UTF-8 and FixedSizeBinary text: a copy, no conversion).
pub fn host_converts(dt: &DataType, typid: pg_sys::Oid, typmod: i32) -> bool {
    file_form(dt, typid, typmod).is_none()
        && !matches!(
            (dt, typid),
            (DataType::Utf8, pg_sys::TEXTOID | pg_sys::VARCHAROID) | (DataType::FixedSizeBinary(_), pg_sys::BPCHAROID)
        )
}

impl ArrowReader {
    /// Open the table's files for a scan of `attnums` (1-based) with the
    /// hint clauses `hint_exprs` (values evaluated now, in `ps`), and
    /// `device` columns ((attnum, device type) for GpuScan).
    ///
    /// # Safety
    /// Executor start; `rel` an arrow_fdw table; current memory context
    /// the query's.
    pub unsafe fn open(
        rel: pg_sys::Relation,
        attnums: &[i16],
        hint_exprs: Vec<*mut pg_sys::Node>,
        ps: *mut pg_sys::PlanState,
        device: &[(i16, u16)],
        explain_only: bool,
    ) -> Box<ArrowReader> {
        // SAFETY: caller's promise.
        unsafe {
            let (_, files) = open_files(rel);
            let tupdesc = (*rel).rd_att;
            let mut all: Vec<i16> = attnums.to_vec();
            all.extend(device.iter().map(|&(a, _)| a));
            let columns = fields_of(tupdesc, &all);
            let fields: Vec<usize> = columns.iter().map(|&(f, _)| f).collect();
            let hints = if crate::guc::ARROW_STATS_HINT.get() && !explain_only && !hint_exprs.is_empty() {
                stats::Hint::prepare(&hint_exprs, &columns, ps)
            } else {
                Vec::new()
            };
            let mut scans = Vec::with_capacity(files.len());
            for file in files {
                let (decoder, stats) = if explain_only {
                    (None, Vec::new())
                } else {
                    let d = file.decoder(&fields).unwrap_or_else(|e| raise(e));
                    let s = hints.iter().map(|h| h.parse_stats(&file)).collect();
                    (Some(d), s)
                };
                scans.push(FileScan { file, decoder, stats });
            }
            let order =
                scans.iter().enumerate().flat_map(|(f, s)| (0..s.file.batches.len()).map(move |b| (f, b))).collect();
            let targets = columns
                .iter()
                .map(|&(_, a)| {
                    let att = crate::pg::compat::tuple_desc_attr(tupdesc, a as i32);
                    types::Target::new((*att).atttypid, (*att).atttypmod)
                })
                .collect();
            let dev = ColumnChunk::new(device);
            let dev_cxt = pg_sys::AllocSetContextCreateExtended(
                pg_sys::CurrentMemoryContext,
                c"arrow_fdw device columns".as_ptr(),
                pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
                pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
                pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
            );
            let static_hints = hints.len();
            Box::new(ArrowReader {
                relid: (*rel).rd_id,
                files: scans,
                columns,
                fields,
                targets,
                hints,
                hint_exprs: if crate::guc::ARROW_STATS_HINT.get() { hint_exprs } else { Vec::new() },
                static_hints,
                hints_stale: true,
                join_hint_text: Vec::new(),
                order,
                next: 0,
                shared: std::ptr::null_mut(),
                current: None,
                batch: None,
                handles: Vec::new(),
                access: Vec::new(),
                pos: Position::default(),
                loaded: 0,
                skipped: 0,
                errcb: pg_sys::ErrorContextCallback::default(),
                device_columns: device.len(),
                dev,
                dev_cxt,
            })
        }
    }

    /// The table's files (where its rows lie, for the GPU the scan
    /// prefers).
    pub fn file_paths(&self) -> Vec<std::path::PathBuf> {
        self.files.iter().map(|f| std::path::PathBuf::from(&f.file.path)).collect()
    }

    /// Push the error context (file, batch, column, row) for PostgreSQL
    /// errors raised while converting; pair with [`Self::pop_context`].
    pub fn push_context(&mut self) {
        self.errcb.callback = Some(error_context);
        self.errcb.arg = (self as *mut ArrowReader).cast();
        // SAFETY: the reader outlives the callback's place on the stack
        // (popped before returning; an ERROR resets the stack).
        unsafe {
            self.errcb.previous = pg_sys::error_context_stack;
            pg_sys::error_context_stack = &mut self.errcb;
        }
    }

    pub fn pop_context(&mut self) {
        // SAFETY: pushed by push_context.
        unsafe { pg_sys::error_context_stack = self.errcb.previous };
    }

    /// The next (file, batch) to read that the hints do not rule out.
    fn next_batch(&mut self) -> Option<(usize, usize)> {
        if self.hints_stale {
            self.hints_stale = false;
            for h in &mut self.hints[..self.static_hints] {
                // SAFETY: the scan's backend, during the scan.
                unsafe { h.refresh() };
            }
        }
        loop {
            let g = if self.shared.is_null() {
                self.next += 1;
                self.next - 1
            } else {
                // SAFETY: the DSM outlives the scan.
                unsafe { (*self.shared).next.fetch_add(1, Ordering::Relaxed) as usize }
            };
            let &(f, b) = self.order.get(g)?;
            let fs = &self.files[f];
            let keep = self.hints.iter().zip(&fs.stats).all(|(h, s)| h.may_match(s.as_ref().and_then(|s| s[b])));
            let counter = if keep { &mut self.loaded } else { &mut self.skipped };
            *counter += 1;
            // SAFETY: as above.
            if let Some(s) = unsafe { self.shared.as_ref() } {
                if keep { &s.loaded } else { &s.skipped }.fetch_add(1, Ordering::Relaxed);
            }
            if keep {
                return Some((f, b));
            }
        }
    }

    /// Read the next record batch the hints keep into [`Self::batch`];
    /// false at the end of the scan.
    pub fn read_next(&mut self) -> bool {
        self.batch = None;
        self.current = None;
        let Some((f, b)) = self.next_batch() else { return false };
        self.current = Some((f, b));
        if self.handles.is_empty() {
            self.read_batch(f, b);
        } else {
            self.pos = Position { file: f, batch: b, column: None, row: 0 };
        }
        true
    }

    /// Read the current batch's columns if they were left to the engine.
    fn ensure_batch(&mut self) {
        if self.batch.is_none()
            && let Some((f, b)) = self.current
        {
            self.read_batch(f, b);
        }
    }

    /// Skip record batches whose statistics put column `attno` (1-based)
    /// wholly outside `range` (None: the inner relation has no key, so no
    /// batch with statistics can match): the key ranges of a join's inner
    /// relations, computed when they are loaded, replacing earlier ones.
    /// Columns without statistics, or of types without btree ordering,
    /// are left alone.  Only integer and date columns are taken.
    ///
    /// # Safety
    /// A backend, before the scan reads (or after a rescan).
    pub unsafe fn set_join_hints(&mut self, ranges: &[(i16, Option<(i64, i64)>)]) {
        // SAFETY: caller's promise.
        unsafe {
            self.hints.truncate(self.static_hints);
            for f in &mut self.files {
                f.stats.truncate(self.static_hints);
            }
            self.join_hint_text.clear();
            if !crate::guc::ARROW_STATS_HINT.get() {
                return;
            }
            for &(attno, range) in ranges {
                let Some(k) = self.columns.iter().position(|&(_, a)| a as i16 == attno - 1) else { continue };
                let (field, coltype) = (self.columns[k].0, self.targets[k].typid);
                let datum = |v: i64| match coltype {
                    pg_sys::INT2OID => Some(pg_sys::Datum::from(v as i16)),
                    pg_sys::INT4OID | pg_sys::DATEOID => Some(pg_sys::Datum::from(v as i32)),
                    pg_sys::INT8OID => Some(pg_sys::Datum::from(v)),
                    _ => None,
                };
                let (lo, hi) = match range {
                    Some((lo, hi)) => match (datum(lo), datum(hi)) {
                        (Some(l), Some(h)) => (Some(l), Some(h)),
                        _ => continue,
                    },
                    None if datum(0).is_some() => (None, None),
                    None => continue,
                };
                let Some(pair) = stats::Hint::range(field, coltype, lo, hi) else { continue };
                let name = pg_sys::get_attname(self.relid, attno, true);
                let name = if name.is_null() {
                    format!("${attno}")
                } else {
                    CStr::from_ptr(name).to_string_lossy().into_owned()
                };
                let text = |d: Option<pg_sys::Datum>| match d {
                    None => "NULL".to_string(),
                    Some(d) => {
                        let (mut out, mut varlena) = (pg_sys::InvalidOid, false);
                        pg_sys::getTypeOutputInfo(coltype, &mut out, &mut varlena);
                        CStr::from_ptr(pg_sys::OidOutputFunctionCall(out, d)).to_string_lossy().into_owned()
                    }
                };
                if lo.is_none() {
                    self.join_hint_text.push(format!("({name}: no inner key)"));
                } else {
                    self.join_hint_text.push(format!("({name} >= {})", text(lo)));
                    self.join_hint_text.push(format!("({name} <= {})", text(hi)));
                }
                for h in pair {
                    for f in &mut self.files {
                        let s = h.parse_stats(&f.file);
                        f.stats.push(s);
                    }
                    self.hints.push(h);
                }
            }
        }
    }

    /// Let `session`'s engine read fixed-width columns from the files
    /// itself (the GPU service, which keeps them in device memory), by
    /// the storage path the settings pick (`pg_strom.gpudirect`).
    pub fn open_files_in(&mut self, session: &mut dyn JoinSession) -> Result<(), DeviceError> {
        // until every file has its handle, columns go in memory
        self.handles.clear();
        self.access.clear();
        let policy = crate::guc::read_policy();
        let mut handles = Vec::with_capacity(self.files.len());
        let mut access = Vec::with_capacity(self.files.len());
        for fs in &self.files {
            match session.open_file(fs.file.file(), &policy)? {
                Some((h, a)) => {
                    handles.push(Some(h));
                    access.push(a);
                }
                None => return Ok(()),
            }
        }
        self.handles = handles;
        self.access = access;
        Ok(())
    }

    /// Files the engine reads with cuFile, and why cuFile refused one
    /// (the first refusal), when the engine reads the files itself.
    pub fn gpudirect_files(&self) -> (usize, Option<&str>) {
        let direct = self.access.iter().filter(|a| matches!(a, FileAccess::CuFile(_))).count();
        let refused = self.access.iter().find_map(|a| match a {
            FileAccess::Refused(why) => Some(why.as_str()),
            _ => None,
        });
        (direct, refused)
    }

    /// From now on, hand every column over in memory (the engine changed).
    pub fn forget_files(&mut self) {
        self.handles.clear();
        self.access.clear();
        self.ensure_batch();
    }

    /// True when the engine reads some columns from the files itself.
    pub fn reads_files(&self) -> bool {
        !self.handles.is_empty()
    }

    /// Where column `k`'s rows from `start` lie in the current batch's
    /// file, when the engine reads them itself: fixed-width values whose
    /// Arrow layout is the device's or one it widens ([`file_form`]), in
    /// an uncompressed batch, the start on a 64-row boundary.
    fn file_slice(&self, k: usize, start: usize) -> Option<FileSlice> {
        let (f, b) = self.current?;
        let handle = (*self.handles.get(f)?)?;
        if !start.is_multiple_of(64) {
            return None;
        }
        let field = self.columns[k].0;
        let fs = &self.files[f];
        let t = &self.targets[k];
        let form = file_form(fs.file.schema.field(field).data_type(), t.typid, t.typmod)?;
        let fb = fs.file.fixed_buffers(b, field)?;
        Some(FileSlice { file: handle, values: fb.values, validity: fb.validity, first_row: start as u64, form })
    }

    /// Record batches of every file, in scan order.
    pub fn nbatches(&self) -> usize {
        self.order.len()
    }

    /// Rows of batch `g` (of [`Self::nbatches`]), from its header.
    pub fn rows_of(&self, g: usize) -> usize {
        let (f, b) = self.order[g];
        self.files[f].file.batches[b].rows as usize
    }

    /// Read batch `g` into [`Self::batch`] (ANALYZE's sampling).
    pub fn load(&mut self, g: usize) {
        let (f, b) = self.order[g];
        self.read_batch(f, b);
    }

    fn read_batch(&mut self, f: usize, b: usize) {
        self.pos = Position { file: f, batch: b, column: None, row: 0 };
        let fs = &self.files[f];
        let decoder = fs.decoder.as_ref().expect("not EXPLAIN only");
        self.batch = Some(fs.file.read_batch(decoder, b, &self.fields).unwrap_or_else(|e| raise(e)));
    }

    /// Rows of the current batch.
    pub fn batch_rows(&self) -> usize {
        match (&self.batch, self.current) {
            (Some(b), _) => b.num_rows(),
            (None, Some((f, b))) => self.files[f].file.batches[b].rows as usize,
            (None, None) => 0,
        }
    }

    /// Store row `row` of the current batch into `slot` (a virtual tuple;
    /// values in the current memory context).
    ///
    /// # Safety
    /// `slot` has the relation's descriptor; the error context is pushed.
    pub unsafe fn store_row(&mut self, row: usize, slot: *mut pg_sys::TupleTableSlot) {
        // SAFETY: caller's promise.
        unsafe {
            pg_sys::ExecClearTuple(slot);
            let natts = (*(*slot).tts_tupleDescriptor).natts as usize;
            for a in 0..natts {
                *(*slot).tts_isnull.add(a) = true;
            }
            self.ensure_batch();
            let batch = self.batch.as_ref().expect("a batch is loaded");
            self.pos.row = row;
            for (k, &(_, a)) in self.columns.iter().enumerate() {
                self.pos.column = Some(k);
                if let Some(d) = types::datum(batch.column(k), row, &self.targets[k]) {
                    *(*slot).tts_values.add(a) = d;
                    *(*slot).tts_isnull.add(a) = false;
                }
            }
            self.pos.column = None;
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }

    /// Fill the device columns with rows [start, start + n) of the
    /// current batch.  Native layouts (2/4/8-byte integers and floats of
    /// the column's type, UTF-8 text in a UTF-8 database) are copied; the
    /// rest goes value by value through the Datum conversion.
    ///
    /// # Safety
    /// The error context is pushed.
    pub unsafe fn fill_device(&mut self, start: usize, n: usize) {
        // SAFETY: conversions allocate in dev_cxt, reset here.
        unsafe {
            pg_sys::MemoryContextReset(self.dev_cxt);
            let _cxt = Switched::to(self.dev_cxt);
            let utf8_db = pg_sys::GetDatabaseEncoding() == pg_sys::pg_enc::PG_UTF8 as i32;
            let ks: Vec<usize> = (0..self.device_columns)
                .map(|d| {
                    let attnum = self.dev.column(d).0;
                    self.columns.iter().position(|&(_, a)| a == (attnum - 1) as usize).expect("device columns are read")
                })
                .collect();
            let slices: Vec<Option<FileSlice>> = ks.iter().map(|&k| self.file_slice(k, start)).collect();
            if slices.iter().any(|s| s.is_none()) {
                self.ensure_batch();
            }
            self.dev.start_columns(n as u32);
            for d in 0..self.device_columns {
                let width = self.dev.column(d).2;
                let k = ks[d];
                if let Some(slice) = slices[d] {
                    self.dev.set_file(d, slice);
                    continue;
                }
                let batch = self.batch.as_ref().expect("a batch is loaded");
                let array = batch.column(k).slice(start, n);
                // logical nulls: a dictionary column's row is NULL when its
                // index is, and when the dictionary value it points at is
                match array.logical_nulls().filter(|nb| nb.null_count() > 0) {
                    None => self.dev.set_all_valid(d),
                    Some(nb) => self.dev.set_validity(d, |i| nb.is_valid(i)),
                }
                let typid = self.targets[k].typid;
                let native: Option<&[u8]> = match (array.data_type(), typid) {
                    (DataType::Int16, pg_sys::INT2OID) => Some(bytes_of(array.as_primitive::<Int16Type>().values())),
                    (DataType::Int32, pg_sys::INT4OID) => Some(bytes_of(array.as_primitive::<Int32Type>().values())),
                    (DataType::Int64, pg_sys::INT8OID) => Some(bytes_of(array.as_primitive::<Int64Type>().values())),
                    (DataType::Float32, pg_sys::FLOAT4OID) => {
                        Some(bytes_of(array.as_primitive::<Float32Type>().values()))
                    }
                    (DataType::Float64, pg_sys::FLOAT8OID) => {
                        Some(bytes_of(array.as_primitive::<Float64Type>().values()))
                    }
                    _ => None,
                };
                if let Some(v) = native {
                    self.dev.set_values(d, v);
                    continue;
                }
                if types::device_values(array.as_ref(), typid, self.targets[k].typmod, self.dev.values_mut(d)) {
                    continue;
                }
                if width == 0 && utf8_db && self.text_as_is(&array, k) {
                    match array.data_type() {
                        DataType::Utf8 => {
                            let s = array.as_string::<i32>();
                            let offs = s.value_offsets();
                            let base = offs[0];
                            let data = &s.value_data()[base as usize..offs[n] as usize];
                            self.dev.set_text(d, data, offs[1..].iter().map(|&o| (o - base) as u32));
                        }
                        _ => {
                            let b = array.as_fixed_size_binary();
                            let size = b.value_length() as usize;
                            let data = &b.value_data()[..n * size];
                            self.dev.set_text(d, data, (1..=n).map(|i| (i * size) as u32));
                        }
                    }
                    continue;
                }
                self.pos.column = Some(k);
                for i in 0..n {
                    self.pos.row = start + i;
                    self.dev.push_value(d, types::datum(&array, i, &self.targets[k]));
                }
                self.pos.column = None;
            }
        }
    }

    /// Whether the UTF-8 bytes of a slice of column `k` are the device's
    /// text values as they are (in a UTF-8 database): Utf8 read as text,
    /// or as varchar(n) when no value is longer than n characters;
    /// FixedSizeBinary(n) read as char(n) (pg2arrow's bpchar) when every
    /// value is ASCII, so it is already n characters, blank-padded.  No
    /// value may hold a NUL byte.  Otherwise values go one by one through
    /// the type's input function, which pads, truncates blanks, or raises
    /// PostgreSQL's error.
    fn text_as_is(&self, array: &ArrayRef, k: usize) -> bool {
        let t = &self.targets[k];
        // a value's bytes, over the valid rows
        let all = |f: &dyn Fn(&[u8]) -> bool| -> bool {
            match array.data_type() {
                DataType::Utf8 => {
                    let s = array.as_string::<i32>();
                    (0..s.len()).all(|i| s.is_null(i) || f(s.value(i).as_bytes()))
                }
                _ => {
                    let b = array.as_fixed_size_binary();
                    (0..b.len()).all(|i| b.is_null(i) || f(b.value(i)))
                }
            }
        };
        match (array.data_type(), t.typid) {
            (DataType::Utf8, pg_sys::TEXTOID) => all(&|v| !v.contains(&0)),
            (DataType::Utf8, pg_sys::VARCHAROID) if t.typmod < 0 => all(&|v| !v.contains(&0)),
            (DataType::Utf8, pg_sys::VARCHAROID) => {
                let most = (t.typmod - pg_sys::VARHDRSZ as i32) as usize;
                all(&|v| {
                    !v.contains(&0) && (v.len() <= most || v.iter().filter(|&&c| c & 0xc0 != 0x80).count() <= most)
                })
            }
            (DataType::FixedSizeBinary(size), pg_sys::BPCHAROID) => {
                t.typmod == size + pg_sys::VARHDRSZ as i32 && all(&|v| v.iter().all(|&c| c != 0 && c < 0x80))
            }
            _ => false,
        }
    }

    /// The device columns as an engine takes them.
    pub fn column_data(&self) -> Vec<ColumnData<'_>> {
        self.dev.column_data()
    }

    /// Bytes of the device columns.
    pub fn device_bytes(&self) -> usize {
        self.dev.bytes()
    }

    /// Bytes of the device columns the engine reads from the files.
    pub fn file_bytes(&self) -> usize {
        self.dev.file_bytes()
    }

    /// Start again from the first batch (serial scans; a parallel scan is
    /// reset by [`reset_shared`]).
    pub fn rescan(&mut self) {
        self.hints_stale = true;
        self.next = 0;
        self.batch = None;
        self.current = None;
    }

    /// Take batches from the shared counter at `shared`.
    pub fn attach(&mut self, shared: *mut Shared) {
        self.shared = shared;
    }

    /// Copy the shared counters (before the DSM goes) and detach.
    pub fn detach(&mut self) {
        // SAFETY: shared is NULL or the still-mapped DSM area.
        if let Some(s) = unsafe { self.shared.as_ref() } {
            self.loaded = s.loaded.load(Ordering::Relaxed);
            self.skipped = s.skipped.load(Ordering::Relaxed);
        }
        self.shared = std::ptr::null_mut();
    }

    /// Forget the current batch and the counts (the DSM is being reset).
    pub fn reset(&mut self) {
        self.batch = None;
        self.current = None;
        self.loaded = 0;
        self.skipped = 0;
    }

    /// EXPLAIN: `referenced`, `Stats-Hint`, `filesN`.
    ///
    /// # Safety
    /// `plan` is the scan's plan, `es` the ExplainState.
    pub unsafe fn explain(&self, plan: *mut pg_sys::Plan, es: *mut pg_sys::ExplainState) {
        // SAFETY: caller's promise.
        unsafe {
            let names: Vec<String> = self
                .columns
                .iter()
                .map(|&(_, a)| {
                    let n = pg_sys::get_attname(self.relid, (a + 1) as i16, true);
                    if n.is_null() { format!("${}", a + 1) } else { CStr::from_ptr(n).to_string_lossy().into_owned() }
                })
                .collect();
            prop_text(c"referenced", &names.join(", "), es);
            if !self.hint_exprs.is_empty() {
                let mut text = crate::pg::explain::deparse_list(&self.hint_exprs, plan, es);
                if (*es).analyze && self.join_hint_text.is_empty() {
                    text.push_str(&format!("  [loaded: {}, skipped: {}]", self.loaded, self.skipped));
                }
                prop_text(c"Stats-Hint", &text, es);
            }
            if !self.join_hint_text.is_empty() {
                let mut text = self.join_hint_text.join(", ");
                if (*es).analyze {
                    text.push_str(&format!("  [loaded: {}, skipped: {}]", self.loaded, self.skipped));
                }
                prop_text(c"Join-Key Hint", &text, es);
            }
            for (i, f) in self.files.iter().enumerate() {
                let read: u64 = (0..f.file.batches.len()).map(|b| f.file.bytes_read(b, &self.fields)).sum();
                let label = CString::new(format!("files{i}")).expect("no NUL");
                let line = format!("{} (read: {}, size: {})", f.file.path, size_text(read), size_text(f.file.size));
                prop_text(&label, &line, es);
            }
        }
    }
}

fn bytes_of<T: arrow_buffer::ArrowNativeType>(v: &[T]) -> &[u8] {
    // SAFETY: plain numeric values, read as their bytes (little-endian host).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// Size of the shared state in a DSM.
pub const SHARED_SIZE: usize = std::mem::size_of::<Shared>();

/// Initialize the shared state at `at`.
///
/// # Safety
/// `at` points to SHARED_SIZE writable bytes of a DSM.
pub unsafe fn init_shared(at: *mut c_void) -> *mut Shared {
    // SAFETY: caller's promise.
    unsafe {
        let s = at as *mut Shared;
        s.write(Shared { next: AtomicU64::new(0), loaded: AtomicU64::new(0), skipped: AtomicU64::new(0) });
        s
    }
}

/// Reset the shared state at `at` for a rescan.
///
/// # Safety
/// `at` was initialized by [`init_shared`].
pub unsafe fn reset_shared(at: *mut c_void) {
    // SAFETY: caller's promise.
    unsafe {
        let s = &*(at as *const Shared);
        s.next.store(0, Ordering::Relaxed);
        s.loaded.store(0, Ordering::Relaxed);
        s.skipped.store(0, Ordering::Relaxed);
    }
}

/// The attnums a plan node reads from its scan relation `scanrelid` (of
/// `natts` attributes): its target list and quals; a whole-row reference
/// reads every column.
///
/// # Safety
/// Plan state.
pub unsafe fn plan_attnums(plan: *mut pg_sys::Plan, scanrelid: u32, natts: usize) -> Vec<i16> {
    // SAFETY: caller's promise.
    unsafe {
        let mut bms: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        pg_sys::pull_varattnos((*plan).targetlist.cast(), scanrelid, &mut bms);
        pg_sys::pull_varattnos((*plan).qual.cast(), scanrelid, &mut bms);
        attnums_of(bms, natts)
    }
}

/// The attnums in a pull_varattnos set (offset by
/// FirstLowInvalidHeapAttributeNumber); a whole-row reference (0) stands
/// for every one of `natts` columns; system columns are left out.
///
/// # Safety
/// `bms` is NULL or a valid Bitmapset.
pub unsafe fn attnums_of(bms: *mut pg_sys::Bitmapset, natts: usize) -> Vec<i16> {
    let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
    let mut out = Vec::new();
    let mut x = -1;
    loop {
        // SAFETY: caller's promise.
        x = unsafe { pg_sys::bms_next_member(bms, x) };
        if x < 0 {
            break;
        }
        match x + offset {
            0 => return (1..=natts as i16).collect(),
            a if a > 0 => out.push(a as i16),
            _ => {}
        }
    }
    out
}
