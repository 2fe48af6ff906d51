//! The on-disk cache of compiled device code.
//!
//! NVRTC runs the first time a GPU architecture needs the device code; the
//! CUBIN is stored as `<dir>/<key>.cubin`, where the key hashes the device
//! sources, the architecture, the NVRTC version and the compile options.
//! Later loads (in any backend, after any restart) read the file and skip
//! NVRTC entirely.  Files are written to a temporary name and renamed, so
//! a reader never sees a partial file; builders of one architecture take
//! turns under a lock file (`pg_strom-<arch>.lock`, `flock`), so a second
//! builder waits for the first and loads its result instead of running
//! NVRTC again.

use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::device_code;
use crate::error::DeviceError;
use crate::nvrtc::Nvrtc;

/// The outcome of [`load_or_build`].
#[derive(Debug, Clone)]
pub struct DeviceModule {
    /// The CUBIN image.
    pub cubin: Vec<u8>,
    /// The cache file it came from or went to.
    pub path: PathBuf,
    /// True when read from the cache, false when NVRTC built it now.
    pub from_cache: bool,
    /// Milliseconds NVRTC took (0 when cached).
    pub compile_ms: f64,
    /// The target architecture.
    pub arch: String,
    /// NVRTC's (major, minor), or None when the cache answered without it.
    pub nvrtc_version: Option<(i32, i32)>,
}

