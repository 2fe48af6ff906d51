//! pgstrom-iobench: how fast does a file reach GPU memory by each storage
//! path of GPUDirect SQL?  Reads one multi-GB file into device memory by
//! cuFile (peer-to-peer or compatibility mode), by pinned-buffer reads
//! (the fallback, with 1..8 threads, buffered and O_DIRECT), and by plain
//! reads into pageable memory + copy, cold (the file's pages dropped from
//! the page cache before each run) and warm; prints GB/s for each, checks
//! the bytes that arrived, and names the fastest cold path last.
//!
//! usage: pgstrom-iobench FILE [SIZE_MB] [--repeat N]
//! (FILE is created with SIZE_MB MB of data when it does not exist; 8192
//! by default).  bench/gpudirect.sh runs it beside dd's O_DIRECT figure.

use std::ffi::c_void;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

use pgstrom_runtime::cuda::{self, CuContext, CuDevicePtr, Driver};
use pgstrom_runtime::cufile;
use pgstrom_runtime::fileread::{self, Direct, Policy, ReadStats, SourceFile};

/// Bytes per pageable copy.
const PAGEABLE_PIECE: usize = 64 << 20;

fn fail(msg: String) -> ! {
    eprintln!("pgstrom-iobench: {msg}");
    std::process::exit(1)
}

/// The byte at `pos` of the generated file (a pattern that catches
/// misplaced pieces: it depends on the 8-byte word's position).
fn pattern_word(word: u64) -> u64 {
    word.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (word >> 7)
}

fn create(path: &str, bytes: u64) {
    let mut f = File::create(path).unwrap_or_else(|e| fail(format!("cannot create {path}: {e}")));
    let piece = 64u64 << 20;
    let mut buf = vec![0u8; piece as usize];
    let mut at = 0u64;
    while at < bytes {
        let n = (bytes - at).min(piece) as usize;
        for (i, w) in buf[..n].chunks_exact_mut(8).enumerate() {
            w.copy_from_slice(&pattern_word(at / 8 + i as u64).to_le_bytes());
        }
        f.write_all(&buf[..n]).unwrap_or_else(|e| fail(format!("cannot write {path}: {e}")));
        at += n as u64;
    }
    f.sync_all().unwrap_or_else(|e| fail(format!("cannot sync {path}: {e}")));
}

/// Drop the file's pages from the page cache (clean pages only: the file
/// was synced after writing).
fn drop_cache(f: &File) {
    // SAFETY: plain syscall on an open descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        fail(format!("posix_fadvise(DONTNEED) failed: {}", std::io::Error::from_raw_os_error(rc)));
    }
}

/// Read the whole file into the page cache.
fn warm_up(f: &File, len: u64) {
    let mut buf = vec![0u8; 64 << 20];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(buf.len() as u64) as usize;
        f.read_exact_at(&mut buf[..n], at).unwrap_or_else(|e| fail(format!("warm-up read: {e}")));
        at += n as u64;
    }
}

/// Compare 64 pieces of 4 kB of device memory with the file.
fn verify(drv: &Driver, f: &File, dst: CuDevicePtr, len: u64, method: &str) {
    let mut dev = vec![0u8; 4096];
    let mut file = vec![0u8; 4096];
    for k in 0..64u64 {
        let at = ((len - 4096) / 63 * k) & !7;
        // SAFETY: dst holds len bytes.
        let rc = unsafe { (drv.cuMemcpyDtoH)(dev.as_mut_ptr() as *mut c_void, dst + at, 4096) };
        drv.check("cuMemcpyDtoH", rc).unwrap_or_else(|e| fail(format!("{method}: {e}")));
        f.read_exact_at(&mut file, at).unwrap_or_else(|e| fail(format!("verify read: {e}")));
        if dev != file {
            fail(format!("{method}: the 4 kB at offset {at} differ from the file"));
        }
    }
}

