//! The storage paths of GPUDirect SQL (fileread.rs) on a GPU: every range
//! (aligned or not, a few bytes or several pieces, several threads) arrives
//! intact by pinned buffers and by cuFile (when cuFile takes the file;
//! the GPU check lets it with CUFILE_EXPERIMENTAL_FS=1), each counted for
//! its path, and a file truncated after it was opened is an error, never
//! stale or missing bytes.  Without a GPU (PGSTROM_EXPECT_GPU unset) there
//! is nothing to read into: the test says so and passes.

mod common;

use std::ffi::c_void;
use std::io::Write;

use pgstrom_runtime::cuda::{self, CuContext, CuDevicePtr};
use pgstrom_runtime::fileread::{self, Direct, FileAccess, Policy, ReadStats, SourceFile};

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ (i >> 20) as u8).collect()
}

#[test]
fn ranges_arrive_intact_by_every_path() {
    if !common::expect_gpu() {
        eprintln!("no GPU expected: the storage paths are tested by the GPU check");
        return;
    }
    let drv = cuda::driver().unwrap();
    let mut ctx: CuContext = std::ptr::null_mut();
    let mut dev = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        drv.check("cuDeviceGet", (drv.cuDeviceGet)(&mut dev, 0)).unwrap();
        drv.check("cuDevicePrimaryCtxRetain", (drv.cuDevicePrimaryCtxRetain)(&mut ctx, dev)).unwrap();
        drv.check("cuCtxSetCurrent", (drv.cuCtxSetCurrent)(ctx)).unwrap();
    }
    let size = (40 << 20) + 12_345;
    let bytes = pattern(size);
    let dir = std::env::var("PGSTROM_FILEREAD_DIR").map(std::path::PathBuf::from).unwrap_or(std::env::temp_dir());
    let path = dir.join(format!("pgstrom-fileread-{}", std::process::id()));
    std::fs::File::create(&path).unwrap().write_all(&bytes).unwrap();

    let mut dst: CuDevicePtr = 0;
    // SAFETY: valid out-pointer.
    drv.check("cuMemAlloc", unsafe { (drv.cuMemAlloc)(&mut dst, size) }).unwrap();
    let ranges: [(u64, u64); 5] = [
        (0, size as u64),                 // whole: several threads, many pieces
        (3, 1_000_001),                   // unaligned start and length
        ((8 << 20) - 5, (16 << 20) + 10), // across piece boundaries
        (size as u64 - 7, 7),             // the last bytes
        (4096, 1),                        // one byte
    ];
    for policy in [Policy { direct: Direct::Off, threshold: 0 }, Policy { direct: Direct::On, threshold: 0 }] {
        let src = SourceFile::new(std::fs::File::open(&path).unwrap(), &policy);
        let by_cufile = matches!(src.access(), FileAccess::CuFile(_));
        eprintln!("{policy:?}: {:?}", src.access());
        for &(offset, len) in &ranges {
            let mut st = ReadStats::default();
            // SAFETY: within the allocation.
            unsafe { (drv.cuMemsetD8)(dst, 0xee, size) };
            fileread::read_to_device(drv, &src, &policy, dst, offset, len, &mut st).unwrap();
            let mut back = vec![0u8; len as usize];
            // SAFETY: back holds len bytes; dst at least len.
            drv.check("cuMemcpyDtoH", unsafe {
                (drv.cuMemcpyDtoH)(back.as_mut_ptr() as *mut c_void, dst, len as usize)
            })
            .unwrap();
            assert!(
                back == bytes[offset as usize..(offset + len) as usize],
                "{policy:?}: bytes {offset}+{len} differ from the file"
            );
            let want = if by_cufile {
                ReadStats { cufile_bytes: len, ..Default::default() }
            } else {
                ReadStats { pinned_bytes: len, ..Default::default() }
            };
            assert_eq!(st, want, "{policy:?}: {offset}+{len} counted for its path");
        }
        // a threshold above the range sends it through pinned buffers
        let high = Policy { threshold: 2 << 20, ..policy };
        let mut st = ReadStats::default();
        fileread::read_to_device(drv, &src, &high, dst, 0, 1 << 20, &mut st).unwrap();
        assert_eq!(st.pinned_bytes, 1 << 20, "{high:?}");

        // the file shrinks under the open descriptor: reading past the new
        // end is an error naming the offset, by either path
        let cut = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        cut.set_len(20 << 20).unwrap();
        let err = fileread::read_to_device(drv, &src, &policy, dst, 16 << 20, 8 << 20, &mut ReadStats::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("offset"), "{policy:?}: {err}");
        std::fs::File::create(&path).unwrap().write_all(&bytes).unwrap();
    }
    // SAFETY: from cuMemAlloc.
    unsafe { (drv.cuMemFree)(dst) };
    let _ = std::fs::remove_file(&path);
}
