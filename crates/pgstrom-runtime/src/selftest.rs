//! A self-test of an engine: deterministic data with NULLs and edge values
//! (extremes, NaN, infinities, -0.0), every comparison operator on every
//! column type, each result checked against [`reference_filter`].
//! `pgstrom.engine_selftest()` and the engine tests both run it, so the GPU
//! and CPU engines are held to the same reference.

use std::time::Instant;

use crate::engine::{CompareOp, Engine, FilterColumn, reference_filter};
use crate::error::DeviceError;

/// splitmix64: small, fast, deterministic.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Columns of test data and their validity bitmap.
#[derive(Debug, Clone)]
pub struct TestData {
    /// int4 column.
    pub i32s: Vec<i32>,
    /// int8 column.
    pub i64s: Vec<i64>,
    /// float8 column.
    pub f64s: Vec<f64>,
    /// Arrow validity bitmap shared by the columns (about 10% NULL).
    pub validity: Vec<u8>,
}

/// `n` rows of test data from `seed`.
pub fn test_data(n: usize, seed: u64) -> TestData {
    let mut r = SplitMix64(seed);
    let mut d = TestData {
        i32s: Vec::with_capacity(n),
        i64s: Vec::with_capacity(n),
        f64s: Vec::with_capacity(n),
        validity: vec![0; n.div_ceil(8)],
    };
    for i in 0..n {
        let x = r.next_u64();
        let special = x % 50;
        d.i32s.push(match special {
            0 => i32::MIN,
            1 => i32::MAX,
            _ => (x as i32) % 1000,
        });
        d.i64s.push(match special {
            0 => i64::MIN,
            1 => i64::MAX,
            _ => (x as i64) % 1_000_000,
        });
        d.f64s.push(match special {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            _ => ((x % 20001) as f64 - 10000.0) / 7.0,
        });
        if !r.next_u64().is_multiple_of(10) {
            d.validity[i / 8] |= 1 << (i % 8);
        }
    }
    d
}

/// The (type name, column) cases the self-test runs.
pub fn test_columns(d: &TestData) -> Vec<(&'static str, FilterColumn<'_>)> {
    vec![
        ("int4", FilterColumn::Int32 { values: &d.i32s, constant: 17 }),
        ("int4", FilterColumn::Int32 { values: &d.i32s, constant: i32::MIN }),
        ("int8", FilterColumn::Int64 { values: &d.i64s, constant: -5 }),
        ("int8", FilterColumn::Int64 { values: &d.i64s, constant: i64::MAX }),
        ("float8", FilterColumn::Float64 { values: &d.f64s, constant: 0.0 }),
        ("float8", FilterColumn::Float64 { values: &d.f64s, constant: f64::NAN }),
        ("float8", FilterColumn::Float64 { values: &d.f64s, constant: f64::INFINITY }),
    ]
}

/// One self-test case.
#[derive(Debug, Clone)]
pub struct SelftestRow {
    /// Column type.
    pub data_type: &'static str,
    /// The constant, as text.
    pub constant: String,
    /// Operator.
    pub op: CompareOp,
    /// Whether the chunk had a validity bitmap.
    pub with_nulls: bool,
    /// Rows in the chunk.
    pub nrows: usize,
    /// Matches the engine counted.
    pub nmatched: u32,
    /// Whether every row's result equals the reference.
    pub matches_reference: bool,
    /// Milliseconds the engine call took (transfers included).
    pub elapsed_ms: f64,
}

fn constant_text(c: &FilterColumn<'_>) -> String {
    match c {
        FilterColumn::Int32 { constant, .. } => constant.to_string(),
        FilterColumn::Int64 { constant, .. } => constant.to_string(),
        FilterColumn::Float64 { constant, .. } if constant.is_nan() => "NaN".into(),
        FilterColumn::Float64 { constant, .. } if constant.is_infinite() => "Infinity".into(),
        FilterColumn::Float64 { constant, .. } => constant.to_string(),
    }
}

/// Run every case on `engine` over `nrows` rows of `test_data(nrows, seed)`.
pub fn run(engine: &dyn Engine, nrows: usize, seed: u64) -> Result<Vec<SelftestRow>, DeviceError> {
    let d = test_data(nrows, seed);
    let mut rows = Vec::new();
    for (data_type, col) in test_columns(&d) {
        for with_nulls in [false, true] {
            let validity = with_nulls.then_some(d.validity.as_slice());
            for op in CompareOp::ALL {
                let started = Instant::now();
                let got = engine.filter_compare(&col, validity, op)?;
                let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
                let want = reference_filter(&col, validity, op);
                rows.push(SelftestRow {
                    data_type,
                    constant: constant_text(&col),
                    op,
                    with_nulls,
                    nrows,
                    nmatched: got.nmatched,
                    matches_reference: got == want,
                    elapsed_ms,
                });
            }
        }
    }
    Ok(rows)
}
