//! The GPU service's transport and encoding, through a service running on
//! a thread of this test: answers equal the in-process engine's, requests
//! and answers larger than the first shared region, errors keep their
//! SQLSTATE and row, a session that was closed or never opened is an
//! error, bad requests never take the service down, and the status.

mod common;

use pgstrom_runtime::clock::{DeviceClock, Phase};
use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::engine::{ColumnData, ParamValue};
use pgstrom_runtime::error::DeviceError;
use pgstrom_runtime::fileread::{Direct, FileAccess, Policy, ReadStats};
use pgstrom_runtime::join::{JoinDepthSpec, JoinKind, JoinSpec};
use pgstrom_runtime::program::{Builder, type_id};
use pgstrom_runtime::service::CPU_ENGINE;
use pgstrom_runtime::{CompareOp, Engine, FilterColumn, selftest};

use common::{f, service_engine, var};

fn i8_col(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// x * 3 + $1 over int8 (overflow raises 22003).
fn times3_plus_param() -> pgstrom_runtime::program::Program {
    let mut b = Builder::new();
    b.var(0);
    b.constant(type_id("INT8"), 3);
    b.func(f("INT8MUL"));
    b.param(0);
    b.func(f("INT8PL"));
    b.finish(type_id("INT8")).unwrap()
}

#[test]
fn large_chunks_match_the_cpu_engine() {
    let svc = service_engine(CPU_ENGINE);
    // 3M int8 rows: 24 MB in, 27 MB out, past the first 8 MB region both ways
    let n = 3_000_000usize;
    let vals: Vec<i64> = (0..n as i64).map(|i| i * 7 - 1_000_000).collect();
    let bytes = i8_col(&vals);
    let validity: Vec<u8> = (0..n.div_ceil(8)).map(|i| if i % 5 == 0 { 0x7f } else { 0xff }).collect();
    let cols = [ColumnData {
        type_id: type_id("INT8"),
        values: &bytes,
        validity: Some(&validity),
        offsets: None,
        ..Default::default()
    }];
    let params = [ParamValue::value(11)];
    let p = times3_plus_param();
    let want = CpuEngine.eval_program(&p, &cols, &params, n as u32).unwrap();
    let got = svc.eval_program(&p, &cols, &params, n as u32).unwrap();
    assert_eq!(got, want);
    // and a small one after the region grew
    let got = svc.eval_program(&p, &cols, &params, 10).unwrap();
    assert_eq!(got.values[..], want.values[..10]);
}

#[test]
fn sql_errors_keep_sqlstate_and_row() {
    let svc = service_engine(CPU_ENGINE);
    let vals = [1i64, 2, i64::MAX / 2, 4];
    let bytes = i8_col(&vals);
    let cols =
        [ColumnData { type_id: type_id("INT8"), values: &bytes, validity: None, offsets: None, ..Default::default() }];
    let params = [ParamValue::value(0)];
    let e = svc.eval_program(&times3_plus_param(), &cols, &params, 4).unwrap_err();
    assert_eq!(e, DeviceError::Sql { sqlstate: "22003", message: "bigint out of range", row: 2 });
    // the connection is still usable
    assert!(svc.eval_program(&times3_plus_param(), &cols, &params, 2).is_ok());
}

#[test]
fn bad_requests_are_errors_and_the_service_stays_up() {
    let svc = service_engine(CPU_ENGINE);
    // unknown GPU
    let gpu9 = service_engine(9);
    let e = gpu9.eval_program(&var(0, "INT8"), &[], &[], 0).unwrap_err();
    assert!(
        matches!(e, DeviceError::InvalidProgram(_) | DeviceError::InvalidRequest(_) | DeviceError::Unavailable(_)),
        "{e:?}"
    );
    let e = gpu9.check().unwrap_err();
    assert!(e.to_string().contains("GPU9"), "{e}");
    // a program reading a column that is not there
    let e = svc.eval_program(&var(3, "INT8"), &[], &[], 1).unwrap_err();
    assert!(matches!(e, DeviceError::InvalidProgram(_)), "{e:?}");
    // the filter kernels and the self-test through the service
    let v = [1i32, 5, 9];
    let r = svc.filter_compare(&FilterColumn::Int32 { values: &v, constant: 5 }, None, CompareOp::Ge).unwrap();
    assert_eq!((r.matches, r.nmatched), (vec![0, 1, 1], 2));
    let rows = selftest::run(&svc, 10_000, 3).unwrap();
    assert!(rows.iter().all(|r| r.matches_reference));
    let info = svc.info().unwrap();
    assert_eq!(info.pid, std::process::id());
    assert!(info.requests > 0 && info.connections >= 1, "{info:?}");
}

/// A join of one int8 column to `ninner` int8 inner values on equal keys,
/// with `qual` as its join qual.
fn int8_key_join(inner: &[u8], ninner: u32, qual: Option<pgstrom_runtime::program::Program>) -> JoinSpec<'_> {
    JoinSpec {
        scan_qual: None,
        outer_types: vec![type_id("INT8")],
        depths: vec![JoinDepthSpec {
            kind: JoinKind::Inner,
            outer_keys: vec![var(0, "INT8")],
            inner_keys: vec![var(1, "INT8")],
            qual,
            inner: vec![ColumnData { type_id: type_id("INT8"), values: inner, ..Default::default() }],
            ninner,
        }],
        params: vec![],
        agg: None,
    }
}

