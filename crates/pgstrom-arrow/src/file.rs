//! Arrow IPC files as Arrow_Fdw reads them.
//!
//! Owns: opening a file (magic, footer, schema), each record batch's
//! message (row count and the place of every buffer in its body, checked
//! against the file before anything is read), the per-batch min/max
//! statistics in the fields' custom metadata (`min_values` /
//! `max_values`, the format pg2arrow writes), and decoding a record batch
//! with only the referenced columns' buffers read from the file (the rest
//! of the body stays unread: untouched zero pages).  Decoding is arrow-rs
//! (flatbuffers verified, arrays validated, LZ4_FRAME / ZSTD bodies).
//!
//! Never calls PostgreSQL: every failure is an [`ArrowError`] naming the
//! file (and batch) for the caller to raise.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;
use arrow_ipc::{Block, MetadataVersion};
use arrow_schema::{DataType, Schema, SchemaRef};

pub(crate) const MAGIC: &[u8; 6] = b"ARROW1";
/// The largest footer or message header we accept (a corrupt length must
/// not make us allocate gigabytes).
const MAX_META: usize = 256 << 20;
/// The largest buffer a compressed batch may decompress to.
const MAX_BUFFER: i64 = 1 << 32;

/// What went wrong, for an ERROR: the message names the file.
#[derive(Debug, Clone)]
pub struct ArrowError {
    pub message: String,
    pub kind: ArrowErrorKind,
}

/// What kind of failure an [`ArrowError`] is (its SQLSTATE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowErrorKind {
    /// The file could not be read or written (58030 io error).
    Io,
    /// The file is damaged (XX001 data corrupted).
    Corrupt,
    /// A valid file using a feature that is not supported, such as
    /// big-endian data (0A000 feature not supported).
    Unsupported,
}

fn corrupt(path: &str, what: impl std::fmt::Display) -> ArrowError {
    // arrow-rs's messages may end in blank lines
    let what = what.to_string();
    ArrowError {
        message: format!("arrow file \"{path}\" is corrupt: {}", what.trim_end()),
        kind: ArrowErrorKind::Corrupt,
    }
}

fn io(path: &str, what: impl std::fmt::Display) -> ArrowError {
    ArrowError { message: format!("could not read arrow file \"{path}\": {what}"), kind: ArrowErrorKind::Io }
}

/// Per-batch (min, max) of a field as text (None: no statistics).
pub type TextStats = Vec<Option<(String, String)>>;

/// One record batch of a file.
#[derive(Debug, Clone)]
pub struct BatchInfo {
    /// The footer's block (offset of the message, header and body lengths).
    pub block: Block,
    /// The message header (continuation marker, length, flatbuffer).
    meta: Vec<u8>,
    /// Rows in the batch.
    pub rows: i64,
    /// (offset, length) of every buffer in the body.
    buffers: Vec<(u64, u64)>,
    /// LZ4_FRAME / ZSTD compressed buffers.
    compressed: bool,
    /// Length of every field node.
    nodes: Vec<i64>,
    /// Null count of every field node.
    nulls: Vec<i64>,
}

/// The buffers of a fixed-width field in one record batch, as absolute
/// (offset, length) in the file; their lengths were checked against the
/// batch's rows when the file was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedBuffers {
    /// The validity bitmap (None: no NULLs in this batch).
    pub validity: Option<(u64, u64)>,
    pub values: (u64, u64),
    pub rows: u64,
}

/// An opened Arrow file: its schema and record batches.
#[derive(Debug)]
pub struct ArrowFile {
    pub path: String,
    pub size: u64,
    /// Where the footer starts: appends write their record batches here.
    pub footer_at: u64,
    pub schema: SchemaRef,
    version: MetadataVersion,
    /// The footer's custom metadata.
    footer_metadata: arrow_schema::Metadata,
    dictionaries: Vec<Block>,
    pub batches: Vec<BatchInfo>,
    /// The buffers of each top-level field (None: a type whose buffer
    /// count we do not know; then whole bodies are read).
    field_buffers: Option<Vec<Range<usize>>>,
    /// The field node of each top-level field (None: unknown layout).
    field_nodes: Option<Vec<usize>>,
    file: File,
}

