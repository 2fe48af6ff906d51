//! Arrow files a join session of the service reads itself: a backend
//! hands over the descriptor of a file it opened (FILE_OPEN), then sends
//! chunks whose fixed-width columns name byte ranges of that file instead
//! of carrying the bytes.  For a GPU the ranges come from the GPU's column
//! cache (read into device memory once, kept for later queries, by the
//! storage path of the session's policy: cuFile or pinned buffers,
//! fileread.rs; Decimal128 and Date32 columns widened there into the
//! device's numeric and date, char(n) checked and given offsets); for the
//! CPU engine they are read into host memory for the request (and widened
//! there, widen.rs).  The session counts the bytes each path moved.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::catalog::type_info;
use crate::colcache::{Cached, FileId, OpenFile, check_range, read_exact};
use crate::engine::{ColumnData, FileForm};
use crate::error::DeviceError;
use crate::fileread::{self, FileAccess, Policy, ReadStats, SourceFile};
use crate::gpu::{DeviceBuffer, GpuEngine, ScratchGuard};
use crate::{numeric, widen};

/// The most files one session may open.
const MAX_FILES: usize = 4096;

/// The files of a session, numbered in the order they were opened.
#[derive(Default)]
pub struct SessionFiles {
    files: Vec<OpenFile>,
    read: ReadStats,
}

/// A column read for the CPU engine: values, validity, offsets (a text
/// column).
pub type HostColumn = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u32>>);

/// Bytes read for the CPU engine: per column, when it lies in a file.
pub type HostColumns = Vec<Option<HostColumn>>;

fn width_of(c: &ColumnData<'_>) -> Result<usize, DeviceError> {
    let t = type_info(c.type_id)
        .ok_or_else(|| DeviceError::InvalidRequest(format!("unknown device type {}", c.type_id)))?;
    Ok(t.width)
}

impl SessionFiles {
    /// Take a file descriptor, to be read by `policy`: its number for
    /// [`crate::engine::FileSlice`], and how it will be read.
    pub fn open(&mut self, fd: OwnedFd, policy: &Policy) -> Result<(u32, FileAccess), DeviceError> {
        if self.files.len() >= MAX_FILES {
            return Err(DeviceError::InvalidRequest(format!("a join session may open at most {MAX_FILES} files")));
        }
        let file = File::from(fd);
        let id = FileId::of(&file).map_err(|e| {
            DeviceError::InvalidRequest(format!("the file handed to the service cannot be examined: {e}"))
        })?;
        let src = SourceFile::new(file, policy);
        let access = src.access();
        if let FileAccess::Refused(why) = &access {
            eprintln!("pg_strom service: cuFile refused a file ({why}): it is read through pinned buffers");
        }
        self.files.push(OpenFile { src, id, policy: *policy });
        Ok(((self.files.len() - 1) as u32, access))
    }

    /// The bytes this session's files moved, by path.
    pub fn read_stats(&self) -> ReadStats {
        self.read
    }

    fn file(&self, n: u32) -> Result<&OpenFile, DeviceError> {
        self.files.get(n as usize).ok_or_else(|| no_file(n))
    }

