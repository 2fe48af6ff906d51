//! NVRTC, loaded with dlopen at run time: compiles the device code to CUBIN
//! for one GPU architecture.
//!
//! We ask NVRTC for CUBIN (machine code for the exact `sm_XY`), not PTX: a
//! driver JITs only PTX versions it knows, so PTX from a newer NVRTC would
//! fail to load on an older driver, while CUBIN loads on any driver that
//! supports the architecture.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use libloading::Library;

use crate::error::DeviceError;

type NvrtcResult = c_int;
type NvrtcProgram = *mut c_void;

/// A loaded libnvrtc.
pub struct Nvrtc {
    _lib: Library,
    _builtins: Option<Library>,
    /// Where it was loaded from.
    pub path: String,
    /// (major, minor) of nvrtcVersion().
    pub version: (i32, i32),
    create: unsafe extern "C" fn(
        *mut NvrtcProgram,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> NvrtcResult,
    compile: unsafe extern "C" fn(NvrtcProgram, c_int, *const *const c_char) -> NvrtcResult,
    log_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> NvrtcResult,
    log: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> NvrtcResult,
    cubin_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> NvrtcResult,
    cubin: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> NvrtcResult,
    destroy: unsafe extern "C" fn(*mut NvrtcProgram) -> NvrtcResult,
    error_string: unsafe extern "C" fn(NvrtcResult) -> *const c_char,
}

/// Where we look for libnvrtc when no explicit path is given: the CUDA
/// toolkit first, then the dynamic linker's search path.
pub fn default_candidates() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Ok(home) = std::env::var(var) {
            dirs.push(Path::new(&home).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut out = Vec::new();
    for d in dirs {
        for name in ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"] {
            out.push(d.join(name));
        }
    }
    for name in ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"] {
        out.push(PathBuf::from(name));
    }
    out
}

/// Load `libnvrtc-builtins.so.*` from `dir`, if there is one.
fn preload_builtins(dir: &Path) -> Option<Library> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libnvrtc-builtins.so.")))
        .collect();
    names.sort();
    // SAFETY: the builtins library has no unsound initialisers.
    names.iter().rev().find_map(|p| unsafe { Library::new(p) }.ok())
}

impl Nvrtc {
    /// Load libnvrtc from `explicit` if given (a file or a folder holding
    /// libnvrtc.so.*), else from [`default_candidates`].
    pub fn load(explicit: Option<&str>) -> Result<Nvrtc, DeviceError> {
        let candidates: Vec<PathBuf> = match explicit.filter(|s| !s.is_empty()) {
            Some(p) => {
                let p = PathBuf::from(p);
                if p.is_dir() {
                    ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"].iter().map(|n| p.join(n)).collect()
                } else {
                    vec![p]
                }
            }
            None => default_candidates(),
        };
        let mut tried = Vec::new();
        for cand in &candidates {
            // A bare soname goes to the dynamic linker; a path must exist.
            if cand.components().count() > 1 && !cand.exists() {
                tried.push(format!("{}: no such file", cand.display()));
                continue;
            }
            // libnvrtc dlopens libnvrtc-builtins by soname at compile time;
            // outside the toolkit (the pip wheel) that folder is not on the
            // linker's path, so load the builtins from beside it first.
            let builtins = cand.parent().filter(|d| !d.as_os_str().is_empty()).and_then(preload_builtins);
            // SAFETY: loading libnvrtc runs no unsound initialisers.
            match unsafe { Library::new(cand) } {
                Ok(lib) => return Self::bind(lib, builtins, cand.display().to_string()),
                Err(e) => tried.push(format!("{}: {e}", cand.display())),
            }
        }
        Err(DeviceError::NvrtcMissing(tried.join("; ")))
    }

    fn bind(lib: Library, builtins: Option<Library>, path: String) -> Result<Nvrtc, DeviceError> {
        fn sym<T: Copy>(lib: &Library, name: &str) -> Result<T, DeviceError> {
            let cname = format!("{name}\0");
            // SAFETY: the caller names the type of nvrtc.h for this symbol.
            unsafe { lib.get::<T>(cname.as_bytes()).map(|s| *s) }
                .map_err(|e| DeviceError::NvrtcMissing(format!("libnvrtc lacks {name}: {e}")))
        }
        let version_fn: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult = sym(&lib, "nvrtcVersion")?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: valid out-pointers.
        unsafe { version_fn(&mut major, &mut minor) };
        Ok(Nvrtc {
            create: sym(&lib, "nvrtcCreateProgram")?,
            compile: sym(&lib, "nvrtcCompileProgram")?,
            log_size: sym(&lib, "nvrtcGetProgramLogSize")?,
            log: sym(&lib, "nvrtcGetProgramLog")?,
            cubin_size: sym(&lib, "nvrtcGetCUBINSize")?,
            cubin: sym(&lib, "nvrtcGetCUBIN")?,
            destroy: sym(&lib, "nvrtcDestroyProgram")?,
            error_string: sym(&lib, "nvrtcGetErrorString")?,
            version: (major, minor),
            path,
            _lib: lib,
            _builtins: builtins,
        })
    }

