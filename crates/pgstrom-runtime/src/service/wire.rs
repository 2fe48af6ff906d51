//! The payload encoding of the GPU service: little-endian integers and
//! 8-byte aligned byte blobs written straight into the shared region, and
//! read back in place (column data is not copied on the service side).
//! Every read is bounds-checked: a malformed request is an error, never a
//! crash of the service.

use crate::agg::{AggGroups, AggKind, AggOp, AggSpec, KeyValue};
use crate::cufile::Mode;
use crate::devstore::{RowVersions, StoreId, StoreMvcc, StoreRows, StoreState, StoreSync, StoreView};
use crate::engine::{ColumnData, EvalOutput, FileForm, FileSlice, FilterResult, ParamValue};
use crate::error::DeviceError;
use crate::fileread::{Direct, FileAccess, Policy};
use crate::heapscan::{HeapAttr, HeapLayout, HeapProbed};
use crate::join::{Combos, JoinDepthSpec, JoinKind, JoinSpec};
use crate::program::{Program, sql_error_by_state};

/// Writes into a buffer; past its end it only counts, so the caller can
/// grow the region to [`Writer::len`] and write again.
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// Write from the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Writer<'a> {
        Writer { buf, pos: 0 }
    }

    /// Bytes written (or needed, after an overflow).
    pub fn len(&self) -> usize {
        self.pos
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.pos == 0
    }

    /// True when the buffer was too small.
    pub fn overflowed(&self) -> bool {
        self.pos > self.buf.len()
    }

    fn put(&mut self, b: &[u8]) {
        let end = self.pos + b.len();
        if end <= self.buf.len() {
            self.buf[self.pos..end].copy_from_slice(b);
        }
        self.pos = end;
    }

    fn align(&mut self) {
        let pad = self.pos.next_multiple_of(8) - self.pos;
        self.put(&[0u8; 8][..pad]);
    }

    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }
    /// A u32.
    pub fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }
    /// A u64.
    pub fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }
    /// An i64.
    pub fn i64(&mut self, v: i64) {
        self.put(&v.to_le_bytes());
    }
    /// Length, then the bytes at an 8-byte boundary.
    pub fn blob(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.align();
        self.put(b);
    }
    /// A blob of plain values.
    pub fn slice<T: Plain>(&mut self, v: &[T]) {
        // SAFETY: Plain types are integers without padding.
        self.blob(unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) });
    }
    /// A string.
    pub fn str(&mut self, s: &str) {
        self.blob(s.as_bytes());
    }
    /// None, or Some and the value.
    pub fn opt<T>(&mut self, v: Option<T>, f: impl FnOnce(&mut Self, T)) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                f(self, v)
            }
        }
    }
}

/// Integer types that may be viewed as bytes and back (little-endian hosts).
pub trait Plain: Copy {}
impl Plain for u8 {}
impl Plain for u32 {}
impl Plain for u64 {}
impl Plain for i64 {}
impl Plain for i32 {}
impl Plain for f64 {}

/// `b` as plain values, when its length and alignment allow.
pub fn cast<T: Plain>(b: &[u8]) -> Option<&[T]> {
    let size = std::mem::size_of::<T>();
    if !b.len().is_multiple_of(size) || !(b.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return None;
    }
    // SAFETY: aligned, in bounds, and any bit pattern is a valid T.
    Some(unsafe { std::slice::from_raw_parts(b.as_ptr().cast(), b.len() / size) })
}

fn bad(what: &str) -> DeviceError {
    DeviceError::InvalidRequest(format!("malformed service message: {what}"))
}