/// Buffers a field of this type takes in a record batch body (None when
/// it depends on the batch: view types).
fn buffer_count(dt: &DataType) -> Option<usize> {
    use DataType::*;
    Some(match dt {
        Null => 0,
        Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float16 | Float32 | Float64
        | Timestamp(..) | Date32 | Date64 | Time32(_) | Time64(_) | Duration(_) | Interval(_) | FixedSizeBinary(_)
        | Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..) => 2,
        Utf8 | LargeUtf8 | Binary | LargeBinary => 3,
        List(f) | LargeList(f) | Map(f, _) => 2 + buffer_count(f.data_type())?,
        FixedSizeList(f, _) => 1 + buffer_count(f.data_type())?,
        Struct(fields) => 1 + fields.iter().map(|f| buffer_count(f.data_type())).sum::<Option<usize>>()?,
        Dictionary(k, _) => buffer_count(k)?,
        Union(fields, mode) => {
            let own = if *mode == arrow_schema::UnionMode::Dense { 2 } else { 1 };
            own + fields.iter().map(|(_, f)| buffer_count(f.data_type())).sum::<Option<usize>>()?
        }
        RunEndEncoded(r, v) => buffer_count(r.data_type())? + buffer_count(v.data_type())?,
        _ => return None,
    })
}

/// Field nodes a field of this type takes in a record batch (itself and
/// its children, depth first).
fn node_count(dt: &DataType) -> Option<usize> {
    use DataType::*;
    Some(match dt {
        List(f) | LargeList(f) | Map(f, _) | FixedSizeList(f, _) => 1 + node_count(f.data_type())?,
        Struct(fields) => 1 + fields.iter().map(|f| node_count(f.data_type())).sum::<Option<usize>>()?,
        Union(fields, _) => 1 + fields.iter().map(|(_, f)| node_count(f.data_type())).sum::<Option<usize>>()?,
        RunEndEncoded(r, v) => 1 + node_count(r.data_type())? + node_count(v.data_type())?,
        Utf8View | BinaryView | ListView(_) | LargeListView(_) => return None,
        _ => 1,
    })
}

/// The fewest bytes the second buffer (values or offsets) of a
/// top-level field of this type holds for `rows` rows, where known.
fn min_values_bytes(dt: &DataType, rows: u64) -> Option<u64> {
    use DataType::*;
    let width: u64 = match dt {
        Boolean => return Some(rows.div_ceil(8)),
        Int8 | UInt8 => 1,
        Int16 | UInt16 | Float16 => 2,
        Int32 | UInt32 | Float32 | Date32 | Time32(_) => 4,
        Int64 | UInt64 | Float64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) => 8,
        Decimal128(..) => 16,
        FixedSizeBinary(n) if *n > 0 => *n as u64,
        Utf8 | Binary | List(_) => return (rows > 0).then(|| (rows + 1) * 4),
        LargeUtf8 | LargeBinary | LargeList(_) => return (rows > 0).then(|| (rows + 1) * 8),
        _ => return None,
    };
    rows.checked_mul(width)
}

fn read_at(file: &File, path: &str, buf: &mut [u8], offset: u64) -> Result<(), ArrowError> {
    file.read_exact_at(buf, offset).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            corrupt(path, format!("{} bytes at offset {offset} lie beyond the end of the file", buf.len()))
        } else {
            io(path, e)
        }
    })
}

impl ArrowFile {
    /// Open `path` and read its footer and every record batch's header.
    pub fn open(path: &str) -> Result<ArrowFile, ArrowError> {
        Self::open_view(path, None)
    }