    fn check(&self, call: &'static str, rc: NvrtcResult) -> Result<(), DeviceError> {
        if rc == 0 {
            return Ok(());
        }
        // SAFETY: returns a static NUL-terminated string.
        let p = unsafe { (self.error_string)(rc) };
        let message = if p.is_null() {
            "unknown NVRTC error".to_string()
        } else {
            // SAFETY: as above.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        Err(DeviceError::Nvrtc { call, code: rc, message })
    }

    /// Compile `source` (named `name`) with the given headers and options to
    /// CUBIN for `arch` (e.g. "sm_90").  Compile errors carry NVRTC's log.
    pub fn compile_cubin(
        &self,
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        arch: &str,
        extra_options: &[&str],
    ) -> Result<Vec<u8>, DeviceError> {
        let bad = |what: &str| DeviceError::InvalidRequest(format!("{what} contains a NUL byte"));
        let c_name = CString::new(name).map_err(|_| bad("program name"))?;
        let c_src = CString::new(source).map_err(|_| bad("device source"))?;
        let mut c_hdr_names = Vec::new();
        let mut c_hdr_srcs = Vec::new();
        for (n, s) in headers {
            c_hdr_names.push(CString::new(*n).map_err(|_| bad("header name"))?);
            c_hdr_srcs.push(CString::new(*s).map_err(|_| bad("header source"))?);
        }
        let hdr_name_ptrs: Vec<*const c_char> = c_hdr_names.iter().map(|c| c.as_ptr()).collect();
        let hdr_src_ptrs: Vec<*const c_char> = c_hdr_srcs.iter().map(|c| c.as_ptr()).collect();
        let mut options = vec![format!("--gpu-architecture={arch}"), "--std=c++17".to_string()];
        options.extend(extra_options.iter().map(|s| s.to_string()));
        let c_opts: Vec<CString> =
            options.iter().map(|o| CString::new(o.as_str()).map_err(|_| bad("option"))).collect::<Result<_, _>>()?;
        let opt_ptrs: Vec<*const c_char> = c_opts.iter().map(|c| c.as_ptr()).collect();

        let mut prog: NvrtcProgram = std::ptr::null_mut();
        // SAFETY: all pointers stay alive across the calls below; counts
        // match the arrays.
        unsafe {
            self.check(
                "nvrtcCreateProgram",
                (self.create)(
                    &mut prog,
                    c_src.as_ptr(),
                    c_name.as_ptr(),
                    hdr_src_ptrs.len() as c_int,
                    hdr_src_ptrs.as_ptr(),
                    hdr_name_ptrs.as_ptr(),
                ),
            )?;
        }
        let result = self.compile_program(prog, arch, &opt_ptrs);
        // SAFETY: prog came from nvrtcCreateProgram.
        unsafe { (self.destroy)(&mut prog) };
        result
    }

    fn compile_program(&self, prog: NvrtcProgram, arch: &str, opts: &[*const c_char]) -> Result<Vec<u8>, DeviceError> {
        // SAFETY: prog is live; buffers are sized by the size queries.
        unsafe {
            let rc = (self.compile)(prog, opts.len() as c_int, opts.as_ptr());
            if rc != 0 {
                let mut log = self.program_log(prog);
                if log.trim().is_empty()
                    && let Err(e) = self.check("nvrtcCompileProgram", rc)
                {
                    log = e.to_string();
                }
                return Err(DeviceError::Compile { arch: arch.to_string(), log });
            }
            let mut size = 0usize;
            self.check("nvrtcGetCUBINSize", (self.cubin_size)(prog, &mut size))?;
            let mut buf = vec![0u8; size];
            self.check("nvrtcGetCUBIN", (self.cubin)(prog, buf.as_mut_ptr() as *mut c_char))?;
            Ok(buf)
        }
    }

    fn program_log(&self, prog: NvrtcProgram) -> String {
        let mut size = 0usize;
        // SAFETY: prog is live; the buffer has the size NVRTC reported.
        unsafe {
            if (self.log_size)(prog, &mut size) != 0 || size == 0 {
                return String::new();
            }
            let mut buf = vec![0u8; size];
            if (self.log)(prog, buf.as_mut_ptr() as *mut c_char) != 0 {
                return String::new();
            }
            String::from_utf8_lossy(&buf).trim_end_matches('\0').to_string()
        }
    }
}