/// Reads what a [`Writer`] wrote.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Read from the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DeviceError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| bad("truncated"))?;
        let b = &self.buf[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, DeviceError> {
        Ok(self.take(1)?[0])
    }
    /// A u32.
    pub fn u32(&mut self) -> Result<u32, DeviceError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    /// A u64.
    pub fn u64(&mut self) -> Result<u64, DeviceError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    /// An i64.
    pub fn i64(&mut self) -> Result<i64, DeviceError> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    /// A blob, in place.
    pub fn blob(&mut self) -> Result<&'a [u8], DeviceError> {
        let n = usize::try_from(self.u64()?).map_err(|_| bad("blob length"))?;
        let pad = self.pos.next_multiple_of(8) - self.pos;
        self.take(pad)?;
        self.take(n)
    }
    /// A blob of plain values, in place (the region is page-aligned and
    /// blobs start at 8-byte offsets).
    pub fn slice<T: Plain>(&mut self) -> Result<&'a [T], DeviceError> {
        cast(self.blob()?).ok_or_else(|| bad("misaligned array"))
    }
    /// A string (invalid UTF-8 replaced).
    pub fn string(&mut self) -> Result<String, DeviceError> {
        Ok(String::from_utf8_lossy(self.blob()?).into_owned())
    }
    /// An optional value.
    pub fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, DeviceError>) -> Result<Option<T>, DeviceError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(f(self)?)),
            _ => Err(bad("option tag")),
        }
    }
    /// A count of items to follow, bounded by what the buffer could hold.
    pub fn count(&mut self) -> Result<usize, DeviceError> {
        let n = self.u64()?;
        if n > (self.buf.len() - self.pos) as u64 {
            return Err(bad("count"));
        }
        Ok(n as usize)
    }
}

/// A program.
pub fn put_program(w: &mut Writer<'_>, p: &Program) -> Result<(), DeviceError> {
    w.blob(&p.to_bytes()?);
    Ok(())
}
/// A program.
pub fn get_program(r: &mut Reader<'_>) -> Result<Program, DeviceError> {
    Program::from_bytes(r.blob()?)
}
fn put_programs(w: &mut Writer<'_>, ps: &[Program]) -> Result<(), DeviceError> {
    w.u64(ps.len() as u64);
    ps.iter().try_for_each(|p| put_program(w, p))
}
fn get_programs(r: &mut Reader<'_>) -> Result<Vec<Program>, DeviceError> {
    (0..r.count()?).map(|_| get_program(r)).collect()
}
fn put_opt_program(w: &mut Writer<'_>, p: Option<&Program>) -> Result<(), DeviceError> {
    let mut res = Ok(());
    w.opt(p, |w, p| res = put_program(w, p));
    res
}

/// Parameters.
pub fn put_params(w: &mut Writer<'_>, ps: &[ParamValue]) {
    w.u64(ps.len() as u64);
    for p in ps {
        w.u8(p.isnull as u8);
        w.i64(p.bits);
        w.i64(p.hi);
        w.u32(p.len as u32);
    }
}
/// Parameters.
pub fn get_params(r: &mut Reader<'_>) -> Result<Vec<ParamValue>, DeviceError> {
    (0..r.count()?)
        .map(|_| Ok(ParamValue { isnull: r.u8()? != 0, bits: r.i64()?, hi: r.i64()?, len: r.u32()? as i32 }))
        .collect()
}

