//! The GPU engine's column cache: buffers of files that the GPU service
//! read straight into device memory (Arrow column buffers, extents of heap
//! segment files), kept there between queries under a byte budget and
//! dropped least-recently-used first.
//!
//! Owns: the identity of a file ([`FileId`]), the cached buffers keyed by
//! that identity, the buffer's place in the file and its form (as read, or
//! widened into the device's layout), the reads that fill
//! them (by the storage path the session's policy picks: fileread.rs; a
//! buffer being read by one thread is waited for, not read again, by the
//! others), and the counters the service reports.  A rewritten, truncated
//! or appended file has another identity (size or times differ), so it
//! never serves old bytes; a file replaced by a rename is another inode.
//! A buffer in use by a request stays alive (it is shared) until the
//! request ends, even when evicted meanwhile.

use std::collections::HashMap;
use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cuda::{CuDevicePtr, Driver};
use crate::engine::FileForm;
use crate::error::DeviceError;
use crate::fileread::{self, Policy, ReadStats, SourceFile};
use crate::gpu::DeviceBuffer;

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
        Ok(FileId::of_metadata(&f.metadata()?))
    }

    /// The identity of a file by what stat said of it.
    pub fn of_metadata(m: &std::fs::Metadata) -> FileId {
        let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
        FileId {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        }
    }

    /// Whether bytes read from the file now may be kept under this
    /// identity: its last change is at least `settled` old.  A file system
    /// stamps a write with a clock of coarse ticks and leaves the times
    /// alone when a second write falls in the tick of the first, so a file
    /// written a moment ago may change again without a new identity; one
    /// untouched for longer than any tick cannot.
    pub fn settled(&self, settled: Duration) -> bool {
        let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) else { return false };
        let limit = now.as_nanos() as i128 - settled.as_nanos() as i128;
        self.mtime_ns <= limit && self.ctime_ns <= limit
    }
}

/// A file a session handed over: how it is read, what it was when opened,
/// and the storage policy its reads follow.
pub struct OpenFile {
    /// The descriptor (and its cuFile registration).
    pub src: SourceFile,
    /// Its identity when the session opened it.
    pub id: FileId,
    /// Which path its reads take.
    pub policy: Policy,
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
    /// The file's bytes as they are, or widened (`get_formed`).
    form: FileForm,
}

/// A buffer of a file in device memory.
pub struct Cached {
    buf: DeviceBuffer<'static>,
    /// A widened buffer: the first valid row whose value its form could
    /// not hold (`get_formed`).
    pub first_bad: Option<u64>,
}

impl Cached {
    /// A buffer no cache keeps, alive as long as the request holding it.
    pub(crate) fn transient(buf: DeviceBuffer<'static>) -> Cached {
        Cached { buf, first_bad: None }
    }

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
    /// Buffers a thread is reading now (others wait for it).
    reading: HashSet<Key>,
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
    /// Of `bytes_read`, those cuFile read (GPUDirect SQL).
    pub cufile_bytes: u64,
}

/// The cache of one GPU.
pub struct ColumnCache {
    inner: Mutex<Inner>,
    /// Signalled when a read ends (its key leaves `reading`).
    read_done: Condvar,
    stats: Mutex<CacheStats>,
}

/// Takes a key out of `reading` when its read ends, however it ends.
struct Reading<'a> {
    cache: &'a ColumnCache,
    key: Key,
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.cache.lock().reading.remove(&self.key);
        self.cache.read_done.notify_all();
    }
}

