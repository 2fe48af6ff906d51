//! Arrow_Fdw options: the validator's table, and the file list a foreign
//! table's options name.
//!
//! Table options: `file` (one path), `files` (comma-separated paths),
//! `dir` (every regular file in a directory, filtered by `suffix` or by a
//! `pattern` with `*` and `?`), `parallel_workers`, `writable`,
//! `foreign_keys` (checked by [`super::foreign_keys`]).  Paths
//! must be absolute.  As file_fdw: naming files needs superuser or
//! pg_read_server_files; `writable` needs pg_write_server_files.

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors::raise_plain;
use crate::pg::list::from_list;

/// Options of the foreign table and where they are valid.
const TABLE_OPTIONS: &[&str] =
    &["file", "files", "dir", "suffix", "pattern", "parallel_workers", "writable", "foreign_keys"];

/// A foreign table's options, parsed.
#[derive(Debug, Default, Clone)]
pub struct TableOptions {
    pub files: Vec<String>,
    pub parallel_workers: Option<i32>,
    pub writable: bool,
}

fn bad(msg: String, hint: Option<&str>) -> ! {
    raise_plain(PgSqlErrorCode::ERRCODE_FDW_INVALID_OPTION_NAME, msg, None, hint)
}

fn bad_value(msg: String) -> ! {
    raise_plain(PgSqlErrorCode::ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE, msg, None, None)
}

/// The (name, value) pairs of a DefElem list.
///
/// # Safety
/// `list` is NIL or a list of DefElem.
pub unsafe fn defelems(list: *mut pg_sys::List) -> Vec<(String, String)> {
    // SAFETY: caller's promise.
    unsafe {
        from_list(list)
            .into_iter()
            .map(|n| {
                let d = n as *mut pg_sys::DefElem;
                let name = CStr::from_ptr((*d).defname).to_string_lossy().into_owned();
                let value = CStr::from_ptr(pg_sys::defGetString(d)).to_string_lossy().into_owned();
                (name, value)
            })
            .collect()
    }
}

/// A validator's arguments: the options as (name, value) pairs and the
/// catalog they are for.
///
/// # Safety
/// `fcinfo` is a validator's call: (text[] options, oid catalog).
pub unsafe fn validator_args(fcinfo: pg_sys::FunctionCallInfo) -> (Vec<(String, String)>, pg_sys::Oid) {
    // SAFETY: caller's promise.
    unsafe {
        let args = (*fcinfo).args.as_slice(2);
        let list = pg_sys::untransformRelOptions(args[0].value);
        (defelems(list), pg_sys::Oid::from(args[1].value.value() as u32))
    }
}

fn has_role(role: pg_sys::Oid) -> bool {
    // SAFETY: plain catalog checks for the current user.
    unsafe { pg_sys::superuser() || pg_sys::has_privs_of_role(pg_sys::GetUserId(), role) }
}

/// Parse and check options: the validator for `catalog` (with
/// `check_privileges`: who may name files), and every scan (without: as
/// file_fdw, reading a table is governed by GRANT on the table).
pub fn parse(options: &[(String, String)], catalog: pg_sys::Oid, check_privileges: bool) -> TableOptions {
    let mut t = TableOptions::default();
    let (mut dir, mut suffix, mut pattern) = (None, None, None);
    for (name, value) in options {
        if catalog == pg_sys::ForeignTableRelationId && !TABLE_OPTIONS.contains(&name.as_str()) {
            let hint = format!("Valid options in this context are: {}.", TABLE_OPTIONS.join(", "));
            bad(format!("invalid option \"{name}\""), Some(&hint));
        }
        if catalog != pg_sys::ForeignTableRelationId {
            bad(format!("invalid option \"{name}\""), Some("arrow_fdw takes options only on foreign tables."));
        }
        match name.as_str() {
            "file" => t.files.push(value.clone()),
            "files" => t.files.extend(value.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty())),
            "dir" => dir = Some(value.clone()),
            "suffix" => suffix = Some(value.clone()),
            "pattern" => pattern = Some(value.clone()),
            "parallel_workers" => match value.parse::<i32>() {
                Ok(n) if (0..=1024).contains(&n) => t.parallel_workers = Some(n),
                _ => bad_value(format!("parallel_workers must be an integer between 0 and 1024, not \"{value}\"")),
            },
            "writable" => match value.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "1" => t.writable = true,
                "false" | "off" | "no" | "0" => t.writable = false,
                _ => bad_value(format!("writable requires a Boolean value, not \"{value}\"")),
            },
            // checked by the validator only: a scan does not read it
            "foreign_keys" => {
                if check_privileges {
                    super::foreign_keys::validate(value);
                }
            }
            _ => unreachable!("checked above"),
        }
    }
    if catalog != pg_sys::ForeignTableRelationId {
        return t;
    }
    if (suffix.is_some() || pattern.is_some()) && dir.is_none() {
        bad_value("suffix and pattern apply only with dir".into());
    }
    if t.files.is_empty() && dir.is_none() {
        bad_value("an arrow_fdw foreign table needs a file, files or dir option".into());
    }
    for f in t.files.iter().chain(dir.iter()) {
        if !f.starts_with('/') {
            bad_value(format!("arrow_fdw paths must be absolute: \"{f}\""));
        }
    }
    if check_privileges && !has_role(pg_sys::Oid::from(pg_sys::ROLE_PG_READ_SERVER_FILES)) {
        raise_plain(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            "permission denied to read server files through arrow_fdw".into(),
            Some("Only roles with privileges of the \"pg_read_server_files\" role may name Arrow files.".into()),
            None,
        );
    }
    if t.writable {
        if check_privileges && !has_role(pg_sys::Oid::from(pg_sys::ROLE_PG_WRITE_SERVER_FILES)) {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to write server files through arrow_fdw".into(),
                Some(
                    "Only roles with privileges of the \"pg_write_server_files\" role may make writable Arrow tables."
                        .into(),
                ),
                None,
            );
        }
        if t.files.len() != 1 || dir.is_some() {
            bad_value("a writable arrow_fdw table needs exactly one file".into());
        }
    }
    if let Some(d) = dir {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => raise_plain(
                PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
                format!("could not open directory \"{d}\": {e}"),
                None,
                None,
            ),
        };
        let mut found: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| suffix.as_ref().is_none_or(|s| n.ends_with(s.as_str())))
            .filter(|n| pattern.as_ref().is_none_or(|p| pgstrom_arrow::glob::matches(p.as_bytes(), n.as_bytes())))
            .map(|n| format!("{}/{n}", d.trim_end_matches('/')))
            .collect();
        found.sort();
        t.files.extend(found);
    }
    t
}

/// The options of foreign table `relid`, parsed (files from `dir` listed
/// now).
pub fn of_table(relid: pg_sys::Oid) -> TableOptions {
    // SAFETY: catalog lookup of a foreign table.
    unsafe {
        let ft = pg_sys::GetForeignTable(relid);
        parse(&defelems((*ft).options), pg_sys::ForeignTableRelationId, false)
    }
}

/// The validator: `arrow_fdw_validator(text[], oid)`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn arrow_fdw_validator(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by PostgreSQL with (text[] options, oid catalog).
    unsafe {
        let (opts, catalog) = validator_args(fcinfo);
        if catalog == pg_sys::ForeignTableRelationId {
            parse(&opts, catalog, true);
        } else if let Some((name, _)) = opts.first() {
            bad(format!("invalid option \"{name}\""), Some("arrow_fdw takes options only on foreign tables."));
        }
        pg_sys::Datum::from(0)
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_arrow_fdw_validator() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}