/// Columns of `nrows` rows (offsets: nrows + 1 of them): each in the
/// region, or where it lies in a file of the session.
pub fn put_columns(w: &mut Writer<'_>, cols: &[ColumnData<'_>], nrows: u32) {
    w.u64(cols.len() as u64);
    for c in cols {
        w.u32(c.type_id as u32);
        if let Some(k) = c.store {
            w.u8(2);
            w.u32(k);
            continue;
        }
        match &c.file {
            None => {
                w.u8(0);
                w.blob(c.values);
                w.opt(c.validity, |w, v| w.blob(v));
                w.opt(c.offsets, |w, o| w.slice(&o[..(nrows as usize + 1).min(o.len())]));
            }
            Some(f) => {
                w.u8(1);
                w.u32(f.file);
                w.u64(f.values.0);
                w.u64(f.values.1);
                w.opt(f.validity.as_ref(), |w, v| {
                    w.u64(v.0);
                    w.u64(v.1);
                });
                w.u64(f.first_row);
                match f.form {
                    FileForm::AsIs => w.u8(0),
                    FileForm::Decimal128 { scale, digits, strict } => {
                        w.u8(1);
                        w.u8(scale);
                        w.u8(digits);
                        w.u8(strict as u8);
                    }
                    FileForm::Date32 => w.u8(2),
                    FileForm::FixedText { size } => {
                        w.u8(3);
                        w.u32(size);
                    }
                }
            }
        }
    }
}
/// Columns, in place (file slices as they came: the service resolves them).
pub fn get_columns<'a>(r: &mut Reader<'a>) -> Result<Vec<ColumnData<'a>>, DeviceError> {
    (0..r.count()?)
        .map(|_| {
            let type_id = u16::try_from(r.u32()?).map_err(|_| bad("type id"))?;
            match r.u8()? {
                0 => Ok(ColumnData {
                    type_id,
                    values: r.blob()?,
                    validity: r.opt(|r| r.blob())?,
                    offsets: r.opt(|r| r.slice())?,
                    ..ColumnData::default()
                }),
                1 => Ok(ColumnData {
                    type_id,
                    file: Some(FileSlice {
                        file: r.u32()?,
                        values: (r.u64()?, r.u64()?),
                        validity: r.opt(|r| Ok((r.u64()?, r.u64()?)))?,
                        first_row: r.u64()?,
                        form: match r.u8()? {
                            0 => FileForm::AsIs,
                            1 => FileForm::Decimal128 { scale: r.u8()?, digits: r.u8()?, strict: r.u8()? != 0 },
                            2 => FileForm::Date32,
                            3 => FileForm::FixedText { size: r.u32()? },
                            _ => return Err(bad("file column form")),
                        },
                    }),
                    ..ColumnData::default()
                }),
                2 => Ok(ColumnData { type_id, store: Some(r.u32()?), ..ColumnData::default() }),
                _ => Err(bad("column kind")),
            }
        })
        .collect()
}

/// A join request.
pub fn put_join_spec(w: &mut Writer<'_>, s: &JoinSpec<'_>) -> Result<(), DeviceError> {
    put_opt_program(w, s.scan_qual.as_ref())?;
    w.u64(s.outer_types.len() as u64);
    s.outer_types.iter().for_each(|t| w.u32(*t as u32));
    w.u64(s.depths.len() as u64);
    for d in &s.depths {
        w.u32(d.kind as u32);
        put_programs(w, &d.outer_keys)?;
        put_programs(w, &d.inner_keys)?;
        put_opt_program(w, d.qual.as_ref())?;
        w.u32(d.ninner);
        put_columns(w, &d.inner, d.ninner);
    }
    put_params(w, &s.params);
    match &s.agg {
        None => w.u8(0),
        Some(a) => {
            w.u8(1);
            put_programs(w, &a.keys)?;
            w.u64(a.ops.len() as u64);
            for op in &a.ops {
                w.u32(op.kind as u32);
                w.u32(op.scale as u32);
                put_programs(w, &op.args)?;
                put_opt_program(w, op.filter.as_ref())?;
            }
        }
    }
    Ok(())
}
/// A join request, its inner columns in place.
pub fn get_join_spec<'a>(r: &mut Reader<'a>) -> Result<JoinSpec<'a>, DeviceError> {
    let scan_qual = r.opt(get_program)?;
    let outer_types =
        (0..r.count()?).map(|_| u16::try_from(r.u32()?).map_err(|_| bad("type id"))).collect::<Result<_, _>>()?;
    let depths = (0..r.count()?)
        .map(|_| {
            let kind = JoinKind::from_pg(r.u32()?).ok_or_else(|| bad("join kind"))?;
            let outer_keys = get_programs(r)?;
            let inner_keys = get_programs(r)?;
            let qual = r.opt(get_program)?;
            let ninner = r.u32()?;
            let inner = get_columns(r)?;
            Ok(JoinDepthSpec { kind, outer_keys, inner_keys, qual, inner, ninner })
        })
        .collect::<Result<_, DeviceError>>()?;
    let params = get_params(r)?;
    let agg = r.opt(|r| {
        let keys = get_programs(r)?;
        let ops = (0..r.count()?)
            .map(|_| {
                let kind = AggKind::from_u32(r.u32()?).ok_or_else(|| bad("aggregate kind"))?;
                let scale = r.u32()? as i32;
                Ok(AggOp { kind, scale, args: get_programs(r)?, filter: r.opt(get_program)? })
            })
            .collect::<Result<_, DeviceError>>()?;
        Ok(AggSpec { keys, ops })
    })?;
    Ok(JoinSpec { scan_qual, outer_types, depths, params, agg })
}

