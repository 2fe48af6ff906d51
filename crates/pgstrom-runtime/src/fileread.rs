//! Reading byte ranges of files into device memory: the storage paths of
//! GPUDirect SQL.
//!
//! Owns the two ways bytes go from a file to a GPU, and the choice between
//! them:
//! - cuFile ([`crate::cufile`]): peer-to-peer DMA when nvidia-fs is loaded,
//!   else cuFile's compatibility mode;
//! - pinned host buffers: several threads `pread` pieces into page-locked
//!   staging buffers, each copied to the device asynchronously while the
//!   next piece is read (pageable copies run at a fraction of PCIe's
//!   speed: never used).
//!
//! [`Policy`] says which path a read takes; [`ReadStats`] counts the bytes
//! each one moved.  Called with the destination's CUDA context current.

use std::ffi::c_void;
use std::fs::File;
use std::sync::Mutex;

use crate::cuda::{CuContext, CuDevicePtr, CuEvent, Driver};
use crate::cufile::{self, Handle, Mode};
use crate::error::DeviceError;

/// Bytes of one pinned staging buffer (one `pread`, one copy).
pub const STAGE_BYTES: usize = 8 << 20;

/// Threads that read one range through pinned buffers at most.
/// (8 measured fastest from the page cache on the H100 machine: 30-34
/// GB/s against 17-24 with 4 and 6-7 with 1; docs/benchmark.md).
pub const MAX_READ_THREADS: usize = 8;

/// When cuFile reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direct {
    /// Only when cuFile moves bytes peer to peer (nvidia-fs loaded):
    /// compatibility mode goes through host memory too, and measured slower
    /// than our pinned path (docs/benchmark.md, "GPUDirect SQL").
    #[default]
    Auto,
    /// Whenever cuFile opens, compatibility mode included.
    On,
    /// Never: pinned buffers only.
    Off,
}

impl Direct {
    /// The wire / setting value.
    pub fn code(self) -> u8 {
        match self {
            Direct::Auto => 0,
            Direct::On => 1,
            Direct::Off => 2,
        }
    }

    /// From [`Self::code`].
    pub fn from_code(c: u8) -> Option<Direct> {
        match c {
            0 => Some(Direct::Auto),
            1 => Some(Direct::On),
            2 => Some(Direct::Off),
            _ => None,
        }
    }

    /// Whether cuFile in `mode` is used under this setting.
    pub fn allows(self, mode: Mode) -> bool {
        match self {
            Direct::Auto => mode == Mode::PeerToPeer,
            Direct::On => true,
            Direct::Off => false,
        }
    }
}

/// Which path reads take: cuFile for ranges of at least `threshold` bytes
/// when `direct` allows cuFile's mode, pinned buffers otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// When cuFile reads.
    pub direct: Direct,
    /// Smaller ranges take the pinned path.
    pub threshold: u64,
}

impl Policy {
    /// Whether this policy wants cuFile at all, and cuFile is there.
    pub fn wants_cufile(&self) -> bool {
        self.direct != Direct::Off && cufile::cufile().is_ok_and(|c| self.direct.allows(c.mode))
    }
}

/// Bytes moved by each path (and found in a GPU's column cache).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Read by cuFile.
    pub cufile_bytes: u64,
    /// Read through pinned host buffers.
    pub pinned_bytes: u64,
    /// Already in device memory (the column cache): not read.
    pub cached_bytes: u64,
}

/// A file as the readers see it: the descriptor, and its cuFile
/// registration when the policy asked for one and cuFile took it (or why
/// not).
pub struct SourceFile {
    /// The descriptor (pinned reads use it).
    pub file: File,
    /// The cuFile handle, or why there is none (None: not asked for).
    pub cufile: Option<Result<Handle, String>>,
}

impl SourceFile {
    /// `file`, registered with cuFile when `policy` wants cuFile.
    pub fn new(file: File, policy: &Policy) -> SourceFile {
        let cufile = policy.wants_cufile().then(|| match cufile::cufile() {
            Ok(c) => c.register(&file),
            Err(e) => Err(e.to_string()),
        });
        SourceFile { file, cufile }
    }

    /// The cuFile handle, when there is one.
    pub fn handle(&self) -> Option<&Handle> {
        self.cufile.as_ref().and_then(|r| r.as_ref().ok())
    }

