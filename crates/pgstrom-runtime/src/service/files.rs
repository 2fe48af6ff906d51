//! Arrow files a join session of the service reads itself: a backend
//! hands over the descriptor of a file it opened (FILE_OPEN), then sends
//! chunks whose fixed-width columns name byte ranges of that file instead
//! of carrying the bytes.  For a GPU the ranges come from the GPU's column
//! cache (read into device memory once, kept for later queries, by the
//! storage path of the session's policy: cuFile or pinned buffers,
//! fileread.rs); for the CPU engine they are read into host memory for
//! the request.  The session counts the bytes each path moved.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::catalog::type_info;
use crate::colcache::{Cached, FileId, OpenFile, check_range, read_exact};
use crate::engine::ColumnData;
use crate::error::DeviceError;
use crate::fileread::{FileAccess, Policy, ReadStats, SourceFile};
use crate::gpu::GpuEngine;

/// The most files one session may open.
const MAX_FILES: usize = 4096;

/// The files of a session, numbered in the order they were opened.
#[derive(Default)]
pub struct SessionFiles {
    files: Vec<OpenFile>,
    read: ReadStats,
}

/// Bytes read for the CPU engine: per column, (values, validity).
pub type HostColumns = Vec<Option<(Vec<u8>, Option<Vec<u8>>)>>;

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
            let values = gpu.columns.get(gpu.drv, file, f.values, &mut self.read)?;
            let vptr = values.ptr() + f.first_row * width as u64;
            keep.push(values);
            let mut bptr = 0;
            if let Some((off, len)) = f.validity {
                let bits = gpu.columns.get(gpu.drv, file, (off, len), &mut self.read)?;
                bptr = bits.ptr() + f.first_row / 8;
                keep.push(bits);
            }
            c.resident = Some((vptr, bptr));
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
                Ok(Some((read(values)?, validity.map(read).transpose()?)))
            })
            .collect()
    }
}

fn no_file(n: u32) -> DeviceError {
    DeviceError::InvalidRequest(format!("no file {n} in this session"))
}

/// `cols` with the file columns replaced by the bytes of `host`.
pub fn with_host<'a>(cols: &[ColumnData<'a>], host: &'a HostColumns) -> Vec<ColumnData<'a>> {
    cols.iter()
        .zip(host)
        .map(|(c, h)| match h {
            None => *c,
            Some((values, validity)) => ColumnData {
                type_id: c.type_id,
                values,
                validity: validity.as_deref(),
                offsets: None,
                file: None,
                resident: None,
            },
        })
        .collect()
}
