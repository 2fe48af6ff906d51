//! The runtime interface the executor programs against.
//!
//! An [`Engine`] runs device code over a chunk of columnar data.  Two
//! implementations exist: [`crate::gpu::GpuEngine`] (CUDA, in this process
//! for now; the GPU service will implement the same trait) and
//! [`crate::cpu::CpuEngine`] (the same device sources built for the host).
//! The executor never knows which one it has.

use crate::catalog::type_info;
use crate::error::DeviceError;
use crate::program::{DEVERR_INVALID_PROGRAM, DEVERR_LIKE_TOO_COMPLEX, DEVERR_NEEDS_CPU, Program, sql_error};

/// Which engine runs the device code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// An NVIDIA GPU through CUDA.
    Gpu,
    /// The host CPU running the same device code.
    Cpu,
}

impl EngineKind {
    /// Lower-case name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Gpu => "gpu",
            EngineKind::Cpu => "cpu",
        }
    }
}

/// A comparison operator of the filter kernels (PGSTROM_CMP_* codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `=`
    Eq = 0,
    /// `<>`
    Ne = 1,
    /// `<`
    Lt = 2,
    /// `<=`
    Le = 3,
    /// `>`
    Gt = 4,
    /// `>=`
    Ge = 5,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [CompareOp; 6] =
        [CompareOp::Eq, CompareOp::Ne, CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge];

    /// Parse a SQL operator name.
    pub fn from_sql(op: &str) -> Option<CompareOp> {
        Some(match op {
            "=" => CompareOp::Eq,
            "<>" | "!=" => CompareOp::Ne,
            "<" => CompareOp::Lt,
            "<=" => CompareOp::Le,
            ">" => CompareOp::Gt,
            ">=" => CompareOp::Ge,
            _ => return None,
        })
    }

    /// The SQL spelling.
    pub fn sql(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::Ne => "<>",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }

    fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CompareOp::Eq => ord == Equal,
            CompareOp::Ne => ord != Equal,
            CompareOp::Lt => ord == Less,
            CompareOp::Le => ord != Greater,
            CompareOp::Gt => ord == Greater,
            CompareOp::Ge => ord != Less,
        }
    }
}

/// One column of a chunk with the constant it is compared to.
#[derive(Debug, Clone, Copy)]
pub enum FilterColumn<'a> {
    /// int4 values.
    Int32 {
        /// The values (undefined where NULL).
        values: &'a [i32],
        /// Right-hand constant.
        constant: i32,
    },
    /// int8 values.
    Int64 {
        /// The values (undefined where NULL).
        values: &'a [i64],
        /// Right-hand constant.
        constant: i64,
    },
    /// float8 values.
    Float64 {
        /// The values (undefined where NULL).
        values: &'a [f64],
        /// Right-hand constant.
        constant: f64,
    },
}

impl FilterColumn<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            FilterColumn::Int32 { values, .. } => values.len(),
            FilterColumn::Int64 { values, .. } => values.len(),
            FilterColumn::Float64 { values, .. } => values.len(),
        }
    }

    /// True when the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a filter kernel returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterResult {
    /// One byte per row: 1 when the predicate is true, else 0.
    pub matches: Vec<u8>,
    /// Number of rows where it is true.
    pub nmatched: u32,
}

/// The interface every engine implements.
pub trait Engine {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// What EXPLAIN shows as `GPU Preference`: `GPU0 (NVIDIA H100 ...)`,
    /// or `none (CPU engine)`.
    fn describe(&self) -> String;

    /// The number of the GPU this engine runs on (None for a CPU engine).
    fn device_index(&self) -> Option<u32> {
        None
    }

    /// The mode cuFile runs in where this engine reads files into device
    /// memory itself (a GPU of the GPU service), None elsewhere.
    fn gpudirect(&self) -> Option<crate::cufile::Mode> {
        None
    }

    /// Evaluate `column <op> constant` for each row, with WHERE semantics
    /// (NULL is not a match).  `validity` is an Arrow validity bitmap
    /// (bit set = not NULL) or None when the chunk has no NULLs.
    fn filter_compare(
        &self,
        column: &FilterColumn<'_>,
        validity: Option<&[u8]>,
        op: CompareOp,
    ) -> Result<FilterResult, DeviceError>;

