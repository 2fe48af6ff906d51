//! GROUP BY on the engines (device/kernels/preagg.cu) against a plain Rust
//! reference: every accumulator over a scan (NULL keys and arguments,
//! FILTER, the scan quals, the CPU path's selection), grouping after a
//! join depth, a group per row (the table sized for every combination),
//! a request without grouping keys, numeric and interval keys grouped by
//! value with min / max of such values (MinAny / MaxAny), and (with
//! PGSTROM_EXPECT_GPU=1) the GPU engine.

mod common;

use std::collections::HashMap;

use pgstrom_runtime::Engine;
use pgstrom_runtime::agg::{self, AggKind, AggOp, AggSpec};
use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::engine::ColumnData;
use pgstrom_runtime::join::{JoinDepthSpec, JoinKind, JoinSpec};
use pgstrom_runtime::program::{Builder, type_id};

use common::{cmp, engines, f, var};

/// A fixed-width column of optional values.
struct Col {
    type_id: u16,
    values: Vec<u8>,
    validity: Vec<u8>,
}

impl Col {
    fn ints(name: &str, data: &[Option<i64>]) -> Col {
        let width = if name == "INT8" { 8 } else { 4 };
        Col::build(name, data.len(), |i| data[i].map(|v| v.to_le_bytes()[..width].to_vec()), width)
    }

    fn floats(data: &[Option<f64>]) -> Col {
        Col::build("FLOAT8", data.len(), |i| data[i].map(|v| v.to_le_bytes().to_vec()), 8)
    }

    fn build(name: &str, n: usize, get: impl Fn(usize) -> Option<Vec<u8>>, width: usize) -> Col {
        let mut validity = vec![0u8; n.div_ceil(8).max(1)];
        let mut values = Vec::new();
        for i in 0..n {
            match get(i) {
                Some(b) => {
                    validity[i / 8] |= 1 << (i % 8);
                    values.extend_from_slice(&b);
                }
                None => values.extend(std::iter::repeat_n(0u8, width)),
            }
        }
        Col { type_id: type_id(name), values, validity }
    }

    fn data(&self) -> ColumnData<'_> {
        ColumnData {
            type_id: self.type_id,
            values: &self.values,
            validity: Some(&self.validity),
            offsets: None,
            ..Default::default()
        }
    }
}

