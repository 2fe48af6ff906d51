//! Joins on the engines against a plain Rust reference: every join type
//! at depth 1, two depths (hash and nested loop), NULL and duplicate keys,
//! empty inner relations, output growing past the first buffer, the CPU
//! path's row selection, and (with PGSTROM_EXPECT_GPU=1) the GPU engine.

mod common;

use pgstrom_runtime::Engine;
use pgstrom_runtime::engine::ColumnData;
use pgstrom_runtime::join::{JoinDepthSpec, JoinKind, JoinSpec, NULL_ROW};
use pgstrom_runtime::program::{Builder, type_id};

use common::{cmp, engines, f, var};

/// A column of optional values, in device layout.
struct Col {
    type_id: u16,
    values: Vec<u8>,
    validity: Vec<u8>,
    data: Vec<Option<i64>>,
}

impl Col {
    fn new(name: &str, data: Vec<Option<i64>>) -> Col {
        let t = type_id(name);
        let width = if name == "INT8" { 8 } else { 4 };
        let mut validity = vec![0u8; data.len().div_ceil(8).max(1)];
        let mut values = Vec::new();
        for (i, v) in data.iter().enumerate() {
            if v.is_some() {
                validity[i / 8] |= 1 << (i % 8);
            }
            let x = v.unwrap_or(0);
            values.extend_from_slice(&x.to_le_bytes()[..width]);
        }
        Col { type_id: t, values, validity, data }
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

/// Deterministic pseudo-random values with NULLs and duplicates.
fn values(n: usize, seed: u64, modulo: i64, null_every: usize) -> Vec<Option<i64>> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if null_every > 0 && i % null_every == null_every - 1 { None } else { Some((x % modulo as u64) as i64) }
        })
        .collect()
}

/// A join qual over a combination's row indexes.
type RowPredicate<'a> = Box<dyn Fn(&[u32]) -> bool + 'a>;

/// What a depth does, for the reference.
struct RefDepth<'a> {
    kind: JoinKind,
    ninner: usize,
    qual: RowPredicate<'a>,
}