    /// Evaluate a device program for each of `nrows` rows of `columns`.
    /// Errors PostgreSQL would raise come back as [`DeviceError::Sql`] for
    /// the first failing row.
    fn eval_program(
        &self,
        program: &Program,
        columns: &[ColumnData<'_>],
        params: &[ParamValue],
        nrows: u32,
    ) -> Result<EvalOutput, DeviceError>;

    /// Begin [`Self::eval_program`] for several programs over the same
    /// chunk (a scan's filter and its GPU Projection): one request goes
    /// to the engine and the caller's buffers are free again when this
    /// returns; the answers come from [`Self::eval_end`], in program
    /// order (or the first program's error), so the host can read the
    /// next chunk while the engine works on this one.  An engine in this
    /// process evaluates at once.
    fn eval_begin(
        &self,
        programs: &[&Program],
        columns: &[ColumnData<'_>],
        params: &[ParamValue],
        nrows: u32,
    ) -> Pending<Vec<EvalOutput>> {
        Pending::Done(programs.iter().map(|p| self.eval_program(p, columns, params, nrows)).collect())
    }

    /// The answers to [`Self::eval_begin`].
    fn eval_end(&self, pending: Pending<Vec<EvalOutput>>) -> Result<Vec<EvalOutput>, DeviceError> {
        match pending {
            Pending::Done(r) => r,
            Pending::Sent(_) => Err(DeviceError::InvalidRequest("this engine has no requests under way".into())),
        }
    }

    /// Load a join's inner relations (hash tables built here) and its
    /// programs; the session then joins chunks of scanned rows.
    fn join_open<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
    ) -> Result<Box<dyn crate::join::JoinSession + 'e>, DeviceError>;

    /// True when this engine serves every backend (the GPU service): a
    /// build that one process opened with [`Self::join_open_shared`] can
    /// be attached to by the others.
    fn shared_by_processes(&self) -> bool {
        false
    }

    /// As [`Self::join_open`], and the engine keeps the inner relations it
    /// built under `key` (the query's) for [`Self::join_attach`] while
    /// this session lives.  An engine that shares nothing just opens.
    fn join_open_shared<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: u64,
    ) -> Result<Box<dyn crate::join::JoinSession + 'e>, DeviceError> {
        let _ = key;
        self.join_open(spec)
    }

    /// A session over the inner relations another session of the same
    /// query opened with [`Self::join_open_shared`] under `key` and still
    /// holds: no inner row is loaded or hashed again.  `spec` is that
    /// session's request without the inner rows (each depth's `inner`
    /// empty, `ninner` as there).  None: the engine holds no such build
    /// (it was closed, or lives on another engine); the caller opens its
    /// own.
    fn join_attach<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: u64,
    ) -> Result<Option<Box<dyn crate::join::JoinSession + 'e>>, DeviceError> {
        let _ = (spec, key);
        Ok(None)
    }

    /// Keep the build a session of this query holds under share key
    /// `share` (opened with [`Self::join_open_shared`]) across queries,
    /// under `key`, with `rows` (the caller's copy of the inner rows, given
    /// back by [`Self::join_cache_rows`]).  `spec` is the request without
    /// the inner rows.  The caller's key must change whenever the inner
    /// relations' contents may have: the engine only compares keys.
    /// False: not kept (no such build; too big; an engine that keeps
    /// nothing across queries).
    fn join_cache_keep(
        &self,
        spec: &crate::join::JoinSpec<'_>,
        share: u64,
        key: &[u8],
        rows: &[u8],
    ) -> Result<bool, DeviceError> {
        let _ = (spec, share, key, rows);
        Ok(false)
    }

    /// Hand `f` the rows kept with the build under `key`
    /// ([`Self::join_cache_keep`]); false (and `f` not called) when none
    /// are kept.
    fn join_cache_rows(&self, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        let _ = (key, f);
        Ok(false)
    }

    /// The rows kept with the build under `key` themselves (not a copy),
    /// for the GPU service to answer [`Self::join_cache_rows`] from: a
    /// kept build's rows are the whole inner relations (150 MB for the 2
    /// million rows of TPC-H's `part` at SF 10), and a copy of them took
    /// a third of a cache hit's time.  None: none are kept (the default,
    /// an engine that keeps nothing across queries).
    fn join_cache_rows_kept(&self, key: &[u8]) -> Option<std::sync::Arc<Vec<u8>>> {
        let _ = key;
        None
    }

    /// Hand `f` the summary of the rows kept with the build under `key`:
    /// their first n bytes, where n is the second 8-byte word of the rows
    /// (native order; all of them when that word is missing or larger):
    /// what a process that will not read the rows needs to know of them
    /// (how many, per inner relation) without being sent them all.  False
    /// (and `f` not called) when none are kept.
    fn join_cache_summary(&self, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        Ok(self.join_cache_rows_kept(key).map(|r| f(&r[..crate::join::summary_len(&r).unwrap_or(r.len())])).is_some())
    }

    /// A session over the build kept under `key` for requests like `spec`
    /// (no inner rows), kept from now on also under share key `share` for
    /// [`Self::join_attach`]; None when the engine keeps no such build (it
    /// went since [`Self::join_cache_rows`]: the caller loads the rows).
    fn join_open_cached<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: &[u8],
        share: u64,
    ) -> Result<Option<Box<dyn crate::join::JoinSession + 'e>>, DeviceError> {
        let _ = (spec, key, share);
        Ok(None)
    }
}

