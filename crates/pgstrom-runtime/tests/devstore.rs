//! Chunks of GPU store tables on the engines (devstore.rs,
//! device_store.h): row versions with every kind of inserting and deleting
//! transaction (frozen, committed, aborted, running for the snapshot, the
//! snapshot's own with command ids before and after its own), read through
//! a view, inline and from the engine's copy (brought up to date in
//! batches, deletions of one row superseding each other), against a plain
//! Rust reference of PostgreSQL's rules.

mod common;

use std::sync::Arc;

use pgstrom_runtime::devstore::{
    RowVersions, StoreId, StoreMvcc, StoreRows, StoreSync, StoreView, XID_COMMITTED, XID_CURRENT, XID_INVISIBLE,
};
use pgstrom_runtime::engine::ColumnData;
use pgstrom_runtime::join::{JoinDepthSpec, JoinKind, JoinSpec};
use pgstrom_runtime::program::{Builder, type_id};

use common::{engines, f};

const N: usize = 300;
const HORIZON: u64 = 150;
const CURCID: u32 = 5;
/// (xid, what the view says of it): frozen, committed, aborted, then the
/// window: committed, running, this transaction.
const XIDS: [u64; 6] = [2, 100, 101, 200, 201, 300];

fn view(hide_below: u64) -> StoreView {
    StoreView {
        horizon: HORIZON,
        hide_below,
        curcid: CURCID,
        aborted: vec![101],
        window: vec![200, 201, 300],
        states: vec![XID_COMMITTED, XID_INVISIBLE, XID_CURRENT],
    }
}

/// PostgreSQL's rules, written out.
fn visible(v: &StoreView, r: usize, rv: &RowVersions) -> bool {
    let state = |x: u64| -> u8 {
        if x < v.horizon {
            if v.aborted.contains(&x) { XID_INVISIBLE } else { XID_COMMITTED }
        } else {
            v.window.iter().position(|&w| w == x).map_or(XID_INVISIBLE, |k| v.states[k])
        }
    };
    if (r as u64) < v.hide_below {
        return false;
    }
    let ins = match state(rv.xmin[r]) {
        XID_COMMITTED => true,
        XID_CURRENT => rv.cmin[r] < v.curcid,
        _ => false,
    };
    let del = rv.xmax[r] != 0
        && match state(rv.xmax[r]) {
            XID_COMMITTED => true,
            XID_CURRENT => rv.cmax[r] < v.curcid,
            _ => false,
        };
    ins && !del
}

fn versions() -> RowVersions {
    let mut rv = RowVersions::default();
    for r in 0..N {
        rv.xmin.push(XIDS[r % 6]);
        rv.cmin.push((r % 10) as u32);
        let d = (r / 6) % 7;
        rv.xmax.push(if d == 6 { 0 } else { XIDS[d] });
        rv.cmax.push((r % 9) as u32);
    }
    rv
}

fn int4(n: usize) -> Vec<u8> {
    (0..n as i32).flat_map(|x| x.to_le_bytes()).collect()
}

/// `column 0 > 10`, LEFT JOIN an empty relation (each scanned row comes
/// out once).
fn spec() -> JoinSpec<'static> {
    let mut b = Builder::new();
    b.var(0);
    b.constant(type_id("INT4"), 10);
    b.func(f("INT4GT"));
    JoinSpec {
        scan_qual: Some(b.finish(type_id("BOOL")).unwrap()),
        outer_types: vec![type_id("INT4")],
        depths: vec![JoinDepthSpec {
            kind: JoinKind::Left,
            outer_keys: vec![],
            inner_keys: vec![],
            qual: None,
            inner: vec![],
            ninner: 0,
        }],
        params: vec![],
        agg: None,
    }
}

fn want(v: &StoreView, rv: &RowVersions, first: usize, n: usize) -> Vec<u32> {
    (first..first + n).filter(|&r| r > 10 && visible(v, r, rv)).map(|r| (r - first) as u32).collect()
}

fn rows_of(c: &pgstrom_runtime::join::Combos) -> Vec<u32> {
    let mut v: Vec<u32> = (0..c.count).map(|k| c.get(0, k)).collect();
    v.sort();
    v
}

