//! Gstore_Fdw: tables kept by pg_strom in its own columnar store, as
//! foreign tables of the server `gstore_fdw`.
//!
//! - [`options`]: the validator (`base_file`, `redo_log_file`,
//!   `gpu_device_id`, `max_num_rows`, `primary_key`).
//! - [`state`]: the files replayed into row versions in each process, and
//!   MVCC visibility by PostgreSQL's snapshots and commit log.
//! - [`scan`]: the planner and executor callbacks of scans.
//! - [`modify`]: INSERT, COPY FROM, UPDATE, DELETE, TRUNCATE (records
//!   appended to the redo log, flushed at commit).
//! - [`analyze`]: ANALYZE's sample of the visible rows.
//! - [`key`]: the `primary_key` column, and the index of rows by key.
//! - [`checkpoint`]: `pgstrom.gstore_fdw_checkpoint(regclass)`, a new base
//!   file of the rows every snapshot may still need, and a new log.
//! - [`autockpt`]: the same in a background worker, when a write leaves
//!   the log larger than `pg_strom.gstore_checkpoint_log_size`.
//! - [`cache`]: the GPU cache of ordinary heap tables, the same store
//!   kept in sync with a heap table by triggers.
//!
//! The file format (records, headers, CRCs) is
//! `pgstrom_runtime::store`'s, so that the GPU service can read the same
//! files.  The extension script creates the handler, the validator, the
//! wrapper and the server `gstore_fdw`, and the SQL functions.

pub mod analyze;
pub mod autockpt;
pub mod cache;
pub mod checkpoint;
pub mod key;
pub mod modify;
pub mod options;
pub mod scan;
pub mod state;

use pgrx::pg_sys;
use pgrx::prelude::*;

/// Is `relid` a foreign table of a wrapper with gstore_fdw's handler?
pub fn is_gstore_table(relid: pg_sys::Oid) -> bool {
    crate::pg::fdw_handler_is(relid, c"gstore_fdw_handler")
}

/// ERROR (42501) unless the current user owns table `relid`.
pub fn require_owner(relid: pg_sys::Oid) {
    // SAFETY: catalog lookups of an existing relation.
    unsafe {
        if !crate::pg::compat::owns_table(relid) {
            crate::errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!(
                    "must be owner of table {}",
                    std::ffi::CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy()
                ),
                None,
                None,
            );
        }
    }
}

/// Is `relid` a table kept in the store: a gstore_fdw table, or a heap
/// table with a GPU cache (its checkpoints)?
pub fn is_store_table(relid: pg_sys::Oid) -> bool {
    is_gstore_table(relid) || (cache::is_heap_table(relid) && cache::lookup(relid).is_some())
}

/// The FDW handler: `pgstrom.gstore_fdw_handler()`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn gstore_fdw_handler(_fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
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
        (*r).IsForeignScanParallelSafe = Some(scan::parallel_safe);
        (*r).IsForeignRelUpdatable = Some(modify::is_updatable);
        (*r).AddForeignUpdateTargets = Some(modify::add_update_targets);
        (*r).PlanForeignModify = Some(modify::plan_modify);
        (*r).BeginForeignModify = Some(modify::begin_modify);
        (*r).ExecForeignInsert = Some(modify::exec_insert);
        (*r).ExecForeignUpdate = Some(modify::exec_update);
        (*r).ExecForeignDelete = Some(modify::exec_delete);
        (*r).EndForeignModify = Some(modify::end_modify);
        (*r).BeginForeignInsert = Some(modify::begin_insert);
        (*r).EndForeignInsert = Some(modify::end_modify);
        (*r).ExecForeignTruncate = Some(modify::exec_truncate);
        (*r).AnalyzeForeignTable = Some(analyze::analyze);
        pg_sys::Datum::from(r)
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_gstore_fdw_handler() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

#[pg_schema]
mod pgstrom {
    use super::*;

    /// Write a gstore_fdw table's rows into a new base file and start a
    /// new redo log; the number of row versions kept.
    #[pg_extern(volatile, parallel_unsafe)]
    fn gstore_fdw_checkpoint_oid(rel: pg_sys::Oid) -> i64 {
        checkpoint::checkpoint(rel)
    }

    /// The state of a gstore_fdw table as this process replayed it.
    #[pg_extern(volatile, parallel_safe)]
    fn gstore_fdw_info_oid(
        rel: pg_sys::Oid,
    ) -> TableIterator<
        'static,
        (
            name!(base_file, String),
            name!(redo_log_file, String),
            name!(generation, i64),
            name!(row_versions, i64),
            name!(redo_log_bytes, i64),
            name!(gpu_device_id, i32),
            name!(max_num_rows, i64),
        ),
    > {
        let row = checkpoint::info(rel);
        TableIterator::new(vec![row])
    }
}

extension_sql!(
    r#"
CREATE FUNCTION pgstrom.gstore_fdw_handler() RETURNS fdw_handler
  AS 'MODULE_PATHNAME', 'gstore_fdw_handler' LANGUAGE C STRICT;
CREATE FUNCTION pgstrom.gstore_fdw_validator(text[], oid) RETURNS void
  AS 'MODULE_PATHNAME', 'gstore_fdw_validator' LANGUAGE C STRICT;
CREATE FOREIGN DATA WRAPPER gstore_fdw
  HANDLER pgstrom.gstore_fdw_handler VALIDATOR pgstrom.gstore_fdw_validator;
CREATE SERVER gstore_fdw FOREIGN DATA WRAPPER gstore_fdw;
COMMENT ON FOREIGN DATA WRAPPER gstore_fdw IS 'tables in pg_strom''s store, with a redo log (pg_strom)';

CREATE FUNCTION pgstrom.gstore_fdw_checkpoint(rel regclass) RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE
AS $$ SELECT pgstrom.gstore_fdw_checkpoint_oid(rel) $$;
COMMENT ON FUNCTION pgstrom.gstore_fdw_checkpoint(regclass) IS
  'write a gstore_fdw table''s live rows into a new base file and start a new redo log';

CREATE FUNCTION pgstrom.gstore_fdw_info(rel regclass)
RETURNS TABLE (base_file text, redo_log_file text, generation bigint, row_versions bigint,
               redo_log_bytes bigint, gpu_device_id int, max_num_rows bigint)
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$ SELECT * FROM pgstrom.gstore_fdw_info_oid(rel) $$;
COMMENT ON FUNCTION pgstrom.gstore_fdw_info(regclass) IS
  'files, generation and size of a gstore_fdw table';
"#,
    name = "gstore_fdw",
    requires = [pgstrom::gstore_fdw_checkpoint_oid, pgstrom::gstore_fdw_info_oid]
);