/// A request sent to an engine whose answer is read later
/// ([`Engine::eval_begin`], [`JoinSession::probe_begin`]): the host works
/// on while the engine does.
#[derive(Debug)]
pub enum Pending<T> {
    /// The engine answered at once (it runs in this process).
    Done(Result<T, DeviceError>),
    /// Sent to the GPU service: the request's ticket.
    Sent(u64),
}

impl<T> Pending<T> {
    /// True when the answer is here already (nothing to overlap with).
    pub fn is_done(&self) -> bool {
        matches!(self, Pending::Done(_))
    }
}

/// One input column for [`Engine::eval_program`]: `nrows` values of the
/// device type's width, little-endian, and an optional validity bitmap.
#[derive(Debug, Clone, Copy, Default)]
pub struct ColumnData<'a> {
    /// Device type id.
    pub type_id: u16,
    /// Raw values, or the bytes of a variable-length type.
    pub values: &'a [u8],
    /// Arrow validity bitmap (bit set = not NULL), or None.
    pub validity: Option<&'a [u8]>,
    /// Variable-length types: nrows+1 offsets into `values`.
    pub offsets: Option<&'a [u32]>,
    /// Instead of `values` and `validity`: where they lie in a file the
    /// engine reads itself.  Only a join session whose
    /// [`crate::join::JoinSession::open_file`] gave a handle takes it.
    pub file: Option<FileSlice>,
    /// Instead of `values`, `validity` and `offsets`: device addresses
    /// (values, validity or 0, offsets or 0) where the GPU service put the
    /// column (a `file` slice, or a heap direct request's rows), valid
    /// during the call.  Set by the service only, for GPU engines.
    pub resident: Option<(u64, u64, u64)>,
    /// Instead of `values`, `validity` and `offsets`: column `n` of the
    /// engine's copy of a GPU store table, at the rows of the session's
    /// [`crate::devstore::StoreRows`].
    pub store: Option<u32>,
}

/// A chunk's values and validity (or None) as (offset, length) in a file.
pub type ChunkRanges = ((u64, u64), Option<(u64, u64)>);

/// A fixed-width column of a chunk as the buffers of an Arrow file hold
/// it: the chunk is rows `[first_row, first_row + nrows)` of the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileSlice {
    /// The file, as [`crate::join::JoinSession::open_file`] numbered it.
    pub file: u32,
    /// (offset, length) of the values buffer in the file.
    pub values: (u64, u64),
    /// (offset, length) of the validity bitmap, or None (no NULLs).
    pub validity: Option<(u64, u64)>,
    /// The chunk's first row in the buffers: a multiple of 64, so the
    /// chunk's validity bits start on a word.
    pub first_row: u64,
    /// How the file's values become the device's.
    pub form: FileForm,
}

