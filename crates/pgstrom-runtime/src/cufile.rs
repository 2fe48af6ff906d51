//! NVIDIA GPUDirect Storage (cuFile), loaded with dlopen at run time.
//!
//! Owns: finding and opening libcufile (no build-time dependency), the
//! process's cuFile driver session, which mode it runs in (peer-to-peer
//! DMA through the nvidia-fs kernel module, or cuFile's compatibility mode,
//! which reads through host bounce buffers when nvidia-fs is absent),
//! registering files and reading byte ranges of them into device memory.
//!
//! [`cufile()`] opens the library and the driver once per process; a
//! machine without libcufile, or whose cuFile refuses to start, gets the
//! reason as text, and callers read through pinned host buffers instead
//! (colcache.rs).  Like the CUDA driver, never use this in the postmaster.

use std::ffi::{c_int, c_void};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

use crate::cuda::CuDevicePtr;
use crate::error::DeviceError;

/// CUfileError_t: the cuFile status and, for CU_FILE_CUDA_DRIVER_ERROR,
/// the CUresult.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct CuFileError {
    err: c_int,
    cu_err: c_int,
}

/// CUfileDescr_t for a Linux file descriptor.
#[repr(C)]
struct CuFileDescr {
    handle_type: c_int,
    fd: CuFileHandleUnion,
    fs_ops: *const c_void,
}

#[repr(C)]
union CuFileHandleUnion {
    fd: c_int,
    handle: *mut c_void,
}

/// CU_FILE_HANDLE_TYPE_OPAQUE_FD.
const HANDLE_TYPE_OPAQUE_FD: c_int = 1;
/// CUFILEOP_BASE_ERR: cuFile's own status codes start above it.
const OP_BASE_ERR: c_int = 5000;
/// CU_FILE_CUDA_DRIVER_ERROR.
const OP_CUDA_DRIVER_ERROR: c_int = OP_BASE_ERR + 11;

/// CUFILE_PARAM_FORCE_COMPAT_MODE (CUFileBoolConfigParameter_t).
const PARAM_FORCE_COMPAT_MODE: c_int = 2;
/// The bytes one cuFileRead call moves at most: large enough to keep the
/// storage busy, small enough for an interrupt check between calls.
pub const READ_PIECE: usize = 64 << 20;

/// How cuFile moves the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Peer-to-peer DMA from the storage into device memory (the nvidia-fs
    /// kernel module is loaded).
    PeerToPeer,
    /// Compatibility mode: cuFile reads into its own pinned host buffers and
    /// copies them to the device (nvidia-fs absent, `allow_compat_mode`).
    Compat,
}

impl Mode {
    /// The words EXPLAIN and the device views use.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::PeerToPeer => "peer-to-peer DMA (nvidia-fs)",
            Mode::Compat => "compatibility mode (nvidia-fs not loaded)",
        }
    }
}

/// libcufile's entry points and the open driver session.
pub struct CuFile {
    _lib: Library,
    driver_close: unsafe extern "C" fn() -> CuFileError,
    handle_register: unsafe extern "C" fn(*mut *mut c_void, *mut CuFileDescr) -> CuFileError,
    handle_deregister: unsafe extern "C" fn(*mut c_void),
    read: unsafe extern "C" fn(*mut c_void, *mut c_void, usize, i64, i64) -> isize,
    /// The library file that was opened.
    pub library: PathBuf,
    /// cuFileGetVersion(), e.g. 1150 for 1.15.0 (0 when the library lacks it).
    pub version: i32,
    /// How reads reach the device.
    pub mode: Mode,
}

/// A file registered with cuFile, through its own descriptor (opened with
/// O_DIRECT where the file system allows it: peer-to-peer DMA needs it).
pub struct Handle {
    api: &'static CuFile,
    fh: *mut c_void,
    _file: File,
}

// SAFETY: a cuFile handle may be used from any thread (cuFile is
// thread-safe); the descriptor it names lives as long as the handle.
unsafe impl Send for Handle {}
// SAFETY: as above; reads do not mutate the handle.
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: fh came from cuFileHandleRegister and is dropped once.
        unsafe { (self.api.handle_deregister)(self.fh) }
    }
}

