//! Gstore_Fdw options: the validator and a table's options, parsed.
//!
//! Table options: `base_file` and `redo_log_file` (absolute paths, both
//! required, each table its own), `gpu_device_id` (the GPU that will hold
//! the table's device copy; 0 by default), `max_num_rows` (row versions
//! the table may hold until the next checkpoint reclaims dead ones),
//! `primary_key` (the column UPDATE and DELETE find rows by, unique among
//! live rows: `key`).
//! Naming files needs superuser or the privileges of both
//! pg_read_server_files and pg_write_server_files.

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::arrow_fdw::options::{defelems, validator_args};
use crate::errors::raise_plain;

/// Options of a gstore_fdw foreign table.
const TABLE_OPTIONS: &[&str] = &["base_file", "redo_log_file", "gpu_device_id", "max_num_rows", "primary_key"];

/// A foreign table's options, parsed.
#[derive(Debug, Clone)]
pub struct TableOptions {
    pub base_file: String,
    pub redo_log_file: String,
    pub gpu_device_id: i32,
    pub max_num_rows: i64,
    /// The key column's name.
    pub primary_key: Option<String>,
    /// A heap table's GPU cache (`super::cache`): rows carry a hidden
    /// ctid column, indexed.
    pub heap_cache: bool,
}

fn bad_value(msg: String, hint: Option<&str>) -> ! {
    raise_plain(PgSqlErrorCode::ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE, msg, None, hint)
}

fn has_role(role: u32) -> bool {
    // SAFETY: plain catalog checks for the current user.
    unsafe { pg_sys::superuser() || pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(role)) }
}

/// Parse and check a table's options (with `check_privileges`: who may
/// name files, as the validator checks).
pub fn parse(options: &[(String, String)], check_privileges: bool) -> TableOptions {
    let (mut base, mut log) = (None, None);
    let mut t = TableOptions {
        base_file: String::new(),
        redo_log_file: String::new(),
        gpu_device_id: 0,
        max_num_rows: i64::from(i32::MAX),
        primary_key: None,
        heap_cache: false,
    };
    for (name, value) in options {
        match name.as_str() {
            "base_file" => base = Some(value.clone()),
            "redo_log_file" => log = Some(value.clone()),
            "gpu_device_id" => match value.parse::<i32>() {
                Ok(n) if (0..=1023).contains(&n) => t.gpu_device_id = n,
                _ => bad_value(format!("gpu_device_id must be an integer between 0 and 1023, not \"{value}\""), None),
            },
            "max_num_rows" => match value.parse::<i64>() {
                Ok(n) if (1..=1i64 << 40).contains(&n) => t.max_num_rows = n,
                _ => bad_value(format!("max_num_rows must be an integer between 1 and 2^40, not \"{value}\""), None),
            },
            "primary_key" => {
                if value.is_empty() || value.contains(',') {
                    bad_value(
                        format!("primary_key must name one column, not \"{value}\""),
                        Some("A gstore_fdw table's key is one column."),
                    );
                }
                t.primary_key = Some(value.clone());
            }
            _ => raise_plain(
                PgSqlErrorCode::ERRCODE_FDW_INVALID_OPTION_NAME,
                format!("invalid option \"{name}\""),
                None,
                Some(&format!("Valid options in this context are: {}.", TABLE_OPTIONS.join(", "))),
            ),
        }
    }
    let need = |v: Option<String>, name: &str| -> String {
        let v = v.unwrap_or_else(|| {
            bad_value(
                format!("a gstore_fdw foreign table needs the {name} option"),
                Some("Name a base_file and a redo_log_file (absolute paths, one pair per table)."),
            )
        });
        if !v.starts_with('/') {
            bad_value(format!("gstore_fdw paths must be absolute: \"{v}\""), None);
        }
        v
    };
    t.base_file = need(base, "base_file");
    t.redo_log_file = need(log, "redo_log_file");
    if t.base_file == t.redo_log_file {
        bad_value("base_file and redo_log_file must be different files".into(), None);
    }
    if check_privileges
        && !(has_role(pg_sys::ROLE_PG_READ_SERVER_FILES) && has_role(pg_sys::ROLE_PG_WRITE_SERVER_FILES))
    {
        raise_plain(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            "permission denied to name server files for gstore_fdw".into(),
            Some(
                "Only roles with privileges of both \"pg_read_server_files\" and \"pg_write_server_files\" may name \
                 the files of a gstore_fdw table."
                    .into(),
            ),
            None,
        );
    }
    t
}

/// The options of gstore_fdw table `relid`, or of the GPU cache of heap
/// table `relid`.
pub fn of_table(relid: pg_sys::Oid) -> TableOptions {
    if super::cache::is_heap_table(relid) {
        return super::cache::options_of(relid);
    }
    // SAFETY: catalog lookup of a foreign table.
    unsafe {
        let ft = pg_sys::GetForeignTable(relid);
        parse(&defelems((*ft).options), false)
    }
}

/// The validator: `gstore_fdw_validator(text[], oid)`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn gstore_fdw_validator(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: called by PostgreSQL with (text[] options, oid catalog).
    unsafe {
        let (opts, catalog) = validator_args(fcinfo);
        if catalog == pg_sys::ForeignTableRelationId {
            parse(&opts, true);
        } else if let Some((name, _)) = opts.first() {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FDW_INVALID_OPTION_NAME,
                format!("invalid option \"{name}\""),
                None,
                Some("gstore_fdw takes options only on foreign tables."),
            );
        }
        pg_sys::Datum::from(0)
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_gstore_fdw_validator() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}
