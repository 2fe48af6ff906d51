//! `pgstrom.arrow_fdw_write_stats(path, columns)`: add per-record-batch
//! min/max statistics to an Arrow file written by another tool, in the
//! format pg2arrow's `--stat` writes and the statistics hints read
//! (`min_values` / `max_values` field metadata, PostgreSQL's text form,
//! one value per batch, empty for a batch with no value).
//!
//! Reads only the named columns, computes min and max with the btree
//! comparison of the column's PostgreSQL type, and rewrites only the
//! footer: a new footer is appended (file.rs `append_footer`); batches
//! and dictionaries are not touched.  Collatable types (text) are refused:
//! their order depends on a collation the file cannot record.

use std::collections::HashMap;

use arrow_schema::{Field, Schema};
use pgrx::pg_sys;
use pgrx::prelude::*;

use super::file::ArrowFile;
use super::scan::raise;
use super::types;
use crate::errors::raise_plain;

/// Min and max text of `field` (index `f`) in every batch of `file`.
unsafe fn column_stats(file: &ArrowFile, f: usize) -> (Vec<String>, Vec<String>) {
    // SAFETY: catalog lookups and the type's comparison/output functions.
    unsafe {
        let field = file.schema.field(f);
        let (typid, typmod) = types::pg_type(field).unwrap_or_else(|e| {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("column \"{}\" of arrow file \"{}\" cannot have statistics", field.name(), file.path),
                Some(e),
                None,
            )
        });
        let tc = pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_CMP_PROC_FINFO as i32);
        if pg_sys::type_is_collatable(typid) || (*tc).cmp_proc_finfo.fn_oid == pg_sys::InvalidOid {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!(
                    "column \"{}\" of arrow file \"{}\" ({}) cannot have statistics",
                    field.name(),
                    file.path,
                    types::type_name(typid)
                ),
                Some("Statistics are written for integer, float, numeric, date, time and timestamp columns.".into()),
                None,
            );
        }
        let (mut out_fn, mut varlena) = (pg_sys::InvalidOid, false);
        pg_sys::getTypeOutputInfo(typid, &mut out_fn, &mut varlena);
        let target = types::Target::new(typid, typmod);
        let decoder = file.decoder(&[f]).unwrap_or_else(|e| raise(e));
        let text = |d: pg_sys::Datum| {
            let c = pg_sys::OidOutputFunctionCall(out_fn, d);
            std::ffi::CStr::from_ptr(c).to_string_lossy().into_owned()
        };
        let (mut mins, mut maxs) = (Vec::new(), Vec::new());
        for b in 0..file.batches.len() {
            let batch = file.read_batch(&decoder, b, &[f]).unwrap_or_else(|e| raise(e));
            let array = batch.column(0);
            let mut mm: Option<(pg_sys::Datum, pg_sys::Datum)> = None;
            for i in 0..batch.num_rows() {
                let Some(v) = types::datum(array, i, &target) else { continue };
                let cmp = |a: pg_sys::Datum, b: pg_sys::Datum| {
                    pg_sys::FunctionCall2Coll(&mut (*tc).cmp_proc_finfo, pg_sys::InvalidOid, a, b).value() as i32
                };
                mm = Some(match mm {
                    None => (v, v),
                    Some((lo, hi)) => (if cmp(v, lo) < 0 { v } else { lo }, if cmp(v, hi) > 0 { v } else { hi }),
                });
            }
            let (lo, hi) = mm.map_or((String::new(), String::new()), |(lo, hi)| (text(lo), text(hi)));
            if lo.contains(',') || hi.contains(',') {
                raise_plain(
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    format!("a value of column \"{}\" contains a comma", field.name()),
                    None,
                    None,
                );
            }
            mins.push(lo);
            maxs.push(hi);
        }
        (mins, maxs)
    }
}

#[pg_schema]
mod pgstrom {
    use super::*;

    /// Add min/max statistics of `columns` to the Arrow file `path`
    /// (rewriting only its footer); returns the number of record batches.
    #[pg_extern(volatile, parallel_unsafe)]
    fn arrow_fdw_write_stats(path: &str, columns: Vec<String>) -> i64 {
        // SAFETY: privilege checks of the current user.
        let allowed = unsafe {
            pg_sys::superuser()
                || (pg_sys::has_privs_of_role(
                    pg_sys::GetUserId(),
                    pg_sys::Oid::from(pg_sys::ROLE_PG_READ_SERVER_FILES),
                ) && pg_sys::has_privs_of_role(
                    pg_sys::GetUserId(),
                    pg_sys::Oid::from(pg_sys::ROLE_PG_WRITE_SERVER_FILES),
                ))
        };
        if !allowed {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to rewrite an arrow file".into(),
                Some(
                    "Only roles with privileges of \"pg_read_server_files\" and \"pg_write_server_files\" may.".into(),
                ),
                None,
            );
        }
        if !path.starts_with('/') {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("arrow file paths must be absolute: \"{path}\""),
                None,
                None,
            );
        }
        let file = ArrowFile::open(path).unwrap_or_else(|e| raise(e));
        let mut stats: HashMap<usize, (Vec<String>, Vec<String>)> = HashMap::new();
        for c in &columns {
            let Some(f) = file.schema.fields().iter().position(|x| x.name() == c) else {
                raise_plain(
                    PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                    format!("arrow file \"{path}\" has no column \"{c}\""),
                    None,
                    None,
                )
            };
            // text in the forms every session reads back (ISO dates, exact
            // floats), whatever this session's settings
            stats.insert(
                f,
                crate::pg::with_settings(
                    &[(c"datestyle", c"ISO, YMD"), (c"intervalstyle", c"postgres"), (c"extra_float_digits", c"1")],
                    // SAFETY: runs in the backend; conversions in the
                    // current context
                    || unsafe { column_stats(&file, f) },
                ),
            );
        }
        let fields: Vec<Field> = file
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| match stats.get(&i) {
                Some((lo, hi)) => {
                    let mut md = f.metadata().clone();
                    md.insert("min_values", lo.join(","));
                    md.insert("max_values", hi.join(","));
                    f.as_ref().clone().with_metadata(md)
                }
                None => f.as_ref().clone(),
            })
            .collect();
        let schema = Schema::new_with_metadata(fields, file.schema.metadata().clone());
        pgrx::notice!(
            "arrow_fdw: rewriting the footer of \"{path}\" ({} bytes before; if interrupted, truncate the file to that size)",
            file.size
        );
        file.append_footer(&schema).unwrap_or_else(|e| raise(e));
        file.batches.len() as i64
    }
}
