//! `pgstrom.random_*`: test-data generators, as PG-Strom's users know them.
//!
//! Each takes a NULL ratio first (the fraction of NULLs it returns), then
//! optional bounds.  One pseudo-random stream per backend, seeded with
//! `pgstrom.random_setseed(n)`: the same seed gives the same values in the
//! same order.  The functions are PARALLEL RESTRICTED so that a parallel
//! plan cannot split the stream across workers and break that promise.
//! The scalar generators are here; date/time and range generators are SQL
//! and PL/pgSQL wrappers over `random_int` (see the extension_sql! block below).

use std::sync::Mutex;

use pgrx::prelude::*;

use pgstrom_runtime::selftest::SplitMix64;

use crate::errors;

static STREAM: Mutex<Option<SplitMix64>> = Mutex::new(None);

fn next_u64() -> u64 {
    let mut guard = STREAM.lock().unwrap_or_else(|p| p.into_inner());
    let rng = guard.get_or_insert_with(|| {
        // Unseeded: differ per backend and per start.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        SplitMix64(t ^ ((std::process::id() as u64) << 32))
    });
    rng.next_u64()
}

/// Uniform in [0, 1).
fn next_f64() -> f64 {
    (next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Uniform in [0, n) for n >= 1 (128-bit multiply: no modulo bias worth
/// mentioning, no overflow for the full i64 range).
fn next_below(n: u128) -> u128 {
    ((next_u64() as u128) * n) >> 64
}

fn check_ratio(ratio: f64) {
    if !(0.0..=1.0).contains(&ratio) {
        errors::raise_plain(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("null ratio must be between 0.0 and 1.0, not {ratio}"),
            None,
            None,
        );
    }
}

fn is_null(ratio: f64) -> bool {
    check_ratio(ratio);
    ratio > 0.0 && next_f64() < ratio
}

fn check_bounds<T: PartialOrd + std::fmt::Display>(lower: T, upper: T) {
    if lower > upper {
        errors::raise_plain(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("lower bound {lower} is greater than upper bound {upper}"),
            None,
            None,
        );
    }
}

const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn random_alnum() -> char {
    ALNUM[next_below(ALNUM.len() as u128) as usize] as char
}

#[pg_schema]
mod pgstrom {
    use super::*;

    /// Seed this session's stream: the same seed gives the same sequence.
    #[pg_extern(volatile, parallel_restricted)]
    fn random_setseed(seed: i32) {
        let mut guard = STREAM.lock().unwrap_or_else(|p| p.into_inner());
        *guard = Some(SplitMix64((seed as i64 as u64) ^ 0x7067_7374_726f_6d00));
    }

    /// A bigint in [lower, upper], NULL with probability `ratio`.
    #[pg_extern(volatile, parallel_restricted)]
    fn random_int(ratio: default!(f64, 0.0), lower: default!(i64, 0), upper: default!(i64, 2147483647)) -> Option<i64> {
        check_bounds(lower, upper);
        if is_null(ratio) {
            return None;
        }
        let width = (upper as i128 - lower as i128 + 1) as u128;
        Some((lower as i128 + next_below(width) as i128) as i64)
    }

    /// A float8 in [lower, upper), NULL with probability `ratio`.
    #[pg_extern(volatile, parallel_restricted)]
    fn random_float(ratio: default!(f64, 0.0), lower: default!(f64, 0.0), upper: default!(f64, 1.0)) -> Option<f64> {
        if !lower.is_finite() || !upper.is_finite() {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                "bounds of random_float must be finite".to_string(),
                None,
                None,
            );
        }
        check_bounds(lower, upper);
        if is_null(ratio) {
            return None;
        }
        Some(lower + next_f64() * (upper - lower))
    }

    /// `template` with every '*' replaced by a random letter or digit.
    #[pg_extern(volatile, parallel_restricted)]
    fn random_text(ratio: default!(f64, 0.0), template: default!(&str, "'test_**'")) -> Option<String> {
        if is_null(ratio) {
            return None;
        }
        Some(template.chars().map(|c| if c == '*' { random_alnum() } else { c }).collect())
    }

    /// Random letters and digits, 1 to `maxlen` of them.
    #[pg_extern(volatile, parallel_restricted)]
    fn random_text_len(ratio: default!(f64, 0.0), maxlen: default!(i32, 10)) -> Option<String> {
        if maxlen < 1 {
            errors::raise_plain(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("maxlen must be at least 1, not {maxlen}"),
                None,
                None,
            );
        }
        if is_null(ratio) {
            return None;
        }
        let len = 1 + next_below(maxlen as u128) as usize;
        Some((0..len).map(|_| random_alnum()).collect())
    }
}

extension_sql!(
    r#"
CREATE FUNCTION pgstrom.random_date(ratio float8 DEFAULT 0.0,
                                    lower date DEFAULT '2015-01-01',
                                    upper date DEFAULT '2025-12-31')
RETURNS date LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
AS $$
BEGIN
    IF lower > upper THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('lower bound %s is greater than upper bound %s', lower, upper);
    END IF;
    RETURN lower + pgstrom.random_int(ratio, 0, upper - lower)::int;
END $$;

CREATE FUNCTION pgstrom.random_time(ratio float8 DEFAULT 0.0,
                                    lower time DEFAULT '00:00:00',
                                    upper time DEFAULT '23:59:59')
RETURNS time LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
AS $$
BEGIN
    IF lower > upper THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('lower bound %s is greater than upper bound %s', lower, upper);
    END IF;
    RETURN lower + pgstrom.random_int(ratio, 0,
        (extract(epoch FROM upper - lower) * 1000000)::bigint) * interval '1 microsecond';
END $$;

CREATE FUNCTION pgstrom.random_timetz(ratio float8 DEFAULT 0.0,
                                      lower time DEFAULT '00:00:00',
                                      upper time DEFAULT '23:59:59')
RETURNS timetz LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $$ SELECT pgstrom.random_time(ratio, lower, upper)::timetz $$;

CREATE FUNCTION pgstrom.random_timestamp(ratio float8 DEFAULT 0.0,
                                         lower timestamp DEFAULT '2015-01-01',
                                         upper timestamp DEFAULT '2025-01-01')
RETURNS timestamp LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
AS $$
BEGIN
    IF lower > upper THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('lower bound %s is greater than upper bound %s', lower, upper);
    END IF;
    RETURN lower + pgstrom.random_int(ratio, 0,
        (extract(epoch FROM upper - lower) * 1000000)::bigint) * interval '1 microsecond';
END $$;

CREATE FUNCTION pgstrom.random_timestamptz(ratio float8 DEFAULT 0.0,
                                           lower timestamptz DEFAULT '2015-01-01 00:00:00+00',
                                           upper timestamptz DEFAULT '2025-01-01 00:00:00+00')
RETURNS timestamptz LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
AS $$
BEGIN
    IF lower > upper THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('lower bound %s is greater than upper bound %s', lower, upper);
    END IF;
    RETURN lower + pgstrom.random_int(ratio, 0,
        (extract(epoch FROM upper - lower) * 1000000)::bigint) * interval '1 microsecond';
END $$;

CREATE FUNCTION pgstrom.random_int4range(ratio float8 DEFAULT 0.0,
                                         lower int4 DEFAULT 0,
                                         upper int4 DEFAULT 2147483647)
RETURNS int4range LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $$ SELECT CASE WHEN a IS NULL THEN NULL ELSE int4range(least(a, b)::int4, greatest(a, b)::int4, '[)') END
      FROM (SELECT pgstrom.random_int(ratio, lower, upper) AS a,
                   pgstrom.random_int(0.0, lower, upper) AS b) s $$;

CREATE FUNCTION pgstrom.random_int8range(ratio float8 DEFAULT 0.0,
                                         lower int8 DEFAULT 0,
                                         upper int8 DEFAULT 9223372036854775806)
RETURNS int8range LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $$ SELECT CASE WHEN a IS NULL THEN NULL ELSE int8range(least(a, b), greatest(a, b), '[)') END
      FROM (SELECT pgstrom.random_int(ratio, lower, upper) AS a,
                   pgstrom.random_int(0.0, lower, upper) AS b) s $$;

CREATE FUNCTION pgstrom.random_daterange(ratio float8 DEFAULT 0.0,
                                         lower date DEFAULT '2015-01-01',
                                         upper date DEFAULT '2025-12-31')
RETURNS daterange LANGUAGE sql VOLATILE PARALLEL RESTRICTED
AS $$ SELECT CASE WHEN a IS NULL THEN NULL ELSE daterange(least(a, b), greatest(a, b), '[]') END
      FROM (SELECT pgstrom.random_date(ratio, lower, upper) AS a,
                   pgstrom.random_date(0.0, lower, upper) AS b) s $$;
"#,
    name = "random_sql_generators",
    requires = [pgstrom::random_int]
);