    /// How this file is read.
    pub fn access(&self) -> FileAccess {
        match &self.cufile {
            None => FileAccess::Pinned,
            Some(Ok(_)) => FileAccess::CuFile(cufile::cufile().map_or(Mode::Compat, |c| c.mode)),
            Some(Err(e)) => FileAccess::Refused(e.clone()),
        }
    }
}

/// How a GPU reads a file handed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAccess {
    /// Through pinned host buffers: the policy did not ask for cuFile (or
    /// cuFile's mode is not one it allows, or the engine is no GPU).
    Pinned,
    /// By cuFile, in this mode (ranges under the threshold: pinned).
    CuFile(Mode),
    /// The policy asked for cuFile, which refused the file (why): pinned.
    Refused(String),
}

/// Read `len` bytes at `offset` of `src` into device memory at `dst` by
/// the path `policy` picks; the bytes moved are added to `stats`.
pub fn read_to_device(
    drv: &'static Driver,
    src: &SourceFile,
    policy: &Policy,
    dst: CuDevicePtr,
    offset: u64,
    len: u64,
    stats: &mut ReadStats,
) -> Result<(), DeviceError> {
    if len >= policy.threshold
        && let Some(h) = src.handle()
        && let Ok(cf) = cufile::cufile()
    {
        cf.read(h, dst, len, offset)?;
        stats.cufile_bytes += len;
        return Ok(());
    }
    read_pinned(drv, &src.file, dst, offset, len, MAX_READ_THREADS)?;
    stats.pinned_bytes += len;
    Ok(())
}

/// Page-locked staging buffers of STAGE_BYTES (portable: usable with any
/// GPU's context), kept for later reads: the process lives long.
static STAGES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Two staging buffers, given back when dropped.
struct StagePair {
    host: [*mut u8; 2],
}

impl StagePair {
    fn take(drv: &Driver) -> Result<StagePair, DeviceError> {
        let mut pool = STAGES.lock().unwrap_or_else(|p| p.into_inner());
        let mut host = [std::ptr::null_mut(); 2];
        for h in &mut host {
            *h = match pool.pop() {
                Some(p) => p as *mut u8,
                None => {
                    let mut p: *mut c_void = std::ptr::null_mut();
                    // SAFETY: valid out-pointer; CU_MEMHOSTALLOC_PORTABLE.
                    let rc = unsafe { (drv.cuMemHostAlloc)(&mut p, STAGE_BYTES, 1) };
                    if let Err(e) = drv.check("cuMemHostAlloc", rc) {
                        for q in host.iter().filter(|q| !q.is_null()) {
                            pool.push(*q as usize);
                        }
                        return Err(e);
                    }
                    p.cast()
                }
            };
        }
        Ok(StagePair { host })
    }
}

impl Drop for StagePair {
    fn drop(&mut self) {
        let mut pool = STAGES.lock().unwrap_or_else(|p| p.into_inner());
        pool.extend(self.host.iter().map(|h| *h as usize));
    }
}

/// Two events for a StagePair, destroyed when dropped.
struct Events<'a> {
    drv: &'a Driver,
    ev: [CuEvent; 2],
    used: [bool; 2],
}