    /// Point the file columns of `cols` at device memory of `gpu` (its
    /// column cache): the buffers returned must live until the request
    /// ends.  The GPU's context is current on this thread.
    pub fn resolve_on_gpu(
        &mut self,
        gpu: &GpuEngine,
        cols: &mut [ColumnData<'_>],
        nrows: u32,
    ) -> Result<Vec<Arc<Cached>>, DeviceError> {
        let mut keep = Vec::new();
        for c in cols.iter_mut() {
            let Some(f) = c.file else { continue };
            let width = width_of(c)?;
            f.chunk_ranges(width, nrows)?;
            let file = self.files.get(f.file as usize).ok_or_else(|| no_file(f.file))?;
            let bits = match f.validity {
                Some(range) => Some(gpu.columns.get(gpu.drv, file, range, &mut self.read)?),
                None => None,
            };
            let values = match f.form {
                FileForm::AsIs => gpu.columns.get(gpu.drv, file, f.values, &mut self.read)?,
                form => {
                    let validity = bits.as_ref().zip(f.validity).map(|(b, (_, len))| (b.ptr(), len));
                    let v = widened(gpu, file, f.values, form, validity, &mut self.read)?;
                    if let Some(row) = v.first_bad.filter(|_| form.strict()) {
                        return Err(DeviceError::NeedsCpu {
                            row: row.saturating_sub(f.first_row).min(nrows as u64) as u32,
                        });
                    }
                    v
                }
            };
            let vptr = values.ptr() + f.first_row * f.form.file_width(width) as u64;
            keep.push(values);
            let mut optr = 0;
            if let FileForm::FixedText { size } = f.form {
                let offsets = fixed_offsets_on_gpu(gpu, nrows, size)?;
                optr = offsets.ptr();
                keep.push(offsets);
            }
            let mut bptr = 0;
            if let Some(bits) = bits {
                bptr = bits.ptr() + f.first_row / 8;
                keep.push(bits);
            }
            c.resident = Some((vptr, bptr, optr));
        }
        Ok(keep)
    }

    /// Read the chunk's bytes of the file columns of `cols` (for the CPU
    /// engine).
    pub fn read_for_host(&self, cols: &[ColumnData<'_>], nrows: u32) -> Result<HostColumns, DeviceError> {
        cols.iter()
            .map(|c| {
                let Some(f) = c.file else { return Ok(None) };
                let (values, validity) = f.chunk_ranges(width_of(c)?, nrows)?;
                let OpenFile { src, id, .. } = self.file(f.file)?;
                let read = |(off, len): (u64, u64)| -> Result<Vec<u8>, DeviceError> {
                    check_range(id, off, len)?;
                    let mut buf = vec![0u8; len as usize];
                    read_exact(&src.file, &mut buf, off)?;
                    Ok(buf)
                };
                let (values, validity) = (read(values)?, validity.map(read).transpose()?);
                if f.form == FileForm::AsIs {
                    return Ok(Some((values, validity, None)));
                }
                let valid = |i: usize| validity.as_ref().is_none_or(|b| (b[i / 8] >> (i % 8)) & 1 == 1);
                let mut out = Vec::new();
                if let Some(row) = widen::widen(f.form, &values, valid, &mut out).filter(|_| f.form.strict()) {
                    return Err(DeviceError::NeedsCpu { row: row as u32 });
                }
                let offsets = match f.form {
                    FileForm::FixedText { size } => Some(widen::fixed_offsets(nrows as usize, size)),
                    _ => None,
                };
                Ok(Some((out, validity, offsets)))
            })
            .collect()
    }
}

/// A file column's values `range` in `form` (not as they are) in device
/// memory of `gpu`: the column cache's widened copy, or read and widened
/// now by arrow.cu's kernels (`validity`: the device address and length
/// in bytes of the buffer's validity bitmap; the values past its bits, a
/// buffer's padding, are not widened).  The GPU's context is current.
fn widened(
    gpu: &GpuEngine,
    file: &OpenFile,
    range: (u64, u64),
    form: FileForm,
    validity: Option<(u64, u64)>,
    read: &mut ReadStats,
) -> Result<Arc<Cached>, DeviceError> {
    let (in_width, out_width) = match form {
        FileForm::Decimal128 { .. } => (16, numeric::WIDTH as u64),
        FileForm::Date32 => (4, 4),
        FileForm::FixedText { size } => (size as u64, size as u64),
        FileForm::AsIs => return Err(DeviceError::InvalidRequest("a file column form that widens nothing".into())),
    };
    let n = validity.map_or(range.1 / in_width, |(_, len)| (range.1 / in_width).min(len.saturating_mul(8)));
    let validity = validity.map_or(0, |(ptr, _)| ptr);
    let rows =
        u32::try_from(n).map_err(|_| DeviceError::InvalidRequest(format!("a file column buffer of {n} values")))?;
    let drv = gpu.drv;
    gpu.columns.get_formed(drv, &file.id, range, form, n * out_width, read, |dst, read| {
        let raw = DeviceBuffer::alloc(drv, range.1.max(1) as usize)?;
        fileread::read_to_device(drv, &file.src, &file.policy, raw.ptr, range.0, range.1, read)?;
        if rows == 0 {
            return Ok(None);
        }
        let first = DeviceBuffer::upload(drv, &[u64::MAX])?;
        let (mut p_src, mut p_dst, mut p_n, mut p_valid, mut p_first) = (raw.ptr, dst, n, validity, first.ptr);
        let grid = gpu.grid_for(rows);
        match form {
            FileForm::Decimal128 { scale, digits, .. } => {
                let (mut p_scale, mut p_digits) = (scale as i32, digits as i32);
                let mut kp = kparams!(p_src, p_dst, p_n, p_scale, p_digits, p_valid, p_first);
                // SAFETY: kern_widen_decimal128's parameters in order; `raw`
                // holds n mantissas, `dst` n numerics, the bitmap (when
                // given) n bits.
                unsafe { gpu.launch_and_wait("kern_widen_decimal128", grid, &mut kp)? };
            }
            FileForm::FixedText { size } => {
                let mut p_size = size;
                let mut kp = kparams!(p_src, p_dst, p_n, p_size, p_valid, p_first);
                // SAFETY: kern_widen_fixed_text's parameters in order; `raw`
                // and `dst` hold n values of `size` bytes, the bitmap (when
                // given) n bits.
                unsafe { gpu.launch_and_wait("kern_widen_fixed_text", grid, &mut kp)? };
            }
            _ => {
                let mut kp = kparams!(p_src, p_dst, p_n, p_valid, p_first);
                // SAFETY: kern_widen_date32's parameters in order; `raw` and
                // `dst` hold n dates, the bitmap (when given) n bits.
                unsafe { gpu.launch_and_wait("kern_widen_date32", grid, &mut kp)? };
            }
        }
        let mut out = [0u64];
        first.download(&mut out)?;
        Ok((out[0] != u64::MAX).then_some(out[0]))
    })
}

/// Runs of consecutive block numbers: (index of the first in `blocks`,
/// first block, count).
fn block_runs(blocks: &[u32]) -> Vec<(usize, u32, usize)> {
    let mut runs: Vec<(usize, u32, usize)> = Vec::new();
    for (i, &b) in blocks.iter().enumerate() {
        match runs.last_mut() {
            Some((_, first, n)) if first.checked_add(*n as u32) == Some(b) => *n += 1,
            _ => runs.push((i, b, 1)),
        }
    }
    runs
}

impl SessionFiles {
    /// Check a heap request's blocks; the file's identity now (its size
    /// bounds the read; the GPU's cache keys extents by it).
    fn heap_file(&self, n: u32, blocks: &[u32]) -> Result<(&OpenFile, FileId), DeviceError> {
        if blocks.is_empty() || blocks.len() > crate::heapscan::MAX_BLOCKS {
            return Err(DeviceError::InvalidRequest(format!("{} blocks in a heap request", blocks.len())));
        }
        let file = self.file(n)?;
        let id = FileId::of(&file.src.file).map_err(|e| {
            DeviceError::InvalidRequest(format!("the heap file handed to the service cannot be examined: {e}"))
        })?;
        Ok((file, id))
    }

    /// Read heap `blocks` of file `n` into host memory (the CPU engine),
    /// one after another.  Blocks past the file's end now (truncated since
    /// the backend looked) stay zero: the kernels refuse them.
    pub fn read_blocks(&self, n: u32, blocks: &[u32], blcksz: u32) -> Result<Vec<u8>, DeviceError> {
        let (file, id) = self.heap_file(n, blocks)?;
        let size = id.size;
        let bs = blcksz as u64;
        let mut buf = vec![0u8; blocks.len() * blcksz as usize];
        for (at, first, count) in block_runs(blocks) {
            let off = first as u64 * bs;
            let whole = (size.saturating_sub(off) / bs).min(count as u64);
            let dst = &mut buf[at * blcksz as usize..][..(whole * bs) as usize];
            read_exact(&file.src.file, dst, off)?;
        }
        Ok(buf)
    }

    /// Read heap `blocks` of file `n` into device memory of `gpu`: from
    /// the GPU's column cache, which keeps the file in extents of
    /// [`HEAP_EXTENT_BLOCKS`] (each read once by the session's storage
    /// path, cuFile or pinned buffers, and counted in its read
    /// statistics), or straight from the file when the cache keeps nothing
    /// or the file changed a moment ago.  The buffers returned with the
    /// blocks must live until the request's kernels ran.  The GPU's
    /// context is current.
    ///
    /// A block is only sent here when shared buffers hold no dirty copy of
    /// it (source/heap_direct.rs of the extension), so the file has its contents;
    /// the cached extent has them too when the file's identity taken now
    /// is the one it was read under, which no write since leaves alone
    /// ([`FileId::settled`]).
    pub(crate) fn read_blocks_to_gpu<'g>(
        &mut self,
        gpu: &'g GpuEngine,
        n: u32,
        blocks: &[u32],
        blcksz: u32,
    ) -> Result<(ScratchGuard<'g>, Vec<Arc<Cached>>), DeviceError> {
        let bs = blcksz as u64;
        let (file, id) = self.heap_file(n, blocks)?;
        let size = id.size;
        let bytes = blocks.len() * blcksz as usize;
        let runs = block_runs(blocks);
        let short = runs.iter().any(|&(_, first, count)| (first as u64 + count as u64) * bs > size);
        let pages = gpu.scratch(bytes)?;
        if short {
            // SAFETY: within the arena.
            gpu.drv.check("cuMemsetD8", unsafe { (gpu.drv.cuMemsetD8)(pages.dev(), 0, bytes) })?;
        }
        let id = (gpu.columns.budget() > 0 && id.settled(HEAP_SETTLED)).then_some(id);
        let mut read = self.read;
        let mut keep: Vec<(u64, Arc<Cached>)> = Vec::new();
        let file_blocks = size / bs;
        for (at, first, count) in runs {
            let first = first as u64;
            let whole = file_blocks.saturating_sub(first).min(count as u64);
            if whole == 0 {
                continue;
            }
            let Some(id) = id.as_ref() else {
                let dst = pages.dev() + at as u64 * bs;
                fileread::read_to_device(gpu.drv, &file.src, &file.policy, dst, first * bs, whole * bs, &mut read)?;
                continue;
            };
            // the run's blocks, extent by extent
            let ext = HEAP_EXTENT_BLOCKS as u64;
            let mut b = first;
            while b < first + whole {
                let e = b / ext;
                let end = ((e + 1) * ext).min(first + whole);
                let cached = match keep.iter().find(|(k, _)| *k == e) {
                    Some((_, c)) => c.clone(),
                    None => {
                        let len = (ext.min(file_blocks - e * ext)) * bs;
                        let c = gpu.columns.get_as(gpu.drv, file, id, (e * ext * bs, len), &mut read)?;
                        keep.push((e, c.clone()));
                        c
                    }
                };
                let dst = pages.dev() + (at as u64 + (b - first)) * bs;
                let src = cached.ptr() + (b - e * ext) * bs;
                // SAFETY: both ranges lie within their allocations; the
                // copy is ordered before the kernels on this thread's
                // stream, and the extent outlives them (returned).
                gpu.drv.check("cuMemcpyDtoDAsync", unsafe {
                    (gpu.drv.cuMemcpyDtoDAsync)(dst, src, ((end - b) * bs) as usize, std::ptr::null_mut())
                })?;
                b = end;
            }
        }
        self.read = read;
        Ok((pages, keep.into_iter().map(|(_, c)| c).collect()))
    }
}

/// Blocks of a heap segment file the column cache keeps as one buffer
/// (16 MB of 8 kB blocks).
pub const HEAP_EXTENT_BLOCKS: usize = 2048;

/// How long a heap file must have been left alone before its extents are
/// kept ([`FileId::settled`]).
const HEAP_SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

fn no_file(n: u32) -> DeviceError {
    DeviceError::InvalidRequest(format!("no file {n} in this session"))
}

/// `cols` with the file columns replaced by the bytes of `host`.
pub fn with_host<'a>(cols: &[ColumnData<'a>], host: &'a HostColumns) -> Vec<ColumnData<'a>> {
    cols.iter()
        .zip(host)
        .map(|(c, h)| match h {
            None => *c,
            Some((values, validity, offsets)) => ColumnData {
                type_id: c.type_id,
                values,
                validity: validity.as_deref(),
                offsets: offsets.as_deref(),
                file: None,
                resident: None,
                store: None,
            },
        })
        .collect()
}