/// How an engine makes a file column's values the device's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FileForm {
    /// The file holds them in the device's layout.
    #[default]
    AsIs,
    /// Arrow Decimal128 mantissas (16 bytes) at `scale`, widened into the
    /// device's numeric (the mantissa and the scale, 24 bytes).  A value
    /// of more than `digits` digits becomes NUM_BIG (a row computing with
    /// it goes to PostgreSQL); when `strict` (the column's typmod allows
    /// no more: PostgreSQL refuses the value), a NULL-free such value
    /// fails the request with [`DeviceError::NeedsCpu`], and the backend
    /// converts the rows itself, raising PostgreSQL's error.
    Decimal128 {
        /// The decimal's scale (0..=38).
        scale: u8,
        /// The most digits a value may have (1..=38).
        digits: u8,
        /// Whether a longer value is PostgreSQL's error.
        strict: bool,
    },
    /// Arrow Date32 (days from 1970-01-01) as the device's date (days
    /// from 2000-01-01).  A NULL-free value outside PostgreSQL's range of
    /// dates fails the request with [`DeviceError::NeedsCpu`].
    Date32,
    /// Arrow FixedSizeBinary(`size`) as char(`size`) (pg2arrow's bpchar):
    /// the bytes as they are, blank-padded already, with offsets made for
    /// them.  A NULL-free value holding a NUL or a non-ASCII byte (fewer
    /// characters than bytes: bpchar's input would pad it) fails the
    /// request with [`DeviceError::NeedsCpu`].
    FixedText {
        /// Bytes of a value.
        size: u32,
    },
}

impl FileForm {
    /// Bytes of one value in the file, for a device type of `width`.
    pub fn file_width(self, width: usize) -> usize {
        match self {
            FileForm::AsIs => width,
            FileForm::Decimal128 { .. } => 16,
            FileForm::Date32 => 4,
            FileForm::FixedText { size } => size as usize,
        }
    }

    /// Whether a value the form cannot hold fails the request (rather
    /// than becoming a value the device leaves to PostgreSQL).
    pub fn strict(self) -> bool {
        match self {
            FileForm::AsIs => false,
            FileForm::Decimal128 { strict, .. } => strict,
            FileForm::Date32 | FileForm::FixedText { .. } => true,
        }
    }

    /// Whether the form reads a file column of a device type of `width`.
    pub fn valid_for(self, width: usize) -> bool {
        match self {
            FileForm::AsIs => width > 0,
            FileForm::Decimal128 { scale, digits, .. } => {
                width == crate::numeric::WIDTH && scale <= 38 && (1..=38).contains(&digits)
            }
            FileForm::Date32 => width == 4,
            FileForm::FixedText { size } => width == 0 && size > 0,
        }
    }
}

impl FileSlice {
    /// The byte ranges (offset, length) of the chunk's values and
    /// validity in the file, for `nrows` rows of a device type of `width`
    /// bytes (in the file: [`FileForm::file_width`]); an error
    /// when the buffers are too short or the start is misaligned.
    pub fn chunk_ranges(&self, width: usize, nrows: u32) -> Result<ChunkRanges, DeviceError> {
        if !self.form.valid_for(width) || !self.first_row.is_multiple_of(64) {
            return Err(DeviceError::InvalidRequest(
                "a file column must be fixed-width, of a type its form reads, and start on a 64-row boundary".into(),
            ));
        }
        let (n, w) = (nrows as u64, self.form.file_width(width) as u64);
        let end =
            self.first_row.checked_add(n).ok_or_else(|| DeviceError::InvalidRequest("file column rows".into()))?;
        if self.values.1 < end.saturating_mul(w) {
            return Err(DeviceError::InvalidRequest(format!(
                "the file's values buffer holds {} bytes, rows up to {end} need more",
                self.values.1
            )));
        }
        let values = (self.values.0 + self.first_row * w, n * w);
        let validity = match self.validity {
            None => None,
            Some((off, len)) => {
                if len < end.div_ceil(8) {
                    return Err(DeviceError::InvalidRequest(format!(
                        "the file's validity bitmap holds {len} bytes, rows up to {end} need more"
                    )));
                }
                Some((off + self.first_row / 8, n.div_ceil(8)))
            }
        };
        Ok((values, validity))
    }
}

/// `len` of a failed parameter.
const PARAM_FAILED: i32 = i32::MIN;

/// A parameter value: raw datum bits as the device holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ParamValue {
    /// True for NULL.
    pub isnull: bool,
    /// Value bits (integers sign-extended, float8 bits, float4 bits; a
    /// numeric's low 64 mantissa bits).
    pub bits: i64,
    /// A numeric's high 64 mantissa bits (0 otherwise).
    pub hi: i64,
    /// A numeric's scale or kind (0 otherwise).
    pub len: i32,
}

impl ParamValue {
    /// A non-NULL fixed-width value.
    pub fn value(bits: i64) -> ParamValue {
        ParamValue { isnull: false, bits, hi: 0, len: 0 }
    }