/// Held by the tests that open join sessions: one of them counts the
/// service's sessions, which the others' would change when the tests run
/// in parallel threads.
static SESSIONS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn closed_and_unknown_sessions() {
    let _one = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    let svc = service_engine(CPU_ENGINE);
    let inner = i8_col(&[1, 2, 3]);
    let outer = i8_col(&[3, 4, 1, 1]);
    let spec = int8_key_join(&inner, 3, Some(common::cmp(0, 1, "INT8EQ")));
    let before = svc.info().unwrap().sessions;
    let cpu_sessions = || svc.info().unwrap().work.last().unwrap().sessions;
    let cpu_before = cpu_sessions();
    {
        let mut s = svc.join_open(&spec).unwrap();
        assert_eq!(svc.info().unwrap().sessions, before + 1);
        // counted on the engine it runs on
        assert_eq!(cpu_sessions(), cpu_before + 1);
        let cols = [ColumnData {
            type_id: type_id("INT8"),
            values: &outer,
            validity: None,
            offsets: None,
            ..Default::default()
        }];
        let c = s.probe(&cols, 4, None).unwrap();
        assert_eq!(c.count, 3);
        let mut want = CpuEngine.join_open(&spec).unwrap();
        assert_eq!(c, want.probe(&cols, 4, None).unwrap());
    }
    // dropped: the service closed it
    assert_eq!(svc.info().unwrap().sessions, before);
    assert_eq!(cpu_sessions(), cpu_before);
}

/// Scans are placed on a usable GPU of the service: one named, else any;
/// each placement is counted on its GPU.  A service without a GPU says so.
#[test]
fn scans_are_placed_on_usable_gpus() {
    let svc = service_engine(CPU_ENGINE);
    // a GPU's connection hears of the GPUs once the service opened them
    // (the CPU engine's is answered while they are being opened)
    let info = service_engine(0).hello_info().unwrap();
    let usable: Vec<u32> = (0..info.gpus.len() as u32).filter(|&g| info.gpus[g as usize].is_ok()).collect();
    if usable.is_empty() {
        let e = svc.place(&[0]).unwrap_err();
        assert!(e.to_string().contains("the GPU service has no usable GPU"), "{e:?}");
        return;
    }
    let placed = |g: u32| svc.info().unwrap().work[g as usize].placed;
    let g = usable[0];
    let before = placed(g);
    assert_eq!(svc.place(&[g]).unwrap(), g);
    // GPUs the service lacks are ignored: any usable GPU
    let any = svc.place(&[99, 15]).unwrap();
    assert!(usable.contains(&any), "{any}");
    assert!(usable.contains(&svc.place(&[]).unwrap()));
    assert!(placed(g) > before);
}

