//! Arrow_Fdw: Apache Arrow files as foreign tables.
//!
//! - [`file`], [`append`]: the IPC file reader and appender, in the
//!   crate `pgstrom-arrow` (shared with pg2arrow; no PostgreSQL).
//! - [`types`]: Arrow types as PostgreSQL types and values as Datums.
//! - [`options`]: the validator and the file list of a table.
//! - [`foreign_keys`]: declared foreign keys (the `foreign_keys` option)
//!   for the planner's join estimates.
//! - [`stats`]: statistics hints (record batches skipped by min/max).
//! - [`reader`]: a running read (batches, rows into slots, device
//!   columns, EXPLAIN), shared by the FDW scan and GpuScan.
//! - [`scan`]: the planner and executor callbacks.
//! - [`modify`]: INSERT and COPY FROM (a writable table's file appended
//!   to, undone if the transaction aborts).
//! - [`gpudirect`]: what EXPLAIN says of GPUDirect SQL and of the bytes
//!   each storage path moved.
//! - [`import`]: IMPORT FOREIGN SCHEMA.
//! - [`analyze`]: ANALYZE (row count and a sample of rows).
//! - [`write_stats`]: `pgstrom.arrow_fdw_write_stats`, statistics added
//!   to an existing file's footer.
//!
//! The extension script creates the handler, the validator, the wrapper
//! `arrow_fdw` and the server `arrow_fdw`, and
//! `pgstrom.arrow_fdw_metadata_info(regclass)`.

pub mod analyze;
pub mod foreign_keys;
pub mod gpudirect;
pub mod import;
pub mod modify;
pub mod options;
pub mod reader;
pub mod scan;
pub mod stats;
pub mod types;
pub mod write_stats;

pub use gpudirect::{gpudirect_used, storage_read_text};
pub use pgstrom_arrow::{append, file};

use pgrx::pg_sys;
use pgrx::prelude::*;

/// Is `relid` a foreign table of a wrapper with our handler?
pub fn is_arrow_table(relid: pg_sys::Oid) -> bool {
    crate::pg::fdw_handler_is(relid, c"arrow_fdw_handler")
}