/// cuFile's status code as text (the names of cufile.h).
fn op_error_name(code: c_int) -> &'static str {
    match code - OP_BASE_ERR {
        1 => "CU_FILE_DRIVER_NOT_INITIALIZED (nvidia-fs not loaded and compatibility mode not allowed)",
        2 => "CU_FILE_DRIVER_INVALID_PROPS",
        3 => "CU_FILE_DRIVER_UNSUPPORTED_LIMIT",
        4 => "CU_FILE_DRIVER_VERSION_MISMATCH",
        5 => "CU_FILE_DRIVER_VERSION_READ_ERROR",
        6 => "CU_FILE_DRIVER_CLOSING",
        7 => "CU_FILE_PLATFORM_NOT_SUPPORTED",
        8 => "CU_FILE_IO_NOT_SUPPORTED",
        9 => "CU_FILE_DEVICE_NOT_SUPPORTED",
        10 => "CU_FILE_NVFS_DRIVER_ERROR",
        11 => "CU_FILE_CUDA_DRIVER_ERROR",
        12 => "CU_FILE_CUDA_POINTER_INVALID",
        13 => "CU_FILE_CUDA_MEMORY_TYPE_INVALID",
        14 => "CU_FILE_CUDA_POINTER_RANGE_ERROR",
        15 => "CU_FILE_CUDA_CONTEXT_MISMATCH",
        16 => "CU_FILE_INVALID_MAPPING_SIZE",
        17 => "CU_FILE_INVALID_MAPPING_RANGE",
        18 => "CU_FILE_INVALID_FILE_TYPE",
        19 => "CU_FILE_INVALID_FILE_OPEN_FLAG",
        20 => "CU_FILE_DIO_NOT_SET",
        22 => "CU_FILE_INVALID_VALUE",
        23 => "CU_FILE_MEMORY_ALREADY_REGISTERED",
        24 => "CU_FILE_MEMORY_NOT_REGISTERED",
        25 => "CU_FILE_PERMISSION_DENIED",
        26 => "CU_FILE_DRIVER_ALREADY_OPEN",
        27 => "CU_FILE_HANDLE_NOT_REGISTERED",
        28 => "CU_FILE_HANDLE_ALREADY_REGISTERED",
        29 => "CU_FILE_DEVICE_NOT_FOUND",
        30 => "CU_FILE_INTERNAL_ERROR",
        31 => "CU_FILE_GETNEWFD_FAILED",
        33 => "CU_FILE_NVFS_SETUP_ERROR",
        34 => "CU_FILE_IO_DISABLED",
        _ => "cuFile error",
    }
}

fn status_text(call: &str, e: CuFileError) -> String {
    if e.err == OP_CUDA_DRIVER_ERROR {
        format!("{call} failed: CU_FILE_CUDA_DRIVER_ERROR (CUresult {})", e.cu_err)
    } else {
        format!("{call} failed: {} ({})", op_error_name(e.err), e.err)
    }
}

/// Where we look for libcufile: `PGSTROM_CUFILE_LIBRARY` alone when set
/// (tests use it to simulate a machine without it), else the CUDA toolkit,
/// then the dynamic linker's search path.
pub fn candidates() -> Vec<PathBuf> {
    if let Ok(p) = std::env::var("PGSTROM_CUFILE_LIBRARY") {
        return vec![PathBuf::from(p)];
    }
    let mut out = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Ok(home) = std::env::var(var) {
            out.push(Path::new(&home).join("lib64/libcufile.so.0"));
        }
    }
    out.push(PathBuf::from("/usr/local/cuda/lib64/libcufile.so.0"));
    out.push(PathBuf::from("libcufile.so.0"));
    out
}

/// True when the nvidia-fs kernel module is loaded (it publishes its
/// version under /proc).
fn nvidia_fs_loaded() -> bool {
    Path::new("/proc/driver/nvidia-fs/version").exists()
}

impl CuFile {
    /// Open libcufile from the first of `names` that loads and start its
    /// driver.  The CUDA driver must be initialised first.
    pub fn open(names: &[PathBuf]) -> Result<CuFile, String> {
        let mut tried = Vec::new();
        for name in names {
            // SAFETY: loading libcufile runs its initialisers, which are sound.
            match unsafe { Library::new(name) } {
                Ok(lib) => return Self::start(lib, name.clone()),
                Err(e) => tried.push(e.to_string()),
            }
        }
        if tried.is_empty() {
            tried.push("no library name to try".into());
        }
        Err(format!("libcufile not found: {}", tried.join("; ")))
    }

    fn start(lib: Library, library: PathBuf) -> Result<CuFile, String> {
        let missing = |s: &str, e: libloading::Error| format!("{} lacks {s}: {e}", library.display());
        // SAFETY: the symbol types are those of cufile.h.
        unsafe {
            let driver_open: unsafe extern "C" fn() -> CuFileError =
                *lib.get(b"cuFileDriverOpen\0").map_err(|e| missing("cuFileDriverOpen", e))?;
            let driver_close = *lib
                .get(b"cuFileDriverClose_v2\0")
                .or_else(|_| lib.get(b"cuFileDriverClose\0"))
                .map_err(|e| missing("cuFileDriverClose", e))?;
            let handle_register =
                *lib.get(b"cuFileHandleRegister\0").map_err(|e| missing("cuFileHandleRegister", e))?;
            let handle_deregister =
                *lib.get(b"cuFileHandleDeregister\0").map_err(|e| missing("cuFileHandleDeregister", e))?;
            let read = *lib.get(b"cuFileRead\0").map_err(|e| missing("cuFileRead", e))?;
            // Without nvidia-fs every read goes through host memory anyway:
            // force compatibility mode, so that registering a file does not
            // first probe its volume for peer-to-peer support (which fails
            // on block devices cuFile does not know, virtio disks among
            // them).  (cuFile's log goes where CUFILE_LOGFILE_PATH says,
            // read when the library loads.)
            if !nvidia_fs_loaded()
                && let Ok(set_bool) =
                    lib.get::<unsafe extern "C" fn(c_int, bool) -> CuFileError>(b"cuFileSetParameterBool\0")
            {
                set_bool(PARAM_FORCE_COMPAT_MODE, true);
            }
            let mut version = 0;
            if let Ok(get_version) = lib.get::<unsafe extern "C" fn(*mut c_int) -> CuFileError>(b"cuFileGetVersion\0")
                && get_version(&mut version).err != 0
            {
                version = 0;
            }
            let rc = driver_open();
            if rc.err != 0 {
                return Err(status_text("cuFileDriverOpen", rc));
            }
            let mode = if nvidia_fs_loaded() { Mode::PeerToPeer } else { Mode::Compat };
            Ok(CuFile { _lib: lib, driver_close, handle_register, handle_deregister, read, library, version, mode })
        }
    }

