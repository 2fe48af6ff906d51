//! Device programs on the engines: three-valued logic, short-circuits,
//! PostgreSQL's errors at the first failing row, and (with
//! PGSTROM_EXPECT_GPU=1) the GPU engine giving the CPU engine's answers.

mod common;

use pgstrom_runtime::Engine;
use pgstrom_runtime::engine::{ColumnData, EvalOutput, ParamValue};
use pgstrom_runtime::error::DeviceError;
use pgstrom_runtime::program::{Builder, Op, Program, type_id};

use common::f;

fn i4_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bool_col(v: &[Option<bool>]) -> (Vec<u8>, Vec<u8>) {
    let mut validity = vec![0u8; v.len().div_ceil(8)];
    let vals = v
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if b.is_some() {
                validity[i / 8] |= 1 << (i % 8);
            }
            b.unwrap_or(false) as u8
        })
        .collect();
    (vals, validity)
}

fn engines() -> Vec<Box<dyn Engine>> {
    common::engines("prog")
}

fn decode_bool(o: &EvalOutput) -> Vec<Option<bool>> {
    o.values.iter().zip(&o.nulls).map(|(v, n)| if *n != 0 { None } else { Some(*v != 0) }).collect()
}

#[test]
fn three_valued_and_or_not() {
    let all = [Some(true), Some(false), None];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in all {
        for y in all {
            a.push(x);
            b.push(y);
        }
    }
    let (av, an) = bool_col(&a);
    let (bv, bn) = bool_col(&b);
    let cols = [
        ColumnData { type_id: type_id("BOOL"), values: &av, validity: Some(&an), offsets: None, ..Default::default() },
        ColumnData { type_id: type_id("BOOL"), values: &bv, validity: Some(&bn), offsets: None, ..Default::default() },
    ];
    let and3 = |x: Option<bool>, y: Option<bool>| match (x, y) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    };
    let or3 = |x: Option<bool>, y: Option<bool>| match (x, y) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    };
    for e in engines() {
        for (op, jump) in [(Op::And2, Op::JumpIfFalseKeep), (Op::Or2, Op::JumpIfTrueKeep)] {
            let mut p = Builder::new();
            p.var(0);
            let j = p.jump(jump);
            p.var(1);
            p.op(op);
            p.place(j);
            let prog = p.finish(type_id("BOOL")).unwrap();
            let got = decode_bool(&e.eval_program(&prog, &cols, &[], a.len() as u32).unwrap());
            let want: Vec<_> =
                a.iter().zip(&b).map(|(x, y)| if op == Op::And2 { and3(*x, *y) } else { or3(*x, *y) }).collect();
            assert_eq!(got, want, "{:?} {op:?}", e.kind());
        }
        let mut p = Builder::new();
        p.var(0);
        p.op(Op::Not);
        let got = decode_bool(&e.eval_program(&p.finish(type_id("BOOL")).unwrap(), &cols, &[], 9).unwrap());
        assert_eq!(got, a.iter().map(|x| x.map(|v| !v)).collect::<Vec<_>>());
    }
}

/// x <> 0 AND 100 / x > 1: the AND must not evaluate the division where
/// x = 0, as PostgreSQL does not.
#[test]
fn and_short_circuits_errors() {
    let x = i4_bytes(&[5, 0, 200, 0, 50]);
    let cols =
        [ColumnData { type_id: type_id("INT4"), values: &x, validity: None, offsets: None, ..Default::default() }];
    let mut p = Builder::new();
    p.var(0);
    p.constant(type_id("INT4"), 0);
    p.func(f("INT4NE"));
    let j = p.jump(Op::JumpIfFalseKeep);
    p.constant(type_id("INT4"), 100);
    p.var(0);
    p.func(f("INT4DIV"));
    p.constant(type_id("INT4"), 1);
    p.func(f("INT4GT"));
    p.op(Op::And2);
    p.place(j);
    let prog = p.finish(type_id("BOOL")).unwrap();
    for e in engines() {
        let got = decode_bool(&e.eval_program(&prog, &cols, &[], 5).unwrap());
        assert_eq!(got, vec![Some(true), Some(false), Some(false), Some(false), Some(true)], "{:?}", e.kind());
    }
}

