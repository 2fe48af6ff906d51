//! GPU preference on a machine with several GPUs: the setting
//! `pg_strom.manual_optimal_gpus` (registered here with a check hook, so
//! a malformed value is refused by SET and in postgresql.conf), where a
//! scan's rows lie (the tablespace directory of a heap table, the files
//! of an Arrow table), and the candidate GPUs for them
//! (pgstrom_runtime::placement; the GPU service then picks the
//! least-loaded candidate).  With one GPU nothing here is consulted.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pgrx::prelude::*;
use pgstrom_runtime::discovery::DeviceInfo;
use pgstrom_runtime::placement::{self, Entry, Preference, StorageRefs};
use pgstrom_runtime::topology::{self, PciPath, Storage};

/// The setting's value (owned by the GUC machinery).
static mut MANUAL_OPTIMAL_GPUS: *mut c_char = std::ptr::null_mut();

/// The check hook of `pg_strom.manual_optimal_gpus`: a value that does
/// not parse is refused with the reason (SQLSTATE 22023).
#[pg_guard]
unsafe extern "C-unwind" fn check_manual(
    newval: *mut *mut c_char,
    _extra: *mut *mut std::ffi::c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: the GUC machinery passes a valid pointer to the new value.
    let value = unsafe {
        if newval.is_null() || (*newval).is_null() {
            return true;
        }
        CStr::from_ptr(*newval).to_string_lossy().into_owned()
    };
    match placement::parse_manual(&value) {
        Ok(_) => true,
        Err(why) => {
            let why = CString::new(why).unwrap_or_default();
            // SAFETY: what GUC_check_errdetail does: a string allocated
            // in the current context, read by the caller's report.
            unsafe { pg_sys::GUC_check_errdetail_string = pg_sys::pstrdup(why.as_ptr()) };
            false
        }
    }
}

/// Register `pg_strom.manual_optimal_gpus`.
pub fn init_guc() {
    // SAFETY: _PG_init, main thread; the variable is static.
    unsafe {
        pg_sys::DefineCustomStringVariable(
            c"pg_strom.manual_optimal_gpus".as_ptr(),
            c"Sets which GPUs scans of a directory, tablespace or block device run on.".as_ptr(),
            c"Comma-separated entries KEY=gpuN[:gpuM...]; KEY is an absolute directory, a tablespace name or a block device name such as nvme0. Storage no entry names prefers the GPUs closest to it in the PCIe tree.".as_ptr(),
            &raw mut MANUAL_OPTIMAL_GPUS,
            c"".as_ptr(),
            pg_sys::GucContext::PGC_SUSET,
            0,
            Some(check_manual),
            None,
            None,
        );
    }
}

/// The setting's entries now (empty when unset).
fn manual_entries() -> Vec<Entry> {
    // SAFETY: read in a backend's main thread; the GUC machinery keeps it.
    let raw = unsafe { MANUAL_OPTIMAL_GPUS };
    if raw.is_null() {
        return Vec::new();
    }
    // SAFETY: a NUL-terminated string owned by the GUC machinery.
    let s = unsafe { CStr::from_ptr(raw) }.to_string_lossy();
    placement::parse_manual(&s).unwrap_or_default()
}

/// Where heap relation `rel` lies: its tablespace's directory of the
/// current database, and the tablespace's name.
///
/// # Safety
/// `rel` an open relation; a backend's main thread.
pub unsafe fn of_relation(rel: pg_sys::Relation) -> StorageRefs {
    // SAFETY: caller's promise.
    unsafe {
        let mut spc = (*(*rel).rd_rel).reltablespace;
        if spc == pg_sys::InvalidOid {
            spc = pg_sys::MyDatabaseTableSpace;
        }
        let data_dir = PathBuf::from(CStr::from_ptr(pg_sys::DataDir).to_string_lossy().into_owned());
        let path = if spc == pg_sys::DEFAULTTABLESPACE_OID {
            data_dir.join("base").join(u32::from(pg_sys::MyDatabaseId).to_string())
        } else if spc == pg_sys::GLOBALTABLESPACE_OID {
            data_dir.join("global")
        } else {
            data_dir.join("pg_tblspc").join(u32::from(spc).to_string())
        };
        let name = pg_sys::get_tablespace_name(spc);
        let tablespace = (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned());
        StorageRefs { paths: vec![path], tablespace, pinned: None }
    }
}