fn put_u64s(w: &mut Writer<'_>, v: impl ExactSizeIterator<Item = u64>) {
    w.u64(v.len() as u64);
    w.align();
    v.for_each(|x| w.u64(x));
}
fn get_u64s(r: &mut Reader<'_>) -> Result<Vec<u64>, DeviceError> {
    let n = r.count()?;
    let pad = r.pos.next_multiple_of(8) - r.pos;
    r.take(pad)?;
    let b = r.take(n.checked_mul(8).ok_or_else(|| bad("count"))?)?;
    Ok(b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect())
}
fn get_u32s(r: &mut Reader<'_>) -> Result<Vec<u32>, DeviceError> {
    Ok(r.slice::<u32>()?.to_vec())
}

/// An evaluation's output.
pub fn put_eval_output(w: &mut Writer<'_>, o: &EvalOutput) {
    w.slice(&o.values);
    w.blob(&o.nulls);
    w.slice(&o.wide);
    w.blob(&o.text);
    w.slice(&o.cpu_rows);
}
/// An evaluation's output.
pub fn get_eval_output(r: &mut Reader<'_>) -> Result<EvalOutput, DeviceError> {
    Ok(EvalOutput {
        values: r.slice::<i64>()?.to_vec(),
        nulls: r.blob()?.to_vec(),
        wide: r.slice::<i64>()?.to_vec(),
        text: r.blob()?.to_vec(),
        cpu_rows: r.slice::<u32>()?.to_vec(),
    })
}

/// A filter's result.
pub fn put_filter_result(w: &mut Writer<'_>, f: &FilterResult) {
    w.blob(&f.matches);
    w.u32(f.nmatched);
}
/// A filter's result.
pub fn get_filter_result(r: &mut Reader<'_>) -> Result<FilterResult, DeviceError> {
    Ok(FilterResult { matches: r.blob()?.to_vec(), nmatched: r.u32()? })
}

/// Join combinations.
pub fn put_combos(w: &mut Writer<'_>, c: &Combos) {
    w.u64(c.nsources as u64);
    w.u64(c.count as u64);
    w.slice(&c.rows);
    put_u64s(w, c.stage_counts.iter().copied());
}
/// Join combinations.
pub fn get_combos(r: &mut Reader<'_>) -> Result<Combos, DeviceError> {
    let nsources = r.u64()? as usize;
    let count = r.u64()? as usize;
    let rows = get_u32s(r)?;
    if nsources.checked_mul(count) != Some(rows.len()) {
        return Err(bad("combination rows"));
    }
    Ok(Combos { nsources, count, rows, stage_counts: get_u64s(r)? })
}

/// Aggregated groups.
pub fn put_groups(w: &mut Writer<'_>, g: &AggGroups) {
    w.u64(g.nsources as u64);
    w.u64(g.count as u64);
    w.slice(&g.rows);
    w.u64(g.nkeys as u64);
    put_u64s(w, g.keys.iter().map(|k| k.bits as u64));
    put_u64s(w, g.keys.iter().map(|k| k.hi as u64));
    put_u64s(w, g.keys.iter().map(|k| k.len as u32 as u64 | (k.isnull as u64) << 32));
    w.u64(g.nwords as u64);
    w.slice(&g.words);
    put_u64s(w, g.stage_counts.iter().copied());
    let exc: Vec<u8> = g.exceptions.iter().map(|&e| e as u8).collect();
    w.slice(&exc);
}
/// Aggregated groups.
pub fn get_groups(r: &mut Reader<'_>) -> Result<AggGroups, DeviceError> {
    let nsources = r.u64()? as usize;
    let count = r.u64()? as usize;
    let rows = get_u32s(r)?;
    let nkeys = r.u64()? as usize;
    let kv = get_u64s(r)?;
    let kh = get_u64s(r)?;
    let kn = get_u64s(r)?;
    let nwords = r.u64()? as usize;
    let words = r.slice::<u64>()?.to_vec();
    let stage_counts = get_u64s(r)?;
    let exceptions: Vec<bool> = r.slice::<u8>()?.iter().map(|&e| e != 0).collect();
    if nsources.checked_mul(count) != Some(rows.len())
        || (!exceptions.is_empty() && exceptions.len() != count)
        || nkeys.checked_mul(count) != Some(kv.len())
        || kn.len() != kv.len()
        || kh.len() != kv.len()
        || nwords.checked_mul(count) != Some(words.len())
    {
        return Err(bad("group arrays"));
    }
    let keys = (0..kv.len())
        .map(|i| KeyValue { bits: kv[i] as i64, hi: kh[i] as i64, len: kn[i] as u32 as i32, isnull: kn[i] >> 32 != 0 })
        .collect();
    Ok(AggGroups { nsources, count, rows, nkeys, keys, nwords, words, stage_counts, exceptions })
}