#[test]
fn first_failing_row_reports_postgres_error() {
    // row 3 overflows, row 6 divides by zero: PostgreSQL stops at row 3
    let mut vals = vec![1i32; 10];
    vals[3] = i32::MAX;
    vals[6] = -1;
    let x = i4_bytes(&vals);
    let cols =
        [ColumnData { type_id: type_id("INT4"), values: &x, validity: None, offsets: None, ..Default::default() }];
    let mut p = Builder::new();
    p.var(0);
    p.var(0);
    p.func(f("INT4PL"));
    p.constant(type_id("INT4"), 1);
    p.var(0);
    p.func(f("INT4PL"));
    p.func(f("INT4DIV"));
    let prog = p.finish(type_id("INT4")).unwrap();
    for e in engines() {
        match e.eval_program(&prog, &cols, &[], 10) {
            Err(DeviceError::Sql { sqlstate, message, row }) => {
                assert_eq!((sqlstate, message, row), ("22003", "integer out of range", 3), "{:?}", e.kind())
            }
            other => panic!("{:?}: {other:?}", e.kind()),
        }
        // without the overflow, row 6 divides by zero
        let mut v2 = vals.clone();
        v2[3] = 1;
        let x2 = i4_bytes(&v2);
        let cols2 =
            [ColumnData { type_id: type_id("INT4"), values: &x2, validity: None, offsets: None, ..Default::default() }];
        match e.eval_program(&prog, &cols2, &[], 10) {
            Err(DeviceError::Sql { sqlstate, message, row }) => {
                assert_eq!((sqlstate, message, row), ("22012", "division by zero", 6))
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn params_nulls_and_casts() {
    let x = i4_bytes(&[1, -7, 2147483647]);
    let cols = [ColumnData {
        type_id: type_id("INT4"),
        values: &x,
        validity: Some(&[0b101]),
        offsets: None,
        ..Default::default()
    }];
    // (x::int8 * $1)::float8
    let mut p = Builder::new();
    p.var(0);
    p.func(f("INT8_INT4"));
    p.param(0);
    p.func(f("INT8MUL"));
    p.func(f("FLOAT8_INT8"));
    let prog = p.finish(type_id("FLOAT8")).unwrap();
    for e in engines() {
        let out = e.eval_program(&prog, &cols, &[ParamValue::value(3)], 3).unwrap();
        assert_eq!(out.nulls, vec![0, 1, 0]);
        assert_eq!(f64::from_bits(out.values[0] as u64), 3.0);
        assert_eq!(f64::from_bits(out.values[2] as u64), 6442450941.0);
        let out = e.eval_program(&prog, &cols, &[ParamValue::null()], 3).unwrap();
        assert_eq!(out.nulls, vec![1, 1, 1]);
        // too few parameters is a request error, not a crash
        assert!(matches!(e.eval_program(&prog, &cols, &[], 3), Err(DeviceError::InvalidRequest(_))));
    }
}

#[test]
fn programs_from_bytes_run_and_bad_ones_do_not() {
    let mut p = Builder::new();
    p.var(0);
    p.op(Op::IsNull);
    let bytes = p.finish(type_id("BOOL")).unwrap().to_bytes().unwrap();
    let prog = Program::from_bytes(&bytes).unwrap();
    let x = i4_bytes(&[1, 2]);
    let cols = [ColumnData {
        type_id: type_id("INT4"),
        values: &x,
        validity: Some(&[0b01]),
        offsets: None,
        ..Default::default()
    }];
    for e in engines() {
        assert_eq!(decode_bool(&e.eval_program(&prog, &cols, &[], 2).unwrap()), vec![Some(false), Some(true)]);
        // a program naming a column the chunk lacks is refused up front
        let mut q = Builder::new();
        q.var(3);
        let bad = q.finish(type_id("INT4")).unwrap();
        assert!(matches!(e.eval_program(&bad, &cols, &[], 2), Err(DeviceError::InvalidProgram(_))));
    }
}

#[test]
fn text_columns_and_constants() {
    // 'abc', NULL, '', 'abc  ' (bpchar padding), '日本語'
    let texts: [&str; 5] = ["abc", "", "", "abc  ", "日本語"];
    let mut bytes = Vec::new();
    let mut offsets = vec![0u32];
    for t in texts {
        bytes.extend_from_slice(t.as_bytes());
        offsets.push(bytes.len() as u32);
    }
    let validity = [0b11101u8];
    for e in engines() {
        let cols = [ColumnData {
            type_id: type_id("TEXT"),
            values: &bytes,
            validity: Some(&validity),
            offsets: Some(&offsets),
            ..Default::default()
        }];
        // length(x) and x = 'abc'
        let mut p = Builder::new();
        p.var(0);
        p.func(f("LENGTH_TEXT"));
        let out = e.eval_program(&p.finish(type_id("INT4")).unwrap(), &cols, &[], 5).unwrap();
        assert_eq!(out.nulls, vec![0, 1, 0, 0, 0]);
        assert_eq!((out.values[0], out.values[2], out.values[3], out.values[4]), (3, 0, 5, 3), "{:?}", e.kind());
        let mut p = Builder::new();
        p.var(0);
        p.bytes_constant(type_id("TEXT"), b"abc");
        p.func(f("TEXTEQ"));
        let got = decode_bool(&e.eval_program(&p.finish(type_id("BOOL")).unwrap(), &cols, &[], 5).unwrap());
        assert_eq!(got, vec![Some(true), None, Some(false), Some(false), Some(false)]);
        // as bpchar, trailing blanks do not count
        let cols = [ColumnData {
            type_id: type_id("BPCHAR"),
            values: &bytes,
            validity: Some(&validity),
            offsets: Some(&offsets),
            ..Default::default()
        }];
        let mut p = Builder::new();
        p.var(0);
        p.bytes_constant(type_id("BPCHAR"), b"abc ");
        p.func(f("BPCHAREQ"));
        let got = decode_bool(&e.eval_program(&p.finish(type_id("BOOL")).unwrap(), &cols, &[], 5).unwrap());
        assert_eq!(got, vec![Some(true), None, Some(false), Some(true), Some(false)]);
        // offsets out of range are refused, not read
        let bad = [0u32, 3, 3, 3, 8, 999];
        let cols = [ColumnData {
            type_id: type_id("TEXT"),
            values: &bytes,
            validity: None,
            offsets: Some(&bad),
            ..Default::default()
        }];
        let mut p = Builder::new();
        p.var(0);
        p.func(f("OCTET_LENGTH_TEXT"));
        assert!(matches!(
            e.eval_program(&p.finish(type_id("INT4")).unwrap(), &cols, &[], 5),
            Err(DeviceError::InvalidRequest(_))
        ));
    }
}

#[test]
fn numeric_columns_constants_and_params() {
    use pgstrom_runtime::numeric::{DevNumeric, NUM_BIG, NUM_NAN};
    let n = |mant: i128, scale: i32| DevNumeric { mant, scale };
    // 12.50, -0.003, NaN, a value beyond the device, 99999999999999999999999999999999999999
    let vals = [n(1250, 2), n(-3, 3), n(0, NUM_NAN), n(0, NUM_BIG), n(10i128.pow(38) - 1, 0)];
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_bytes()).collect();
    let col = |rows: usize| ColumnData {
        type_id: type_id("NUMERIC"),
        values: &bytes[..rows * 24],
        validity: None,
        offsets: None,
        ..Default::default()
    };
    // x * 1.05 / $1, with the numeric result read back
    let mut p = Builder::new();
    p.var(0);
    p.numeric_constant(n(105, 2));
    p.func(f("NUMERIC_MUL"));
    p.param(0);
    p.func(f("NUMERIC_DIV"));
    let prog = p.finish(type_id("NUMERIC")).unwrap();
    let three = ParamValue::numeric(n(3, 0));
    for e in engines() {
        let out = e.eval_program(&prog, &[col(3)], &[three], 3).unwrap();
        // numeric.c: 12.50 * 1.05 = 13.1250; / 3 = 4.3750000000000000 (scale 16)
        assert_eq!(out.numeric(0).unwrap().to_text(), "4.3750000000000000");
        // -0.003 * 1.05 = -0.00315; / 3 = -0.00105000000000000000 (scale 20)
        assert_eq!(out.numeric(1).unwrap().to_text(), "-0.00105000000000000000");
        assert_eq!(out.numeric(2).unwrap().to_text(), "NaN");
        // a value beyond the device, or a result beyond 38 digits: the
        // rows go to PostgreSQL, the others are computed
        let out = e.eval_program(&prog, &[col(4)], &[three], 4).unwrap();
        assert_eq!(out.cpu_rows, vec![3]);
        assert_eq!(out.numeric(0).unwrap().to_text(), "4.3750000000000000");
        let big = [vals[4]];
        let bb: Vec<u8> = big.iter().flat_map(|v| v.to_bytes()).collect();
        let c = ColumnData { type_id: type_id("NUMERIC"), values: &bb, ..Default::default() };
        assert_eq!(e.eval_program(&prog, &[c], &[three], 1).unwrap().cpu_rows, vec![0]);
    }
    // comparisons across scales, casts to int with rounding and errors
    let mut q = Builder::new();
    q.var(0);
    q.numeric_constant(n(125, 1));
    q.func(f("NUMERIC_EQ"));
    let eq = q.finish(type_id("BOOL")).unwrap();
    let mut r = Builder::new();
    r.var(0);
    r.func(f("INT4_NUMERIC"));
    let to_int = r.finish(type_id("INT4")).unwrap();
    for e in engines() {
        assert_eq!(
            decode_bool(&e.eval_program(&eq, &[col(3)], &[], 3).unwrap()),
            vec![Some(true), Some(false), Some(false)]
        );
        let out = e.eval_program(&to_int, &[col(2)], &[], 2).unwrap();
        assert_eq!(out.values, vec![13, 0]);
        match e.eval_program(&to_int, &[col(3)], &[], 3) {
            Err(DeviceError::Sql { sqlstate, message, row }) => {
                assert_eq!((sqlstate, message, row), ("0A000", "cannot convert NaN to integer", 2));
            }
            other => panic!("{other:?}"),
        }
    }
}

/// What an engine gives for one float8 function of one row: its value's
/// bits, an error, or `None` when the row goes to PostgreSQL.
fn eval_f8(e: &dyn Engine, func: &str, args: &[f64]) -> Option<Result<u64, (&'static str, &'static str)>> {
    let bytes: Vec<Vec<u8>> = args.iter().map(|v| v.to_le_bytes().to_vec()).collect();
    let cols: Vec<ColumnData> = bytes
        .iter()
        .map(|b| ColumnData {
            type_id: type_id("FLOAT8"),
            values: b,
            validity: None,
            offsets: None,
            ..Default::default()
        })
        .collect();
    let mut p = Builder::new();
    for i in 0..args.len() {
        p.var(i as i32);
    }
    p.func(f(func));
    let prog = p.finish(type_id("FLOAT8")).unwrap();
    match e.eval_program(&prog, &cols, &[], 1) {
        // (a row the engine leaves to PostgreSQL)
        Ok(out) if out.cpu_rows == [0] => None,
        Ok(out) => Some(Ok(out.values[0] as u64)),
        Err(DeviceError::Sql { sqlstate, message, .. }) => Some(Err((sqlstate, message))),
        Err(other) => panic!("{func}{args:?}: {other:?}"),
    }
}

#[test]
fn degree_functions_exact_where_postgres_makes_them() {
    let inf = f64::INFINITY;
    // (function, arguments, PostgreSQL 18's result, exact by float.c's
    // construction: computed on the GPU too)
    let cases: &[(&str, &[f64], f64, bool)] = &[
        ("SIND", &[0.0], 0.0, true),
        ("SIND", &[-0.0], -0.0, true),
        ("SIND", &[30.0], 0.5, true),
        ("SIND", &[90.0], 1.0, true),
        ("SIND", &[150.0], 0.5, true),
        ("SIND", &[-30.0], -0.5, true),
        ("SIND", &[210.0], -0.5, true),
        ("SIND", &[270.0], -1.0, true),
        ("SIND", &[-720.0], -0.0, true),
        // 90 - (30 + 1 ulp) rounds to 60: cosd_0_to_60(60)
        ("SIND", &[30.000000000000004], 0.5, true),
        ("SIND", &[45.0], 0.7071067811865475, false),
        ("SIND", &[60.0], 0.8660254037844387, false),
        ("SIND", &[0.1], 0.001745328365898309, false),
        ("COSD", &[-0.0], 1.0, true),
        ("COSD", &[60.0], 0.5, true),
        ("COSD", &[90.0], 0.0, true),
        ("COSD", &[120.0], -0.5, true),
        ("COSD", &[180.0], -1.0, true),
        ("COSD", &[240.0], -0.5, true),
        ("COSD", &[30.0], 0.8660254037844387, false),
        ("TAND", &[-0.0], 0.0, true),
        ("TAND", &[45.0], 1.0, true),
        ("TAND", &[90.0], inf, true),
        ("TAND", &[135.0], -1.0, true),
        ("TAND", &[180.0], 0.0, true),
        ("TAND", &[270.0], -inf, true),
        ("TAND", &[30.0], 0.5773502691896257, false),
        ("TAND", &[60.0], 1.7320508075688774, false),
        ("COTD", &[0.0], inf, true),
        ("COTD", &[-0.0], -inf, true),
        ("COTD", &[-45.0], -1.0, true),
        ("COTD", &[90.0], 0.0, true),
        ("COTD", &[180.0], -inf, true),
        ("COTD", &[-90.0], 0.0, true),
        ("COTD", &[30.0], 1.7320508075688774, false),
        ("ASIND", &[0.5], 30.0, true),
        ("ASIND", &[-0.5], -30.0, true),
        ("ASIND", &[1.0], 90.0, true),
        ("ASIND", &[-1.0], -90.0, true),
        ("ASIND", &[-0.0], -0.0, true),
        ("ASIND", &[0.25], 14.477512185929923, false),
        ("ACOSD", &[-0.0], 90.0, true),
        ("ACOSD", &[0.5], 60.0, true),
        ("ACOSD", &[-0.5], 120.0, true),
        ("ACOSD", &[1.0], 0.0, true),
        ("ACOSD", &[-1.0], 180.0, true),
        ("ACOSD", &[0.3], 72.5423968762779, false),
        ("ATAND", &[1.0], 45.0, true),
        ("ATAND", &[-0.0], -0.0, true),
        ("ATAND", &[-1.0], -45.0, false),
        ("ATAND", &[inf], 90.0, false),
        ("ATAND", &[0.5], 26.565051177077986, false),
        ("ATAN2D", &[0.0, 1.0], 0.0, true),
        ("ATAN2D", &[-0.0, 5.0], -0.0, true),
        ("ATAN2D", &[-0.0, 0.0], -0.0, true),
        ("ATAN2D", &[0.0, inf], 0.0, true),
        ("ATAN2D", &[0.0, -1.0], 180.0, false),
        ("ATAN2D", &[1.0, 1.0], 45.0, false),
        ("ATAN2D", &[-1.0, -inf], -180.0, false),
    ];
    // every engine computes every value (a GPU hands the rows it cannot
    // compute exactly to the CPU engine); the raw GPU engine shows which
    // rows the GPU computes itself
    for (raw, e) in engines().into_iter().map(|e| (false, e)).chain(common::raw_gpu_engine("prog").map(|e| (true, e))) {
        let gpu = raw;
        for &(func, args, want, exact) in cases {
            match eval_f8(e.as_ref(), func, args) {
                Some(Ok(bits)) => {
                    assert!(!gpu || exact, "{:?} {func}{args:?}: computed where libm is needed", e.kind());
                    assert_eq!(
                        bits,
                        want.to_bits(),
                        "{:?} {func}{args:?}: {} != {want}",
                        e.kind(),
                        f64::from_bits(bits)
                    );
                }
                Some(Err(err)) => panic!("{:?} {func}{args:?}: {err:?}", e.kind()),
                None => assert!(gpu && !exact, "{:?} {func}{args:?}: left to PostgreSQL", e.kind()),
            }
        }
        // NaN in, NaN out, before any error; float.c's errors on every engine
        for func in ["SIND", "COSD", "TAND", "COTD", "ASIND", "ACOSD", "ATAND"] {
            assert!(matches!(eval_f8(e.as_ref(), func, &[f64::NAN]), Some(Ok(b)) if f64::from_bits(b).is_nan()));
        }
        assert!(matches!(eval_f8(e.as_ref(), "ATAN2D", &[1.0, f64::NAN]), Some(Ok(b)) if f64::from_bits(b).is_nan()));
        for (func, x) in [
            ("SIND", inf),
            ("COSD", -inf),
            ("TAND", inf),
            ("COTD", -inf),
            ("ASIND", 1.0000000000000002),
            ("ACOSD", -2.0),
        ] {
            assert_eq!(eval_f8(e.as_ref(), func, &[x]), Some(Err(("22003", "input is out of range"))), "{func}({x})");
        }
    }
}

/// An interval column's bytes: PostgreSQL's layout (time, day, month).
fn interval_bytes(v: &[(i64, i32, i32)]) -> Vec<u8> {
    v.iter().flat_map(|(t, d, m)| t.to_le_bytes().into_iter().chain(d.to_le_bytes()).chain(m.to_le_bytes())).collect()
}

#[test]
fn interval_float_arithmetic_justify_and_extract() {
    // '1 year 2 mons 3 days 04:05:06.789', '7 mons 15 days 12:00',
    // '-1 mon 1 day 00:00:01', '1 mon -35 days 25:00'
    let ivs = interval_bytes(&[
        (14_706_789_000, 3, 14),
        (43_200_000_000, 15, 7),
        (1_000_000, 1, -1),
        (90_000_000_000, -35, 1),
    ]);
    let factors: Vec<u8> = [0.3333333333333333f64, 7.0, -2.5, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let cols = [
        ColumnData { type_id: type_id("INTERVAL"), values: &ivs, validity: None, offsets: None, ..Default::default() },
        ColumnData {
            type_id: type_id("FLOAT8"),
            values: &factors,
            validity: None,
            offsets: None,
            ..Default::default()
        },
    ];
    let decode = |o: &EvalOutput| -> Vec<(i64, i32, i32)> {
        (0..4)
            .map(|i| {
                let b = o.wide_bytes(i, 16).unwrap();
                (
                    i64::from_le_bytes(b[0..8].try_into().unwrap()),
                    i32::from_le_bytes(b[8..12].try_into().unwrap()),
                    i32::from_le_bytes(b[12..16].try_into().unwrap()),
                )
            })
            .collect()
    };
    let program = |steps: &[&str], result: &str| {
        let mut p = Builder::new();
        for s in steps {
            match *s {
                "iv" => p.var(0),
                "f" => p.var(1),
                func => p.func(f(func)),
            }
        }
        p.finish(type_id(result)).unwrap()
    };
    let mul = program(&["iv", "f", "INTERVAL_MUL"], "INTERVAL");
    let div = program(&["iv", "f", "INTERVAL_DIV"], "INTERVAL");
    let mul_d = program(&["f", "iv", "MUL_D_INTERVAL"], "INTERVAL");
    let justify = program(&["iv", "JUSTIFY_INTERVAL"], "INTERVAL");
    let part = |unit: &str, func: &str, result: &str| {
        let mut p = Builder::new();
        p.bytes_constant(type_id("TEXT"), unit.as_bytes());
        p.var(0);
        p.func(f(func));
        p.finish(type_id(result)).unwrap()
    };
    for e in engines() {
        // PostgreSQL 18 (interval_send): '4 mons 21 days 01:21:42.263',
        // '4 years 1 mon 105 days 84:00:00', '2 mons 13 days -12:00:02.5';
        // '7 mons 15 days 12:00' / 7 is '1 mon 2 days 05:08:34.285714'
        let got = decode(&e.eval_program(&mul, &cols, &[], 4).unwrap());
        assert_eq!(&got[..3], &[(4_902_263_000, 21, 4), (302_400_000_000, 105, 49), (-43_202_500_000, 13, 2)]);
        let got = decode(&e.eval_program(&mul_d, &cols, &[], 4).unwrap());
        assert_eq!(got[2], (-43_202_500_000, 13, 2));
        let got = decode(&e.eval_program(&div, &cols, &[], 4).unwrap());
        assert_eq!(got[1], (18_514_285_714, 2, 1));
        // '1 mon -35 days 25:00' justified: '-3 days -23:00:00'
        let got = decode(&e.eval_program(&justify, &cols, &[], 4).unwrap());
        assert_eq!(got[3], (-82_800_000_000, -3, 0));
        // extract(epoch FROM '1 year 2 mons 3 days 04:05:06.789'): exact,
        // and as date_part's double (a year of 365.25 days)
        let out = e.eval_program(&part("epoch", "EXTRACT_INTERVAL", "NUMERIC"), &cols, &[], 4).unwrap();
        assert_eq!(out.numeric(0).unwrap().to_text(), "37015506.789000");
        let out = e.eval_program(&part("epoch", "DATE_PART_INTERVAL", "FLOAT8"), &cols, &[], 4).unwrap();
        assert_eq!(out.values[0] as u64, 37015506.789000005f64.to_bits());
        let out = e.eval_program(&part("hour", "DATE_PART_INTERVAL", "FLOAT8"), &cols, &[], 4).unwrap();
        assert_eq!(
            out.values.iter().map(|v| f64::from_bits(*v as u64)).collect::<Vec<_>>(),
            vec![4.0, 12.0, 0.0, 25.0]
        );
        // a unit the device does not know goes to PostgreSQL, every row
        let out = e.eval_program(&part("hours", "DATE_PART_INTERVAL", "FLOAT8"), &cols, &[], 4).unwrap();
        assert_eq!(out.cpu_rows, vec![0, 1, 2, 3]);
    }
}
