//! pg2arrow: dump the result of a PostgreSQL query into an Apache Arrow
//! file that Arrow_Fdw (and pyarrow, DuckDB, ...) read; docs/pg2arrow.md.
//!
//! - [`options`]: the command line.
//! - [`connect`]: connection parameters, password file and prompt
//!   (tokio-postgres on a current-thread runtime).
//! - [`plan`]: result columns as Arrow fields (values go into arrays by
//!   `pgstrom_arrow::column`).
//! - [`job`]: the query, the join sub-query, record batches, progress.
//! - [`stats`]: per-batch min/max for `--stat`.
//! - [`output`]: the file written (new or appended) and its undo.
//! - [`dump`]: the `--dump` option.
//!
//! Exit status: 0 done, 1 error (the file untouched or restored), 2 bad
//! options, 128 + N killed by signal N (the file restored first).

mod connect;
mod dump;
mod job;
mod options;
mod output;
mod plan;
mod stats;

use std::process::ExitCode;

/// The signals that end a run after the file is put back.
const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Block the signals in every thread and serve them in one: it takes the
/// output (waiting for a batch being written), undoes it, and exits.
fn handle_signals() {
    // SAFETY: signal masks set before any other thread exists.
    unsafe {
        // past a file size limit, write() fails (and the file is put back)
        // instead of the process being killed
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        std::thread::spawn(move || {
            let mut sig: libc::c_int = 0;
            if libc::sigwait(&set, &mut sig) != 0 {
                return;
            }
            output::SIGNALLED.store(true, std::sync::atomic::Ordering::SeqCst);
            let out = output::CURRENT.lock().unwrap_or_else(|e| e.into_inner()).take();
            let what = out.map(output::Output::abort).unwrap_or_default();
            let name = std::ffi::CStr::from_ptr(libc::strsignal(sig)).to_string_lossy().into_owned();
            eprintln!(
                "pg2arrow: interrupted ({name}){}",
                if what.is_empty() { String::new() } else { format!("; {what}") }
            );
            libc::_exit(128 + sig);
        });
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match options::parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("pg2arrow: {e}\nTry \"pg2arrow --help\" for more information.");
            return ExitCode::from(2);
        }
    };
    if o.help {
        print!("{}", options::USAGE);
        return ExitCode::SUCCESS;
    }
    if o.version {
        println!("pg2arrow (pg_strom) {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if let Some(p) = &o.dump {
        return match dump::dump(&p.to_string_lossy()) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("pg2arrow: {}", pgstrom_arrow::message::os_plain(&e.to_string()));
                ExitCode::from(1)
            }
        };
    }
    if let Some(p) = &o.recover {
        return match output::recover(p) {
            Ok(msg) => {
                println!("pg2arrow: {msg}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("pg2arrow: {}", pgstrom_arrow::message::os_plain(&e.to_string()));
                ExitCode::from(1)
            }
        };
    }
    handle_signals();
    let result = std::panic::catch_unwind(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("could not start the client's runtime: {e}"))?;
        rt.block_on(async {
            let mut client = connect::connect(&o).await?;
            job::run(&o, &mut client).await
        })
    });
    let result = result.unwrap_or_else(|p| {
        let why = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(format!("internal error: {}", why.unwrap_or_default()))
    });
    match result {
        Ok(path) => {
            if o.target.is_none() {
                println!("{}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let out = output::CURRENT.lock().unwrap_or_else(|e| e.into_inner()).take();
            if out.is_none() && output::SIGNALLED.load(std::sync::atomic::Ordering::SeqCst) {
                // the signal's thread puts the file back and exits
                output::taken_by_signal();
            }
            let what = out.map(output::Output::abort).unwrap_or_default();
            eprintln!("pg2arrow: {}", pgstrom_arrow::message::os_plain(&e.to_string()));
            if !what.is_empty() {
                eprintln!("pg2arrow: {what}");
            }
            ExitCode::from(1)
        }
    }
}