    /// NULL.
    pub fn null() -> ParamValue {
        ParamValue { isnull: true, ..Default::default() }
    }

    /// A parameter whose evaluation raised an error: a program that reads
    /// it reports that PostgreSQL must evaluate the row (PostgreSQL, which
    /// may short-circuit past it, raises the error or not).
    pub fn failed() -> ParamValue {
        ParamValue { isnull: true, len: PARAM_FAILED, ..Default::default() }
    }

    /// Whether this is [`ParamValue::failed`].
    pub fn is_failed(&self) -> bool {
        self.isnull && self.len == PARAM_FAILED
    }

    /// A uuid, interval or timetz: its bytes as PostgreSQL stores them.
    pub fn wide(bytes: &[u8]) -> ParamValue {
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
            i64::from_le_bytes(w)
        };
        let hi = match bytes.len() {
            // timetz: the zone, an int32, sign-extended as the device does
            12 => word(&bytes[8..12]) as i32 as i64,
            n => word(&bytes[8.min(n)..]),
        };
        ParamValue { isnull: false, bits: word(bytes), hi, len: 0 }
    }

    /// A numeric.
    pub fn numeric(n: crate::numeric::DevNumeric) -> ParamValue {
        let (bits, hi) = n.words();
        ParamValue { isnull: false, bits, hi, len: n.scale }
    }
}

/// What [`Engine::eval_program`] returns: per row, raw datum bits and a
/// NULL flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalOutput {
    /// Value bits per row (0 where NULL).
    pub values: Vec<i64>,
    /// 1 where the result is NULL.
    pub nulls: Vec<u8>,
    /// A numeric result's high mantissa word and scale, two per row
    /// (empty for other result types).
    pub wide: Vec<i64>,
    /// The bytes of text results the device made (lower, upper, ||):
    /// a row whose `wide` source word is -1 points here.
    pub text: Vec<u8>,
    /// Rows the engine could not compute exactly (a numeric beyond 38
    /// digits, a transcendental value on a GPU, text longer than a row's
    /// memory): their `nulls` say NULL, but PostgreSQL must evaluate them.
    /// Every caller has to look here.
    pub cpu_rows: Vec<u32>,
}

impl EvalOutput {
    /// `n` rows, with room for numeric results when `wide`.
    pub fn with_rows(n: usize, wide: bool) -> EvalOutput {
        EvalOutput {
            values: vec![0; n],
            nulls: vec![0; n],
            wide: if wide { vec![0; 2 * n] } else { Vec::new() },
            text: Vec::new(),
            cpu_rows: Vec::new(),
        }
    }

    /// Move the rows the kernel marked as needing PostgreSQL (null byte 2)
    /// to `cpu_rows`.
    pub(crate) fn collect_cpu_rows(&mut self) {
        for (i, n) in self.nulls.iter_mut().enumerate() {
            if *n == 2 {
                *n = 1;
                self.cpu_rows.push(i as u32);
            }
        }
    }

    /// Row `row`'s result of a program returning uuid, interval or timetz:
    /// the `width` bytes PostgreSQL stores.
    pub fn wide_bytes(&self, row: usize, width: usize) -> Option<Vec<u8>> {
        let lo = *self.values.get(row)?;
        let hi = *self.wide.get(2 * row)?;
        let mut b = lo.to_le_bytes().to_vec();
        b.extend_from_slice(&hi.to_le_bytes());
        b.truncate(width);
        Some(b)
    }

    /// Row `row`'s result of a program returning text, bpchar or bytea:
    /// its bytes, in the program's data section, in one of the
    /// variable-length columns it was evaluated over, or made by the
    /// device (`text`).
    pub fn varlena_bytes<'a>(&'a self, row: usize, data: &'a [u8], columns: &[ColumnData<'a>]) -> Option<&'a [u8]> {
        let off = usize::try_from(*self.values.get(row)?).ok()?;
        let source = *self.wide.get(2 * row)?;
        let len = usize::try_from(*self.wide.get(2 * row + 1)?).ok()?;
        let base = match source {
            -1 => &self.text,
            0 => data,
            _ => columns.get(usize::try_from(source - 1).ok()?)?.values,
        };
        base.get(off..off.checked_add(len)?)
    }

    /// Row `row`'s numeric result (of a program returning numeric).
    pub fn numeric(&self, row: usize) -> Option<crate::numeric::DevNumeric> {
        let hi = *self.wide.get(2 * row)?;
        let scale = *self.wide.get(2 * row + 1)? as i32;
        let lo = *self.values.get(row)?;
        Some(crate::numeric::DevNumeric { mant: ((hi as i128) << 64) | (lo as u64 as i128), scale })
    }
}

