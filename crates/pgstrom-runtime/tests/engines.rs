//! Engine tests: the CPU engine against the Rust reference, NVRTC builds of
//! all device code, and (on a GPU machine) the GPU engine against the CPU
//! engine.  Environment switches, set by `make test` and the GPU check:
//!   PGSTROM_NVRTC_LIBRARY  libnvrtc to use; with PGSTROM_REQUIRE_NVRTC=1 the
//!                          NVRTC tests fail instead of skipping without it.
//!   PGSTROM_EXPECT_GPU     1: a GPU must be found and used; 0: none may be.

use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::engine::reference_filter;
use pgstrom_runtime::error::DeviceError;
use pgstrom_runtime::nvrtc::Nvrtc;
use pgstrom_runtime::selftest::{self, test_columns, test_data};
use pgstrom_runtime::{CompareOp, Engine, FilterColumn, FilterResult, cache, device_code, discovery, gpu};

fn check_engine(engine: &dyn Engine, n: usize) {
    let d = test_data(n, 42 + n as u64);
    for (_, col) in test_columns(&d) {
        for validity in [None, Some(d.validity.as_slice())] {
            for op in CompareOp::ALL {
                let want = reference_filter(&col, validity, op);
                let got = engine.filter_compare(&col, validity, op).unwrap();
                assert_eq!(
                    got.nmatched,
                    want.nmatched,
                    "{:?} {col:?} {op:?} nulls={}",
                    engine.kind(),
                    validity.is_some()
                );
                assert_eq!(got, want, "{:?} {op:?}", engine.kind());
            }
        }
    }
}

#[test]
fn cpu_engine_matches_reference() {
    for n in [0, 1, 7, 8, 9, 1000, 100_003] {
        check_engine(&CpuEngine, n);
    }
}

#[test]
fn selftest_passes_on_cpu() {
    let rows = selftest::run(&CpuEngine, 10_000, 7).unwrap();
    assert_eq!(rows.len(), 7 * 2 * 6);
    assert!(rows.iter().all(|r| r.matches_reference));
    assert!(rows.iter().any(|r| r.nmatched > 0));
}

#[test]
fn reference_follows_postgres_float_rules() {
    let v = [f64::NAN, 1.0, f64::INFINITY];
    let col = FilterColumn::Float64 { values: &v, constant: f64::NAN };
    assert_eq!(reference_filter(&col, None, CompareOp::Eq).matches, vec![1, 0, 0]);
    assert_eq!(reference_filter(&col, None, CompareOp::Lt).matches, vec![0, 1, 1]);
    let col = FilterColumn::Float64 { values: &v, constant: f64::INFINITY };
    assert_eq!(reference_filter(&col, None, CompareOp::Gt).matches, vec![1, 0, 0]);
}