/// A storage policy (FILE_OPEN).
pub fn put_policy(w: &mut Writer<'_>, p: &Policy) {
    w.u8(p.direct.code());
    w.u64(p.threshold);
}

/// As [`put_policy`] wrote it.
pub fn get_policy(r: &mut Reader<'_>) -> Result<Policy, DeviceError> {
    let direct = Direct::from_code(r.u8()?).ok_or_else(|| DeviceError::InvalidRequest("storage policy".into()))?;
    Ok(Policy { direct, threshold: r.u64()? })
}

/// A heap tuple layout (JOIN_PROBE_HEAP).
pub fn put_heap_layout(w: &mut Writer<'_>, l: &HeapLayout) {
    w.u32(l.blcksz);
    w.u64(l.attrs.len() as u64);
    for a in &l.attrs {
        w.u32(a.attlen as u16 as u32);
        w.u8(a.attalign);
        w.u8(a.conv);
        w.u32(a.column as u32);
    }
    let types: Vec<u32> = l.types.iter().map(|&t| t as u32).collect();
    w.slice(&types);
    w.slice(&l.keys);
}

/// As [`put_heap_layout`] wrote it (checked by [`HeapLayout::widths`]).
pub fn get_heap_layout(r: &mut Reader<'_>) -> Result<HeapLayout, DeviceError> {
    let blcksz = r.u32()?;
    let n = r.count()?;
    let mut attrs = Vec::with_capacity(n);
    for _ in 0..n {
        let attlen = r.u32()? as u16 as i16;
        let attalign = r.u8()?;
        let conv = r.u8()?;
        let column = r.u32()? as i32;
        attrs.push(HeapAttr { attlen, attalign, conv, column });
    }
    let types = r.slice::<u32>()?.iter().map(|&t| t as u16).collect();
    let keys = r.slice::<u32>()?.to_vec();
    let l = HeapLayout { blcksz, attrs, types, keys };
    l.widths()?;
    Ok(l)
}

/// A heap request's answer.
pub fn put_heap_probed(w: &mut Writer<'_>, p: &HeapProbed) {
    put_groups(w, &p.groups);
    put_combos(w, &p.combos);
    w.slice(&p.counts);
    w.u32(p.nrows);
    w.slice(&p.fallback);
    w.u64(p.keys.len() as u64);
    for k in &p.keys {
        w.u8(k.is_some() as u8);
        w.slice(k.as_deref().unwrap_or(&[]));
    }
    w.slice(&p.tuples.rows);
    w.slice(&p.tuples.lineoffs);
    w.slice(&p.tuples.starts);
    w.slice(&p.tuples.bytes);
}

/// As [`put_heap_probed`] wrote it.
pub fn get_heap_probed(r: &mut Reader<'_>) -> Result<HeapProbed, DeviceError> {
    let (groups, combos, counts) = (get_groups(r)?, get_combos(r)?, r.slice::<u32>()?.to_vec());
    let (nrows, fallback) = (r.u32()?, r.slice::<u32>()?.to_vec());
    let n = r.count()?;
    let mut keys = Vec::with_capacity(n);
    for _ in 0..n {
        let present = r.u8()? != 0;
        let bytes = r.slice::<u8>()?;
        keys.push(present.then(|| bytes.to_vec()));
    }
    let tuples = crate::heapscan::HeapTuples {
        rows: r.slice::<u32>()?.to_vec(),
        lineoffs: r.slice::<u32>()?.to_vec(),
        starts: r.slice::<u32>()?.to_vec(),
        bytes: r.slice::<u8>()?.to_vec(),
    };
    Ok(HeapProbed { groups, combos, counts, nrows, fallback, keys, tuples })
}

