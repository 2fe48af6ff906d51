//! mysql2arrow: dump the result of a MySQL or MariaDB query into an
//! Apache Arrow file that Arrow_Fdw (and pyarrow, DuckDB, ...) read;
//! docs/mysql2arrow.md.
//!
//! - [`options`]: the command line (the original mysql2arrow's options).
//! - [`connect`]: option files, environment, password prompt (the `mysql`
//!   crate's client protocol).
//! - [`types`]: result columns as Arrow fields, values as the builders'.
//! - [`job`]: `--set`, the query, the rows into record batches.
//!
//! The rest (record batches and progress, statistics, the file written
//! and its undo, `--dump`, `--recover`, signals, exit status) is
//! pg2arrow's library, shared with pg2arrow.

mod connect;
mod job;
mod options;
mod types;

use std::process::ExitCode;

use pg2arrow::run;

fn main() -> ExitCode {
    pg2arrow::set_program("mysql2arrow");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match options::parse(&args) {
        Ok(o) => o,
        Err(e) => return run::bad_options(&e),
    };
    if let Some(code) = run::without_server(&o.common, options::USAGE) {
        return code;
    }
    run::dump_job(o.common.target.is_none(), || {
        let mut conn = connect::connect(&o)?;
        job::run(&o, &mut conn)
    })
}
