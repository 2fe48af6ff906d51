//! `x ^ 2` on every engine: the GPU's square (x * x where it lies at most
//! 0.45 ULP from the true square) equals the host libm's pow (what the CPU
//! engine and PostgreSQL compute) on every row it computes, and leaves the
//! rows near a rounding midpoint to the CPU engine (`cpu_rows` of the raw
//! GPU engine).  Rows across
//! the exponent range, NaN, infinities, and exact squares.

mod common;

use common::f;
use pgstrom_runtime::engine::{ColumnData, ParamValue};
use pgstrom_runtime::program::{Builder, type_id};
use pgstrom_runtime::selftest::SplitMix64;

#[test]
fn square_matches_host_pow() {
    let mut rng = SplitMix64(20261126);
    let mut xs: Vec<f64> = Vec::new();
    for i in 0..400_000u64 {
        let x = match i % 5 {
            // any bit pattern: every exponent, subnormals, NaN, infinities
            0 => f64::from_bits(rng.next_u64()),
            // moderate values, as queries have them
            1 => (rng.next_u64() % 2_000_000_000) as f64 / 1000.0 - 1_000_000.0,
            2 => f64::from_bits((rng.next_u64() >> 12) | 0x3ff0_0000_0000_0000) * 10.0,
            // exact squares and near overflow / underflow
            3 => ((rng.next_u64() % 94_906_265) as f64) * if i % 2 == 0 { 1.0 } else { -1.0 },
            _ => {
                [1.4916681462400413e-154, 1e150, 1e-150, 0.0, -0.0, 1.0, -1.0, 0.5, 3.0][(rng.next_u64() % 9) as usize]
            }
        };
        // no square that overflows or underflows (an error on one engine
        // and a row left to PostgreSQL on the other)
        let x = if x.is_finite() && (x.abs() > 1e150 || (x != 0.0 && x.abs() < 1e-150)) { 1.25 } else { x };
        xs.push(x);
    }
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let col = ColumnData { type_id: type_id("FLOAT8"), values: &bytes, ..Default::default() };
    let mut b = Builder::new();
    b.var(0);
    b.param(0);
    b.func(f("DPOW"));
    let prog = b.finish(type_id("FLOAT8")).unwrap();
    let two = ParamValue::value(2.0f64.to_bits() as i64);
    let n = xs.len() as u32;
    // (the raw GPU engine leaves the squares it cannot prove in cpu_rows;
    // the others hand them to the CPU engine and compute every row)
    let engines: Vec<_> = common::engines("pow2").into_iter().chain(common::raw_gpu_engine("pow2")).collect();
    let cpu = engines[0].eval_program(&prog, &[col], &[two], n).map_err(|e| format!("{e}"));
    for e in &engines {
        let out = e.eval_program(&prog, &[col], &[two], n).map_err(|e| format!("{e}"));
        // the same error (an overflow or underflow) at the same row
        let (Ok(out), Ok(cpu)) = (&out, &cpu) else {
            assert_eq!(out.as_ref().err(), cpu.as_ref().err(), "{}", e.describe());
            continue;
        };
        let mut on_cpu = vec![false; xs.len()];
        for &i in &out.cpu_rows {
            on_cpu[i as usize] = true;
        }
        for i in 0..xs.len() {
            if !on_cpu[i] && !cpu.cpu_rows.contains(&(i as u32)) {
                assert_eq!(
                    (out.nulls[i], out.values[i]),
                    (cpu.nulls[i], cpu.values[i]),
                    "{}: {:e} ^ 2",
                    e.describe(),
                    xs[i]
                );
            }
        }
        // most rows are the engine's own
        assert!(out.cpu_rows.len() < xs.len() / 3, "{}: {} rows left to PostgreSQL", e.describe(), out.cpu_rows.len());
    }
}