    /// Open `path` as it was before a writer appended to it: `old` is
    /// (offset, bytes) of the file's end then (its footer, length and
    /// signature), which the writer saved before overwriting it.  The
    /// record batches before that offset are untouched by appends.
    pub fn open_view(path: &str, old: Option<(u64, &[u8])>) -> Result<ArrowFile, ArrowError> {
        let file = File::open(path).map_err(|e| io(path, e))?;
        let meta = file.metadata().map_err(|e| io(path, e))?;
        if meta.is_dir() {
            return Err(ArrowError {
                message: format!("arrow file \"{path}\" is a directory"),
                kind: ArrowErrorKind::Io,
            });
        }
        let real_size = meta.len();
        let size = match old {
            Some((at, tail)) if at <= real_size => at + tail.len() as u64,
            Some(_) => return Err(corrupt(path, "the file is shorter than its last committed state")),
            None => real_size,
        };
        if size < 18 {
            return Err(corrupt(path, format!("{size} bytes is too short for an Arrow file")));
        }
        // bytes [from, from + len) of the file as this view sees it
        let read_view = |buf: &mut [u8], from: u64| -> Result<(), ArrowError> {
            match old {
                Some((at, tail)) if from >= at => {
                    let o = (from - at) as usize;
                    buf.copy_from_slice(&tail[o..o + buf.len()]);
                    Ok(())
                }
                _ => read_at(&file, path, buf, from),
            }
        };
        let mut head = [0u8; 6];
        read_at(&file, path, &mut head, 0)?;
        let mut tail = [0u8; 10];
        read_view(&mut tail, size - 10)?;
        if &head != MAGIC || &tail[4..] != MAGIC {
            return Err(corrupt(path, "no ARROW1 signature (not an Arrow IPC file?)"));
        }
        let footer_len = i32::from_le_bytes(tail[..4].try_into().expect("4 bytes"));
        if footer_len <= 0 || footer_len as u64 > size - 18 || footer_len as usize > MAX_META {
            return Err(corrupt(path, format!("footer length {footer_len}")));
        }
        let footer_at = size - 10 - footer_len as u64;
        if old.is_some_and(|(at, _)| footer_at < at) {
            return Err(corrupt(path, "the saved footer does not start where it was saved"));
        }
        let mut footer_buf = vec![0u8; footer_len as usize];
        read_view(&mut footer_buf, footer_at)?;
        let footer = arrow_ipc::root_as_footer(&footer_buf).map_err(|e| corrupt(path, format!("footer: {e}")))?;
        let fb_schema = footer.schema().ok_or_else(|| corrupt(path, "footer has no schema"))?;
        if !fb_schema.endianness().equals_to_target_endianness() {
            return Err(ArrowError {
                message: format!("arrow file \"{path}\" is big-endian, which is not supported"),
                kind: ArrowErrorKind::Unsupported,
            });
        }
        let schema = std::panic::catch_unwind(|| arrow_ipc::convert::try_fb_to_schema(fb_schema))
            .map_err(|_| corrupt(path, "schema"))?
            .map_err(|e| corrupt(path, format!("schema: {e}")))?;
        let version = footer.version();
        let footer_metadata = footer
            .custom_metadata()
            .into_iter()
            .flatten()
            .filter_map(|kv| Some((kv.key()?.to_string(), kv.value()?.to_string())))
            .collect();
        let body_end = footer_at;
        let check_block = |b: &Block, what: &str| -> Result<(), ArrowError> {
            let (off, meta, body) = (b.offset(), b.metaDataLength(), b.bodyLength());
            if off < 8 || meta <= 8 || body < 0 || meta as usize > MAX_META {
                return Err(corrupt(path, format!("{what}: offset {off}, header {meta}, body {body} bytes")));
            }
            // the format puts every message on an 8-byte boundary and pads
            // its header and body to multiples of 8
            if off % 8 != 0 || meta % 8 != 0 || body % 8 != 0 {
                return Err(corrupt(
                    path,
                    format!("{what} is not aligned to 8 bytes: offset {off}, header {meta}, body {body} bytes"),
                ));
            }
            let end = (off as u64).checked_add(meta as u64).and_then(|x| x.checked_add(body as u64));
            if end.is_none_or(|e| e > body_end) {
                return Err(corrupt(path, format!("{what} at offset {off} runs past the footer")));
            }
            Ok(())
        };
        let dictionaries: Vec<Block> = footer.dictionaries().map(|d| d.iter().copied().collect()).unwrap_or_default();
        for (i, b) in dictionaries.iter().enumerate() {
            check_block(b, &format!("dictionary batch {i}"))?;
        }
        let blocks: Vec<Block> = footer.recordBatches().map(|d| d.iter().copied().collect()).unwrap_or_default();
        let mut batches = Vec::with_capacity(blocks.len());
        for (i, block) in blocks.into_iter().enumerate() {
            check_block(&block, &format!("record batch {i}"))?;
            let mut meta = vec![0u8; block.metaDataLength() as usize];
            read_at(&file, path, &mut meta, block.offset() as u64)?;
            let (rows, buffers, compressed, (nodes, nulls)) = parse_header(&meta, block.bodyLength() as u64)
                .map_err(|e| corrupt(path, format!("record batch {i}: {e}")))?;
            batches.push(BatchInfo { block, meta, rows, buffers, compressed, nodes, nulls });
        }
        let mut field_buffers = Vec::with_capacity(schema.fields().len());
        let mut at = 0usize;
        for f in schema.fields() {
            match buffer_count(f.data_type()) {
                Some(n) => {
                    field_buffers.push(at..at + n);
                    at += n;
                }
                None => break,
            }
        }
        let field_buffers = (field_buffers.len() == schema.fields().len()).then_some(field_buffers);
        // A batch's row count must be every top-level field's length, and
        // must fit in the values it claims: a damaged count must not make a
        // scan that reads no column (count(*)) return rows that are not there.
        let mut top_nodes = Vec::with_capacity(schema.fields().len());
        let mut nnodes = 0usize;
        for f in schema.fields() {
            match node_count(f.data_type()) {
                Some(n) => {
                    top_nodes.push(nnodes);
                    nnodes += n;
                }
                None => break,
            }
        }
        for (i, b) in batches.iter().enumerate() {
            if top_nodes.len() == schema.fields().len() {
                if b.nodes.len() != nnodes {
                    return Err(corrupt(
                        path,
                        format!("record batch {i} has {} field nodes, its schema needs {nnodes}", b.nodes.len()),
                    ));
                }
                if let Some(&n) = top_nodes.iter().map(|&k| &b.nodes[k]).find(|&&n| n != b.rows) {
                    return Err(corrupt(path, format!("record batch {i} has {} rows, but a column has {n}", b.rows)));
                }
            }
            if let (Some(fb), false) = (&field_buffers, b.compressed) {
                for (f, r) in schema.fields().iter().zip(fb) {
                    let need = min_values_bytes(f.data_type(), b.rows as u64);
                    if r.len() >= 2 && need.is_some_and(|n| b.buffers[r.start + 1].1 < n) {
                        return Err(corrupt(
                            path,
                            format!("record batch {i}: column \"{}\" is too short for {} rows", f.name(), b.rows),
                        ));
                    }
                }
            }
        }
        if let Some(fb) = &field_buffers {
            for (i, b) in batches.iter().enumerate() {
                if b.buffers.len() != at {
                    return Err(corrupt(
                        path,
                        format!("record batch {i} has {} buffers, its schema needs {at}", b.buffers.len()),
                    ));
                }
            }
            debug_assert_eq!(fb.len(), schema.fields().len());
        }
        let field_nodes = (top_nodes.len() == schema.fields().len()).then_some(top_nodes);
        Ok(ArrowFile {
            path: path.to_string(),
            size,
            footer_at,
            schema: Arc::new(schema),
            version,
            footer_metadata,
            dictionaries,
            batches,
            field_buffers,
            field_nodes,
            file,
        })
    }