/// Lists of bit words (matched inner rows per depth).
pub fn put_bit_lists(w: &mut Writer<'_>, lists: &[Vec<u64>]) {
    w.u64(lists.len() as u64);
    for l in lists {
        w.slice(l);
    }
}

/// As [`put_bit_lists`] wrote them.
pub fn get_bit_lists(r: &mut Reader<'_>) -> Result<Vec<Vec<u64>>, DeviceError> {
    let n = r.count()?;
    (0..n).map(|_| r.slice::<u64>().map(<[u64]>::to_vec)).collect()
}

/// A session's engine time.
pub fn put_clock(w: &mut Writer<'_>, c: &crate::clock::DeviceClock) {
    w.u64(c.total_ns);
    for v in c.ns {
        w.u64(v);
    }
}

/// A session's engine time.
pub fn get_clock(r: &mut Reader<'_>) -> Result<crate::clock::DeviceClock, DeviceError> {
    let mut c = crate::clock::DeviceClock { total_ns: r.u64()?, ..Default::default() };
    for v in c.ns.iter_mut() {
        *v = r.u64()?;
    }
    Ok(c)
}

/// How a file is read (the FILE_OPEN answer).
pub fn put_file_access(w: &mut Writer<'_>, a: &FileAccess) {
    match a {
        FileAccess::Pinned => w.u8(0),
        FileAccess::CuFile(Mode::Compat) => w.u8(1),
        FileAccess::CuFile(Mode::PeerToPeer) => w.u8(2),
        FileAccess::Refused(why) => {
            w.u8(3);
            w.str(why)
        }
    }
}

/// As [`put_file_access`] wrote it.
pub fn get_file_access(r: &mut Reader<'_>) -> Result<FileAccess, DeviceError> {
    Ok(match r.u8()? {
        0 => FileAccess::Pinned,
        1 => FileAccess::CuFile(Mode::Compat),
        2 => FileAccess::CuFile(Mode::PeerToPeer),
        _ => FileAccess::Refused(r.string()?),
    })
}

/// An error, keeping what executors act on (SQL errors with their row,
/// rows that need the CPU); the rest travels as its message.
pub fn put_error(w: &mut Writer<'_>, e: &DeviceError) {
    match e {
        DeviceError::Sql { sqlstate, row, .. } => {
            w.u32(1);
            w.str(sqlstate);
            w.u32(*row);
            w.str(&e.to_string());
        }
        DeviceError::NeedsCpu { row } => {
            w.u32(2);
            w.u32(*row);
        }
        DeviceError::InvalidProgram(m) => {
            w.u32(3);
            w.str(m);
        }
        DeviceError::InvalidRequest(m) => {
            w.u32(4);
            w.str(m);
        }
        DeviceError::Kernel { status, message } => {
            w.u32(5);
            w.u32(*status as u32);
            w.str(message);
        }
        DeviceError::DeviceLost { device, cause } => {
            w.u32(6);
            w.str(device);
            w.str(cause);
        }
        DeviceError::OutOfMemory(m) => {
            w.u32(7);
            w.str(m);
        }
        other => {
            w.u32(0);
            w.str(&other.to_string());
            w.opt(other.hint(), |w, h| w.str(h));
        }
    }
}
/// An error.
pub fn get_error(r: &mut Reader<'_>) -> Result<DeviceError, DeviceError> {
    Ok(match r.u32()? {
        1 => {
            let state = r.string()?;
            let row = r.u32()?;
            let message = r.string()?;
            match sql_error_by_state(&state, &message) {
                Some((sqlstate, message)) => DeviceError::Sql { sqlstate, message, row },
                None => DeviceError::Remote { message: format!("{message} (SQLSTATE {state})"), hint: None },
            }
        }
        2 => DeviceError::NeedsCpu { row: r.u32()? },
        3 => DeviceError::InvalidProgram(r.string()?),
        4 => DeviceError::InvalidRequest(r.string()?),
        5 => DeviceError::Kernel { status: r.u32()? as i32, message: r.string()? },
        6 => DeviceError::DeviceLost { device: r.string()?, cause: r.string()? },
        7 => DeviceError::OutOfMemory(r.string()?),
        _ => {
            let m = r.string()?;
            let hint = r.opt(|r| r.string())?;
            DeviceError::Remote { message: m, hint }
        }
    })
}