/// The offsets of `nrows` text values of `size` bytes each, one after
/// another, in device memory of `gpu` for one request (nrows + 1 of them,
/// from 0).  The GPU's context is current.
fn fixed_offsets_on_gpu(gpu: &GpuEngine, nrows: u32, size: u32) -> Result<Arc<Cached>, DeviceError> {
    let count = nrows as u64 + 1;
    let buf = DeviceBuffer::alloc(gpu.drv, count as usize * 4)?;
    let (mut p_dst, mut p_count, mut p_size) = (buf.ptr, count, size);
    let mut kp = kparams!(p_dst, p_count, p_size);
    // SAFETY: kern_fixed_offsets's parameters in order; `buf` holds
    // `count` offsets.
    unsafe { gpu.launch_and_wait("kern_fixed_offsets", gpu.grid_for(nrows + 1), &mut kp)? };
    Ok(Arc::new(Cached::transient(buf)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FileSlice;
    use crate::numeric::{DevNumeric, NUM_BIG};
    use std::io::Write;

    /// Decimal128 values read for the CPU engine come back as the device's
    /// numerics; a value longer than the digits is NUM_BIG, or (strict,
    /// and not NULL) the request's NeedsCpu.
    #[test]
    fn decimal_columns_widen_for_the_host() {
        let mants: Vec<i128> = (0..128).map(|i| if i == 70 { 10i128.pow(9) } else { i * 1001 - 50_000 }).collect();
        let mut bytes = vec![0x5au8; 64];
        mants.iter().for_each(|m| bytes.extend_from_slice(&m.to_le_bytes()));
        let vpos = (64u64, (mants.len() * 16) as u64);
        let bpos = bytes.len() as u64;
        // every row valid but row 70
        let mut bits = vec![0xffu8; 16];
        bits[70 / 8] &= !(1 << (70 % 8));
        bytes.extend_from_slice(&bits);
        let path = std::env::temp_dir().join(format!("pgstrom-decfile-{}", std::process::id()));
        std::fs::File::create(&path).unwrap().write_all(&bytes).unwrap();
        let mut files = SessionFiles::default();
        let (h, _) = files.open(File::open(&path).unwrap().into(), &Policy::default()).unwrap();
        let numeric = crate::catalog::type_by_name("NUMERIC").unwrap().id;
        let col = |validity: Option<(u64, u64)>, strict: bool| ColumnData {
            type_id: numeric,
            file: Some(FileSlice {
                file: h,
                values: vpos,
                validity,
                first_row: 64,
                form: FileForm::Decimal128 { scale: 2, digits: 9, strict },
            }),
            ..ColumnData::default()
        };
        // rows 64..128: row 70 of the buffer is the chunk's row 6
        let got = files.read_for_host(&[col(Some((bpos, 16)), true)], 64).unwrap();
        let (values, validity, offsets) = got[0].as_ref().unwrap();
        assert!(offsets.is_none());
        assert_eq!(values.len(), 64 * numeric::WIDTH);
        assert_eq!(validity.as_deref(), Some(&bits[8..16]));
        let at = |i: usize| DevNumeric::from_bytes(&values[i * numeric::WIDTH..]).unwrap();
        assert_eq!(at(0), DevNumeric { mant: 64 * 1001 - 50_000, scale: 2 });
        assert_eq!(at(0).to_text(), "140.64");
        assert_eq!(at(6).scale, NUM_BIG, "a NULL slot's long value");
        // the long value not NULL: PostgreSQL's error, in strict form
        let err = files.read_for_host(&[col(None, true)], 64).unwrap_err();
        assert_eq!(err, DeviceError::NeedsCpu { row: 6 });
        let lax = files.read_for_host(&[col(None, false)], 64).unwrap();
        assert_eq!(DevNumeric::from_bytes(&lax[0].as_ref().unwrap().0[6 * numeric::WIDTH..]).unwrap().scale, NUM_BIG);
        // a numeric form for an integer column is refused
        let mut bad = col(None, false);
        bad.type_id = crate::catalog::type_by_name("INT8").unwrap().id;
        assert!(files.read_for_host(&[bad], 64).is_err());
        let _ = std::fs::remove_file(&path);
    }
}
