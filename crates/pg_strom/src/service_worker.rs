//! The GPU service's keeper: a background worker that forks the service
//! process, waits for it, and starts it again when it dies.
//!
//! The service is a child of this worker, not of the postmaster, so its
//! death (a segfault in CUDA code, SIGKILL, an out-of-memory kill) is
//! never seen by the postmaster and never takes the cluster through crash
//! recovery: backends using it get an ERROR, and the next query connects
//! to the new service.  The worker has no shared-memory access (so the
//! forked service holds none of the server's shared memory either), and
//! the service dies with it (PR_SET_PDEATHSIG).  The service itself is
//! `pgstrom_runtime::service::server`: it never calls PostgreSQL (but
//! for its ps title, set before its threads start).  In ps the keeper is
//! `postgres: pg_strom gpu service keeper`, the service `postgres:
//! pg_strom gpu service`: the service may be killed (the keeper starts
//! it again), the keeper may not (the postmaster treats a background
//! worker's crash as a backend's and restarts the server).
//!
//! Lifecycle: `init()` in `_PG_init` registers the worker (when
//! `pg_strom.gpu_service` is on) -> `pgstrom_service_main` -> fork ->
//! `serve()` in the child; SIGTERM at shutdown stops both, and so does the
//! postmaster's death (the keeper's PR_SET_PDEATHSIG is SIGTERM).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;

use pgstrom_runtime::service::server::{ServiceConfig, serve};

use crate::engine::{SERVICE_SOCKET, device_code_dir};
use crate::guc;

static STOP: AtomicBool = AtomicBool::new(false);
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Called from `_PG_init`.
pub fn init() {
    BackgroundWorkerBuilder::new("pg_strom gpu service keeper")
        .set_type("pg_strom gpu service keeper")
        .set_library("pg_strom")
        .set_function("pgstrom_service_main")
        .set_start_time(BgWorkerStartTime::PostmasterStart)
        .set_restart_time(Some(Duration::from_secs(5)))
        .load();
}

extern "C" fn on_sigterm(_sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

/// Sleep, waking early at SIGTERM.
/// A fixed buffer to format a message in without allocating (a signal
/// handler may have interrupted malloc).
struct StackText {
    buf: [u8; 1024],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// A fault in the keeper or the service it forked: say where (module,
/// symbol, offset) on stderr, which goes to the server log, then die of
/// it as before.
extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    use std::fmt::Write;
    let mut t = StackText { buf: [0; 1024], len: 0 };
    // SAFETY: the kernel's siginfo and ucontext for this signal; dladdr
    // and write are the only calls.
    unsafe {
        let addr = (*info).si_addr() as usize;
        let ip = (*(ctx as *mut libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] as usize;
        let _ = write!(
            t,
            "pg_strom: GPU service process {} got signal {sig} at address {addr:#x}, ip {ip:#x}",
            libc::getpid()
        );
        let mut dl: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(ip as *const libc::c_void, &mut dl) != 0 && !dl.dli_fname.is_null() {
            let file = std::ffi::CStr::from_ptr(dl.dli_fname).to_bytes();
            let _ = write!(t, " in {} +{:#x}", String::from_utf8_lossy(file), ip - dl.dli_fbase as usize);
            if !dl.dli_sname.is_null() {
                let sym = std::ffi::CStr::from_ptr(dl.dli_sname).to_bytes();
                let _ = write!(t, " ({} +{:#x})", String::from_utf8_lossy(sym), ip.wrapping_sub(dl.dli_saddr as usize));
            }
        }
        let _ = t.write_str("\n");
        libc::write(2, t.buf.as_ptr().cast(), t.len);
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

fn nap(d: Duration) {
    let until = Instant::now() + d;
    while !STOP.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How a child ended, for the log.
fn describe(status: libc::c_int) -> String {
    if libc::WIFSIGNALED(status) {
        format!("was terminated by signal {}", libc::WTERMSIG(status))
    } else {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    }
}

/// The worker's entry point.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pgstrom_service_main(_arg: pg_sys::Datum) {
    let config = ServiceConfig {
        socket: PathBuf::from(SERVICE_SOCKET),
        cache_dir: device_code_dir(),
        nvrtc_library: guc::nvrtc_library(),
        open_gpus: true,
        column_cache: guc::arrow_cache_bytes(),
        memory_budget: guc::gpu_memory_budget_bytes(),
    };
    if let Some(dir) = config.socket.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // cuFile (GPUDirect SQL) writes its log where this says, read when
    // libcufile loads; else into the working directory, the data
    // directory.  Set while this process is single-threaded, before any
    // fork: the service inherits it.
    if std::env::var_os("CUFILE_LOGFILE_PATH").is_none() {
        let _ = std::fs::create_dir_all(&config.cache_dir);
        // SAFETY: no other thread exists in the keeper yet.
        unsafe { std::env::set_var("CUFILE_LOGFILE_PATH", config.cache_dir.join("cufile.log")) };
    }
    // SAFETY: installing a handler that only touches atomics and kill().
    unsafe {
        libc::signal(libc::SIGTERM, on_sigterm as *const () as libc::sighandler_t);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_fault as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        pg_sys::BackgroundWorkerUnblockSignals();
        // the postmaster's death (SIGKILL: no shutdown request) stops the
        // keeper and so the service; left running, they would keep the
        // server from starting again
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        if libc::getppid() != pg_sys::PostmasterPid {
            return;
        }
    }
    let me = std::process::id() as libc::pid_t;
    let mut backoff = Duration::from_secs(1);
    while !STOP.load(Ordering::SeqCst) {
        // SAFETY: this process is single-threaded; the child only runs
        // the service and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            log!("pg_strom: cannot start the GPU service: {}", std::io::Error::last_os_error());
            nap(backoff);
            continue;
        }
        if pid == 0 {
            run_child(&config, me);
        }
        CHILD.store(pid, Ordering::SeqCst);
        log!("pg_strom: GPU service started (pid {pid})");
        let started = Instant::now();
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break;
            }
        }
        CHILD.store(0, Ordering::SeqCst);
        if STOP.load(Ordering::SeqCst) {
            break;
        }
        log!("pg_strom: GPU service (pid {pid}) {}; starting it again", describe(status));
        // a service that dies as it starts (a broken driver) is not
        // restarted in a tight loop
        if started.elapsed() < Duration::from_secs(2) {
            nap(backoff);
            backoff = (backoff * 2).min(Duration::from_secs(30));
        } else {
            backoff = Duration::from_secs(1);
        }
    }
    // exit 0: the postmaster does not restart a worker that stopped itself
}

/// The service process: default signal handling, death with the worker,
/// then the service loop.  Never returns into PostgreSQL code.
fn run_child(config: &ServiceConfig, parent: libc::pid_t) -> ! {
    // SAFETY: plain system calls in the freshly forked, single-threaded child.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
        for sig in [
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGHUP,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGCHLD,
            libc::SIGALRM,
            libc::SIGFPE,
        ] {
            libc::signal(sig, libc::SIG_DFL);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_NAME, c"pg_strom gpu".as_ptr());
        // a title of its own in ps (the keeper's was inherited): the one
        // PostgreSQL function the service calls, while it is still
        // single-threaded; it only rewrites this process's argv area
        pg_sys::init_ps_display(c"pg_strom gpu service".as_ptr());
    }
    let code = match std::panic::catch_unwind(|| serve(config)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            eprintln!("pg_strom service: {e}");
            1
        }
        Err(_) => 2,
    };
    // SAFETY: leaving without running PostgreSQL's exit callbacks.
    unsafe { libc::_exit(code) }
}