/// Some rows of a chunk's columns, copied into columns of their own (for
/// [`recompute_on_cpu`]).
struct Gathered {
    type_ids: Vec<u16>,
    values: Vec<Vec<u8>>,
    validity: Vec<Option<Vec<u8>>>,
    offsets: Vec<Option<Vec<u32>>>,
}

impl Gathered {
    /// Rows `rows` of `columns` (held in memory, fixed-width or with
    /// offsets); None when a column's bytes are not at hand.
    fn of(columns: &[ColumnData<'_>], rows: &[u32]) -> Option<Gathered> {
        let mut g = Gathered { type_ids: Vec::new(), values: Vec::new(), validity: Vec::new(), offsets: Vec::new() };
        for c in columns {
            let width = crate::catalog::type_info(c.type_id)?.width;
            let mut values = Vec::new();
            let mut offsets = c.offsets.map(|_| vec![0u32]);
            for &r in rows {
                let r = r as usize;
                match (c.offsets, offsets.as_mut()) {
                    (Some(o), Some(out)) => {
                        let (a, b) = (*o.get(r)? as usize, *o.get(r + 1)? as usize);
                        values.extend_from_slice(c.values.get(a..b)?);
                        out.push(u32::try_from(values.len()).ok()?);
                    }
                    _ => values.extend_from_slice(c.values.get(r * width..(r + 1) * width)?),
                }
            }
            let validity = match c.validity {
                Some(bits) => {
                    let mut v = vec![0u8; rows.len().div_ceil(8)];
                    for (k, &r) in rows.iter().enumerate() {
                        if bits.get(r as usize / 8)? & (1 << (r % 8)) != 0 {
                            v[k / 8] |= 1 << (k % 8);
                        }
                    }
                    Some(v)
                }
                None => None,
            };
            g.type_ids.push(c.type_id);
            g.values.push(values);
            g.validity.push(validity);
            g.offsets.push(offsets);
        }
        Some(g)
    }

    fn columns(&self) -> Vec<ColumnData<'_>> {
        (0..self.type_ids.len())
            .map(|i| ColumnData {
                type_id: self.type_ids[i],
                values: &self.values[i],
                validity: self.validity[i].as_deref(),
                offsets: self.offsets[i].as_deref(),
                ..Default::default()
            })
            .collect()
    }
}

/// The rows a GPU left to PostgreSQL (`out.cpu_rows`), computed instead
/// by the CPU engine, whose functions are the very ones PostgreSQL calls
/// (the host's libm: a GPU's transcendental values): their results go
/// into `out`, and only the rows the CPU engine cannot compute either (a
/// numeric beyond 38 digits, non-ASCII text for lower) stay in
/// `cpu_rows`.  Programs returning text, bpchar or bytea keep theirs.
/// An error the CPU engine meets is returned: the rows before it in the
/// chunk were computed, so it is the chunk's first error.
pub(crate) fn recompute_on_cpu(
    program: &Program,
    columns: &[ColumnData<'_>],
    params: &[ParamValue],
    out: &mut EvalOutput,
) -> Result<(), DeviceError> {
    if out.cpu_rows.is_empty() || crate::program::is_varlena(program.result_type) {
        return Ok(());
    }
    let Some(g) = Gathered::of(columns, &out.cpu_rows) else { return Ok(()) };
    let cols = g.columns();
    let sub = match crate::cpu::CpuEngine.eval_program(program, &cols, params, out.cpu_rows.len() as u32) {
        Ok(sub) => sub,
        Err(DeviceError::Sql { sqlstate, message, row }) => {
            return Err(DeviceError::Sql { sqlstate, message, row: out.cpu_rows[row as usize] });
        }
        Err(e) => return Err(e),
    };
    let wide = !out.wide.is_empty() && !sub.wide.is_empty();
    for (k, &r) in out.cpu_rows.iter().enumerate() {
        let r = r as usize;
        out.values[r] = sub.values[k];
        out.nulls[r] = sub.nulls[k];
        if wide {
            out.wide[2 * r] = sub.wide[2 * k];
            out.wide[2 * r + 1] = sub.wide[2 * k + 1];
        }
    }
    out.cpu_rows = sub.cpu_rows.iter().map(|&k| out.cpu_rows[k as usize]).collect();
    Ok(())
}

/// Bytes of made text a program's evaluation over `nrows` rows may
/// return: room for every row's scratch memory when its text result may
/// be made on the device (lower, upper, ||, casts to text), else none.
pub fn text_capacity(program: &Program, nrows: usize) -> usize {
    let makes = crate::program::is_varlena(program.result_type)
        && program.code.iter().any(|i| {
            i.op == crate::program::Op::Func as u16
                && u16::try_from(i.arg)
                    .ok()
                    .and_then(crate::catalog::func_info)
                    .is_some_and(|f| matches!(f.family, "IMPL_LOWER" | "IMPL_UPPER" | "IMPL_TEXTCAT" | "IMPL_TO_TEXT"))
        });
    if makes { nrows * SCRATCH_BYTES } else { 0 }
}

/// A row's memory for made text (device_interp.h PGSTROM_SCRATCH_BYTES).
pub const SCRATCH_BYTES: usize = 512;

/// Whether a program's results need the wide output (numeric, uuid,
/// interval, timetz; text, bpchar and bytea as where their bytes lie).
pub(crate) fn wide_result(program: &Program) -> bool {
    crate::program::is_wide(program.result_type) || crate::program::is_varlena(program.result_type)
}

/// The C layout of DevColumn (device_program.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct DevColumnRepr {
    pub type_id: u32,
    /// Which row index of a join combination the column is read at.
    pub source: u32,
    pub values: u64,
    pub validity: u64,
    pub offsets: u64,
}

