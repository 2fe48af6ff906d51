//! IMPORT FOREIGN SCHEMA for arrow_fdw.
//!
//! `IMPORT FOREIGN SCHEMA name FROM SERVER arrow_fdw INTO schema OPTIONS
//! (file '/path/t.arrow')` makes one foreign table named after the remote
//! schema name, with the file's columns (types from [`super::types`]) and
//! the statement's options as its table options.  Several files (`files`,
//! `dir`) must share one schema.  LIMIT TO / EXCEPT name that table.

use std::ffi::{CStr, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::file::ArrowFile;
use super::{options, types};
use crate::errors::raise_plain;
use crate::pg::list::from_list;

fn quote_ident(s: &str) -> String {
    let c = CString::new(s).unwrap_or_default();
    // SAFETY: quote_identifier returns its argument or a palloc'd copy.
    unsafe { CStr::from_ptr(pg_sys::quote_identifier(c.as_ptr())).to_string_lossy().into_owned() }
}

fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[pg_guard]
pub unsafe extern "C-unwind" fn import_schema(
    stmt: *mut pg_sys::ImportForeignSchemaStmt,
    server_oid: pg_sys::Oid,
) -> *mut pg_sys::List {
    // SAFETY: the statement PostgreSQL hands us, alive for the call.
    let stmt = unsafe { &*stmt };
    // SAFETY: NUL-terminated names of the statement (and of a RangeVar).
    let text = |p: *const std::ffi::c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    let table = text(stmt.remote_schema);
    // LIMIT TO / EXCEPT over the one table
    // SAFETY: the statement's list of RangeVars.
    let listed = unsafe { from_list(stmt.table_list) }
        .into_iter()
        // SAFETY: an element of table_list is a RangeVar.
        .any(|n| text(unsafe { (*(n as *mut pg_sys::RangeVar)).relname }) == table);
    match stmt.list_type {
        pg_sys::ImportForeignSchemaType::FDW_IMPORT_SCHEMA_LIMIT_TO if !listed => return std::ptr::null_mut(),
        pg_sys::ImportForeignSchemaType::FDW_IMPORT_SCHEMA_EXCEPT if listed => return std::ptr::null_mut(),
        _ => {}
    }
    // SAFETY: the statement's option list of DefElems.
    let opts = unsafe { options::defelems(stmt.options) };
    let parsed = options::parse(&opts, pg_sys::ForeignTableRelationId, true);
    // as a scan reads them: through the saved footer while an append
    // (of a writer that may have been killed) is not committed
    let files: Vec<ArrowFile> = parsed.files.iter().filter_map(|p| super::modify::open_for_read(p, false)).collect();
    let Some(first) = files.first() else {
        raise_plain(
            PgSqlErrorCode::ERRCODE_FDW_SCHEMA_NOT_FOUND,
            "no arrow file to import".into(),
            None,
            Some("The dir option names an empty directory, or its filter matches no file."),
        )
    };
    let mut columns = Vec::new();
    for field in first.schema.fields() {
        let (oid, typmod) = types::pg_type(field).unwrap_or_else(|e| {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FDW_INVALID_DATA_TYPE,
                format!("column \"{}\" of arrow file \"{}\" cannot be imported", field.name(), first.path),
                Some(e),
                None,
            )
        });
        // SAFETY: a type the catalog has (pg_type found it); the name is
        // palloc'd.
        let t = text(unsafe { pg_sys::format_type_with_typemod(oid, typmod) });
        columns.push(format!("{} {t}", quote_ident(field.name())));
    }
    for f in &files[1..] {
        let same = f.schema.fields().len() == first.schema.fields().len()
            && f.schema
                .fields()
                .iter()
                .zip(first.schema.fields())
                .all(|(a, b)| types::pg_type(a).ok() == types::pg_type(b).ok());
        if !same {
            raise_plain(
                PgSqlErrorCode::ERRCODE_FDW_INVALID_DATA_TYPE,
                format!("arrow file \"{}\" has another schema than \"{}\"", f.path, first.path),
                None,
                Some("Every file of one foreign table must have the same columns."),
            );
        }
    }
    // SAFETY: the server the statement names (PostgreSQL looked it up).
    let server = text(unsafe { (*pg_sys::GetForeignServer(server_oid)).servername });
    let local = text(stmt.local_schema);
    let optlist = opts.iter().map(|(n, v)| format!("{} {}", quote_ident(n), quote_literal(v))).collect::<Vec<_>>();
    let sql = format!(
        "CREATE FOREIGN TABLE {}.{} ({}) SERVER {} OPTIONS ({})",
        quote_ident(&local),
        quote_ident(&table),
        columns.join(", "),
        quote_ident(&server),
        optlist.join(", ")
    );
    let c = CString::new(sql).expect("no NUL in identifiers");
    // SAFETY: a one-item List of a palloc'd copy, in the current context.
    unsafe { pg_sys::lappend(std::ptr::null_mut(), pg_sys::pstrdup(c.as_ptr()).cast()) }
}
