//! pg2arrow: dump the result of a PostgreSQL query into an Apache Arrow
//! file that Arrow_Fdw (and pyarrow, DuckDB, ...) read; docs/pg2arrow.md.
//!
//! - [`options`]: the command line.
//! - [`connect`]: connection parameters, password file and prompt
//!   (tokio-postgres on a current-thread runtime).
//! - [`plan`]: result columns as Arrow fields (values go into arrays by
//!   `pgstrom_arrow::column`).
//! - [`job`]: the query, the join sub-query, the rows into record batches.
//!
//! The rest (record batches and progress, statistics, the file written
//! and its undo, `--dump`, signals) is the `pg2arrow` library, which
//! mysql2arrow shares.
//!
//! Exit status: 0 done, 1 error (the file untouched or restored), 2 bad
//! options, 128 + N killed by signal N (the file restored first).

mod connect;
mod job;
mod options;
mod plan;

use std::process::ExitCode;

use pg2arrow::run;

fn main() -> ExitCode {
    pg2arrow::set_program("pg2arrow");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match options::parse(&args) {
        Ok(o) => o,
        Err(e) => return run::bad_options(&e),
    };
    if let Some(code) = run::without_server(&o.common, options::USAGE) {
        return code;
    }
    run::dump_job(o.common.target.is_none(), || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("could not start the client's runtime: {e}"))?;
        rt.block_on(async {
            let mut client = connect::connect(&o).await?;
            job::run(&o, &mut client).await
        })
    })
}