impl ColumnCache {
    /// An empty cache keeping at most `budget` bytes.
    pub fn new(budget: u64) -> ColumnCache {
        ColumnCache {
            inner: Mutex::new(Inner::default()),
            read_done: Condvar::new(),
            stats: Mutex::new(CacheStats { budget, ..CacheStats::default() }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stats_mut(&self) -> std::sync::MutexGuard<'_, CacheStats> {
        self.stats.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The bytes it may keep (0: nothing is kept).
    pub fn budget(&self) -> u64 {
        self.stats_mut().budget
    }

    /// The counters now.
    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        let mut s = *self.stats_mut();
        s.bytes = inner.bytes;
        s.buffers = inner.map.len() as u64;
        s
    }

    /// Bytes `[offset, offset + len)` of `file` in device memory: the
    /// cached copy, or read now by the path its policy picks (and kept
    /// when the budget allows); `read` counts the bytes by path.  The
    /// caller's context is current on this thread.
    pub fn get(
        &self,
        drv: &'static Driver,
        file: &OpenFile,
        range: (u64, u64),
        read: &mut ReadStats,
    ) -> Result<Arc<Cached>, DeviceError> {
        self.get_as(drv, file, &file.id, range, read)
    }

    /// [`ColumnCache::get`] for `file` as `id` says it is now (a file that
    /// may change while sessions have it open: a heap segment file, whose
    /// identity the caller takes again for each request).
    pub fn get_as(
        &self,
        drv: &'static Driver,
        file: &OpenFile,
        id: &FileId,
        (offset, len): (u64, u64),
        read: &mut ReadStats,
    ) -> Result<Arc<Cached>, DeviceError> {
        self.get_formed(drv, id, (offset, len), FileForm::AsIs, len, read, |dst, read| {
            fileread::read_to_device(drv, &file.src, &file.policy, dst, offset, len, read).map(|()| None)
        })
    }

    /// Bytes `[offset, offset + len)` of the file `id` in device memory in
    /// `form`: the cached copy, or a buffer of `out_len` bytes that `make`
    /// fills now (reading the file by its policy, counted in `read`, and
    /// widening it; it returns [`Cached::first_bad`]), kept when the budget
    /// allows.  The caller's context is current on this thread.
    #[allow(clippy::too_many_arguments)]
    pub fn get_formed(
        &self,
        drv: &'static Driver,
        id: &FileId,
        (offset, len): (u64, u64),
        form: FileForm,
        out_len: u64,
        read: &mut ReadStats,
        make: impl FnOnce(CuDevicePtr, &mut ReadStats) -> Result<Option<u64>, DeviceError>,
    ) -> Result<Arc<Cached>, DeviceError> {
        check_range(id, offset, len)?;
        let key = Key { file: *id, offset, len, form };
        let reading = {
            let mut inner = self.lock();
            loop {
                inner.tick += 1;
                let tick = inner.tick;
                if let Some(e) = inner.map.get_mut(&key) {
                    e.used = tick;
                    let buf = e.buf.clone();
                    drop(inner);
                    self.stats_mut().hits += 1;
                    read.cached_bytes += out_len;
                    return Ok(buf);
                }
                if !inner.reading.contains(&key) {
                    inner.reading.insert(key);
                    break Reading { cache: self, key };
                }
                // another thread reads it: wait, then look again (it may
                // have failed, or not been kept)
                inner = self.read_done.wait(inner).unwrap_or_else(|p| p.into_inner());
            }
        };
        // read outside the lock: other threads keep using the cache.  When
        // device memory is short the GPU's pool empties this cache (its
        // relief; buffers in use stay alive until their requests end) and
        // waits for memory (mempool.rs)
        let buf = DeviceBuffer::alloc(drv, out_len as usize)?;
        let before = read.cufile_bytes;
        let first_bad = make(buf.ptr, read)?;
        let cached = Arc::new(Cached { buf, first_bad });
        {
            let mut s = self.stats_mut();
            s.misses += 1;
            s.bytes_read += len;
            s.cufile_bytes += read.cufile_bytes - before;
        }
        let budget = self.budget();
        if out_len > budget {
            return Ok(cached);
        }
        let mut inner = self.lock();
        if let Some(e) = inner.map.get(&key) {
            // (kept meanwhile by a caller that did not wait)
            return Ok(e.buf.clone());
        }
        let evicted = inner.evict_to(budget - out_len);
        inner.tick += 1;
        let used = inner.tick;
        inner.map.insert(key, Entry { buf: cached.clone(), len: out_len, used });
        inner.bytes += out_len;
        drop(inner);
        drop(reading);
        self.stats_mut().evictions += evicted;
        Ok(cached)
    }

    /// Keep at most `budget` bytes from now on (0: keep nothing).
    pub fn set_budget(&self, budget: u64) {
        self.stats_mut().budget = budget;
        let evicted = self.lock().evict_to(budget);
        self.stats_mut().evictions += evicted;
    }

    /// Drop every cached buffer (those in use live until their requests end).
    pub fn clear(&self) {
        let mut inner = self.lock();
        let n = inner.map.len() as u64;
        inner.map.clear();
        inner.bytes = 0;
        drop(inner);
        self.stats_mut().evictions += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file written now is not settled for a while; one written long
    /// enough ago (both its times) is; a write gives it a new identity.
    #[test]
    fn identity_and_settling() {
        let path = std::env::temp_dir().join(format!("pgstrom-colcache-{}", std::process::id()));
        let mut f = File::create(&path).expect("temp file");
        f.write_all(&[1u8; 8192]).expect("write");
        let id = FileId::of(&f).expect("fstat");
        assert_eq!(id.size, 8192);
        assert!(!id.settled(Duration::from_secs(2)), "a file written just now has settled");
        assert!(id.settled(Duration::ZERO));
        std::thread::sleep(Duration::from_millis(20));
        f.write_all(&[2u8; 8192]).expect("write");
        let later = FileId::of(&f).expect("fstat");
        assert_ne!(id, later, "a write kept the identity");
        let old = FileId { mtime_ns: 0, ctime_ns: 0, ..later };
        assert!(old.settled(Duration::from_secs(2)));
        let ctime_now = FileId { mtime_ns: 0, ..later };
        assert!(!ctime_now.settled(Duration::from_secs(2)), "a recent status change was ignored");
        drop(f);
        let _ = std::fs::remove_file(&path);
    }
}