fn reference(nrows: usize, scan: &dyn Fn(u32) -> bool, depths: &[RefDepth<'_>]) -> Vec<Vec<u32>> {
    let n = depths.len();
    let mut matched: Vec<Vec<bool>> = depths.iter().map(|d| vec![false; d.ninner]).collect();
    let run = |from: usize, mut cur: Vec<Vec<u32>>, matched: &mut Vec<Vec<bool>>| {
        for (i, d) in depths.iter().enumerate().skip(from) {
            let depth = i + 1;
            let mut next = Vec::new();
            for c in cur {
                let mut rows = c.clone();
                rows.resize(n + 1, NULL_ROW);
                let mut any = false;
                for j in 0..d.ninner as u32 {
                    rows[depth] = j;
                    if (d.qual)(&rows) {
                        any = true;
                        matched[i][j as usize] = true;
                        if d.kind.drops_inner() {
                            break;
                        }
                        if !d.kind.only_marks() {
                            next.push(rows[..=depth].to_vec());
                        }
                    }
                }
                rows[depth] = NULL_ROW;
                let keep = if any {
                    d.kind == JoinKind::Semi
                } else {
                    matches!(d.kind, JoinKind::Left | JoinKind::Full | JoinKind::Anti)
                };
                if keep {
                    next.push(rows[..=depth].to_vec());
                }
            }
            cur = next;
        }
        cur
    };
    let start: Vec<Vec<u32>> = (0..nrows as u32).filter(|&r| scan(r)).map(|r| vec![r]).collect();
    let mut out = run(0, start, &mut matched);
    for (i, d) in depths.iter().enumerate() {
        if !d.kind.keeps_inner() {
            continue;
        }
        // RIGHT SEMI: the matched rows; the others the unmatched
        let snapshot = matched[i].clone();
        let want = d.kind == JoinKind::RightSemi;
        let start: Vec<Vec<u32>> = (0..d.ninner as u32)
            .filter(|&j| snapshot[j as usize] == want)
            .map(|j| {
                let mut r = vec![NULL_ROW; i + 2];
                r[i + 1] = j;
                r
            })
            .collect();
        out.extend(run(i + 1, start, &mut matched));
    }
    out.sort();
    out
}

fn combos_sorted(c: &pgstrom_runtime::join::Combos) -> Vec<Vec<u32>> {
    let mut v: Vec<Vec<u32>> = (0..c.count).map(|k| (0..c.nsources).map(|s| c.get(s, k)).collect()).collect();
    v.sort();
    v
}

fn eq(a: Option<i64>, b: Option<i64>) -> bool {
    matches!((a, b), (Some(x), Some(y)) if x == y)
}

fn at(c: &Col, r: u32) -> Option<i64> {
    if r == NULL_ROW { None } else { c.data[r as usize] }
}

#[test]
fn every_kind_two_depths_against_reference() {
    let nrows = 3000;
    let a = Col::new("INT4", values(nrows, 1, 500, 17)); // col 0
    let b = Col::new("INT4", values(nrows, 2, 50, 13)); // col 1
    let k1 = Col::new("INT8", values(700, 3, 600, 11)); // col 2
    let v1 = Col::new("INT4", values(700, 4, 100, 0)); // col 3
    let k2 = Col::new("INT4", values(40, 5, 60, 7)); // col 4
    let empty = Col::new("INT4", Vec::new());
    let kinds = [
        JoinKind::Inner,
        JoinKind::Left,
        JoinKind::Full,
        JoinKind::Right,
        JoinKind::Semi,
        JoinKind::Anti,
        JoinKind::RightSemi,
        JoinKind::RightAnti,
    ];
    let scan_qual = {
        // b <> 7
        let mut p = Builder::new();
        p.var(1);
        p.constant(type_id("INT4"), 7);
        p.func(f("INT4NE"));
        p.finish(type_id("BOOL")).unwrap()
    };
    let scan = |r: u32| b.data[r as usize].is_some_and(|x| x != 7);
    for eng in engines("join") {
        for k1kind in kinds {
            for (k2kind, hashed2) in [
                (JoinKind::Inner, true),
                (JoinKind::Left, false),
                (JoinKind::Full, true),
                (JoinKind::RightSemi, true),
                (JoinKind::RightAnti, true),
            ] {
                let d1 = JoinDepthSpec {
                    kind: k1kind,
                    outer_keys: vec![var(0, "INT4")],
                    inner_keys: vec![var(2, "INT8")],
                    qual: Some(cmp(0, 2, "INT48EQ")),
                    inner: vec![k1.data(), v1.data()],
                    ninner: 700,
                };
                let d2 = JoinDepthSpec {
                    kind: k2kind,
                    outer_keys: if hashed2 { vec![var(1, "INT4")] } else { vec![] },
                    inner_keys: if hashed2 { vec![var(4, "INT4")] } else { vec![] },
                    qual: Some(if hashed2 { cmp(1, 4, "INT4EQ") } else { cmp(3, 4, "INT4LT") }),
                    inner: vec![k2.data()],
                    ninner: 40,
                };
                // a SEMI/ANTI depth 1 has no inner row for depth 2 to read
                let two = !k1kind.drops_inner() || hashed2;
                let spec = JoinSpec {
                    scan_qual: Some(scan_qual.clone()),
                    outer_types: vec![a.type_id, b.type_id],
                    depths: if two { vec![d1, d2] } else { vec![d1] },
                    params: vec![],
                    agg: None,
                };
                let mut sess = eng.join_open(&spec).unwrap();
                // two chunks: rows [0, 1500) and [1500, 3000) as separate
                // column sets would change the row numbers, so the second
                // chunk is the same columns with a CPU-path selection
                let cols = [a.data(), b.data()];
                let got1 = sess.probe(&cols, nrows as u32, None).unwrap();
                let sel: Vec<u32> = (0..nrows as u32).filter(|&r| scan(r)).collect();
                let got2 = sess.probe(&cols, nrows as u32, Some(&sel)).unwrap();
                assert_eq!(combos_sorted(&got1), combos_sorted(&got2), "selection = scan qual");
                let tail = sess.unmatched().unwrap();
                let mut got = combos_sorted(&got1);
                got.extend(combos_sorted(&tail));
                got.sort();

                let r1 = RefDepth {
                    kind: k1kind,
                    ninner: 700,
                    qual: Box::new(|rows: &[u32]| eq(at(&a, rows[0]), at(&k1, rows[1]))),
                };
                let r2 = RefDepth {
                    kind: k2kind,
                    ninner: 40,
                    qual: if hashed2 {
                        Box::new(|rows: &[u32]| eq(at(&b, rows[0]), at(&k2, rows[2])))
                    } else {
                        Box::new(
                            |rows: &[u32]| matches!((at(&v1, rows[1]), at(&k2, rows[2])), (Some(x), Some(y)) if x < y),
                        )
                    },
                };
                let refs: Vec<RefDepth<'_>> = if two { vec![r1, r2] } else { vec![r1] };
                let want = reference(nrows, &scan, &refs);
                assert_eq!(got.len(), want.len(), "{:?} {k1kind:?}/{k2kind:?} hashed2={hashed2}", eng.kind());
                assert_eq!(got, want, "{:?} {k1kind:?}/{k2kind:?}", eng.kind());
                if !(k1kind.keeps_inner() || two && k2kind.keeps_inner()) {
                    assert_eq!(tail.count, 0);
                }
                // after a reset every inner row counts as unmatched again
                sess.reset_matched().unwrap();
                let again = sess.unmatched().unwrap();
                // (RIGHT SEMI returns the matched rows: none after a reset)
                let semi = k1kind == JoinKind::RightSemi || two && k2kind == JoinKind::RightSemi;
                assert!(semi || again.count >= tail.count);
                if k1kind.keeps_inner() && k1kind != JoinKind::RightSemi {
                    let ones = (0..again.count).filter(|&c| again.get(1, c) != NULL_ROW).count();
                    assert!(ones >= 700 || two, "every depth-1 row is unmatched after a reset");
                }
            }
        }
        // empty inner relation: INNER gives nothing, LEFT keeps every row,
        // ANTI too
        for (kind, want) in [(JoinKind::Inner, 0), (JoinKind::Left, nrows), (JoinKind::Anti, nrows)] {
            let spec = JoinSpec {
                scan_qual: None,
                outer_types: vec![a.type_id, b.type_id],
                depths: vec![JoinDepthSpec {
                    kind,
                    outer_keys: vec![var(0, "INT4")],
                    inner_keys: vec![var(2, "INT4")],
                    qual: Some(cmp(0, 2, "INT4EQ")),
                    inner: vec![empty.data()],
                    ninner: 0,
                }],
                params: vec![],
                agg: None,
            };
            let mut sess = eng.join_open(&spec).unwrap();
            let got = sess.probe(&[a.data(), b.data()], nrows as u32, None).unwrap();
            assert_eq!(got.count, want, "{kind:?} over an empty inner relation");
        }
    }
}

#[test]
fn skewed_keys_grow_the_output() {
    // every outer row matches every inner row: 2000 x 300 combinations
    let a = Col::new("INT4", vec![Some(1); 2000]);
    let k = Col::new("INT4", vec![Some(1); 300]);
    for eng in engines("join") {
        let spec = JoinSpec {
            scan_qual: None,
            outer_types: vec![a.type_id],
            depths: vec![JoinDepthSpec {
                kind: JoinKind::Inner,
                outer_keys: vec![var(0, "INT4")],
                inner_keys: vec![var(1, "INT4")],
                qual: Some(cmp(0, 1, "INT4EQ")),
                inner: vec![k.data()],
                ninner: 300,
            }],
            params: vec![],
            agg: None,
        };
        let mut sess = eng.join_open(&spec).unwrap();
        let got = sess.probe(&[a.data()], 2000, None).unwrap();
        assert_eq!(got.count, 600_000);
        assert_eq!(got.stage_counts, vec![2000, 600_000]);
        let mut seen = vec![0u32; 300];
        for c in 0..got.count {
            seen[got.get(1, c) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n == 2000));
    }
}

#[test]
fn errors_and_bad_requests() {
    let a = Col::new("INT4", vec![Some(2_000_000_000), Some(1)]);
    let k = Col::new("INT4", vec![Some(1)]);
    for eng in engines("join") {
        // the join qual overflows: a + a = k
        let mut p = Builder::new();
        p.var(0);
        p.var(0);
        p.func(f("INT4PL"));
        p.var(1);
        p.func(f("INT4EQ"));
        let qual = p.finish(type_id("BOOL")).unwrap();
        let spec = JoinSpec {
            scan_qual: None,
            outer_types: vec![a.type_id],
            depths: vec![JoinDepthSpec {
                kind: JoinKind::Inner,
                outer_keys: vec![],
                inner_keys: vec![],
                qual: Some(qual),
                inner: vec![k.data()],
                ninner: 1,
            }],
            params: vec![],
            agg: None,
        };
        let mut sess = eng.join_open(&spec).unwrap();
        let err = sess.probe(&[a.data()], 2, None).unwrap_err();
        assert!(format!("{err}").contains("integer out of range"), "{err}");
        // a selection beyond the chunk, and columns of the wrong type
        assert!(sess.probe(&[a.data()], 2, Some(&[5])).is_err());
        let wrong = Col::new("INT8", vec![Some(1), Some(2)]);
        assert!(sess.probe(&[wrong.data()], 2, None).is_err());
        // key counts differ
        let bad = JoinSpec {
            scan_qual: None,
            outer_types: vec![a.type_id],
            depths: vec![JoinDepthSpec {
                kind: JoinKind::Inner,
                outer_keys: vec![var(0, "INT4")],
                inner_keys: vec![],
                qual: None,
                inner: vec![k.data()],
                ninner: 1,
            }],
            params: vec![],
            agg: None,
        };
        assert!(eng.join_open(&bad).is_err());
    }
}

#[test]
fn sessions_share_one_inner_build() {
    // two depths, as two processes of one query would open them: one
    // loads the inner relations under a key, the others attach by it
    let a = Col::new("INT4", values(3000, 11, 50, 7));
    let b = Col::new("INT4", values(3000, 12, 30, 0));
    let k1 = Col::new("INT4", values(80, 13, 50, 9));
    let k2 = Col::new("INT4", values(40, 14, 30, 0));
    let spec = |with_rows: bool, qual_col: i32| JoinSpec {
        scan_qual: None,
        outer_types: vec![a.type_id, b.type_id],
        depths: vec![
            JoinDepthSpec {
                kind: JoinKind::Inner,
                outer_keys: vec![var(0, "INT4")],
                inner_keys: vec![var(2, "INT4")],
                qual: Some(cmp(0, 2, "INT4EQ")),
                inner: if with_rows { vec![k1.data()] } else { vec![] },
                ninner: 80,
            },
            JoinDepthSpec {
                kind: JoinKind::Left,
                outer_keys: vec![var(1, "INT4")],
                inner_keys: vec![var(3, "INT4")],
                qual: Some(cmp(qual_col, 3, "INT4EQ")),
                inner: if with_rows { vec![k2.data()] } else { vec![] },
                ninner: 40,
            },
        ],
        params: vec![],
        agg: None,
    };
    for (i, eng) in engines("join-share").iter().enumerate() {
        let key = 0x5eed_0000 + i as u64 * 7919 + std::process::id() as u64;
        let mut own = eng.join_open(&spec(true, 1)).unwrap();
        let want = combos_sorted(&own.probe(&[a.data(), b.data()], 3000, None).unwrap());
        assert!(!want.is_empty());
        // nothing kept yet under the key
        assert!(eng.join_attach(&spec(false, 1), key).unwrap().is_none(), "{}", eng.describe());
        let mut first = eng.join_open_shared(&spec(true, 1), key).unwrap();
        let mut second = eng.join_attach(&spec(false, 1), key).unwrap().expect("the build is kept");
        // another request (a different qual) or key finds nothing
        assert!(eng.join_attach(&spec(false, 0), key).unwrap().is_none());
        assert!(eng.join_attach(&spec(false, 1), key + 1).unwrap().is_none());
        for s in [&mut first, &mut second] {
            let got = s.probe(&[a.data(), b.data()], 3000, None).unwrap();
            assert_eq!(combos_sorted(&got), want, "{}", eng.describe());
        }
        // the build lives while any session holds it
        drop(first);
        let got = second.probe(&[a.data(), b.data()], 3000, None).unwrap();
        assert_eq!(combos_sorted(&got), want);
        let third = eng.join_attach(&spec(false, 1), key).unwrap();
        assert!(third.is_some(), "{}", eng.describe());
        drop(third);
        drop(second);
        assert!(eng.join_attach(&spec(false, 1), key).unwrap().is_none(), "{}", eng.describe());
    }
}

#[test]
fn builds_kept_across_queries_by_their_cache_key() {
    // one query keeps its build in the cache; a later query (another share
    // key) opens a session over it and gets the rows back; another cache
    // key, or another request, finds nothing
    let a = Col::new("INT4", values(2000, 21, 40, 5));
    let k = Col::new("INT4", values(60, 22, 40, 3));
    let spec = |with_rows: bool, ninner: u32| JoinSpec {
        scan_qual: None,
        outer_types: vec![a.type_id],
        depths: vec![JoinDepthSpec {
            kind: JoinKind::Inner,
            outer_keys: vec![var(0, "INT4")],
            inner_keys: vec![var(1, "INT4")],
            qual: None,
            inner: if with_rows { vec![k.data()] } else { vec![] },
            ninner,
        }],
        params: vec![],
        agg: None,
    };
    let rows: Vec<u8> = (0..100u8).collect();
    for (i, eng) in engines("join-cache").iter().enumerate() {
        let pid = std::process::id() as u64;
        let (share, later) = (0x0cac_0000 + i as u64 * 31 + pid, 0x0cad_0000 + i as u64 * 31 + pid);
        let ck = format!("cache key {i} {pid}").into_bytes();
        let mut own = eng.join_open(&spec(true, 60)).unwrap();
        let want = combos_sorted(&own.probe(&[a.data()], 2000, None).unwrap());
        assert!(!want.is_empty());
        assert!(rows_of(eng.as_ref(), &ck).is_none(), "{}", eng.describe());
        assert!(eng.join_open_cached(&spec(false, 60), &ck, later).unwrap().is_none());
        // only a build a session holds can be kept
        assert!(!eng.join_cache_keep(&spec(false, 60), share, &ck, &rows).unwrap());
        let first = eng.join_open_shared(&spec(true, 60), share).unwrap();
        assert!(eng.join_cache_keep(&spec(false, 60), share, &ck, &rows).unwrap(), "{}", eng.describe());
        drop(first);
        // the query ended; the cache holds the build and its rows
        assert_eq!(rows_of(eng.as_ref(), &ck).as_deref(), Some(&rows[..]));
        // their summary: as many leading bytes as their second word says,
        // all of them when it says more than there are
        assert_eq!(summary_of(eng.as_ref(), &ck).as_deref(), Some(&rows[..]));
        let framed: Vec<u8> = [7u64, 24, 9].iter().flat_map(|w| w.to_ne_bytes()).chain(0..40u8).collect();
        let ck2 = [&ck[..], b"/framed"].concat();
        let share2 = share ^ 0x5a5a;
        let second = eng.join_open_shared(&spec(true, 60), share2).unwrap();
        assert!(eng.join_cache_keep(&spec(false, 60), share2, &ck2, &framed).unwrap());
        drop(second);
        assert_eq!(summary_of(eng.as_ref(), &ck2).as_deref(), Some(&framed[..24]), "{}", eng.describe());
        assert_eq!(rows_of(eng.as_ref(), &ck2).as_deref(), Some(&framed[..]));
        assert!(summary_of(eng.as_ref(), b"no such key").is_none());
        let mut other = ck.clone();
        other.push(b'!');
        assert!(rows_of(eng.as_ref(), &other).is_none());
        assert!(eng.join_open_cached(&spec(false, 60), &other, later).unwrap().is_none());
        // a request of another shape (row count) finds nothing
        assert!(eng.join_open_cached(&spec(false, 59), &ck, later).unwrap().is_none());
        let mut s = eng.join_open_cached(&spec(false, 60), &ck, later).unwrap().expect("kept");
        assert_eq!(combos_sorted(&s.probe(&[a.data()], 2000, None).unwrap()), want, "{}", eng.describe());
        // the later query's processes attach by its share key
        let mut t = eng.join_attach(&spec(false, 60), later).unwrap().expect("shared");
        assert_eq!(combos_sorted(&t.probe(&[a.data()], 2000, None).unwrap()), want);
    }
}

/// The summary of the rows an engine keeps under cache key `key`, copied.
fn summary_of(eng: &dyn pgstrom_runtime::Engine, key: &[u8]) -> Option<Vec<u8>> {
    let mut out = None;
    let found = eng.join_cache_summary(key, &mut |b| out = Some(b.to_vec())).unwrap();
    assert_eq!(found, out.is_some());
    out
}

/// The rows an engine keeps under cache key `key`, copied.
fn rows_of(eng: &dyn pgstrom_runtime::Engine, key: &[u8]) -> Option<Vec<u8>> {
    let mut out = None;
    let found = eng.join_cache_rows(key, &mut |b| out = Some(b.to_vec())).unwrap();
    assert_eq!(found, out.is_some());
    out
}

/// The inner rows (by their row numbers) a RIGHT join's unmatched rows
/// name.
fn unmatched_rows(sess: &mut dyn pgstrom_runtime::join::JoinSession) -> Vec<u32> {
    let tail = sess.unmatched().unwrap();
    let mut v: Vec<u32> = (0..tail.count).map(|k| tail.get(1, k)).collect();
    v.sort();
    v
}

#[test]
fn restored_matched_rows_forget_the_probes_since_the_save() {
    // inner keys 0..20 (row j holds j); chunk A's outer keys 0..10, chunk
    // B's 10..15: a probe of B between a save and a restore (a heap direct
    // request whose answer the backend dropped) marks nothing
    let inner = Col::new("INT4", (0..20).map(Some).collect());
    let a = Col::new("INT4", (0..10).map(Some).collect());
    let b = Col::new("INT4", (10..15).map(Some).collect());
    let spec = JoinSpec {
        scan_qual: None,
        outer_types: vec![a.type_id],
        depths: vec![JoinDepthSpec {
            kind: JoinKind::Right,
            outer_keys: vec![var(0, "INT4")],
            inner_keys: vec![var(1, "INT4")],
            qual: Some(cmp(0, 1, "INT4EQ")),
            inner: vec![inner.data()],
            ninner: 20,
        }],
        params: vec![],
        agg: None,
    };
    let mut direct: Vec<Box<dyn Engine>> = vec![Box::new(pgstrom_runtime::cpu::CpuEngine)];
    direct.extend(common::raw_gpu_engine("restore"));
    for eng in &direct {
        let mut sess = eng.join_open(&spec).unwrap();
        assert_eq!(sess.probe(&[a.data()], 10, None).unwrap().count, 10);
        sess.save_matched().unwrap();
        assert_eq!(sess.probe(&[b.data()], 5, None).unwrap().count, 5);
        sess.restore_matched().unwrap();
        assert_eq!(unmatched_rows(sess.as_mut()), (10..20).collect::<Vec<u32>>(), "{:?}", eng.kind());
        // saved again after B: B's marks stay
        sess.reset_matched().unwrap();
        sess.probe(&[a.data()], 10, None).unwrap();
        sess.probe(&[b.data()], 5, None).unwrap();
        sess.save_matched().unwrap();
        sess.restore_matched().unwrap();
        assert_eq!(unmatched_rows(sess.as_mut()), (15..20).collect::<Vec<u32>>(), "{:?}", eng.kind());
    }
    // through the GPU service, which saves before each heap direct request
    // only: a restore without one goes back to no inner row matched
    let mut service = vec![common::service_engine(pgstrom_runtime::service::CPU_ENGINE)];
    if common::expect_gpu() {
        service.push(common::service_engine(0));
    }
    for eng in &service {
        let mut sess = eng.join_open(&spec).unwrap();
        sess.probe(&[a.data()], 10, None).unwrap();
        sess.save_matched().unwrap(); // (nothing for the client to do)
        sess.restore_matched().unwrap();
        assert_eq!(unmatched_rows(sess.as_mut()), (0..20).collect::<Vec<u32>>(), "service {}", eng.describe());
    }
}
