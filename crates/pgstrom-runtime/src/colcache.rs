//! The GPU engine's column cache: buffers of Arrow files that the GPU
//! service read straight into device memory, kept there between queries
//! under a byte budget and dropped least-recently-used first.
//!
//! Owns: the identity of a file as a session opened it ([`FileId`]), the
//! cached buffers keyed by that identity and the buffer's place in the
//! file, the reads that fill them (through a pinned staging buffer of the
//! reading thread), and the counters the service reports.  A rewritten,
//! truncated or appended file has another identity (size or times
//! differ), so it never serves old bytes; a file replaced by a rename is
//! another inode.  A buffer in use by a request stays alive (it is shared)
//! until the request ends, even when evicted meanwhile.

use std::collections::HashMap;
use std::ffi::c_void;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::{Arc, Mutex};

use crate::cuda::{CuDevicePtr, Driver};
use crate::error::DeviceError;
use crate::gpu::DeviceBuffer;

/// Bytes of the pinned staging buffer a reading thread keeps.
const STAGE_BYTES: usize = 16 << 20;

/// A file as fstat saw it when a session opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    /// Device number.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i128,
    /// Status change time, ns since the epoch.
    pub ctime_ns: i128,
}

impl FileId {
    /// The identity of an open file.
    pub fn of(f: &File) -> std::io::Result<FileId> {
        let m = f.metadata()?;
        let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        })
    }
}

/// Read `buf.len()` bytes at `offset` of `file`, an error naming what was
/// read when the file is shorter.
pub fn read_exact(file: &File, buf: &mut [u8], offset: u64) -> Result<(), DeviceError> {
    file.read_exact_at(buf, offset).map_err(|e| {
        DeviceError::InvalidRequest(format!("cannot read {} bytes at offset {offset} of an arrow file: {e}", buf.len()))
    })
}

/// `len` bytes at `offset` lie within the file `id`, or an error saying
/// they do not.
pub fn check_range(id: &FileId, offset: u64, len: u64) -> Result<(), DeviceError> {
    if offset.checked_add(len).is_none_or(|end| end > id.size) {
        return Err(DeviceError::InvalidRequest(format!(
            "{len} bytes at offset {offset} lie beyond the end of the arrow file ({} bytes)",
            id.size
        )));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    file: FileId,
    offset: u64,
    len: u64,
}

/// A buffer of a file in device memory.
pub struct Cached {
    buf: DeviceBuffer<'static>,
}

impl Cached {
    /// Its device address.
    pub fn ptr(&self) -> CuDevicePtr {
        self.buf.ptr
    }
}

struct Entry {
    buf: Arc<Cached>,
    len: u64,
    used: u64,
}

#[derive(Default)]
struct Inner {
    map: HashMap<Key, Entry>,
    bytes: u64,
    tick: u64,
}

impl Inner {
    /// Drop least recently used buffers until at most `limit` bytes are
    /// held; the number dropped.
    fn evict_to(&mut self, limit: u64) -> u64 {
        let mut evicted = 0;
        while self.bytes > limit {
            let Some((&k, _)) = self.map.iter().min_by_key(|(_, e)| e.used) else { break };
            let e = self.map.remove(&k).expect("just found");
            self.bytes -= e.len;
            evicted += 1;
        }
        evicted
    }
}

/// What the cache has done, for the service's status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// The budget in bytes (0: nothing is kept).
    pub budget: u64,
    /// Bytes held now.
    pub bytes: u64,
    /// Buffers held now.
    pub buffers: u64,
    /// Requests for a buffer that found it.
    pub hits: u64,
    /// Requests for a buffer that read it.
    pub misses: u64,
    /// Bytes read from files into device memory.
    pub bytes_read: u64,
    /// Buffers dropped to make room.
    pub evictions: u64,
}

/// The cache of one GPU.
pub struct ColumnCache {
    inner: Mutex<Inner>,
    stats: Mutex<CacheStats>,
    stages: Mutex<StagePool>,
}

/// Pinned staging buffers of STAGE_BYTES, one per read in progress, kept
/// for the next reads (the engine lives as long as the process).
struct StagePool(Vec<usize>);