    /// Rows in every batch together.
    pub fn rows(&self) -> i64 {
        self.batches.iter().map(|b| b.rows).sum()
    }

    /// Bytes of batch `b` a scan of `columns` (field indexes) reads.
    pub fn bytes_read(&self, b: usize, columns: &[usize]) -> u64 {
        let batch = &self.batches[b];
        match &self.field_buffers {
            Some(fb) => {
                batch.meta.len() as u64
                    + columns.iter().flat_map(|&c| fb[c].clone()).map(|i| batch.buffers[i].1).sum::<u64>()
            }
            None => batch.meta.len() as u64 + batch.block.bodyLength() as u64,
        }
    }

    /// Where the buffers of field `f` in batch `b` lie in the file, for a
    /// field of fixed-width values (two buffers: validity, values) in a
    /// batch that is not compressed; None otherwise.  Engines that read
    /// such columns straight from the file (the GPU service) use it.
    pub fn fixed_buffers(&self, b: usize, f: usize) -> Option<FixedBuffers> {
        let batch = self.batches.get(b)?;
        let range = self.field_buffers.as_ref()?.get(f)?.clone();
        let node = *self.field_nodes.as_ref()?.get(f)?;
        if batch.compressed || range.len() != 2 || min_values_bytes(self.schema.field(f).data_type(), 0).is_none() {
            return None;
        }
        // NULLs without a bitmap: a damaged file, left to the decoder
        if batch.buffers[range.start].1 == 0 && batch.nulls.get(node).is_none_or(|&n| n != 0) {
            return None;
        }
        let body_at = batch.block.offset() as u64 + batch.meta.len() as u64;
        let (voff, vlen) = batch.buffers[range.start];
        let (off, len) = batch.buffers[range.start + 1];
        Some(FixedBuffers {
            validity: (vlen > 0).then_some((body_at + voff, vlen)),
            values: (body_at + off, len),
            rows: batch.rows as u64,
        })
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// A decoder of the `columns` (field indexes, ascending) of this file,
    /// with the file's dictionaries loaded.
    pub fn decoder(&self, columns: &[usize]) -> Result<FileDecoder, ArrowError> {
        let mut decoder = FileDecoder::new(self.schema.clone(), self.version).with_projection(columns.to_vec());
        for (i, block) in self.dictionaries.iter().enumerate() {
            let len = block.metaDataLength() as usize + block.bodyLength() as usize;
            let mut buf = vec![0u8; len];
            read_at(&self.file, &self.path, &mut buf, block.offset() as u64)?;
            let buf = Buffer::from_vec(buf);
            catch(|| decoder.read_dictionary(block, &buf))
                .map_err(|e| corrupt(&self.path, format!("dictionary batch {i}: {e}")))?;
        }
        Ok(decoder)
    }

    /// Decode batch `b` with `decoder` (made by [`Self::decoder`] for
    /// `columns`), reading only those columns' buffers.
    pub fn read_batch(&self, decoder: &FileDecoder, b: usize, columns: &[usize]) -> Result<RecordBatch, ArrowError> {
        let batch = &self.batches[b];
        let meta_len = batch.meta.len();
        let body_len = batch.block.bodyLength() as usize;
        // zeroed memory from the allocator: pages never written are never
        // touched, so unreferenced columns cost no memory either
        let mut buf = vec![0u8; meta_len + body_len];
        buf[..meta_len].copy_from_slice(&batch.meta);
        let body_at = batch.block.offset() as u64 + meta_len as u64;
        match &self.field_buffers {
            Some(fb) => {
                // one read per run of adjacent buffers
                let mut ranges: Vec<(u64, u64)> = columns
                    .iter()
                    .flat_map(|&c| fb[c].clone())
                    .map(|i| batch.buffers[i])
                    .filter(|&(_, len)| len > 0)
                    .collect();
                ranges.sort_unstable();
                let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
                for (off, len) in ranges {
                    match merged.last_mut() {
                        Some(last) if off <= last.0 + last.1 => last.1 = last.1.max(off + len - last.0),
                        _ => merged.push((off, len)),
                    }
                }
                for (off, len) in merged {
                    let at = meta_len + off as usize;
                    read_at(&self.file, &self.path, &mut buf[at..at + len as usize], body_at + off)?;
                }
            }
            None => read_at(&self.file, &self.path, &mut buf[meta_len..], body_at)?,
        }
        if batch.compressed {
            // each compressed buffer starts with its uncompressed length: a
            // damaged one must not make the decoder allocate without bound
            for &(off, len) in &batch.buffers {
                if len >= 8 {
                    let at = meta_len + off as usize;
                    let n = i64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"));
                    if n > MAX_BUFFER {
                        return Err(corrupt(
                            &self.path,
                            format!("record batch {b}: a compressed buffer claims {n} bytes uncompressed"),
                        ));
                    }
                }
            }
        }
        let buf = Buffer::from_vec(buf);
        let out = catch(|| decoder.read_record_batch(&batch.block, &buf))
            .map_err(|e| corrupt(&self.path, format!("record batch {b}: {e}")))?;
        out.ok_or_else(|| corrupt(&self.path, format!("record batch {b} has no record batch message")))
    }

    /// The per-batch statistics of field `f`: (min, max) text per batch,
    /// or None when the file has none (or not one value per batch).
    pub fn stats(&self, f: usize) -> Option<TextStats> {
        let md = self.schema.field(f).metadata();
        let split = |s: &String| s.split(',').map(|v| v.trim().to_string()).collect::<Vec<_>>();
        let mins = split(md.get("min_values")?);
        let maxs = split(md.get("max_values")?);
        if mins.len() != self.batches.len() || maxs.len() != self.batches.len() {
            return None;
        }
        Some(
            mins.into_iter().zip(maxs).map(|(lo, hi)| (!lo.is_empty() && !hi.is_empty()).then_some((lo, hi))).collect(),
        )
    }
}

impl ArrowFile {
    /// Append a new footer with `schema` (the same fields, other field
    /// metadata) after the current end, so that the record batches and
    /// dictionaries stay where they are: only the footer is rewritten.
    /// The old footer stays in place as unreferenced bytes; a crash while
    /// writing is undone by truncating the file to its old size.
    pub fn append_footer(&self, schema: &Schema) -> Result<(), ArrowError> {
        use std::io::Write;
        let blocks: Vec<Block> = self.batches.iter().map(|b| b.block).collect();
        let data = footer_bytes(self.version, schema, &self.dictionaries, &blocks, &self.footer_metadata);
        // keep the new footer 8-byte aligned, as writers do
        let pad = (8 - (self.size % 8) as usize) % 8;
        let mut out = vec![0u8; pad];
        out.extend_from_slice(&data);
        let mut f = std::fs::OpenOptions::new().append(true).open(&self.path).map_err(|e| io(&self.path, e))?;
        f.write_all(&out).and_then(|_| f.sync_all()).map_err(|e| ArrowError {
            message: format!("could not write arrow file \"{}\": {e}", self.path),
            kind: ArrowErrorKind::Io,
        })
    }

