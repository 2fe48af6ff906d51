//! Arrow IPC files as pg_strom reads and appends them, shared by the
//! extension's Arrow_Fdw and the `pg2arrow` command.  No PostgreSQL here.
//!
//! - [`file`]: opening a file (footer, batch headers checked against the
//!   file, per-batch statistics) and decoding only referenced columns.
//! - [`append`]: record batches appended in place of the footer, the undo
//!   record that puts the old end back, and the write lock.
//! - [`float2`]: the `float2` type's text and order.
//! - [`glob`]: file-name patterns of the `pattern` option.
//! - [`message`]: message text as PostgreSQL writes it (no Rust I/O error
//!   suffixes).
//! - [`sample`]: the rows ANALYZE samples.
//! - [`pgtype`], [`column`]: PostgreSQL types as Arrow fields, and values
//!   in PostgreSQL's binary send format appended to Arrow arrays (pg2arrow
//!   and Arrow_Fdw's INSERT).

pub mod append;
pub mod column;
pub mod file;
pub mod float2;
pub mod glob;
pub mod message;
pub mod pgtype;
pub mod sample;