    /// `cuFile 1.15 (/usr/local/cuda/lib64/libcufile.so.0)`: the version
    /// and the library, as the service's log and status say it.
    pub fn name(&self) -> String {
        format!("cuFile {}.{} ({})", self.version / 1000, self.version % 1000 / 10, self.library.display())
    }

    /// Register `file` (by a descriptor of its own, reopened through
    /// /proc/self/fd: the same inode).  O_DIRECT is asked for first; file
    /// systems that refuse it (tmpfs) are tried without, which only
    /// compatibility mode accepts.  An error says why cuFile refused.
    pub fn register(&'static self, file: &File) -> Result<Handle, String> {
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        let direct = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&path);
        let own = match direct {
            Ok(f) => f,
            Err(_) => File::open(&path).map_err(|e| format!("cannot reopen the file for cuFile: {e}"))?,
        };
        let mut descr = CuFileDescr {
            handle_type: HANDLE_TYPE_OPAQUE_FD,
            fd: CuFileHandleUnion { fd: own.as_raw_fd() },
            fs_ops: std::ptr::null(),
        };
        let mut fh: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer and descriptor; the fd outlives the handle.
        let rc = unsafe { (self.handle_register)(&mut fh, &mut descr) };
        if rc.err != 0 {
            return Err(status_text("cuFileHandleRegister", rc));
        }
        Ok(Handle { api: self, fh, _file: own })
    }

    /// Read `len` bytes at `offset` of `h` into device memory at `dst` (the
    /// context owning `dst` is current on this thread), in pieces of at
    /// most [`READ_PIECE`].  A short read (the file shrank) is an error.
    pub fn read(&self, h: &Handle, dst: CuDevicePtr, len: u64, offset: u64) -> Result<(), DeviceError> {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(READ_PIECE as u64) as usize;
            // SAFETY: dst..dst+len is device memory of the current context;
            // cuFile writes n bytes at bufPtr_base + done.
            let got = unsafe { (self.read)(h.fh, dst as *mut c_void, n, (offset + done) as i64, done as i64) };
            if got < 0 {
                let code = -got as c_int;
                let why = if code > OP_BASE_ERR {
                    op_error_name(code).to_string()
                } else {
                    std::io::Error::from_raw_os_error(code).to_string()
                };
                return Err(DeviceError::InvalidRequest(format!(
                    "cuFileRead of {n} bytes at offset {} of an arrow file failed: {why}",
                    offset + done
                )));
            }
            if got == 0 {
                return Err(DeviceError::InvalidRequest(format!(
                    "cuFileRead of {n} bytes at offset {} of an arrow file read nothing: the file is shorter",
                    offset + done
                )));
            }
            done += got as u64;
        }
        Ok(())
    }
}

impl Drop for CuFile {
    fn drop(&mut self) {
        // SAFETY: the driver was opened by `start`.
        unsafe { (self.driver_close)() };
    }
}

static CUFILE: OnceLock<Result<CuFile, String>> = OnceLock::new();

/// The process's cuFile: opened on first use (the CUDA driver must be
/// initialised), or why it cannot be used.
pub fn cufile() -> Result<&'static CuFile, &'static str> {
    CUFILE.get_or_init(|| CuFile::open(&candidates())).as_ref().map_err(|e| e.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_reported_by_name() {
        let err = CuFile::open(&[PathBuf::from("/nonexistent/libcufile.so.0")]).err().unwrap();
        assert!(err.contains("/nonexistent/libcufile.so.0"), "{err}");
    }

    #[test]
    fn status_codes_are_named() {
        assert!(status_text("cuFileDriverOpen", CuFileError { err: 5001, cu_err: 0 }).contains("nvidia-fs"));
        assert!(status_text("x", CuFileError { err: 5011, cu_err: 700 }).contains("CUresult 700"));
        assert_eq!(op_error_name(5999), "cuFile error");
    }
}