/// Copy `len` bytes at `offset` of `file` to device address `dst`,
/// through pinned staging memory (pageable copies run at a fraction of
/// PCIe's speed).
fn upload_from_file(
    drv: &'static Driver,
    pool: &Mutex<StagePool>,
    file: &File,
    offset: u64,
    len: u64,
    dst: CuDevicePtr,
) -> Result<(), DeviceError> {
    let taken = pool.lock().unwrap_or_else(|p| p.into_inner()).0.pop();
    let host = match taken {
        Some(h) => h as *mut u8,
        None => {
            let mut host: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; kept in the pool for good.
            drv.check("cuMemHostAlloc", unsafe { (drv.cuMemHostAlloc)(&mut host, STAGE_BYTES, 0) })?;
            host.cast()
        }
    };
    let copy = || {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(STAGE_BYTES as u64) as usize;
            // SAFETY: the staging buffer holds STAGE_BYTES >= n bytes.
            let buf = unsafe { std::slice::from_raw_parts_mut(host, n) };
            read_exact(file, buf, offset + done)?;
            // SAFETY: `dst` holds `len` bytes; the copy is synchronous.
            drv.check("cuMemcpyHtoD", unsafe { (drv.cuMemcpyHtoD)(dst + done, host as *const c_void, n) })?;
            done += n as u64;
        }
        Ok(())
    };
    let result = copy();
    pool.lock().unwrap_or_else(|p| p.into_inner()).0.push(host as usize);
    result
}

impl ColumnCache {
    /// An empty cache keeping at most `budget` bytes.
    pub fn new(budget: u64) -> ColumnCache {
        ColumnCache {
            inner: Mutex::new(Inner::default()),
            stats: Mutex::new(CacheStats { budget, ..CacheStats::default() }),
            stages: Mutex::new(StagePool(Vec::new())),
        }
    }

    fn stats_mut(&self) -> std::sync::MutexGuard<'_, CacheStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters now.
    pub fn stats(&self) -> CacheStats {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut s = *self.stats_mut();
        s.bytes = inner.bytes;
        s.buffers = inner.map.len() as u64;
        s
    }

    /// Bytes `[offset, offset + len)` of `file` (identity `id`) in device
    /// memory: the cached copy, or read now (and kept when the budget
    /// allows).  The caller's context is current on this thread.
    pub fn get(
        &self,
        drv: &'static Driver,
        file: &File,
        id: &FileId,
        offset: u64,
        len: u64,
    ) -> Result<Arc<Cached>, DeviceError> {
        check_range(id, offset, len)?;
        let key = Key { file: *id, offset, len };
        {
            let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            inner.tick += 1;
            let tick = inner.tick;
            if let Some(e) = inner.map.get_mut(&key) {
                e.used = tick;
                let buf = e.buf.clone();
                drop(inner);
                self.stats_mut().hits += 1;
                return Ok(buf);
            }
        }
        // read outside the lock: other threads keep using the cache
        let buf = match DeviceBuffer::alloc(drv, len as usize) {
            Ok(b) => b,
            Err(_) => {
                // device memory is short: give back what the cache holds
                // (buffers in use stay alive until their requests end)
                self.clear();
                DeviceBuffer::alloc(drv, len as usize)?
            }
        };
        upload_from_file(drv, &self.stages, file, offset, len, buf.ptr)?;
        let cached = Arc::new(Cached { buf });
        {
            let mut s = self.stats_mut();
            s.misses += 1;
            s.bytes_read += len;
        }
        let budget = self.stats_mut().budget;
        if len > budget {
            return Ok(cached);
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = inner.map.get(&key) {
            // another thread read it meanwhile
            return Ok(e.buf.clone());
        }
        let evicted = inner.evict_to(budget - len);
        inner.tick += 1;
        let used = inner.tick;
        inner.map.insert(key, Entry { buf: cached.clone(), len, used });
        inner.bytes += len;
        drop(inner);
        self.stats_mut().evictions += evicted;
        Ok(cached)
    }

    /// Keep at most `budget` bytes from now on (0: keep nothing).
    pub fn set_budget(&self, budget: u64) {
        self.stats_mut().budget = budget;
        let evicted = self.inner.lock().unwrap_or_else(|p| p.into_inner()).evict_to(budget);
        self.stats_mut().evictions += evicted;
    }

    /// Drop every cached buffer (those in use live until their requests end).
    pub fn clear(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let n = inner.map.len() as u64;
        inner.map.clear();
        inner.bytes = 0;
        drop(inner);
        self.stats_mut().evictions += n;
    }
}