#[test]
fn cpu_engine_reports_bad_operator() {
    let v = [1i32, 2, 3];
    let err = CpuEngine.filter_compare_raw(&FilterColumn::Int32 { values: &v, constant: 1 }, None, 99).unwrap_err();
    match err {
        DeviceError::Kernel { status, message } => {
            assert_eq!(status, 1);
            assert!(message.contains("99"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn short_validity_bitmap_is_rejected() {
    let v = [0i64; 17];
    let err = CpuEngine
        .filter_compare(&FilterColumn::Int64 { values: &v, constant: 0 }, Some(&[0xff, 0xff]), CompareOp::Eq)
        .unwrap_err();
    assert!(matches!(err, DeviceError::InvalidRequest(_)), "{err:?}");
}

fn nvrtc_or_skip() -> Option<Nvrtc> {
    let required = std::env::var("PGSTROM_REQUIRE_NVRTC").as_deref() == Ok("1");
    let explicit = std::env::var("PGSTROM_NVRTC_LIBRARY").ok();
    match Nvrtc::load(explicit.as_deref()) {
        Ok(n) => Some(n),
        Err(e) if !required => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("PGSTROM_REQUIRE_NVRTC=1 but {e}"),
    }
}

/// The architectures to build for: `PGSTROM_NVRTC_ARCHS` (space-separated),
/// by default sm_80 and sm_90.  `make test` builds sm_90 only (each build
/// takes minutes on two cores); the GPU check builds both.
fn nvrtc_archs() -> Vec<String> {
    let v = std::env::var("PGSTROM_NVRTC_ARCHS").unwrap_or_else(|_| "sm_80 sm_90".into());
    let archs: Vec<String> = v.split_whitespace().map(str::to_string).collect();
    assert!(!archs.is_empty(), "PGSTROM_NVRTC_ARCHS is empty");
    archs
}

/// Every device source compiles with NVRTC for each architecture, each
/// build goes through the on-disk cache: built once, then read back, and
/// still served with NVRTC gone.
#[test]
fn nvrtc_compiles_all_device_code_once_per_cache() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    assert!(nvrtc.version.0 >= 12, "NVRTC {:?}", nvrtc.version);
    drop(nvrtc);
    let explicit = std::env::var("PGSTROM_NVRTC_LIBRARY").ok();
    let dir = std::env::temp_dir().join(format!("pgstrom-nvrtc-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for arch in nvrtc_archs() {
        let first = cache::load_or_build(&dir, &arch, || Nvrtc::load(explicit.as_deref()))
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        assert!(!first.from_cache, "{arch}: the first build came from the cache");
        assert!(first.path.exists());
        let cubin = &first.cubin;
        assert!(cubin.starts_with(b"\x7fELF"), "CUBIN for {arch} is not an ELF image");
        for k in device_code::KERNELS {
            assert!(cubin.windows(k.len()).any(|w| w == k.as_bytes()), "{k} missing from {arch} CUBIN");
        }
        let second = cache::load_or_build(&dir, &arch, || Nvrtc::load(explicit.as_deref())).unwrap();
        assert!(second.from_cache);
        assert_eq!(first.cubin, second.cubin);
        // Without NVRTC, the cached build of these sources still serves.
        let third = cache::load_or_build(&dir, &arch, || Err(DeviceError::NvrtcMissing("gone".into()))).unwrap();
        assert!(third.from_cache);
        assert_eq!(third.cubin, first.cubin);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// NVRTC's half of the standalone-header check (build.rs does the host
/// compiler's): each device header, as the only include of a unit (twice:
/// its include guard too), passes NVRTC's front end with the options of
/// the real build, so the GPU-only branches stand alone as well.
#[test]
fn nvrtc_accepts_each_header_alone() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    let arch = nvrtc_archs().remove(0);
    let mut options = device_code::NVRTC_OPTIONS.to_vec();
    options.push("-fdevice-syntax-only");
    let files = device_code::includable_files();
    let mut failed = Vec::new();
    for (name, _) in device_code::DEVICE_HEADERS.iter().filter(|(n, _)| n.ends_with(".h")) {
        let unit = format!("#include \"{name}\"\n#include \"{name}\"\n");
        if let Err(e) = nvrtc.compile_cubin("alone.cu", &unit, &files, &arch, &options) {
            failed.push(format!("{name}: {e}"));
        }
    }
    assert!(failed.is_empty(), "device headers that do not stand alone under NVRTC:\n{}", failed.join("\n"));
}

#[test]
fn nvrtc_compile_errors_carry_the_log() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    let err = nvrtc
        .compile_cubin("broken.cu", "extern \"C\" __global__ void k() { undefined_thing(); }", &[], "sm_90", &[])
        .unwrap_err();
    match err {
        DeviceError::Compile { arch, log } => {
            assert_eq!(arch, "sm_90");
            assert!(log.contains("undefined_thing"), "{log}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn discovery_matches_the_machine() {
    match std::env::var("PGSTROM_EXPECT_GPU").as_deref() {
        Ok("1") => {
            let found = discovery::discover().unwrap_or_else(|e| panic!("expected a GPU: {e}"));
            assert!(!found.devices.is_empty());
            for d in &found.devices {
                assert!(d.total_memory > 0 && d.sm_count() > 0, "{d:?}");
            }
        }
        Ok("0") => {
            let err = discovery::discover().unwrap_err();
            assert!(matches!(err, DeviceError::DriverMissing(_) | DeviceError::NoDevice), "{err:?}");
        }
        _ => eprintln!("PGSTROM_EXPECT_GPU unset: discovery gave {:?}", discovery::discover().map(|d| d.devices.len())),
    }
}

#[test]
fn gpu_engine_matches_cpu_engine() {
    if std::env::var("PGSTROM_EXPECT_GPU").as_deref() != Ok("1") {
        eprintln!("skipping: PGSTROM_EXPECT_GPU is not 1");
        return;
    }
    let found = discovery::discover().unwrap();
    let explicit = std::env::var("PGSTROM_NVRTC_LIBRARY").ok();
    let dir = std::env::temp_dir().join(format!("pgstrom-gpu-test-{}", std::process::id()));
    for dev in &found.devices {
        let engine = gpu::GpuEngine::open(dev, &dir, explicit.as_deref()).unwrap_or_else(|e| panic!("{e}"));
        for n in [0, 1, 31, 32, 33, 1000, 1 << 20, (1 << 22) + 5] {
            check_engine(&engine, n);
        }
        // A bad operator code is reported as a kernel status, not a fault.
        let v = [1i32; 100];
        let err = engine.filter_compare_raw(&FilterColumn::Int32 { values: &v, constant: 1 }, None, 42).unwrap_err();
        assert!(matches!(err, DeviceError::Kernel { status: 1, .. }), "{err:?}");
        // And the engine still works afterwards.
        let ok: FilterResult =
            engine.filter_compare(&FilterColumn::Int32 { values: &v, constant: 1 }, None, CompareOp::Eq).unwrap();
        assert_eq!(ok.nmatched, 100);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