/// The cache key for `arch` built by NVRTC `version`.
pub fn cache_key(arch: &str, nvrtc_version: (i32, i32)) -> String {
    let mut h = Sha256::new();
    h.update(device_code::source_hash().as_bytes());
    h.update(arch.as_bytes());
    h.update(format!("nvrtc-{}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    for o in device_code::NVRTC_OPTIONS {
        h.update(o.as_bytes());
    }
    device_code::hex(&h.finalize())
}

/// A cache file name: readable prefix, then the key.
fn file_name(arch: &str, key: &str) -> String {
    format!("pg_strom-{arch}-{}.cubin", &key[..32])
}

/// Find a cached CUBIN for `arch` from any NVRTC version seen before; used
/// when NVRTC itself cannot be loaded (a machine with only the driver).
fn any_cached(dir: &Path, arch: &str) -> Option<(PathBuf, Vec<u8>)> {
    let path = indexed_path(dir, arch)?;
    std::fs::read(&path).ok().filter(|b| !b.is_empty()).map(|b| (path, b))
}

/// The CUBIN file the index of `arch` names (it may not exist).
fn indexed_path(dir: &Path, arch: &str) -> Option<PathBuf> {
    let key = std::fs::read_to_string(dir.join(format!("pg_strom-{arch}.index"))).ok()?;
    Some(dir.join(file_name(arch, key.trim())))
}

/// Load the device code for `arch` from `dir`, building it with NVRTC
/// (loaded by `load_nvrtc`) and storing it when no cached copy matches.
pub fn load_or_build(
    dir: &Path,
    arch: &str,
    load_nvrtc: impl FnOnce() -> Result<Nvrtc, DeviceError>,
) -> Result<DeviceModule, DeviceError> {
    let nvrtc = match load_nvrtc() {
        Ok(n) => n,
        Err(e) => {
            // No NVRTC: a build from an earlier run still serves, provided
            // it was made from these very sources (the index names the key
            // and the key covers the source hash).
            if let Some((path, cubin)) = any_cached(dir, arch)
                && index_matches_sources(dir, arch)
            {
                return Ok(DeviceModule {
                    cubin,
                    path,
                    from_cache: true,
                    compile_ms: 0.0,
                    arch: arch.into(),
                    nvrtc_version: None,
                });
            }
            return Err(e);
        }
    };
    let key = cache_key(arch, nvrtc.version);
    let path = dir.join(file_name(arch, &key));
    let cached = |path: PathBuf| {
        let cubin = read_cached(dir, arch, &key, &path)?;
        Some(DeviceModule {
            cubin,
            path,
            from_cache: true,
            compile_ms: 0.0,
            arch: arch.into(),
            nvrtc_version: Some(nvrtc.version),
        })
    };
    if let Some(m) = cached(path.clone()) {
        return Ok(m);
    }
    // one builder at a time: another may have built it while we waited
    let _turn = BuildLock::take(dir, arch)?;
    if let Some(m) = cached(path.clone()) {
        return Ok(m);
    }
    let started = Instant::now();
    let cubin = device_code::compile(&nvrtc, arch)?;
    let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
    store(dir, &path, &cubin)?;
    write_index(dir, arch, &key)?;
    Ok(DeviceModule {
        cubin,
        path,
        from_cache: false,
        compile_ms,
        arch: arch.into(),
        nvrtc_version: Some(nvrtc.version),
    })
}

/// The CUBIN stored at `path` under `key` (which hashes these sources),
/// if any.  A hit also makes the index name it and the sources it was
/// built from, where they do not yet: a cache filled by copying the CUBIN
/// and its index alone (or left by a version that wrote no sources file)
/// loads fine, but [`is_built`] would say "not built" for ever, and the
/// planner, which asks it, would price every device node for the CPU
/// engine while the GPU runs them.  Best effort: a cache folder that
/// cannot be written still loads.
fn read_cached(dir: &Path, arch: &str, key: &str, path: &Path) -> Option<Vec<u8>> {
    let cubin = std::fs::read(path).ok().filter(|c| !c.is_empty())?;
    if !(index_matches_sources(dir, arch) && indexed_path(dir, arch).as_deref() == Some(path)) {
        let _ = write_index(dir, arch, key);
    }
    Some(cubin)
}

/// Whether the device code of these sources is built for `arch` in `dir`
/// (by any NVRTC version): loading it then takes no NVRTC run.  Reads two
/// small files and the CUBIN's size; loads no library.
pub fn is_built(dir: &Path, arch: &str) -> bool {
    index_matches_sources(dir, arch)
        && indexed_path(dir, arch).and_then(|p| std::fs::metadata(p).ok()).is_some_and(|m| m.len() > 0)
}

/// The turn of one builder of an architecture's device code: an exclusive
/// `flock` on `<dir>/pg_strom-<arch>.lock`, released when the file is
/// closed (dropped, or the process dies).  Waiting for another builder's turn to end stops
/// when the process's interrupt check says so (a backend's cancel).
struct BuildLock {
    _file: std::fs::File,
}

impl BuildLock {
    fn take(dir: &Path, arch: &str) -> Result<BuildLock, DeviceError> {
        use std::os::fd::AsRawFd;
        let path = dir.join(format!("pg_strom-{arch}.lock"));
        let err = |what: &str, e: std::io::Error| DeviceError::Cache(format!("cannot {what} {}: {e}", path.display()));
        std::fs::create_dir_all(dir).map_err(|e| err("create the folder for", e))?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| err("open", e))?;
        loop {
            // SAFETY: a descriptor this File owns.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(BuildLock { _file: f });
            }
            let e = std::io::Error::last_os_error();
            if !matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) {
                return Err(err("lock", e));
            }
            if crate::service::client::interrupted() {
                return Err(DeviceError::Interrupted);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

fn index_matches_sources(dir: &Path, arch: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join(format!("pg_strom-{arch}.sources"))) else {
        return false;
    };
    text.trim() == device_code::source_hash()
}

fn write_index(dir: &Path, arch: &str, key: &str) -> Result<(), DeviceError> {
    store(dir, &dir.join(format!("pg_strom-{arch}.index")), key.as_bytes())?;
    store(dir, &dir.join(format!("pg_strom-{arch}.sources")), device_code::source_hash().as_bytes())
}

fn store(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), DeviceError> {
    let err = |what: &str, e: std::io::Error| DeviceError::Cache(format!("cannot {what} {}: {e}", path.display()));
    std::fs::create_dir_all(dir).map_err(|e| err("create the folder for", e))?;
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| err("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err("rename into", e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_depend_on_arch_and_version() {
        let a = cache_key("sm_90", (13, 0));
        assert_eq!(a, cache_key("sm_90", (13, 0)));
        assert_ne!(a, cache_key("sm_80", (13, 0)));
        assert_ne!(a, cache_key("sm_90", (13, 1)));
    }

    #[test]
    fn built_means_an_index_of_these_sources_and_its_file() {
        let dir = std::env::temp_dir().join(format!("pgstrom-cache-built-{}", std::process::id()));
        assert!(!is_built(&dir, "sm_90"));
        let key = cache_key("sm_90", (13, 0));
        store(&dir, &dir.join(file_name("sm_90", &key)), b"cubin").unwrap();
        assert!(!is_built(&dir, "sm_90"), "no index yet");
        write_index(&dir, "sm_90", &key).unwrap();
        assert!(is_built(&dir, "sm_90"));
        assert!(!is_built(&dir, "sm_80"));
        // another version of the sources
        store(&dir, &dir.join("pg_strom-sm_90.sources"), b"0123").unwrap();
        assert!(!is_built(&dir, "sm_90"));
        // builders take turns; a turn ends when dropped
        let first = BuildLock::take(&dir, "sm_90").unwrap();
        drop(first);
        let _second = BuildLock::take(&dir, "sm_90").unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cached_cubin_without_its_sources_file_counts_as_built_once_loaded() {
        let dir = std::env::temp_dir().join(format!("pgstrom-cache-seeded-{}", std::process::id()));
        let key = cache_key("sm_90", (13, 0));
        let path = dir.join(file_name("sm_90", &key));
        store(&dir, &path, b"cubin").unwrap();
        // a copied cache: the CUBIN and its index, no sources file
        store(&dir, &dir.join("pg_strom-sm_90.index"), key.as_bytes()).unwrap();
        assert!(!is_built(&dir, "sm_90"));
        assert_eq!(read_cached(&dir, "sm_90", &key, &path).as_deref(), Some(&b"cubin"[..]));
        assert!(is_built(&dir, "sm_90"), "a hit by the key records the index and the sources");
        // an index naming another build is corrected the same way
        store(&dir, &dir.join("pg_strom-sm_90.index"), cache_key("sm_90", (12, 8)).as_bytes()).unwrap();
        assert!(!is_built(&dir, "sm_90"));
        read_cached(&dir, "sm_90", &key, &path).unwrap();
        assert!(is_built(&dir, "sm_90"));
        // no CUBIN, no hit, nothing written
        let _ = std::fs::remove_dir_all(&dir);
        assert!(read_cached(&dir, "sm_90", &key, &path).is_none());
        assert!(!dir.join("pg_strom-sm_90.index").exists());
    }

    #[test]
    fn missing_nvrtc_and_empty_cache_reports_nvrtc() {
        let dir = std::env::temp_dir().join(format!("pgstrom-cache-test-{}", std::process::id()));
        let r = load_or_build(&dir, "sm_90", || Err(DeviceError::NvrtcMissing("test".into())));
        assert!(matches!(r, Err(DeviceError::NvrtcMissing(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