    /// The schema, version, dictionaries, batch blocks and footer metadata
    /// an appender continues from.
    pub fn parts(&self) -> (MetadataVersion, Vec<Block>, Vec<Block>, arrow_schema::Metadata) {
        (
            self.version,
            self.dictionaries.clone(),
            self.batches.iter().map(|b| b.block).collect(),
            self.footer_metadata.clone(),
        )
    }
}

/// A footer with its length and the closing signature.
pub fn footer_bytes(
    version: MetadataVersion,
    schema: &Schema,
    dictionaries: &[Block],
    blocks: &[Block],
    metadata: &arrow_schema::Metadata,
) -> Vec<u8> {
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let dictionaries = fbb.create_vector(dictionaries);
    let record_batches = fbb.create_vector(blocks);
    let mut tracker = arrow_ipc::writer::DictionaryTracker::new(false);
    let fb_schema = arrow_ipc::convert::IpcSchemaEncoder::new()
        .with_dictionary_tracker(&mut tracker)
        .schema_to_fb_offset(&mut fbb, schema);
    let metadata = (!metadata.is_empty()).then(|| arrow_ipc::convert::metadata_to_fb(&mut fbb, metadata));
    let root = {
        let mut footer = arrow_ipc::FooterBuilder::new(&mut fbb);
        footer.add_version(version);
        footer.add_schema(fb_schema);
        footer.add_dictionaries(dictionaries);
        footer.add_recordBatches(record_batches);
        if let Some(m) = metadata {
            footer.add_custom_metadata(m);
        }
        footer.finish()
    };
    fbb.finish(root, None);
    let data = fbb.finished_data();
    let mut out = data.to_vec();
    out.extend_from_slice(&(data.len() as i32).to_le_bytes());
    out.extend_from_slice(MAGIC);
    out
}

/// Run an arrow-rs decode, turning a panic on malformed input into an
/// error (no PostgreSQL call happens inside).
fn catch<T>(f: impl FnOnce() -> Result<T, arrow_schema::ArrowError>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "malformed data".into())),
    }
}

