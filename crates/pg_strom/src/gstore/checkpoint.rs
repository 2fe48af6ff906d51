//! Checkpoints of a gstore_fdw table: the rows any snapshot may still
//! need written into a new base file, then a new, empty redo log of the
//! same generation.
//!
//! Under ACCESS EXCLUSIVE (row ids change: a query reading the table must
//! not see the store replaced under it, so the checkpoint waits for
//! running queries and new ones wait for it) and the log's lock: rows whose inserting transaction aborted, and rows deleted by a
//! transaction that committed before every running snapshot began (the
//! relation's removal horizon, as VACUUM's), are dropped; rows inserted by
//! such a transaction are frozen (their transaction id is never looked up
//! again, so the commit log may be truncated past it); aborted deletions
//! are forgotten; everything else is kept as it was, so a transaction
//! whose snapshot is older reads the same rows from the new files.
//!
//! Each file is replaced atomically (written beside, synced, renamed).  A
//! crash between the two leaves a base file of generation N+1 and a log of
//! generation N, which readers take as folded into the base.

use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgstrom_runtime::store::{self, Record};

use super::modify::LogLock;
use super::state::{self, FROZEN_XID};
use crate::errors::raise_plain;

/// A transaction's state now (not as a snapshot sees it).
#[derive(PartialEq, Eq, Clone, Copy)]
enum Now {
    /// Committed before the removal horizon.
    Old,
    Committed,
    Running,
    Aborted,
}

