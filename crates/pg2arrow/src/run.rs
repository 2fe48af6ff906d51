//! A run's signals and exit status: SIGINT, SIGTERM, SIGHUP and SIGQUIT
//! put the file back (the output's undo) and exit with 128 + N; an error
//! puts it back and exits with 1; `--dump` and `--recover` need no
//! server.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::output;

/// The signals that end a run after the file is put back.
const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Block the signals in every thread and serve them in one: it takes the
/// output (waiting for a batch being written), undoes it, and exits.
/// Call before any other thread starts.
pub fn handle_signals() {
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
                "{}: interrupted ({name}){}",
                crate::program(),
                if what.is_empty() { String::new() } else { format!("; {what}") }
            );
            libc::_exit(128 + sig);
        });
    }
}

/// Every record batch's buffers are allocated anew (the builders hand
/// theirs to the batch), megabytes at a time: by default glibc maps each
/// from the kernel and unmaps it when freed, and the next batch faults
/// every page in again (half the run's time for a fast source).  Freed
/// memory is kept for reuse instead.
fn keep_freed_memory() {
    // SAFETY: mallopt only tunes the allocator; called before other threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

/// A bad command line: the message, the hint, exit status 2.
pub fn bad_options(e: &str) -> ExitCode {
    let p = crate::program();
    eprintln!("{p}: {e}\nTry \"{p} --help\" for more information.");
    ExitCode::from(2)
}

/// What needs no server, when asked for: `--help` (printing `usage`),
/// `--version`, `--dump=FILE`, `--recover=FILE`.
pub fn without_server(c: &crate::cli::Common, usage: &str) -> Option<ExitCode> {
    let p = crate::program();
    if c.help {
        print!("{usage}");
        return Some(ExitCode::SUCCESS);
    }
    if c.version {
        println!("{p} (pg_strom) {}", env!("CARGO_PKG_VERSION"));
        return Some(ExitCode::SUCCESS);
    }
    if let Some(f) = &c.dump {
        return Some(match crate::dump::dump(&f.to_string_lossy()) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{p}: {}", pgstrom_arrow::message::os_plain(&e.to_string()));
                ExitCode::from(1)
            }
        });
    }
    let f = c.recover.as_deref()?;
    Some(match output::recover(f) {
        Ok(msg) => {
            println!("{p}: {msg}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{p}: {}", pgstrom_arrow::message::os_plain(&e.to_string()));
            ExitCode::from(1)
        }
    })
}

/// Run the dump `job` (signals handled, a panic an error); on success
/// print the file's name when `print_path` (it was a temporary name), on
/// failure put the file back and say why.
pub fn dump_job(print_path: bool, job: impl FnOnce() -> Result<PathBuf, String>) -> ExitCode {
    keep_freed_memory();
    handle_signals();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).unwrap_or_else(|p| {
        let why = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(format!("internal error: {}", why.unwrap_or_default()))
    });
    match result {
        Ok(path) => {
            if print_path {
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
            let p = crate::program();
            eprintln!("{p}: {}", pgstrom_arrow::message::os_plain(&e.to_string()));
            if !what.is_empty() {
                eprintln!("{p}: {what}");
            }
            ExitCode::from(1)
        }
    }
}