/// Columns a session reads from a file itself (Arrow_Fdw's fixed-width
/// columns through the GPU service) join as the same bytes in memory do,
/// for the CPU engine in the service and each GPU (whose column cache
/// then serves the second read); bad slices are errors that leave the
/// session usable, and in-process engines take no file columns.
#[test]
fn file_columns_join_as_in_memory_columns() {
    use pgstrom_runtime::engine::FileSlice;
    use std::io::Write;
    let _one = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());

    // 200 int8 values at offset 128, a validity bitmap at 2048 (every
    // seventh row NULL), junk around them
    let rows = 200usize;
    let values: Vec<i64> = (0..rows as i64).map(|i| i % 5).collect();
    let valid = |i: usize| i % 7 != 3;
    let mut bitmap = vec![0u8; rows.div_ceil(8)];
    (0..rows).filter(|&i| valid(i)).for_each(|i| bitmap[i / 8] |= 1 << (i % 8));
    let mut bytes = vec![0xabu8; 4096];
    bytes[128..128 + rows * 8].copy_from_slice(&i8_col(&values));
    bytes[2048..2048 + bitmap.len()].copy_from_slice(&bitmap);
    let path = std::env::temp_dir().join(format!("pgstrom-filecols-{}", std::process::id()));
    std::fs::File::create(&path).unwrap().write_all(&bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();

    let inner = i8_col(&[1, 2, 3]);
    let spec = int8_key_join(&inner, 3, None);
    let slice = |file: u32, first_row: u64| ColumnData {
        type_id: type_id("INT8"),
        file: Some(FileSlice {
            file,
            values: (128, (rows * 8) as u64),
            validity: Some((2048, bitmap.len() as u64)),
            first_row,
            form: Default::default(),
        }),
        ..Default::default()
    };
    // the same rows in memory, for the in-process CPU engine
    let in_memory = |first: usize, n: usize| -> (Vec<u8>, Vec<u8>) {
        let mut b = vec![0u8; n.div_ceil(8)];
        (0..n).filter(|&i| valid(first + i)).for_each(|i| b[i / 8] |= 1 << (i % 8));
        (i8_col(&values[first..first + n]), b)
    };
    let mut want = CpuEngine.join_open(&spec).unwrap();
    assert_eq!(want.open_file(&file, &Policy::default()).unwrap(), None, "in-process engines read no files");
    assert_eq!(want.file_stats().unwrap(), None);
    let err = want.probe(&[slice(0, 0)], 10, None).unwrap_err();
    assert!(err.to_string().contains("lies in a file"), "{err}");

    let mut indexes = vec![CPU_ENGINE];
    if common::expect_gpu() {
        indexes.push(0);
    }
    // each engine with each storage policy: pinned buffers only, and cuFile
    // whenever it opens (a GPU whose cuFile refuses the file reads it
    // through pinned buffers all the same)
    let policies = [Policy { direct: Direct::Off, threshold: 0 }, Policy { direct: Direct::On, threshold: 0 }];
    for (index, policy) in indexes.iter().flat_map(|&i| policies.iter().map(move |p| (i, *p))) {
        let svc = service_engine(index);
        let mut s = svc.join_open(&spec).unwrap();
        let (h, access) = s.open_file(&file, &policy).unwrap().expect("the service reads files");
        match (&access, index, policy.direct) {
            (FileAccess::Pinned, _, Direct::Off) | (FileAccess::Pinned, CPU_ENGINE, _) => {}
            (FileAccess::CuFile(_), i, Direct::On) if i != CPU_ENGINE => {}
            (FileAccess::Refused(why), i, Direct::On) if i != CPU_ENGINE => assert!(!why.is_empty()),
            other => panic!("engine {index}, {policy:?}: {other:?}"),
        }
        for round in 0..2 {
            for (first, n) in [(0usize, rows), (64, 100), (128, 72)] {
                let (v, b) = in_memory(first, n);
                let mem =
                    [ColumnData { type_id: type_id("INT8"), values: &v, validity: Some(&b), ..Default::default() }];
                let expect = want.probe(&mem, n as u32, None).unwrap();
                let got = s.probe(&[slice(h, first as u64)], n as u32, None).unwrap();
                // a GPU returns the combinations in no particular order
                assert_eq!(sorted(&got), sorted(&expect), "engine {index}, round {round}, rows {first}+{n}");
            }
        }
        let info = svc.info().unwrap();
        // the in-process engine times its own calls the same way
        let local = want.take_clock().unwrap();
        assert!(local.ns[Phase::Probe as usize] > 0 && local.ns[Phase::Read as usize] == 0, "{local:?}");
        let read = s.file_stats().unwrap().expect("the service counts what it read");
        // the engine's time for the session: the file reads and the join
        // probes, within the whole; asked again, only what came since
        let clock = s.take_clock().unwrap();
        let phase = |p: Phase| clock.ns[p as usize];
        assert!(phase(Phase::Read) > 0 && phase(Phase::Probe) > 0, "engine {index}: {clock:?}");
        assert!(clock.ns.iter().sum::<u64>() <= clock.total_ns, "engine {index}: {clock:?}");
        assert_eq!(s.take_clock().unwrap(), DeviceClock::default(), "engine {index}");
        if index != CPU_ENGINE {
            let c = info.gpu_cache[0];
            assert!(c.hits >= 5 && c.misses >= 1 && c.bytes > 0, "{c:?}");
            // every probe took the values and the bitmap: read by one of
            // the paths, or found in the cache
            let asked = 6 * (rows * 8 + bitmap.len()) as u64;
            assert_eq!(read.cufile_bytes + read.pinned_bytes + read.cached_bytes, asked, "{read:?}");
            assert!(read.cached_bytes >= asked / 2, "the second round hit the cache: {read:?}");
            if !matches!(access, FileAccess::CuFile(_)) {
                assert_eq!(read.cufile_bytes, 0, "{access:?}: {read:?}");
            }
            assert!(info.gpudirect.is_some(), "a service with a GPU says whether cuFile opened");
        } else {
            assert_eq!(read, ReadStats::default(), "the CPU engine reads into host memory");
        }
        // the engine's own counters (GPUs first, the CPU engine last)
        let w = if index == CPU_ENGINE { *info.work.last().unwrap() } else { info.work[index as usize] };
        assert!(w.requests >= 8 && w.chunks >= 6 && w.bytes_in > 0, "{w:?}");
        // bad slices: errors, and the session still works
        for (bad, why) in [
            (slice(h, 3), "64-row boundary"),
            (slice(h + 7, 0), "no file"),
            (
                ColumnData {
                    type_id: type_id("INT8"),
                    file: Some(FileSlice {
                        file: h,
                        values: (4000, 1600),
                        validity: None,
                        first_row: 0,
                        form: Default::default(),
                    }),
                    ..Default::default()
                },
                "beyond the end",
            ),
        ] {
            let err = s.probe(&[bad], 100, None).unwrap_err();
            assert!(err.to_string().contains(why), "engine {index}: {err}");
        }
        let err = s.probe(&[slice(h, 128)], 100, None).unwrap_err();
        assert!(err.to_string().contains("need more"), "engine {index}: {err}");
        let after = svc.info().unwrap();
        let w = if index == CPU_ENGINE { *after.work.last().unwrap() } else { after.work[index as usize] };
        // misaligned and too-short slices are refused by the client; the
        // unknown file and the range past the end by the service
        assert!(w.errors >= 2, "the service's refusals are counted: {w:?}");
        // its busy clock: the refused requests served on it since the
        // first look took some time too
        let before = if index == CPU_ENGINE { *info.work.last().unwrap() } else { info.work[index as usize] };
        assert!(before.busy_ns > 0 && w.busy_ns > before.busy_ns, "{before:?} then {w:?}");
        let (v, b) = in_memory(0, rows);
        let mem = [ColumnData { type_id: type_id("INT8"), values: &v, validity: Some(&b), ..Default::default() }];
        assert_eq!(
            sorted(&s.probe(&[slice(h, 0)], rows as u32, None).unwrap()),
            sorted(&want.probe(&mem, rows as u32, None).unwrap())
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// The combinations of a join's answer, sorted.
fn sorted(c: &pgstrom_runtime::join::Combos) -> Vec<Vec<u32>> {
    let mut v: Vec<Vec<u32>> = (0..c.count).map(|k| (0..c.nsources).map(|s| c.get(s, k)).collect()).collect();
    v.sort();
    v
}