/// Which copy of a GPU store table.
pub fn put_store_id(w: &mut Writer<'_>, id: &StoreId) {
    w.u64(id.sysid);
    w.u32(id.db);
    w.u32(id.rel);
    w.u64(id.generation);
    w.u64(id.files);
}
/// Which copy of a GPU store table.
pub fn get_store_id(r: &mut Reader<'_>) -> Result<StoreId, DeviceError> {
    Ok(StoreId { sysid: r.u64()?, db: r.u32()?, rel: r.u32()?, generation: r.u64()?, files: r.u64()? })
}

/// The rows of a chunk of a GPU store table and their view.
pub fn put_store_rows(w: &mut Writer<'_>, s: &StoreRows) {
    let v = &s.view;
    w.u64(v.horizon);
    w.u64(v.hide_below);
    w.u32(v.curcid);
    w.slice(&v.aborted);
    w.slice(&v.window);
    w.blob(&v.states);
    w.u64(s.first_row);
    match &s.mvcc {
        StoreMvcc::Copy(id) => {
            w.u8(0);
            put_store_id(w, id);
        }
        StoreMvcc::Inline(m) => {
            w.u8(1);
            w.slice(&m.xmin);
            w.slice(&m.cmin);
            w.slice(&m.xmax);
            w.slice(&m.cmax);
        }
    }
}
/// The rows of a chunk of a GPU store table and their view.
pub fn get_store_rows(r: &mut Reader<'_>) -> Result<StoreRows, DeviceError> {
    let view = StoreView {
        horizon: r.u64()?,
        hide_below: r.u64()?,
        curcid: r.u32()?,
        aborted: r.slice::<u64>()?.to_vec(),
        window: r.slice::<u64>()?.to_vec(),
        states: r.blob()?.to_vec(),
    };
    let first_row = r.u64()?;
    let mvcc = match r.u8()? {
        0 => StoreMvcc::Copy(get_store_id(r)?),
        1 => StoreMvcc::Inline(std::sync::Arc::new(RowVersions {
            xmin: r.slice::<u64>()?.to_vec(),
            cmin: r.slice::<u32>()?.to_vec(),
            xmax: r.slice::<u64>()?.to_vec(),
            cmax: r.slice::<u32>()?.to_vec(),
        })),
        _ => return Err(bad("store rows kind")),
    };
    Ok(StoreRows { view: std::sync::Arc::new(view), first_row, mvcc })
}

/// A batch for a copy of a GPU store table.
pub fn put_store_sync(w: &mut Writer<'_>, s: &StoreSync<'_>) {
    put_store_id(w, &s.id);
    w.u64(s.types.len() as u64);
    s.types.iter().for_each(|t| w.u32(*t as u32));
    w.u64(s.from_rows);
    w.u32(s.nrows);
    put_columns(w, s.columns, s.nrows);
    w.slice(s.xmin);
    w.slice(s.cmin);
    w.u64(s.from_deletes);
    w.slice(s.del_rows);
    w.slice(s.del_xids);
    w.slice(s.del_cids);
}

/// A batch as it came, in place (types copied out).
pub struct StoreSyncIn<'a> {
    /// The batch's column types.
    pub types: Vec<u16>,
    id: StoreId,
    from_rows: u64,
    nrows: u32,
    columns: Vec<ColumnData<'a>>,
    xmin: &'a [u64],
    cmin: &'a [u32],
    from_deletes: u64,
    del_rows: &'a [u64],
    del_xids: &'a [u64],
    del_cids: &'a [u32],
}

