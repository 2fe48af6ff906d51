//! What pg2arrow and mysql2arrow share: everything but talking to the
//! database server.  The command line's scanner and common options
//! ([`cli`]), the record batches being filled and the progress display
//! ([`batch`]), the file written, new or appended, and its undo
//! ([`output`]), per-batch min/max statistics ([`stats`]), `--dump`
//! ([`dump`]), and the run's signals and exit status ([`run`]).
//! Values go into Arrow arrays through `pgstrom_arrow::column`, the
//! builders Arrow_Fdw's INSERT uses too.
//!
//! Exit status of both tools: 0 done, 1 error (the file untouched or
//! restored), 2 bad options, 128 + N killed by signal N (the file
//! restored first).

pub mod batch;
pub mod cli;
pub mod dump;
pub mod output;
pub mod run;
pub mod stats;

use std::sync::OnceLock;

static PROGRAM: OnceLock<&'static str> = OnceLock::new();

/// Name the running tool (in its messages, temporary file names and the
/// recovery hint); the first call wins.
pub fn set_program(name: &'static str) {
    let _ = PROGRAM.set(name);
}

/// The running tool's name (`pg2arrow` unless [`set_program`] said otherwise).
pub fn program() -> &'static str {
    PROGRAM.get().copied().unwrap_or("pg2arrow")
}