/// The parts of a record batch message header we use.
type Header = (i64, Vec<(u64, u64)>, bool, (Vec<i64>, Vec<i64>));

/// Row count, body buffers, compression and field node lengths of a record
/// batch message header; every buffer must lie inside the body.
fn parse_header(meta: &[u8], body_len: u64) -> Result<Header, String> {
    let fb = if meta.len() >= 8 && meta[..4] == [0xff; 4] { &meta[8..] } else { &meta[4..] };
    let msg = arrow_ipc::root_as_message(fb).map_err(|e| format!("message header: {e}"))?;
    let rb = msg.header_as_record_batch().ok_or("the message is not a record batch")?;
    if rb.length() < 0 {
        return Err(format!("negative row count {}", rb.length()));
    }
    let mut buffers = Vec::new();
    for (i, b) in rb.buffers().into_iter().flatten().enumerate() {
        let (off, len) = (b.offset(), b.length());
        if off < 0 || len < 0 || (off as u64).checked_add(len as u64).is_none_or(|e| e > body_len) {
            return Err(format!("buffer {i} (offset {off}, length {len}) lies outside the {body_len}-byte body"));
        }
        buffers.push((off as u64, len as u64));
    }
    let (mut nodes, mut nulls) = (Vec::new(), Vec::new());
    for n in rb.nodes().into_iter().flatten() {
        if n.length() < 0 || n.null_count() < 0 || n.null_count() > n.length() {
            return Err(format!("field node with length {} and null count {}", n.length(), n.null_count()));
        }
        nodes.push(n.length());
        nulls.push(n.null_count());
    }
    Ok((rb.length(), buffers, rb.compression().is_some(), (nodes, nulls)))
}

