//! A stack trace in the server log when a process of the server crashes,
//! for reporting a crash: with `PGSTROM_CRASH_BACKTRACE=1` in the
//! environment the server starts with, `_PG_init` (in the postmaster,
//! whose children inherit it) installs a handler of SIGSEGV, SIGBUS,
//! SIGILL, SIGFPE and SIGABRT on an alternate signal stack (a stack
//! overflow is reported too).  The handler writes the signal, the process
//! id, where `pg_strom.so` is loaded and the return addresses of the stack
//! (glibc's `backtrace_symbols_fd`: the object and offset of each) to
//! standard error, which is the server log, then lets the signal do what
//! it does by default: PostgreSQL sees the same crash and restarts as it
//! would.  An offset in `pg_strom.so` is turned into a function and line
//! with `addr2line -f -C -e pg_strom.so 0xOFFSET` on a build of the same
//! sources.  Off unless asked for: nothing is installed otherwise.

use pgstrom_runtime::signal_safe::{dec, hex};
use std::ffi::{c_int, c_void};

unsafe extern "C" {
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
    fn backtrace_symbols_fd(buffer: *const *mut c_void, size: c_int, fd: c_int);
}

/// The signals reported.
const SIGNALS: [c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT];

/// Bytes of the alternate signal stack.
const ALT_STACK: usize = 256 * 1024;

/// Install the handler when the environment asks for it.
pub fn init() {
    if std::env::var_os("PGSTROM_CRASH_BACKTRACE").is_none_or(|v| v.is_empty() || v == "0") {
        return;
    }
    // glibc loads libgcc's unwinder on the first backtrace(): done now,
    // not inside the handler
    let mut warm = [std::ptr::null_mut::<c_void>(); 4];
    // SAFETY: a buffer of 4 entries.
    unsafe { backtrace(warm.as_mut_ptr(), warm.len() as c_int) };
    // SAFETY: a leaked stack for the process's life (and its children's:
    // fork copies it and keeps the setting); the sigaction structure is
    // zeroed then filled.
    unsafe {
        let stack = Box::leak(vec![0u8; ALT_STACK].into_boxed_slice());
        let ss = libc::stack_t { ss_sp: stack.as_mut_ptr().cast(), ss_flags: 0, ss_size: ALT_STACK };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_ONSTACK | libc::SA_RESETHAND | libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        for s in SIGNALS {
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
    }
}

/// Write `bytes` to standard error (async-signal-safe).
fn say(bytes: &[u8]) {
    // SAFETY: a valid buffer; write(2) is async-signal-safe.
    unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
}

extern "C" fn handler(sig: c_int, info: *mut libc::siginfo_t, _ctx: *mut c_void) {
    let mut d = [0u8; 20];
    let mut h = [0u8; 18];
    say(b"pg_strom: crash report: signal ");
    say(dec(sig as usize, &mut d));
    say(b" in process ");
    // SAFETY: getpid is async-signal-safe.
    say(dec(unsafe { libc::getpid() } as usize, &mut d));
    if !info.is_null() && matches!(sig, libc::SIGSEGV | libc::SIGBUS) {
        say(b", address ");
        // SAFETY: the kernel's siginfo for a fault.
        say(hex(unsafe { (*info).si_addr() } as usize, &mut h));
    }
    // where pg_strom.so lies: offsets in it are base-relative
    // SAFETY: Dl_info is plain pointers, valid when zeroed.
    let mut dl: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the loader's tables (not strictly
    // async-signal-safe, but the process is going down anyway).
    if unsafe { libc::dladdr(handler as *const c_void, &mut dl) } != 0 {
        say(b", pg_strom.so at ");
        say(hex(dl.dli_fbase as usize, &mut h));
    }
    say(b"; stack:\n");
    let mut frames = [std::ptr::null_mut::<c_void>(); 64];
    // SAFETY: a buffer of 64 entries; the unwinder was loaded at init.
    unsafe {
        let n = backtrace(frames.as_mut_ptr(), frames.len() as c_int);
        backtrace_symbols_fd(frames.as_ptr(), n, 2);
    }
    say(b"pg_strom: crash report ends\n");
    // SA_RESETHAND restored the default action: raise it again
    // SAFETY: raise is async-signal-safe.
    unsafe { libc::raise(sig) };
}