impl<'a> StoreSyncIn<'a> {
    /// The batch.
    pub fn batch(&'a self) -> StoreSync<'a> {
        StoreSync {
            id: self.id,
            types: &self.types,
            from_rows: self.from_rows,
            nrows: self.nrows,
            columns: &self.columns,
            xmin: self.xmin,
            cmin: self.cmin,
            from_deletes: self.from_deletes,
            del_rows: self.del_rows,
            del_xids: self.del_xids,
            del_cids: self.del_cids,
        }
    }
}

/// A batch for a copy of a GPU store table.
pub fn get_store_sync<'a>(r: &mut Reader<'a>) -> Result<StoreSyncIn<'a>, DeviceError> {
    let id = get_store_id(r)?;
    let types = (0..r.count()?)
        .map(|_| u16::try_from(r.u32()?).map_err(|_| bad("type id")))
        .collect::<Result<Vec<u16>, DeviceError>>()?;
    let from_rows = r.u64()?;
    let nrows = r.u32()?;
    let columns = get_columns(r)?;
    if columns.iter().any(|c| c.file.is_some() || c.store.is_some()) {
        return Err(bad("store batch columns"));
    }
    Ok(StoreSyncIn {
        types,
        id,
        from_rows,
        nrows,
        columns,
        xmin: r.slice()?,
        cmin: r.slice()?,
        from_deletes: r.u64()?,
        del_rows: r.slice()?,
        del_xids: r.slice()?,
        del_cids: r.slice()?,
    })
}

/// Where a copy stands (None: the engine keeps no copies).
pub fn put_store_state(w: &mut Writer<'_>, s: Option<&StoreState>) {
    w.opt(s, |w, s| {
        w.u64(s.rows);
        w.u64(s.deletes);
        w.u64(s.bytes);
    });
}
/// Where a copy stands.
pub fn get_store_state(r: &mut Reader<'_>) -> Result<Option<StoreState>, DeviceError> {
    r.opt(|r| Ok(StoreState { rows: r.u64()?, deletes: r.u64()?, bytes: r.u64()? }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Errors an executor acts on keep their kind across the socket; so do
    /// storage policies and file accesses.
    #[test]
    fn errors_policies_and_accesses_round_trip() {
        let mut buf = vec![0u8; 4096];
        let errors = [
            DeviceError::OutOfMemory("a request needs 81 MB of GPU memory".into()),
            DeviceError::DeviceLost { device: "GPU0 (x)".into(), cause: "CUresult 700".into() },
            DeviceError::NeedsCpu { row: 7 },
            DeviceError::InvalidRequest("no file 3 in this session".into()),
        ];
        for e in errors {
            let mut w = Writer::new(&mut buf);
            put_error(&mut w, &e);
            let n = w.len();
            assert_eq!(get_error(&mut Reader::new(&buf[..n])).unwrap(), e);
        }
        for p in [Policy { direct: Direct::On, threshold: 1 << 20 }, Policy { direct: Direct::Off, threshold: 0 }] {
            let mut w = Writer::new(&mut buf);
            put_policy(&mut w, &p);
            let n = w.len();
            assert_eq!(get_policy(&mut Reader::new(&buf[..n])).unwrap(), p);
        }
        for a in [
            FileAccess::Pinned,
            FileAccess::CuFile(Mode::Compat),
            FileAccess::CuFile(Mode::PeerToPeer),
            FileAccess::Refused("cuFileHandleRegister failed".into()),
        ] {
            let mut w = Writer::new(&mut buf);
            put_file_access(&mut w, &a);
            let n = w.len();
            assert_eq!(get_file_access(&mut Reader::new(&buf[..n])).unwrap(), a);
        }
    }

    /// A join-only heap answer keeps its combinations, counts and tuples.
    #[test]
    fn heap_answers_round_trip() {
        let mut buf = vec![0u8; 4096];
        let p = HeapProbed {
            combos: Combos { nsources: 2, count: 2, rows: vec![0, 2, 5, 6], ..Combos::default() },
            counts: vec![2, crate::heapscan::HEAP_BLOCK_FALLBACK, 1],
            nrows: 3,
            fallback: vec![1],
            tuples: crate::heapscan::HeapTuples {
                rows: vec![0, 2],
                lineoffs: vec![1, 4],
                starts: vec![0, 3, 8],
                bytes: b"abcdefgh".to_vec(),
            },
            ..HeapProbed::default()
        };
        let mut w = Writer::new(&mut buf);
        put_heap_probed(&mut w, &p);
        let n = w.len();
        assert_eq!(get_heap_probed(&mut Reader::new(&buf[..n])).unwrap(), p);
    }
}