/// Each GPU's place in the PCIe tree, read once per process.
fn gpu_paths(devices: &[DeviceInfo]) -> &'static [Option<PciPath>] {
    static PATHS: OnceLock<Vec<Option<PciPath>>> = OnceLock::new();
    PATHS.get_or_init(|| {
        devices.iter().map(|d| topology::gpu_path(Path::new(topology::SYSFS), &d.pci_address())).collect()
    })
}

thread_local! {
    /// The storage of each device number seen (sysfs is read once).
    static STORAGE: RefCell<HashMap<u64, Option<Storage>>> = RefCell::new(HashMap::new());
}

fn storage_of(dev: u64) -> Option<Storage> {
    STORAGE.with(|s| {
        s.borrow_mut().entry(dev).or_insert_with(|| topology::storage_of_dev(Path::new(topology::SYSFS), dev)).clone()
    })
}

/// The candidate GPUs for storage `refs` among `devices` (the GPUs
/// discovery found, numbered as the GPU service numbers them).
pub fn prefer(refs: &StorageRefs, devices: &[DeviceInfo]) -> Preference {
    placement::prefer_with(refs, &manual_entries(), gpu_paths(devices), storage_of)
}

#[pg_schema]
mod pgstrom {
    use super::*;
    use crate::discovery_worker;
    use crate::discovery_worker::DISCOVERY_WAIT_MS;
    use crate::errors::raise_plain;

    /// Each GPU's place in the PCIe tree and its distance to the storage
    /// holding `path` (a file or directory), and whether a scan of it
    /// prefers the GPU (pg_strom.manual_optimal_gpus, else the closest).
    /// Needs the privileges of pg_read_server_files (it looks at files).
    #[pg_extern(volatile, parallel_safe)]
    #[allow(clippy::type_complexity)]
    fn gpu_storage_distance(
        path: &str,
    ) -> TableIterator<
        'static,
        (
            name!(gpu, i32),
            name!(device, String),
            name!(gpu_pcie, Option<String>),
            name!(storage, Option<String>),
            name!(storage_pcie, Option<String>),
            name!(distance, Option<i32>),
            name!(closeness, Option<String>),
            name!(preferred, bool),
        ),
    > {
        // SAFETY: catalog checks for the current user.
        let allowed = unsafe {
            pg_sys::superuser()
                || pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(pg_sys::ROLE_PG_READ_SERVER_FILES))
        };
        if !allowed {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to look at server files".into(),
                Some("Only roles with privileges of the \"pg_read_server_files\" role may.".into()),
                None,
            );
        }
        let p = Path::new(path);
        if !p.is_absolute() {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("path \"{path}\" is not absolute"),
                None,
                None,
            );
        }
        let meta = std::fs::metadata(p).unwrap_or_else(|e| {
            raise_plain(PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, format!("could not stat \"{path}\": {e}"), None, None)
        });
        let snap = discovery_worker::snapshot(DISCOVERY_WAIT_MS);
        let gpus = gpu_paths(&snap.devices);
        let storage = storage_of(std::os::unix::fs::MetadataExt::dev(&meta));
        let dist = storage.as_ref().map(|s| topology::distances(s, gpus)).unwrap_or_default();
        let pref = prefer(&StorageRefs { paths: vec![p.to_path_buf()], ..Default::default() }, &snap.devices);
        let pcie = |p: &PciPath| p.components.join("/");
        let rows: Vec<_> = snap
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let distance = dist.get(i).copied().flatten();
                (
                    i as i32,
                    format!("GPU{} ({}, {})", d.ordinal, d.name, d.pci_address()),
                    gpus.get(i).and_then(|g| g.as_ref()).map(pcie),
                    storage.as_ref().map(|s| s.name.clone()),
                    storage
                        .as_ref()
                        .filter(|s| !s.pci.is_empty())
                        .map(|s| s.pci.iter().map(pcie).collect::<Vec<_>>().join(", ")),
                    distance.map(|d| d as i32),
                    distance.map(|d| topology::distance_text(d).to_string()),
                    pref.gpus.is_empty() || pref.gpus.contains(&(i as u32)),
                )
            })
            .collect();
        TableIterator::new(rows)
    }
}