fn lcg(n: usize, seed: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

/// Reference accumulators of one group.
#[derive(Default, Clone)]
struct Acc {
    count_star: u64,
    count_x: u64,
    sum: i128,
    nsum: u64,
    min: Option<i64>,
    max: Option<i64>,
    fvals: Vec<f64>,
    pairs: Vec<(f64, f64)>,
    filtered: u64,
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn every_accumulator_over_a_scan() {
    let n = 5000usize;
    let r = lcg(n, 7);
    let keys: Vec<Option<i64>> = (0..n).map(|i| if i % 97 == 0 { None } else { Some((r[i] % 37) as i64) }).collect();
    let xs: Vec<Option<i64>> = (0..n)
        .map(|i| if i % 11 == 0 { None } else { Some((r[i] >> 8) as i64 % 1_000_000_000_000 - 500_000_000_000) })
        .collect();
    let fs: Vec<Option<f64>> =
        (0..n).map(|i| if i % 13 == 0 { None } else { Some(1e6 + (r[i] % 1000) as f64 / 7.0) }).collect();
    let (ck, cx, cf) = (Col::ints("INT4", &keys), Col::ints("INT8", &xs), Col::floats(&fs));
    // scan qual: key <> 5 (NULL keys fail it)
    let mut b = Builder::new();
    b.var(0);
    b.constant(type_id("INT4"), 5);
    b.func(f("INT4NE"));
    let scan_qual = b.finish(type_id("BOOL")).unwrap();
    // FILTER (WHERE x < f) over count(*)
    let mut b = Builder::new();
    b.var(1);
    b.func(f("FLOAT8_INT8"));
    b.var(2);
    b.func(f("FLOAT8LT"));
    let filter = b.finish(type_id("BOOL")).unwrap();
    let ops = vec![
        AggOp { kind: AggKind::Count, args: vec![], filter: None, scale: 0 },
        AggOp { kind: AggKind::Count, args: vec![var(1, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::SumInt, args: vec![var(1, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MinInt, args: vec![var(1, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MaxInt, args: vec![var(1, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::SumFlt, args: vec![var(2, "FLOAT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::Moments, args: vec![var(2, "FLOAT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MinFlt, args: vec![var(2, "FLOAT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MaxFlt, args: vec![var(2, "FLOAT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::Moments2, args: vec![var(2, "FLOAT8"), var(1, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::Count, args: vec![], filter: Some(filter), scale: 0 },
    ];
    let spec = AggSpec { keys: vec![var(0, "INT4")], ops };
    let (at, nwords) = spec.layout();
    assert_eq!(nwords, 1 + 1 + 3 + 2 + 2 + 2 + 4 + 2 + 2 + 8 + 1);

    // the reference, over the rows a selection (or the scan qual) keeps
    let reference = |rows: &[usize]| {
        let mut m: HashMap<Option<i64>, Acc> = HashMap::new();
        for &i in rows {
            let a = m.entry(keys[i]).or_default();
            a.count_star += 1;
            if let Some(x) = xs[i] {
                a.count_x += 1;
                a.sum += x as i128;
                a.nsum += 1;
                a.min = Some(a.min.map_or(x, |m| m.min(x)));
                a.max = Some(a.max.map_or(x, |m| m.max(x)));
            }
            if let Some(v) = fs[i] {
                a.fvals.push(v);
            }
            if let (Some(x), Some(y)) = (xs[i], fs[i]) {
                a.pairs.push((x as f64, y));
                if (x as f64) < y {
                    a.filtered += 1;
                }
            }
        }
        m
    };
    for eng in engines("agg") {
        let join = JoinSpec {
            scan_qual: Some(scan_qual.clone()),
            outer_types: vec![ck.type_id, cx.type_id, cf.type_id],
            depths: vec![],
            params: vec![],
            agg: Some(spec.clone()),
        };
        let mut sess = eng.join_open(&join).unwrap();
        let cols = [ck.data(), cx.data(), cf.data()];
        let sel: Vec<u32> = (0..n as u32).filter(|i| i % 3 != 0).collect();
        for selection in [None, Some(&sel[..])] {
            let g = sess.probe_agg(&cols, n as u32, selection).unwrap();
            let rows: Vec<usize> = match selection {
                None => (0..n).filter(|&i| keys[i].is_some_and(|k| k != 5)).collect(),
                Some(s) => s.iter().map(|&i| i as usize).collect(),
            };
            let want = reference(&rows);
            assert_eq!(g.count, want.len(), "{}: groups", eng.describe());
            let mut seen = std::collections::HashSet::new();
            for gi in 0..g.count {
                let key = keys[g.row(0, gi) as usize];
                assert!(seen.insert(key), "group {key:?} twice");
                assert_eq!(g.key(gi, 0), (key.unwrap_or(0), key.is_none()));
                let w = g.group_words(gi);
                let a = &want[&key];
                let word = |op: usize| &w[at[op] as usize..];
                assert_eq!(word(0)[0], a.count_star);
                assert_eq!(word(1)[0], a.count_x);
                assert_eq!(word(2)[0], a.nsum);
                assert_eq!(agg::sum_int(word(2)), a.sum);
                if a.nsum > 0 {
                    assert_eq!(word(3)[1] as i64, a.min.unwrap());
                    assert_eq!(word(4)[1] as i64, a.max.unwrap());
                }
                let fsum: f64 = a.fvals.iter().sum();
                assert_eq!(word(5)[0], a.fvals.len() as u64);
                assert!(close(agg::word_f8(word(5)[1]), fsum));
                let m = agg::moments(word(6));
                let nf = a.fvals.len() as f64;
                assert_eq!(m[0], nf);
                assert!(close(m[1], fsum));
                if nf > 0.0 {
                    let mean = fsum / nf;
                    let sxx: f64 = a.fvals.iter().map(|v| (v - mean) * (v - mean)).sum();
                    assert!((m[2] - sxx).abs() <= 1e-6 * sxx.max(1.0), "{} vs {sxx}", m[2]);
                    let lo = a.fvals.iter().cloned().fold(f64::INFINITY, f64::min);
                    let hi = a.fvals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    assert_eq!(agg::flt_from_order(word(7)[1]), lo);
                    assert_eq!(agg::flt_from_order(word(8)[1]), hi);
                }
                let m2 = agg::moments2(word(9));
                assert_eq!(m2[0], a.pairs.len() as f64);
                if !a.pairs.is_empty() {
                    let np = a.pairs.len() as f64;
                    let mx = a.pairs.iter().map(|p| p.0).sum::<f64>() / np;
                    let my = a.pairs.iter().map(|p| p.1).sum::<f64>() / np;
                    let sxy: f64 = a.pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
                    assert!((m2[5] - sxy).abs() <= 1e-6 * sxy.abs().max(1e6), "{} vs {sxy}", m2[5]);
                    assert!(close(m2[1], a.pairs.iter().map(|p| p.0).sum::<f64>()));
                }
                assert_eq!(word(10)[0], a.filtered);
            }
        }
    }
}

#[test]
fn groups_after_a_join_and_one_group_per_row() {
    // outer: 200,000 rows, k = i % 1000 (joins inner k), u = i (unique)
    let n = 200_000usize;
    let ks: Vec<Option<i64>> = (0..n).map(|i| Some((i % 1000) as i64)).collect();
    let us: Vec<Option<i64>> = (0..n).map(|i| Some(i as i64)).collect();
    // inner: 500 rows k = 2j, g = j % 7
    let ik: Vec<Option<i64>> = (0..500).map(|j| Some(2 * j as i64)).collect();
    let ig: Vec<Option<i64>> = (0..500).map(|j| Some((j % 7) as i64)).collect();
    let (ck, cu, cik, cig) =
        (Col::ints("INT4", &ks), Col::ints("INT4", &us), Col::ints("INT4", &ik), Col::ints("INT4", &ig));
    for eng in engines("agg") {
        // GROUP BY inner g: count(*), sum(u)
        let spec = AggSpec {
            keys: vec![var(3, "INT4")],
            ops: vec![
                AggOp { kind: AggKind::Count, args: vec![], filter: None, scale: 0 },
                AggOp { kind: AggKind::SumInt, args: vec![var(1, "INT4")], filter: None, scale: 0 },
            ],
        };
        let join = JoinSpec {
            scan_qual: None,
            outer_types: vec![ck.type_id, cu.type_id],
            depths: vec![JoinDepthSpec {
                kind: JoinKind::Inner,
                outer_keys: vec![var(0, "INT4")],
                inner_keys: vec![var(2, "INT4")],
                qual: Some(cmp(0, 2, "INT4EQ")),
                inner: vec![cik.data(), cig.data()],
                ninner: 500,
            }],
            params: vec![],
            agg: Some(spec),
        };
        let mut sess = eng.join_open(&join).unwrap();
        let g = sess.probe_agg(&[ck.data(), cu.data()], n as u32, None).unwrap();
        assert_eq!(g.nsources, 2);
        assert_eq!(g.stage_counts, vec![n as u64, (n / 2) as u64]);
        let mut want: HashMap<i64, (u64, i128)> = HashMap::new();
        for i in 0..n {
            let k = (i % 1000) as i64;
            if k % 2 == 0 {
                let e = want.entry((k / 2) % 7).or_default();
                e.0 += 1;
                e.1 += i as i128;
            }
        }
        assert_eq!(g.count, 7, "{}", eng.describe());
        for gi in 0..g.count {
            let j = g.row(1, gi) as usize;
            let key = ig[j].unwrap();
            let w = g.group_words(gi);
            assert_eq!((w[0], agg::sum_int(&w[1..])), want[&key]);
        }
        // GROUP BY u (unique): one group per row; no keys: one group
        for (keys, expect) in [(vec![var(1, "INT4")], n), (vec![], 1)] {
            let spec =
                AggSpec { keys, ops: vec![AggOp { kind: AggKind::Count, args: vec![], filter: None, scale: 0 }] };
            let join = JoinSpec {
                scan_qual: None,
                outer_types: vec![ck.type_id, cu.type_id],
                depths: vec![],
                params: vec![],
                agg: Some(spec),
            };
            let mut sess = eng.join_open(&join).unwrap();
            let g = sess.probe_agg(&[ck.data(), cu.data()], n as u32, None).unwrap();
            assert_eq!(g.count, expect);
            assert_eq!(g.words.iter().sum::<u64>(), n as u64);
            let empty = sess.probe_agg(&[ck.data(), cu.data()], 0, None).unwrap();
            assert_eq!(empty.count, 0);
        }
    }
}

#[test]
fn bad_requests_are_refused() {
    let eng = CpuEngine;
    let spec = AggSpec {
        keys: vec![],
        ops: vec![AggOp { kind: AggKind::Moments2, args: vec![var(0, "INT4")], filter: None, scale: 0 }],
    };
    let join = JoinSpec {
        scan_qual: None,
        outer_types: vec![type_id("INT4")],
        depths: vec![],
        params: vec![],
        agg: Some(spec),
    };
    assert!(eng.join_open(&join).is_err());
    // no depth and no aggregation: a scan, whose combinations are the
    // rows its qual passes (GpuScan over a gstore_fdw table's copy)
    let mut b = Builder::new();
    b.var(0);
    b.constant(type_id("INT4"), 1);
    b.func(f("INT4GT"));
    let qual = b.finish(type_id("BOOL")).unwrap();
    let c = Col::ints("INT4", &[Some(1), Some(2), None, Some(3), Some(0)]);
    for eng in engines("scan") {
        let join = JoinSpec {
            scan_qual: Some(qual.clone()),
            outer_types: vec![type_id("INT4")],
            depths: vec![],
            params: vec![],
            agg: None,
        };
        let mut s = eng.join_open(&join).unwrap();
        let got = s.probe(&[c.data()], 5, None).unwrap();
        let mut rows = got.rows[..got.count].to_vec();
        rows.sort_unstable();
        assert_eq!(rows, [1u32, 3], "{}", eng.describe());
        assert!(s.probe_agg(&[c.data()], 5, None).is_err(), "{}", eng.describe());
    }
    // a join without aggregation cannot aggregate
    let c = Col::ints("INT4", &[Some(1)]);
    let join = JoinSpec {
        scan_qual: None,
        outer_types: vec![type_id("INT4")],
        depths: vec![JoinDepthSpec {
            kind: JoinKind::Inner,
            outer_keys: vec![],
            inner_keys: vec![],
            qual: None,
            inner: vec![c.data()],
            ninner: 1,
        }],
        params: vec![],
        agg: None,
    };
    let mut s = eng.join_open(&join).unwrap();
    assert!(s.probe_agg(&[c.data()], 1, None).is_err());
}

#[test]
fn float_sums_overflowing_from_finite_values_raise_postgresql_error() {
    // one group's values, and whether PostgreSQL raises "value out of
    // range: overflow" for sum, for avg/stddev (float8_accum) and for the
    // regression family (float8_regr_accum)
    let cases: [(&[f64], [bool; 3]); 6] = [
        (&[1e308, 1e308], [true, true, true]),
        (&[1e200, -1e200], [false, true, true]), // squares of the deviations
        (&[1e308, -1e308, 5.0], [false, true, true]),
        (&[f64::INFINITY, 1e308], [false, false, false]), // Infinity / NaN, no error
        (&[f64::NAN, 1e300, 1e300], [false, false, false]),
        (&[1.0, 2.0, 3.0], [false, false, false]),
    ];
    for eng in engines("agg-overflow") {
        for (k, (kind, nargs)) in
            [(AggKind::SumFlt, 1), (AggKind::Moments, 1), (AggKind::Moments2, 2)].into_iter().enumerate()
        {
            for (values, raises) in cases {
                let n = values.len();
                let cf = Col::floats(&values.iter().map(|v| Some(*v)).collect::<Vec<_>>());
                let ck = Col::ints("INT4", &vec![Some(1); n]);
                let args = (0..nargs).map(|_| var(1, "FLOAT8")).collect();
                let spec =
                    AggSpec { keys: vec![var(0, "INT4")], ops: vec![AggOp { kind, args, filter: None, scale: 0 }] };
                let join = JoinSpec {
                    scan_qual: None,
                    outer_types: vec![ck.type_id, cf.type_id],
                    depths: vec![],
                    params: vec![],
                    agg: Some(spec),
                };
                let mut sess = eng.join_open(&join).unwrap();
                let what = format!("{}: {kind:?} over {values:?}", eng.describe());
                let raised = match sess.probe_agg(&[ck.data(), cf.data()], n as u32, None) {
                    Err(e) => {
                        assert!(e.to_string().contains("value out of range: overflow"), "{what}: {e}");
                        true
                    }
                    Ok(g) => {
                        assert_eq!(g.count, 1, "{what}");
                        agg::moments_overflow(kind, g.group_words(0))
                    }
                };
                assert_eq!(raised, raises[k], "{what}");
            }
        }
    }
}

#[test]
fn numeric_sums_are_exact_on_every_engine() {
    use pgstrom_runtime::numeric::{DevNumeric, NUM_NAN};
    // 100k rows: key i % 3; value (i * 7919 % 100000 - 50000) at scale 2 or
    // 1 (rescaled to 2 on the device), a NaN at row 7, NULL every 11th,
    // and magnitudes past 2^96 (10^35) every 1000th so the limbs carry
    let n = 100_000usize;
    let value = |i: usize| -> Option<DevNumeric> {
        if i.is_multiple_of(11) {
            return None;
        }
        if i == 7 {
            return Some(DevNumeric { mant: 0, scale: NUM_NAN });
        }
        let m = (i as i128 * 7919 % 100000) - 50000;
        Some(if i % 1000 == 1 {
            DevNumeric { mant: m * 10i128.pow(31), scale: 2 }
        } else if i.is_multiple_of(2) {
            DevNumeric { mant: m, scale: 2 }
        } else {
            DevNumeric { mant: m, scale: 1 }
        })
    };
    let keys: Vec<Option<i64>> = (0..n).map(|i| Some((i % 3) as i64)).collect();
    let ck = Col::ints("INT4", &keys);
    let cv = Col::build("NUMERIC", n, |i| value(i).map(|v| v.to_bytes().to_vec()), 24);
    let spec = AggSpec {
        keys: vec![var(0, "INT4")],
        ops: vec![AggOp { kind: AggKind::SumNum, args: vec![var(1, "NUMERIC")], filter: None, scale: 2 }],
    };
    // the reference: the exact sum at scale 2, the counts
    let mut want: HashMap<i64, (u64, i128, u64)> = HashMap::new();
    for i in 0..n {
        let Some(v) = value(i) else { continue };
        let e = want.entry((i % 3) as i64).or_default();
        e.0 += 1;
        if v.scale == NUM_NAN {
            e.2 += 1;
        } else {
            e.1 += v.mant * if v.scale == 1 { 10 } else { 1 };
        }
    }
    for eng in engines("agg") {
        let join = JoinSpec {
            scan_qual: None,
            outer_types: vec![ck.type_id, cv.type_id],
            depths: vec![],
            params: vec![],
            agg: Some(spec.clone()),
        };
        let mut sess = eng.join_open(&join).unwrap();
        let g = sess.probe_agg(&[ck.data(), cv.data()], n as u32, None).unwrap();
        assert_eq!(g.count, 3, "{}", eng.describe());
        for gi in 0..g.count {
            let key = keys[g.row(0, gi) as usize].unwrap();
            let w = g.group_words(gi);
            let (cnt, sum, nans) = want[&key];
            assert_eq!((w[0], w[2]), (cnt, nans), "{}", eng.describe());
            // max scale 2; the state's N and sum as numeric_avg_serialize writes them
            assert_eq!(w[1] >> 48, 2);
            let st = agg::num_avg_state(w, 2);
            assert_eq!(i64::from_be_bytes(st[..8].try_into().unwrap()), cnt as i64);
            let ndigits = i32::from_be_bytes(st[8..12].try_into().unwrap()) as usize;
            let weight = i32::from_be_bytes(st[12..16].try_into().unwrap());
            let sign = i32::from_be_bytes(st[16..20].try_into().unwrap());
            // rebuild the value at scale 2 from the base-10000 digits
            let mut v: i128 = 0;
            for k in 0..ndigits {
                let d = i16::from_be_bytes([st[24 + 2 * k], st[25 + 2 * k]]) as i128;
                v = v * 10000 + d;
            }
            // the digits end at weight - ndigits + 1 (base 10000); scale 2
            let exp = 4 * (weight - ndigits as i32 + 1) + 2;
            let v = if exp >= 0 { v * 10i128.pow(exp as u32) } else { v / 10i128.pow((-exp) as u32) };
            assert_eq!(if sign == 0x4000 { -v } else { v }, sum, "{}", eng.describe());
        }
    }
}

/// An interval's 16 stored bytes: microseconds, days, months.
fn interval_bytes(months: i32, days: i32, micros: i64) -> Vec<u8> {
    let mut b = micros.to_le_bytes().to_vec();
    b.extend_from_slice(&days.to_le_bytes());
    b.extend_from_slice(&months.to_le_bytes());
    b
}

#[test]
fn numeric_and_interval_keys_group_by_value_and_minmax_any_picks_a_winner() {
    use pgstrom_runtime::numeric::{DevNumeric, NUM_NAN, NUM_NINF};
    // numeric key: 1.0, 1.00, 1 are one group; 2.5; NaN; NULL every 9th
    let n = 3000usize;
    let num = |i: usize| -> Option<DevNumeric> {
        if i.is_multiple_of(9) {
            return None;
        }
        Some(match i % 5 {
            0 => DevNumeric { mant: 10, scale: 1 },
            1 => DevNumeric { mant: 100, scale: 2 },
            2 => DevNumeric { mant: 1, scale: 0 },
            3 => DevNumeric { mant: 25, scale: 1 },
            _ => DevNumeric { mant: 0, scale: NUM_NAN },
        })
    };
    // interval key: 1 mon, 30 days and 720 hours are one span; 1 day
    let iv = |i: usize| -> Option<(i32, i32, i64)> {
        if i.is_multiple_of(7) {
            return None;
        }
        Some(match i % 4 {
            0 => (1, 0, 0),
            1 => (0, 30, 0),
            2 => (0, 0, 720 * 3_600_000_000),
            _ => (0, 1, 0),
        })
    };
    // the min/max argument: numerics at mixed scales, -Infinity once
    let arg = |i: usize| -> Option<DevNumeric> {
        if i.is_multiple_of(13) {
            return None;
        }
        if i == 500 {
            return Some(DevNumeric { mant: 0, scale: NUM_NINF });
        }
        let m = (i as i128 * 7919) % 10007 - 5000;
        Some(if i.is_multiple_of(2) { DevNumeric { mant: m * 10, scale: 3 } } else { DevNumeric { mant: m, scale: 2 } })
    };
    let ck = Col::build("NUMERIC", n, |i| num(i).map(|v| v.to_bytes().to_vec()), 24);
    let ci = Col::build("INTERVAL", n, |i| iv(i).map(|(m, d, t)| interval_bytes(m, d, t)), 16);
    let ca = Col::build("NUMERIC", n, |i| arg(i).map(|v| v.to_bytes().to_vec()), 24);
    let spec = AggSpec {
        keys: vec![var(0, "NUMERIC"), var(1, "INTERVAL")],
        ops: vec![
            AggOp { kind: AggKind::Count, args: vec![], filter: None, scale: 0 },
            AggOp { kind: AggKind::MinAny, args: vec![var(2, "NUMERIC")], filter: None, scale: 0 },
            AggOp { kind: AggKind::MaxAny, args: vec![var(2, "NUMERIC")], filter: None, scale: 0 },
            AggOp { kind: AggKind::MaxAny, args: vec![var(1, "INTERVAL")], filter: None, scale: 0 },
        ],
    };
    // the reference, keyed by (numeric class, interval class)
    let nclass = |i: usize| {
        num(i).map(|v| {
            if v.scale == NUM_NAN {
                2
            } else if v.mant == 25 {
                1
            } else {
                0
            }
        })
    };
    let iclass = |i: usize| iv(i).map(|v| if v == (0, 1, 0) { 1 } else { 0 });
    // arg as a comparable value: -inf lowest, then mant at scale 3
    let aval = |v: DevNumeric| if v.scale == NUM_NINF { i128::MIN } else { v.mant * 10i128.pow(3 - v.scale as u32) };
    type Want = (u64, Option<i128>, Option<i128>);
    let mut want: HashMap<(Option<u8>, Option<u8>), Want> = HashMap::new();
    for i in 0..n {
        let e = want.entry((nclass(i), iclass(i))).or_default();
        e.0 += 1;
        if let Some(a) = arg(i) {
            let v = aval(a);
            e.1 = Some(e.1.map_or(v, |m| m.min(v)));
            e.2 = Some(e.2.map_or(v, |m| m.max(v)));
        }
    }
    for eng in engines("agg") {
        let join = JoinSpec {
            scan_qual: None,
            outer_types: vec![ck.type_id, ci.type_id, ca.type_id],
            depths: vec![],
            params: vec![],
            agg: Some(spec.clone()),
        };
        let mut sess = eng.join_open(&join).unwrap();
        let g = sess.probe_agg(&[ck.data(), ci.data(), ca.data()], n as u32, None).unwrap();
        assert_eq!(g.count, want.len(), "{}", eng.describe());
        let (at, _) = spec.layout();
        for gi in 0..g.count {
            let rep = g.row(0, gi) as usize;
            let key = (nclass(rep), iclass(rep));
            let (cnt, lo, hi) = want[&key];
            let w = g.group_words(gi);
            assert_eq!(w[at[0] as usize], cnt, "{}", eng.describe());
            // the keys come back as the representative's value
            let k0 = g.key_value(gi, 0);
            assert_eq!(k0.isnull, num(rep).is_none());
            if let Some(v) = num(rep) {
                assert_eq!(k0.numeric(), v, "{}", eng.describe());
            }
            let k1 = g.key_value(gi, 1);
            if let Some((m, d, t)) = iv(rep) {
                assert_eq!(k1.wide_bytes(16), interval_bytes(m, d, t), "{}", eng.describe());
            }
            // min / max: a value equal to the least / greatest
            let wmin = &w[at[1] as usize..at[1] as usize + 5];
            let wmax = &w[at[2] as usize..at[2] as usize + 5];
            let got = |ws: &[u64]| agg::any_value(ws).map(|v| aval(v.numeric()));
            assert_eq!((got(wmin), got(wmax)), (lo, hi), "{}", eng.describe());
            // the winner's value is one of its rows' (display scale kept)
            if let Some(v) = agg::any_value(wmax) {
                let s = v.numeric().scale;
                assert!(s == 2 || s == 3, "{}", eng.describe());
            }
            // max(interval) of a group: one of its spellings of the span
            let wi = &w[at[3] as usize..at[3] as usize + 5];
            match (agg::any_value(wi), iv(rep)) {
                (None, None) => {}
                (Some(v), Some(_)) => {
                    let b = v.wide_bytes(16);
                    let spans =
                        [interval_bytes(1, 0, 0), interval_bytes(0, 30, 0), interval_bytes(0, 0, 720 * 3_600_000_000)];
                    assert!(spans.contains(&b) || b == interval_bytes(0, 1, 0), "{}", eng.describe());
                }
                other => panic!("max(interval) {other:?} on {}", eng.describe()),
            }
        }
    }
}

/// One aggregation over `cols` on every engine: the groups' words by the
/// key `key_of` gives the representative row.
fn groups_by_key(
    spec: &AggSpec,
    cols: &[&Col],
    n: usize,
    key_of: impl Fn(usize) -> i64,
) -> Vec<(String, HashMap<i64, Vec<u64>>)> {
    let mut out = Vec::new();
    for eng in engines("agg-blocks") {
        let join = JoinSpec {
            scan_qual: None,
            outer_types: cols.iter().map(|c| c.type_id).collect(),
            depths: vec![],
            params: vec![],
            agg: Some(spec.clone()),
        };
        let mut sess = eng.join_open(&join).unwrap();
        let data: Vec<ColumnData> = cols.iter().map(|c| c.data()).collect();
        let g = sess.probe_agg(&data, n as u32, None).unwrap();
        let mut m = HashMap::new();
        for gi in 0..g.count {
            let prev = m.insert(key_of(g.row(0, gi) as usize), g.group_words(gi).to_vec());
            assert!(prev.is_none(), "{}: a group twice", eng.describe());
        }
        out.push((eng.describe(), m));
    }
    out
}

#[test]
fn blocks_add_their_groups_up_as_one_table_would() {
    use pgstrom_runtime::numeric::DevNumeric;
    // 40,000 rows: every block of rows (a GPU block's, 4096 on the CPU)
    // adds up its groups in its own table first; what comes out must be
    // what one table gives.  No GROUP BY (one group), 2000 groups (more
    // than a block table holds: it closes and rows go to the chunk's
    // table), and 40 groups in runs of 1000 rows.
    let n = 40_000usize;
    let r = lcg(n, 11);
    let xs: Vec<Option<i64>> = (0..n).map(|i| if i % 17 == 0 { None } else { Some(r[i] as i64 >> 20) }).collect();
    // numerics: scale 1 in the first 10,000 rows, scale 2 after (the
    // maximum scale changes between blocks); NULL every 19th
    let num = |i: usize| -> Option<DevNumeric> {
        if i.is_multiple_of(19) {
            return None;
        }
        let m = (r[i] % 2_000_001) as i128 - 1_000_000;
        Some(DevNumeric { mant: m, scale: if i < 10_000 { 1 } else { 2 } })
    };
    // intervals: +infinity only in the last rows
    let iv = |i: usize| -> (i32, i32, i64) {
        if i >= n - 5 {
            (i32::MAX, i32::MAX, i64::MAX)
        } else {
            ((i % 3) as i32, (i % 29) as i32, (r[i] % 1_000_000_000) as i64)
        }
    };
    let fs: Vec<Option<f64>> = (0..n).map(|i| Some(1e9 + (r[i] % 100_000) as f64 / 8.0)).collect();
    let k2000: Vec<Option<i64>> = (0..n).map(|i| Some((r[i] % 2000) as i64)).collect();
    let kruns: Vec<Option<i64>> = (0..n).map(|i| Some((i / 1000) as i64)).collect();
    let (cx, cv, ci, cf) = (
        Col::ints("INT8", &xs),
        Col::build("NUMERIC", n, |i| num(i).map(|v| v.to_bytes().to_vec()), 24),
        Col::build("INTERVAL", n, |i| Some(interval_bytes(iv(i).0, iv(i).1, iv(i).2)), 16),
        Col::floats(&fs),
    );
    let ops = vec![
        AggOp { kind: AggKind::Count, args: vec![], filter: None, scale: 0 },
        AggOp { kind: AggKind::SumInt, args: vec![var(0, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MinInt, args: vec![var(0, "INT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::SumNum, args: vec![var(1, "NUMERIC")], filter: None, scale: 2 },
        AggOp { kind: AggKind::MinAny, args: vec![var(1, "NUMERIC")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MaxAny, args: vec![var(1, "NUMERIC")], filter: None, scale: 0 },
        AggOp { kind: AggKind::SumIntv, args: vec![var(2, "INTERVAL")], filter: None, scale: 0 },
        AggOp { kind: AggKind::Moments, args: vec![var(3, "FLOAT8")], filter: None, scale: 0 },
        AggOp { kind: AggKind::MaxFlt, args: vec![var(3, "FLOAT8")], filter: None, scale: 0 },
    ];
    let one = AggSpec { keys: vec![], ops: ops.clone() };
    let (at, _) = one.layout();
    let at = |op: usize| at[op] as usize;
    // the reference of the rows `rows`
    let check = |eng: &str, w: &[u64], rows: &[usize]| {
        assert_eq!(w[at(0)], rows.len() as u64, "{eng}: count(*)");
        let xv: Vec<i64> = rows.iter().filter_map(|&i| xs[i]).collect();
        assert_eq!(w[at(1)], xv.len() as u64, "{eng}");
        assert_eq!(agg::sum_int(&w[at(1)..]), xv.iter().map(|&x| x as i128).sum::<i128>(), "{eng}: sum(x)");
        assert_eq!(w[at(2) + 1] as i64, *xv.iter().min().unwrap(), "{eng}: min(x)");
        let nv: Vec<DevNumeric> = rows.iter().filter_map(|&i| num(i)).collect();
        let at2 = nv.iter().filter(|v| v.scale == 2).count() as u64;
        assert_eq!(w[at(3)], nv.len() as u64, "{eng}");
        let (want_scale, want_at) = if at2 > 0 { (2, at2) } else { (1, nv.len() as u64) };
        assert_eq!((w[at(3) + 1] >> 48, w[at(3) + 1] & 0xffff_ffff_ffff), (want_scale, want_at), "{eng}: max scale");
        let exact = |v: &DevNumeric| v.mant * if v.scale == 1 { 10 } else { 1 };
        let sum: i128 = nv.iter().map(exact).sum();
        let limbs = (0..4).fold(0i128, |acc, l| acc + ((w[at(3) + 5 + l] as i64 as i128) << (32 * l)));
        assert_eq!(limbs, sum, "{eng}: sum(numeric)");
        let lo = nv.iter().map(exact).min().unwrap();
        let hi = nv.iter().map(exact).max().unwrap();
        let got = |o: usize| {
            let v = agg::any_value(&w[at(o)..at(o) + 5]).unwrap().numeric();
            v.mant * if v.scale == 1 { 10 } else { 1 }
        };
        assert_eq!((got(4), got(5)), (lo, hi), "{eng}: min/max(numeric)");
        let infs = rows.iter().filter(|&&i| i >= n - 5).count() as u64;
        assert_eq!(w[at(6)] + w[at(6) + 1], rows.len() as u64, "{eng}: finite + infinite intervals");
        assert_eq!(w[at(6) + 1], infs, "{eng}: +infinity intervals");
        let months: i64 = rows.iter().filter(|&&i| i < n - 5).map(|&i| iv(i).0 as i64).sum();
        assert_eq!(w[at(6) + 3] as i64, months, "{eng}: months");
        let fv: Vec<f64> = rows.iter().filter_map(|&i| fs[i]).collect();
        let m = agg::moments(&w[at(7)..]);
        let mean = fv.iter().sum::<f64>() / fv.len() as f64;
        let sxx: f64 = fv.iter().map(|v| (v - mean) * (v - mean)).sum();
        assert_eq!(m[0], fv.len() as f64, "{eng}");
        assert!(close(m[1], fv.iter().sum()), "{eng}: sum(f) {} vs {}", m[1], fv.iter().sum::<f64>());
        // float aggregates: relative 1e-6 (the order of additions differs)
        assert!((m[2] - sxx).abs() <= 1e-6 * sxx.max(1.0), "{eng}: sxx {} vs {sxx}", m[2]);
        assert_eq!(agg::flt_from_order(w[at(8) + 1]), fv.iter().cloned().fold(f64::MIN, f64::max), "{eng}");
    };
    let all: Vec<usize> = (0..n).collect();
    for (eng, m) in groups_by_key(&one, &[&cx, &cv, &ci, &cf], n, |_| 0) {
        assert_eq!(m.len(), 1, "{eng}");
        check(&eng, &m[&0], &all);
    }
    for (keys, name) in [(&k2000, "2000 groups"), (&kruns, "runs")] {
        let ck = Col::ints("INT4", keys);
        // the key is column 4; the ops read columns 0..3 as before
        let spec = AggSpec { keys: vec![var(4, "INT4")], ops: ops.clone() };
        let mut want: HashMap<i64, Vec<usize>> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            want.entry(k.unwrap()).or_default().push(i);
        }
        for (eng, m) in groups_by_key(&spec, &[&cx, &cv, &ci, &cf, &ck], n, |i| keys[i].unwrap()) {
            assert_eq!(m.len(), want.len(), "{eng}: {name}");
            for (k, rows) in &want {
                check(&format!("{eng}: {name}, group {k}"), &m[k], rows);
            }
        }
    }
}