#[test]
fn row_versions_through_the_view() {
    let rv = versions();
    let values = int4(N);
    let t = [type_id("INT4")];
    for (i, eng) in engines("devstore").iter().enumerate() {
        let name = eng.describe();
        let mut s = eng.join_open(&spec()).unwrap();
        for hide in [0u64, 64] {
            let v = Arc::new(view(hide));
            // inline row versions, the whole table as one chunk
            let rows = StoreRows { view: v.clone(), first_row: 0, mvcc: StoreMvcc::Inline(Arc::new(rv.clone())) };
            s.set_store_rows(Some(rows)).unwrap();
            let col = ColumnData { type_id: t[0], values: &values, ..Default::default() };
            let got = rows_of(&s.probe(&[col], N as u32, None).unwrap());
            assert_eq!(got, want(&v, &rv, 0, N), "{name}: inline, hide_below {hide}");
        }
        // the engine's copy, if it keeps them: rows in two batches (the
        // second starting mid-byte of the validity bitmap), deletions in
        // two, the first superseded for one row by the second
        let id = StoreId { sysid: 7, db: 1, rel: 1000 + i as u32, generation: 3, files: 42 };
        let Some(at) = s.store_sync(&StoreSync::ask(id, &t)).unwrap() else { continue };
        assert_eq!((at.rows, at.deletes), (0, 0), "{name}");
        for (from, to) in [(0usize, 100usize), (100, N)] {
            let col = ColumnData { type_id: t[0], values: &values[from * 4..to * 4], ..Default::default() };
            let batch = StoreSync {
                from_rows: from as u64,
                nrows: (to - from) as u32,
                columns: &[col],
                xmin: &rv.xmin[from..to],
                cmin: &rv.cmin[from..to],
                ..StoreSync::ask(id, &t)
            };
            let at = s.store_sync(&batch).unwrap().unwrap();
            assert_eq!(at.rows, to as u64, "{name}");
            // the same batch again changes nothing
            assert_eq!(s.store_sync(&batch).unwrap().unwrap().rows, to as u64, "{name}");
        }
        let dels: Vec<u64> = (0..N as u64).filter(|&r| rv.xmax[r as usize] != 0).collect();
        let xids: Vec<u64> = dels.iter().map(|&r| rv.xmax[r as usize]).collect();
        let cids: Vec<u32> = dels.iter().map(|&r| rv.cmax[r as usize]).collect();
        // row 7 first deleted by the aborted transaction, then (the same
        // batch) by its real deleter; row 36 by the aborted one only
        let mut rows1 = vec![7u64, 36];
        let mut xids1 = vec![101u64, 101];
        let mut cids1 = vec![0u32, 0];
        rows1.extend(&dels[..dels.len() / 2]);
        xids1.extend(&xids[..dels.len() / 2]);
        cids1.extend(&cids[..dels.len() / 2]);
        let b1 = StoreSync {
            from_deletes: 0,
            del_rows: &rows1,
            del_xids: &xids1,
            del_cids: &cids1,
            ..StoreSync::ask(id, &t)
        };
        assert_eq!(s.store_sync(&b1).unwrap().unwrap().deletes, rows1.len() as u64, "{name}");
        let b2 = StoreSync {
            from_deletes: rows1.len() as u64,
            del_rows: &dels[dels.len() / 2..],
            del_xids: &xids[dels.len() / 2..],
            del_cids: &cids[dels.len() / 2..],
            ..StoreSync::ask(id, &t)
        };
        s.store_sync(&b2).unwrap().unwrap();
        let mut expect = rv.clone();
        assert_eq!(expect.xmax[36], 0);
        // only the aborted deletion: still live
        expect.xmax[36] = 101;
        expect.cmax[36] = 0;
        for (first, n, hide) in [(0usize, N, 0u64), (128, N - 128, 0), (64, 128, 100)] {
            let v = Arc::new(view(hide));
            let rows = StoreRows { view: v.clone(), first_row: first as u64, mvcc: StoreMvcc::Copy(id) };
            s.set_store_rows(Some(rows)).unwrap();
            let col = ColumnData { type_id: t[0], store: Some(0), ..Default::default() };
            let got = rows_of(&s.probe(&[col], n as u32, None).unwrap());
            assert_eq!(got, want(&v, &expect, first, n), "{name}: copy, rows {first}..+{n}, hide_below {hide}");
        }
        // a chunk past the copy's rows, or off a 64-row boundary, is refused
        let rows = StoreRows { view: Arc::new(view(0)), first_row: 256, mvcc: StoreMvcc::Copy(id) };
        s.set_store_rows(Some(rows)).unwrap();
        let col = ColumnData { type_id: t[0], store: Some(0), ..Default::default() };
        assert!(s.probe(&[col], 64, None).is_err(), "{name}");
        let rows = StoreRows { view: Arc::new(view(0)), first_row: 10, mvcc: StoreMvcc::Copy(id) };
        s.set_store_rows(Some(rows)).unwrap();
        assert!(s.probe(&[col], 10, None).is_err(), "{name}");
        // another generation: a new, empty copy
        let id2 = StoreId { generation: 4, ..id };
        assert_eq!(s.store_sync(&StoreSync::ask(id2, &t)).unwrap().unwrap().rows, 0, "{name}");
        let rows = StoreRows { view: Arc::new(view(0)), first_row: 0, mvcc: StoreMvcc::Copy(id) };
        s.set_store_rows(Some(rows)).unwrap();
        assert!(s.probe(&[col], 64, None).is_err(), "{name}: the old copy is gone");
    }
}