impl<'a> Events<'a> {
    fn new(drv: &'a Driver) -> Result<Events<'a>, DeviceError> {
        let mut e = Events { drv, ev: [std::ptr::null_mut(); 2], used: [false; 2] };
        for ev in &mut e.ev {
            // SAFETY: valid out-pointer; CU_EVENT_DISABLE_TIMING.
            drv.check("cuEventCreate", unsafe { (drv.cuEventCreate)(ev, 2) })?;
        }
        Ok(e)
    }

    /// Wait until the copy recorded on buffer `j` finished.
    fn wait(&mut self, j: usize) -> Result<(), DeviceError> {
        if self.used[j] {
            // SAFETY: a live event.
            self.drv.check("cuEventSynchronize", unsafe { (self.drv.cuEventSynchronize)(self.ev[j]) })?;
            self.used[j] = false;
        }
        Ok(())
    }

    fn record(&mut self, j: usize) -> Result<(), DeviceError> {
        // SAFETY: a live event, on this thread's default stream.
        self.drv.check("cuEventRecord", unsafe { (self.drv.cuEventRecord)(self.ev[j], std::ptr::null_mut()) })?;
        self.used[j] = true;
        Ok(())
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        for j in 0..2 {
            // a copy still reading the staging buffer must finish before
            // the buffer goes back to the pool
            let _ = self.wait(j);
            if !self.ev[j].is_null() {
                // SAFETY: created by cuEventCreate, destroyed once.
                unsafe { (self.drv.cuEventDestroy)(self.ev[j]) };
            }
        }
    }
}

/// Read the pieces `[first, last)` of `[offset, offset + len)` (pieces
/// of STAGE_BYTES) into `dst`, in order: pread into one staging buffer
/// while the other's copy runs.  Each thread reads a contiguous run of
/// pieces, so the kernel's read-ahead sees sequential streams (pieces
/// dealt round-robin to threads read a cold file 25% slower).
fn read_pieces(
    drv: &Driver,
    file: &File,
    dst: CuDevicePtr,
    (offset, len): (u64, u64),
    first: u64,
    last: u64,
) -> Result<(), DeviceError> {
    let stages = StagePair::take(drv)?;
    // events after stages: dropped first, so copies finish before the
    // buffers return to the pool
    let mut events = Events::new(drv)?;
    let mut j = 0;
    for piece in first..last {
        let at = piece * STAGE_BYTES as u64;
        let n = (len - at).min(STAGE_BYTES as u64) as usize;
        events.wait(j)?;
        // SAFETY: the staging buffer holds STAGE_BYTES >= n bytes and no
        // copy reads it now (waited above).
        let buf = unsafe { std::slice::from_raw_parts_mut(stages.host[j], n) };
        crate::colcache::read_exact(file, buf, offset + at)?;
        // SAFETY: dst + at .. + n lies in the destination; the buffer stays
        // untouched until the event recorded after the copy completes.
        drv.check("cuMemcpyHtoDAsync", unsafe {
            (drv.cuMemcpyHtoDAsync)(dst + at, buf.as_ptr() as *const c_void, n, std::ptr::null_mut())
        })?;
        events.record(j)?;
        j ^= 1;
    }
    events.wait(0)?;
    events.wait(1)
}

/// Read `len` bytes at `offset` of `file` into `dst` through pinned
/// buffers, with up to `threads` threads (one for ranges of a few pieces).
pub fn read_pinned(
    drv: &Driver,
    file: &File,
    dst: CuDevicePtr,
    offset: u64,
    len: u64,
    threads: usize,
) -> Result<(), DeviceError> {
    let npieces = len.div_ceil(STAGE_BYTES as u64);
    let threads = (threads as u64).min(npieces / 2).max(1);
    if threads == 1 {
        return read_pieces(drv, file, dst, (offset, len), 0, npieces);
    }
    let run = |t: u64| (npieces * t / threads, npieces * (t + 1) / threads);
    let mut ctx: CuContext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    drv.check("cuCtxGetCurrent", unsafe { (drv.cuCtxGetCurrent)(&mut ctx) })?;
    let ctx = ctx as usize;
    std::thread::scope(|s| {
        let workers: Vec<_> = (1..threads)
            .map(|t| {
                s.spawn(move || {
                    // SAFETY: the caller's context, alive for the call.
                    drv.check("cuCtxSetCurrent", unsafe { (drv.cuCtxSetCurrent)(ctx as CuContext) })?;
                    let (first, last) = run(t);
                    read_pieces(drv, file, dst, (offset, len), first, last)
                })
            })
            .collect();
        let (first, last) = run(0);
        let mine = read_pieces(drv, file, dst, (offset, len), first, last);
        let mut result = mine;
        for w in workers {
            let r = w.join().unwrap_or_else(|_| Err(DeviceError::InvalidRequest("a read thread panicked".into())));
            if result.is_ok() {
                result = r;
            }
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_choose_the_path_by_cufile_mode() {
        for d in [Direct::Auto, Direct::On, Direct::Off] {
            assert_eq!(Direct::from_code(d.code()), Some(d));
        }
        assert_eq!(Direct::from_code(9), None);
        assert!(Direct::Auto.allows(Mode::PeerToPeer) && !Direct::Auto.allows(Mode::Compat));
        assert!(Direct::On.allows(Mode::PeerToPeer) && Direct::On.allows(Mode::Compat));
        assert!(!Direct::Off.allows(Mode::PeerToPeer) && !Direct::Off.allows(Mode::Compat));
        // never cuFile when the policy says off, whatever the machine has
        assert!(!Policy { direct: Direct::Off, threshold: 0 }.wants_cufile());
    }
}