fn pageable(drv: &Driver, f: &File, dst: CuDevicePtr, len: u64) -> Result<(), String> {
    let mut buf = vec![0u8; PAGEABLE_PIECE];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(PAGEABLE_PIECE as u64) as usize;
        f.read_exact_at(&mut buf[..n], at).map_err(|e| e.to_string())?;
        // SAFETY: dst holds len bytes; a synchronous copy from pageable memory.
        let rc = unsafe { (drv.cuMemcpyHtoD)(dst + at, buf.as_ptr() as *const c_void, n) };
        drv.check("cuMemcpyHtoD", rc).map_err(|e| e.to_string())?;
        at += n as u64;
    }
    Ok(())
}

fn cufile_threads(
    drv: &'static Driver,
    src: &SourceFile,
    dst: CuDevicePtr,
    len: u64,
    threads: u64,
) -> Result<(), String> {
    let policy = Policy { direct: Direct::On, threshold: 0 };
    let piece = len.div_ceil(threads).next_multiple_of(1 << 20);
    let mut ctx: CuContext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { (drv.cuCtxGetCurrent)(&mut ctx) };
    let ctx = ctx as usize;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> Result<(), String> {
                    // SAFETY: the main thread's context.
                    unsafe { (drv.cuCtxSetCurrent)(ctx as CuContext) };
                    let at = t * piece;
                    if at >= len {
                        return Ok(());
                    }
                    let n = (len - at).min(piece);
                    let mut st = ReadStats::default();
                    fileread::read_to_device(drv, src, &policy, dst + at, at, n, &mut st).map_err(|e| e.to_string())?;
                    if st.cufile_bytes != n {
                        return Err("the read did not go through cuFile".into());
                    }
                    Ok(())
                })
            })
            .collect();
        hs.into_iter().try_for_each(|h| h.join().unwrap_or_else(|_| Err("panic".into())))
    })
}