/// The FDW handler: `pgstrom.arrow_fdw_handler()`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn arrow_fdw_handler(_fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: a zeroed FdwRoutine node in the current memory context.
    unsafe {
        let r = pg_sys::palloc0(std::mem::size_of::<pg_sys::FdwRoutine>()) as *mut pg_sys::FdwRoutine;
        (*r).type_ = pg_sys::NodeTag::T_FdwRoutine;
        (*r).GetForeignRelSize = Some(scan::get_rel_size);
        (*r).GetForeignPaths = Some(scan::get_paths);
        (*r).GetForeignPlan = Some(scan::get_plan);
        (*r).BeginForeignScan = Some(scan::begin);
        (*r).IterateForeignScan = Some(scan::iterate);
        (*r).ReScanForeignScan = Some(scan::rescan);
        (*r).EndForeignScan = Some(scan::end);
        (*r).ExplainForeignScan = Some(scan::explain);
        (*r).ImportForeignSchema = Some(import::import_schema);
        (*r).AnalyzeForeignTable = Some(analyze::analyze);
        (*r).IsForeignScanParallelSafe = Some(scan::parallel_safe);
        (*r).EstimateDSMForeignScan = Some(scan::estimate_dsm);
        (*r).InitializeDSMForeignScan = Some(scan::initialize_dsm);
        (*r).ReInitializeDSMForeignScan = Some(scan::reinitialize_dsm);
        (*r).InitializeWorkerForeignScan = Some(scan::initialize_worker);
        (*r).ShutdownForeignScan = Some(scan::shutdown);
        (*r).IsForeignRelUpdatable = Some(modify::is_updatable);
        (*r).BeginForeignModify = Some(modify::begin_modify);
        (*r).ExecForeignInsert = Some(modify::exec_insert);
        (*r).EndForeignModify = Some(modify::end_modify);
        (*r).BeginForeignInsert = Some(modify::begin_insert);
        (*r).EndForeignInsert = Some(modify::end_insert);
        pg_sys::Datum::from(r)
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_arrow_fdw_handler() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

#[pg_schema]
mod pgstrom {
    use super::*;

    /// Empty a writable arrow_fdw table (transactional).
    #[pg_extern(volatile, parallel_unsafe)]
    fn arrow_fdw_truncate_oid(rel: pg_sys::Oid) {
        modify::truncate(rel)
    }

    /// Every record batch of every file of an arrow_fdw table: its size,
    /// rows and the min/max statistics of each column that has them.
    #[pg_extern(volatile, parallel_safe)]
    fn arrow_fdw_metadata_info_oid(
        rel: pg_sys::Oid,
    ) -> TableIterator<
        'static,
        (
            name!(file, String),
            name!(batch, i32),
            name!(rows, i64),
            name!(offset, i64),
            name!(length, i64),
            name!(stats, Option<String>),
        ),
    > {
        // SAFETY: opening the relation checks it exists; we read only its
        // options and files.
        let (_, files) = unsafe {
            let r = pg_sys::relation_open(rel, pg_sys::AccessShareLock as i32);
            let name = || std::ffi::CStr::from_ptr(pg_sys::get_rel_name(rel)).to_string_lossy().into_owned();
            // file paths and min/max statistics are the table's data
            if pg_sys::pg_class_aclcheck(rel, pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
                != pg_sys::AclResult::ACLCHECK_OK
            {
                crate::errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                    format!("permission denied for table {}", name()),
                    None,
                    Some("arrow_fdw_metadata_info needs the SELECT privilege on the table."),
                );
            }
            if !is_arrow_table(rel) {
                crate::errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                    format!("\"{}\" is not an arrow_fdw foreign table", name()),
                    None,
                    None,
                );
            }
            let out = scan::open_files(r);
            pg_sys::relation_close(r, pg_sys::AccessShareLock as i32);
            out
        };
        let mut rows = Vec::new();
        for f in &files {
            let stats: Vec<(String, file::TextStats)> = (0..f.schema.fields().len())
                .filter_map(|i| f.stats(i).map(|s| (f.schema.field(i).name().clone(), s)))
                .collect();
            for (b, batch) in f.batches.iter().enumerate() {
                let s: Vec<String> = stats
                    .iter()
                    .filter_map(|(name, v)| v[b].as_ref().map(|(lo, hi)| format!("{name}: [{lo}, {hi}]")))
                    .collect();
                rows.push((
                    f.path.clone(),
                    b as i32,
                    batch.rows,
                    batch.block.offset(),
                    batch.block.metaDataLength() as i64 + batch.block.bodyLength(),
                    (!s.is_empty()).then(|| s.join(", ")),
                ));
            }
        }
        TableIterator::new(rows)
    }
}

extension_sql!(
    r#"
CREATE FUNCTION pgstrom.arrow_fdw_handler() RETURNS fdw_handler
  AS 'MODULE_PATHNAME', 'arrow_fdw_handler' LANGUAGE C STRICT;
CREATE FUNCTION pgstrom.arrow_fdw_validator(text[], oid) RETURNS void
  AS 'MODULE_PATHNAME', 'arrow_fdw_validator' LANGUAGE C STRICT;
CREATE FOREIGN DATA WRAPPER arrow_fdw
  HANDLER pgstrom.arrow_fdw_handler VALIDATOR pgstrom.arrow_fdw_validator;
CREATE SERVER arrow_fdw FOREIGN DATA WRAPPER arrow_fdw;
COMMENT ON FOREIGN DATA WRAPPER arrow_fdw IS 'Apache Arrow files as foreign tables (pg_strom)';

CREATE FUNCTION pgstrom.arrow_fdw_metadata_info(rel regclass)
RETURNS TABLE (file text, batch int, rows bigint, "offset" bigint, length bigint, stats text)
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$ SELECT * FROM pgstrom.arrow_fdw_metadata_info_oid(rel) $$;
COMMENT ON FUNCTION pgstrom.arrow_fdw_metadata_info(regclass) IS
  'record batches of the files of an arrow_fdw table, with their min/max statistics';

CREATE FUNCTION pgstrom.arrow_fdw_truncate(rel regclass) RETURNS void
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT pgstrom.arrow_fdw_truncate_oid(rel) $$;
COMMENT ON FUNCTION pgstrom.arrow_fdw_truncate(regclass) IS
  'empty a writable arrow_fdw table (transactional)';
"#,
    name = "arrow_fdw",
    requires = [pgstrom::arrow_fdw_metadata_info_oid, pgstrom::arrow_fdw_truncate_oid]
);