/// The schema of a file, for IMPORT FOREIGN SCHEMA and checks.
pub fn schema_of(path: &str) -> Result<Schema, ArrowError> {
    ArrowFile::open(path).map(|f| f.schema.as_ref().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file whose footer is valid but whose schema says big-endian.
    fn big_endian_file() -> Vec<u8> {
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        let fields = fbb.create_vector::<flatbuffers::WIPOffset<arrow_ipc::Field>>(&[]);
        let schema = {
            let mut s = arrow_ipc::SchemaBuilder::new(&mut fbb);
            s.add_endianness(arrow_ipc::Endianness::Big);
            s.add_fields(fields);
            s.finish()
        };
        let batches = fbb.create_vector::<Block>(&[]);
        let footer = {
            let mut f = arrow_ipc::FooterBuilder::new(&mut fbb);
            f.add_version(MetadataVersion::V5);
            f.add_schema(schema);
            f.add_recordBatches(batches);
            f.finish()
        };
        fbb.finish(footer, None);
        let data = fbb.finished_data();
        let mut bytes = b"ARROW1\0\0".to_vec();
        bytes.extend_from_slice(data);
        bytes.extend_from_slice(&(data.len() as i32).to_le_bytes());
        bytes.extend_from_slice(MAGIC);
        bytes
    }

    #[test]
    fn big_endian_is_not_supported_rather_than_corrupt() {
        let path = std::env::temp_dir().join(format!("pgstrom-big-endian-{}.arrow", std::process::id()));
        std::fs::write(&path, big_endian_file()).expect("temp file");
        let e = ArrowFile::open(path.to_str().expect("utf-8")).expect_err("a big-endian file is refused");
        std::fs::remove_file(&path).ok();
        assert_eq!(e.kind, ArrowErrorKind::Unsupported, "{e:?}");
        assert!(e.message.contains("is big-endian, which is not supported"), "{}", e.message);
    }
}