fn main() {
    if std::env::var_os("CUFILE_LOGFILE_PATH").is_none() {
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var("CUFILE_LOGFILE_PATH", "/tmp/pgstrom-iobench-cufile.log") };
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut pos = Vec::new();
    let mut repeat = 1;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--repeat" {
            repeat = it.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| fail("--repeat N".into()));
        } else {
            pos.push(a.clone());
        }
    }
    let Some(path) = pos.first().cloned() else { fail("usage: pgstrom-iobench FILE [SIZE_MB] [--repeat N]".into()) };
    let size_mb: u64 = pos.get(1).map(|s| s.parse().unwrap_or_else(|_| fail(format!("bad size {s}")))).unwrap_or(8192);
    if std::fs::metadata(&path).is_err() {
        let t = Instant::now();
        create(&path, size_mb << 20);
        println!("created {path}: {size_mb} MB in {:.1} s", t.elapsed().as_secs_f64());
    }
    let f = File::open(&path).unwrap_or_else(|e| fail(format!("cannot open {path}: {e}")));
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len < 1 << 20 {
        fail(format!("{path} is shorter than 1 MB"));
    }
    let fdirect = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
        .map_err(|e| println!("no O_DIRECT reads of {path}: {e}"))
        .ok();

    let drv = cuda::driver().unwrap_or_else(|e| fail(format!("CUDA: {e}")));
    let mut dev = 0;
    let mut ctx: CuContext = std::ptr::null_mut();
    let mut name = [0 as std::ffi::c_char; 128];
    // SAFETY: valid out-pointers.
    unsafe {
        drv.check("cuDeviceGet", (drv.cuDeviceGet)(&mut dev, 0)).unwrap_or_else(|e| fail(e.to_string()));
        drv.check("cuDevicePrimaryCtxRetain", (drv.cuDevicePrimaryCtxRetain)(&mut ctx, dev))
            .unwrap_or_else(|e| fail(e.to_string()));
        drv.check("cuCtxSetCurrent", (drv.cuCtxSetCurrent)(ctx)).unwrap_or_else(|e| fail(e.to_string()));
        (drv.cuDeviceGetName)(name.as_mut_ptr(), 128, dev);
    }
    // SAFETY: NUL-terminated by the driver.
    let gpu = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
    let mut dst: CuDevicePtr = 0;
    // SAFETY: valid out-pointer.
    drv.check("cuMemAlloc", unsafe { (drv.cuMemAlloc)(&mut dst, len as usize) })
        .unwrap_or_else(|e| fail(e.to_string()));

    let cf = cufile::cufile();
    match &cf {
        Ok(c) => println!("{}: {}", c.name(), c.mode.describe()),
        Err(e) => println!("cuFile unavailable: {e}"),
    }
    let src = SourceFile::new(f.try_clone().expect("dup"), &Policy { direct: Direct::On, threshold: 0 });
    if let Some(Err(e)) = &src.cufile {
        println!("cuFile refused {path}: {e}");
    }
    println!("GPU0 {gpu}; file {path}: {:.2} GB; {repeat} run(s) per method, best taken", len as f64 / 1e9);
    println!("{:<44} {:>9} {:>8}", "method", "GB/s", "s");

    type Method<'a> = (&'a str, bool, Box<dyn Fn() -> Result<(), String> + 'a>);
    let mut methods: Vec<Method<'_>> = Vec::new();
    if src.handle().is_some() {
        for t in [1u64, 4] {
            let src = &src;
            let label = if t == 1 { "cuFile (1 thread)" } else { "cuFile (4 threads)" };
            methods.push((label, true, Box::new(move || cufile_threads(drv, src, dst, len, t))));
        }
    }
    // (label, cold, file, threads) of the pinned-buffer runs
    let pinned_run = |label: String, cold: bool, file: &'static File, t: usize| -> Method<'static> {
        (
            Box::leak(label.into_boxed_str()),
            cold,
            Box::new(move || fileread::read_pinned(drv, file, dst, 0, len, t).map_err(|e| e.to_string())),
        )
    };
    let f: &'static File = Box::leak(Box::new(f));
    for t in [1usize, 2, 4, 8] {
        methods.push(pinned_run(format!("pinned pread + async copy ({t} thr)"), true, f, t));
    }
    if let Some(fd) = fdirect {
        let fd: &'static File = Box::leak(Box::new(fd));
        for t in [1usize, 4] {
            methods.push(pinned_run(format!("pinned O_DIRECT pread + async copy ({t} thr)"), true, fd, t));
        }
    }
    methods.push(("pageable read + copy", true, Box::new(|| pageable(drv, f, dst, len))));
    if src.handle().is_some() {
        let src = &src;
        methods.push((
            "cuFile (4 threads), warm page cache",
            false,
            Box::new(move || cufile_threads(drv, src, dst, len, 4)),
        ));
    }
    for t in [1usize, 4, 8] {
        methods.push(pinned_run(format!("pinned pread + async copy ({t} thr), warm"), false, f, t));
    }
    methods.push(("pageable read + copy, warm page cache", false, Box::new(|| pageable(drv, f, dst, len))));

    let mut best_cold: Option<(&str, f64)> = None;
    for (label, cold, run) in &methods {
        let mut best = f64::MAX;
        for _ in 0..repeat {
            if *cold {
                drop_cache(f);
            } else {
                warm_up(f, len);
            }
            // SAFETY: dst holds len bytes.
            unsafe { (drv.cuMemsetD8)(dst, 0, len as usize) };
            // SAFETY: the context made current above.
            unsafe { (drv.cuCtxSynchronize)() };
            let t = Instant::now();
            if let Err(e) = run() {
                println!("{label:<44} failed: {e}");
                best = f64::MAX;
                break;
            }
            // SAFETY: plain synchronisation.
            unsafe { (drv.cuCtxSynchronize)() };
            best = best.min(t.elapsed().as_secs_f64());
            verify(drv, f, dst, len, label);
        }
        if best == f64::MAX {
            continue;
        }
        let gbs = len as f64 / best / 1e9;
        println!("{label:<44} {gbs:>9.2} {best:>8.2}");
        if *cold && best_cold.is_none_or(|(_, g)| gbs > g) {
            best_cold = Some((label, gbs));
        }
    }
    if let Some((label, gbs)) = best_cold {
        println!("fastest cold path: {label}, {gbs:.2} GB/s");
    }
}
