//! The GPU service's transport and encoding, through a service running on
//! a thread of this test: answers equal the in-process engine's, requests
//! and answers larger than the first shared region, errors keep their
//! SQLSTATE and row, a session that was closed or never opened is an
//! error, bad requests never take the service down, and the status.

mod common;

use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::engine::{ColumnData, ParamValue};
use pgstrom_runtime::error::DeviceError;
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
    let cols = [ColumnData { type_id: type_id("INT8"), values: &bytes, validity: Some(&validity), offsets: None }];
    let params = [ParamValue { isnull: false, bits: 11 }];
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
    let cols = [ColumnData { type_id: type_id("INT8"), values: &bytes, validity: None, offsets: None }];
    let params = [ParamValue { isnull: false, bits: 0 }];
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

#[test]
fn closed_and_unknown_sessions() {
    use pgstrom_runtime::join::{JoinDepthSpec, JoinKind, JoinSpec};
    let svc = service_engine(CPU_ENGINE);
    let inner = i8_col(&[1, 2, 3]);
    let outer = i8_col(&[3, 4, 1, 1]);
    let spec = JoinSpec {
        scan_qual: None,
        outer_types: vec![type_id("INT8")],
        depths: vec![JoinDepthSpec {
            kind: JoinKind::Inner,
            outer_keys: vec![var(0, "INT8")],
            inner_keys: vec![var(1, "INT8")],
            qual: Some(common::cmp(0, 1, "INT8EQ")),
            inner: vec![ColumnData { type_id: type_id("INT8"), values: &inner, validity: None, offsets: None }],
            ninner: 3,
        }],
        params: vec![],
        agg: None,
    };
    let before = svc.info().unwrap().sessions;
    {
        let mut s = svc.join_open(&spec).unwrap();
        assert_eq!(svc.info().unwrap().sessions, before + 1);
        let cols = [ColumnData { type_id: type_id("INT8"), values: &outer, validity: None, offsets: None }];
        let c = s.probe(&cols, 4, None).unwrap();
        assert_eq!(c.count, 3);
        let mut want = CpuEngine.join_open(&spec).unwrap();
        assert_eq!(c, want.probe(&cols, 4, None).unwrap());
    }
    // dropped: the service closed it
    assert_eq!(svc.info().unwrap().sessions, before);
}