/// The C layout of DevDatum (device_program.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DevDatumRepr {
    pub bits: i64,
    pub isnull: i32,
    pub len: i32,
    pub hi: i64,
}

impl DevDatumRepr {
    /// A grouping key's value.
    pub(crate) fn key_value(&self) -> crate::agg::KeyValue {
        crate::agg::KeyValue { bits: self.bits, hi: self.hi, len: self.len, isnull: self.isnull != 0 }
    }

    /// Parameters in the device's layout.
    pub(crate) fn from_params(params: &[ParamValue]) -> Vec<DevDatumRepr> {
        params
            .iter()
            .map(|p| DevDatumRepr {
                bits: p.bits,
                isnull: if p.is_failed() { 2 } else { p.isnull as i32 },
                len: p.len,
                hi: p.hi,
            })
            .collect()
    }
}

/// Check an evaluation request against the program; shared by the engines.
pub fn validate_eval(
    program: &Program,
    columns: &[ColumnData<'_>],
    params: &[ParamValue],
    nrows: u32,
) -> Result<(), DeviceError> {
    // validated without copying the program: this runs for every chunk
    check_program(program, columns.len(), params.len())?;
    validate_columns(columns, nrows)
}

/// Check a program against the columns and parameters it will be given.
pub(crate) fn check_program(program: &Program, ncols: usize, nparams: usize) -> Result<(), DeviceError> {
    program.check(Some(ncols as u32))?;
    if (nparams as u64) < program.nparams as u64 {
        return Err(DeviceError::InvalidRequest(format!(
            "program reads {} parameters, {nparams} given",
            program.nparams
        )));
    }
    Ok(())
}

/// Check columns of `nrows` rows (value lengths, offsets, bitmaps).
pub fn validate_columns(columns: &[ColumnData<'_>], nrows: u32) -> Result<(), DeviceError> {
    validate_columns_in(columns, nrows, Holds::Memory)
}

/// Where a column's data may be, besides in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Only in host memory (`values`, `validity`, `offsets`).
    Memory,
    /// Also in a file ([`ColumnData::file`]): a request to the service.
    File,
    /// Also in device memory ([`ColumnData::resident`]): a GPU engine.
    Device,
}

/// [`validate_columns`] for an engine that takes columns held as `holds`.
pub fn validate_columns_in(columns: &[ColumnData<'_>], nrows: u32, holds: Holds) -> Result<(), DeviceError> {
    for (i, c) in columns.iter().enumerate() {
        let t = type_info(c.type_id)
            .ok_or_else(|| DeviceError::InvalidRequest(format!("column {i} has unknown device type {}", c.type_id)))?;
        if c.store.is_some() && c.resident.is_none() {
            // a column of a GPU store's copy: the engine that holds the
            // copy resolves it (devstore.rs)
            if holds == Holds::Memory {
                return Err(DeviceError::InvalidRequest(format!(
                    "column {i} lies in a GPU store copy this engine does not hold"
                )));
            }
            continue;
        }
        if c.resident.is_some() {
            if holds != Holds::Device {
                return Err(DeviceError::InvalidRequest(format!(
                    "column {i} lies in device memory this engine cannot read"
                )));
            }
            continue;
        }
        if let Some(f) = &c.file {
            if holds != Holds::File {
                return Err(DeviceError::InvalidRequest(format!(
                    "column {i} lies in a file this engine does not read"
                )));
            }
            f.chunk_ranges(t.width, nrows)?;
            continue;
        }
        if t.width == 0 {
            // offsets: nrows+1, non-decreasing, within the bytes
            let Some(off) = c.offsets.filter(|o| o.len() as u64 > nrows as u64) else {
                return Err(DeviceError::InvalidRequest(format!("column {i} needs {} offsets", nrows as u64 + 1)));
            };
            let off = &off[..=nrows as usize];
            if off.windows(2).any(|w| w[0] > w[1]) || off[nrows as usize] as usize > c.values.len() {
                return Err(DeviceError::InvalidRequest(format!("offsets of column {i} are out of order or range")));
            }
        } else if (c.values.len() as u64) < nrows as u64 * t.width as u64 {
            return Err(DeviceError::InvalidRequest(format!(
                "column {i} holds {} bytes, {nrows} rows need more",
                c.values.len()
            )));
        }
        if let Some(v) = c.validity
            && (v.len() as u64) < (nrows as u64).div_ceil(8)
        {
            return Err(DeviceError::InvalidRequest(format!("validity bitmap of column {i} is too short")));
        }
    }
    Ok(())
}

/// Turn an interpreter error code into a [`DeviceError`].
pub fn eval_error(code: i32, row: u32) -> DeviceError {
    match sql_error(code) {
        Some((sqlstate, message)) => DeviceError::Sql { sqlstate, message, row },
        None if code == DEVERR_LIKE_TOO_COMPLEX => DeviceError::Kernel {
            status: code,
            message: format!("LIKE pattern at row {row} nests more '%' wildcards than the device handles (16)"),
        },
        None if code == DEVERR_NEEDS_CPU => DeviceError::NeedsCpu { row },
        None if code == DEVERR_INVALID_PROGRAM => {
            DeviceError::InvalidProgram(format!("the interpreter rejected the program at row {row}"))
        }
        None => DeviceError::Kernel {
            status: code,
            message: format!("device program failed with code {code} at row {row}"),
        },
    }
}

/// Check the shape of a filter request; shared by the engines.
pub fn validate_filter(column: &FilterColumn<'_>, validity: Option<&[u8]>) -> Result<u32, DeviceError> {
    let n = column.len();
    let nrows = u32::try_from(n)
        .map_err(|_| DeviceError::InvalidRequest(format!("chunk of {n} rows exceeds the 2^32-1 row limit")))?;
    if let Some(v) = validity
        && v.len() < n.div_ceil(8)
    {
        return Err(DeviceError::InvalidRequest(format!(
            "validity bitmap of {} bytes is too short for {n} rows",
            v.len()
        )));
    }
    Ok(nrows)
}

/// The reference semantics in plain Rust: PostgreSQL's comparison rules
/// (NaN equals NaN and sorts above all numbers), NULL never matches.
/// Tests compare both engines against this.
pub fn reference_filter(column: &FilterColumn<'_>, validity: Option<&[u8]>, op: CompareOp) -> FilterResult {
    let valid = |i: usize| validity.is_none_or(|v| (v[i / 8] >> (i % 8)) & 1 == 1);
    let pg_cmp_f64 = |a: f64, b: f64| match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    };
    let matches: Vec<u8> = (0..column.len())
        .map(|i| {
            if !valid(i) {
                return 0;
            }
            let ord = match column {
                FilterColumn::Int32 { values, constant } => values[i].cmp(constant),
                FilterColumn::Int64 { values, constant } => values[i].cmp(constant),
                FilterColumn::Float64 { values, constant } => pg_cmp_f64(values[i], *constant),
            };
            op.holds(ord) as u8
        })
        .collect();
    let nmatched = matches.iter().map(|&m| m as u32).sum();
    FilterResult { matches, nmatched }
}