unsafe fn open_checked(relid: pg_sys::Oid, lockmode: u32, owner: bool) -> pg_sys::Relation {
    // SAFETY: opening checks the relation exists.
    unsafe {
        let rel = pg_sys::relation_open(relid, lockmode as i32);
        let name = || CStr::from_ptr(pg_sys::get_rel_name(relid)).to_string_lossy().into_owned();
        if !super::is_store_table(relid) {
            raise_plain(
                PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a gstore_fdw foreign table", name()),
                Some("pgstrom.gstore_fdw_checkpoint() also takes a heap table with a GPU cache.".into()),
                None,
            );
        }
        if let Some(e) = super::cache::lookup(relid).filter(|_| super::cache::is_heap_table(relid))
            && let Some(why) = super::cache::stale(rel, &e)
        {
            raise_plain(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("the GPU cache of \"{}\" is stale: {why}", name()),
                None,
                Some("pgstrom.gpu_cache_disable() and pgstrom.gpu_cache_enable() build it again."),
            );
        }
        if owner {
            super::require_owner(relid);
        }
        if !owner
            && pg_sys::pg_class_aclcheck(relid, pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
                != pg_sys::AclResult::ACLCHECK_OK
        {
            raise_plain(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!("permission denied for table {}", name()),
                None,
                None,
            );
        }
        rel
    }
}

/// `pgstrom.gstore_fdw_checkpoint(regclass)`: the row versions kept.
pub fn checkpoint(relid: pg_sys::Oid) -> i64 {
    // SAFETY: the relation opened and locked here.
    unsafe {
        let lockmode = pg_sys::AccessExclusiveLock;
        let rel = open_checked(relid, lockmode, true);
        let layout = state::layout_of((*rel).rd_att);
        let horizon = pg_sys::GetOldestNonRemovableTransactionId(rel);
        let next_full = pg_sys::ReadNextFullTransactionId().value;
        let kept = state::with_store(rel, |st| {
            let lock = LogLock::acquire(st, &layout);
            let mut now = std::collections::HashMap::<u64, Now>::new();
            let mut status = |full: u64| -> Now {
                if full == FROZEN_XID {
                    return Now::Old;
                }
                *now.entry(full).or_insert_with(|| {
                    if next_full.saturating_sub(full) >= 1 << 31 {
                        // never left unfrozen this long by checkpoints
                        state::file_error(
                            &st.log_path,
                            "redo log",
                            format!("transaction {full} is too old to look up"),
                        );
                    }
                    let xid = pg_sys::TransactionId::from(full as u32);
                    if pg_sys::TransactionIdIsCurrentTransactionId(xid) || pg_sys::TransactionIdIsInProgress(xid) {
                        Now::Running
                    } else if pg_sys::TransactionIdDidCommit(xid) {
                        if pg_sys::TransactionIdPrecedes(xid, horizon) { Now::Old } else { Now::Committed }
                    } else {
                        Now::Aborted
                    }
                })
            };
            // rows a committed TRUNCATE hides from everyone
            let mut truncated_below = 0u64;
            for &(before, xid, _) in &st.truncates {
                match status(xid) {
                    Now::Old | Now::Committed => truncated_below = truncated_below.max(before),
                    Now::Running => raise_plain(
                        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                        "cannot checkpoint a gstore_fdw table truncated by a transaction in progress".into(),
                        None,
                        Some("Checkpoint after the transaction that truncated it ends."),
                    ),
                    Now::Aborted => {}
                }
            }
            let mut body = Vec::new();
            Record::Layout { types: layout.clone() }.encode(&mut body);
            let mut deletes = Vec::new();
            let mut kept = 0u64;
            for (id, row) in st.rows.iter().enumerate() {
                if (id as u64) < truncated_below {
                    continue;
                }
                let xmin = status(row.xmin);
                if xmin == Now::Aborted {
                    continue;
                }
                let mut live = Vec::new();
                let mut gone = false;
                for &(xid, cid, updated) in &row.deleters {
                    match status(xid) {
                        Now::Old => gone = true,
                        Now::Aborted => {}
                        Now::Committed | Now::Running => live.push((xid, cid, updated)),
                    }
                }
                if gone {
                    continue;
                }
                let (xid, cid) = if xmin == Now::Old { (FROZEN_XID, 0) } else { (row.xmin, row.cmin) };
                Record::Insert { xid, cid, tuple: row.tuple.to_vec() }.encode(&mut body);
                for (xid, cid, updated) in live {
                    deletes.push(Record::Delete { xid, cid, row: kept, updated });
                }
                kept += 1;
            }
            for d in deletes {
                d.encode(&mut body);
            }
            let generation = st.generation + 1;
            store::write_file_atomic(&st.base_path, store::BASE_MAGIC, generation, state::system_id(), &body)
                .unwrap_or_else(|e| {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_IO_ERROR,
                        format!("could not write gstore_fdw base file \"{}\": {e}", st.base_path.display()),
                        None,
                        None,
                    )
                });
            let mut log = Vec::new();
            Record::Layout { types: layout.clone() }.encode(&mut log);
            store::write_file_atomic(&st.log_path, store::LOG_MAGIC, generation, state::system_id(), &log)
                .unwrap_or_else(|e| {
                    raise_plain(
                        PgSqlErrorCode::ERRCODE_IO_ERROR,
                        format!("could not write gstore_fdw redo log \"{}\": {e}", st.log_path.display()),
                        None,
                        None,
                    )
                });
            drop(lock);
            st.refresh();
            kept
        });
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        kept as i64
    }
}

/// `pgstrom.gstore_fdw_info(regclass)`.
pub fn info(relid: pg_sys::Oid) -> (String, String, i64, i64, i64, i32, i64) {
    // SAFETY: the relation opened and locked here.
    unsafe {
        let lockmode = pg_sys::AccessShareLock;
        let rel = open_checked(relid, lockmode, false);
        let opts = super::options::of_table(relid);
        let (generation, versions, log_pos) =
            state::with_store(rel, |st| (st.generation as i64, st.rows.len() as i64, st.log_pos as i64));
        pg_sys::relation_close(rel, lockmode as i32);
        (opts.base_file, opts.redo_log_file, generation, versions, log_pos, opts.gpu_device_id, opts.max_num_rows)
    }
}
