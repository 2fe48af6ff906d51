//! The `float2` type: IEEE 754 half precision (binary16), as PG-Strom has
//! it, for Arrow's Float16 columns (Arrow_Fdw reads and writes them,
//! pg2arrow dumps them).
//!
//! Owns the type's C functions (input/output, binary send/receive, casts,
//! comparisons, hashing) and the SQL that creates the type in pg_catalog
//! (so `float2` needs no schema, like PostgreSQL's own types) with its
//! operators and btree / hash operator classes.  Arithmetic and aggregates
//! go through the implicit casts to real and double precision, whose
//! results are exact widenings.  Values keep PostgreSQL's float semantics:
//! NaN equals NaN and sorts above every number, -0 equals 0; a conversion
//! that overflows or underflows to zero raises 22003 as float8 to float4
//! does.  On the device a float2 is held as the float4 of its value: the
//! widening casts and the comparisons run there (device_functions.def's
//! PGSTROM_* entries, found by name and signature).

use std::ffi::{CStr, CString, c_char};

use pgrx::pg_sys::{self, Datum};
use pgrx::prelude::*;
use pgstrom_arrow::float2::{self as text, ParseError, f16};

use crate::errors::raise_plain;

fn arg(fcinfo: pg_sys::FunctionCallInfo, i: usize) -> Datum {
    // SAFETY: PostgreSQL calls with at least i+1 arguments (the SQL
    // signatures below), none NULL (STRICT).
    unsafe { (*fcinfo).args.as_slice(i + 1)[i].value }
}

fn f2_arg(fcinfo: pg_sys::FunctionCallInfo, i: usize) -> f16 {
    f16::from_bits(arg(fcinfo, i).value() as u16)
}

fn f2_datum(v: f16) -> Datum {
    Datum::from(v.to_bits() as i16)
}

/// The OID of `pg_catalog.float2` (InvalidOid before the extension
/// created it).  A syscache lookup: the type comes and goes with the
/// extension, so it is not kept.
pub fn type_oid() -> pg_sys::Oid {
    // SAFETY: a syscache lookup by (name, namespace).
    unsafe {
        pg_sys::GetSysCacheOid(
            pg_sys::SysCacheIdentifier::TYPENAMENSP as i32,
            pg_sys::Anum_pg_type_oid as i16,
            Datum::from(c"float2".as_ptr()),
            Datum::from(pg_sys::PG_CATALOG_NAMESPACE),
            Datum::from(0),
            Datum::from(0),
        )
    }
}

/// Whether `typid` is `float2`.
pub fn is_float2(typid: pg_sys::Oid) -> bool {
    typid != pg_sys::InvalidOid && typid == type_oid()
}

/// `text` as float2, or PostgreSQL's ERROR for it.
fn parsed(text: &str) -> Datum {
    match text::parse(text) {
        Ok(v) => f2_datum(v),
        Err(ParseError::Syntax(m)) => raise_plain(PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION, m, None, None),
        Err(ParseError::OutOfRange(m)) => {
            raise_plain(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, m, None, None)
        }
    }
}

fn out_of_range(detail: &str) -> ! {
    raise_plain(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, format!("value out of range: {detail}"), None, None)
}

/// `v` as float2, rounded to nearest even; an ERROR when a finite value
/// overflows or a non-zero one underflows to zero (as float8 to real).
fn narrow(v: f64) -> f16 {
    text::narrow(v).unwrap_or_else(|why| out_of_range(why))
}

/// The `pg_finfo_` records PostgreSQL asks V1 C functions for.
macro_rules! finfo {
    ($($f:ident),* $(,)?) => {
        $(
            #[unsafe(no_mangle)]
            pub extern "C" fn $f() -> &'static pg_sys::Pg_finfo_record {
                const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
                &V1
            }
        )*
    };
}

finfo!(
    pg_finfo_float2in,
    pg_finfo_float2out,
    pg_finfo_float2recv,
    pg_finfo_float2send,
    pg_finfo_float2_to_float4,
    pg_finfo_float2_to_float8,
    pg_finfo_float4_to_float2,
    pg_finfo_float8_to_float2,
    pg_finfo_int2_to_float2,
    pg_finfo_int4_to_float2,
    pg_finfo_int8_to_float2,
    pg_finfo_numeric_to_float2,
    pg_finfo_float2_to_int2,
    pg_finfo_float2_to_int4,
    pg_finfo_float2_to_int8,
    pg_finfo_float2eq,
    pg_finfo_float2ne,
    pg_finfo_float2lt,
    pg_finfo_float2le,
    pg_finfo_float2gt,
    pg_finfo_float2ge,
    pg_finfo_float2cmp,
    pg_finfo_float2hash,
);

/// `float2in(cstring)`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2in(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    // SAFETY: a NUL-terminated string (cstring argument).
    let text = unsafe { CStr::from_ptr(arg(fcinfo, 0).cast_mut_ptr::<c_char>()) }.to_string_lossy().into_owned();
    parsed(&text)
}

/// `float2out(float2)`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2out(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    let s = CString::new(text::format(f2_arg(fcinfo, 0))).expect("no NUL");
    // SAFETY: pstrdup copies into the current memory context.
    Datum::from(unsafe { pg_sys::pstrdup(s.as_ptr()) })
}

/// `float2recv(internal)`: two bytes, network order.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2recv(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    // SAFETY: the argument is a StringInfo (the receive convention).
    let bits = unsafe { pg_sys::pq_getmsgint(arg(fcinfo, 0).cast_mut_ptr::<pg_sys::StringInfoData>(), 2) };
    Datum::from(bits as u16 as i16)
}

/// `float2send(float2)`.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2send(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    let bits = f2_arg(fcinfo, 0).to_bits();
    // SAFETY: a palloc'd bytea of 2 bytes plus its header.
    unsafe {
        let total = pg_sys::VARHDRSZ + 2;
        let p = pg_sys::palloc(total) as *mut u8;
        pgrx::set_varsize_4b(p.cast(), total as i32);
        std::ptr::copy_nonoverlapping(bits.to_be_bytes().as_ptr(), p.add(pg_sys::VARHDRSZ), 2);
        Datum::from(p)
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2_to_float4(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    Datum::from(f2_arg(fcinfo, 0).to_f32().to_bits())
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2_to_float8(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    Datum::from(f2_arg(fcinfo, 0).to_f64().to_bits())
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float4_to_float2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    let v = f32::from_bits(arg(fcinfo, 0).value() as u32);
    // f32 to f64 is exact: one rounding, to float2
    f2_datum(narrow(v as f64))
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float8_to_float2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    f2_datum(narrow(f64::from_bits(arg(fcinfo, 0).value() as u64)))
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn int2_to_float2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    f2_datum(narrow(arg(fcinfo, 0).value() as i16 as f64))
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn int4_to_float2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    f2_datum(narrow(arg(fcinfo, 0).value() as i32 as f64))
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn int8_to_float2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    // |v| beyond 2^53 overflows float2 long before f64 rounding matters
    f2_datum(narrow(arg(fcinfo, 0).value() as i64 as f64))
}

/// numeric to float2 through its text, as numeric to real goes.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn numeric_to_float2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    // SAFETY: numeric_out of a numeric datum gives a palloc'd cstring.
    let text = unsafe {
        let s = pg_sys::OidOutputFunctionCall(pg_sys::Oid::from(pg_sys::F_NUMERIC_OUT), arg(fcinfo, 0));
        CStr::from_ptr(s).to_string_lossy().into_owned()
    };
    parsed(&text)
}

/// float2 to an integer type: rounded half to even (rint), NaN and values
/// beyond the type an ERROR, as real to integer.
fn to_int(fcinfo: pg_sys::FunctionCallInfo, min: f64, max: f64, what: &str) -> i64 {
    let v = f2_arg(fcinfo, 0).to_f64().round_ties_even();
    if v.is_nan() || v < min || v > max {
        raise_plain(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, format!("{what} out of range"), None, None);
    }
    v as i64
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2_to_int2(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    Datum::from(to_int(fcinfo, i16::MIN as f64, i16::MAX as f64, "smallint") as i16)
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2_to_int4(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    Datum::from(to_int(fcinfo, i32::MIN as f64, i32::MAX as f64, "integer") as i32)
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2_to_int8(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    // every finite float2 fits in bigint
    Datum::from(to_int(fcinfo, f64::MIN, f64::MAX, "bigint"))
}

fn order(fcinfo: pg_sys::FunctionCallInfo) -> std::cmp::Ordering {
    text::cmp(f2_arg(fcinfo, 0), f2_arg(fcinfo, 1))
}

/// The comparison operators' functions: `$name(float2, float2) -> bool`.
macro_rules! comparisons {
    ($($name:ident => $test:ident),* $(,)?) => {
        $(
            #[pg_guard]
            #[unsafe(no_mangle)]
            pub extern "C-unwind" fn $name(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
                Datum::from(order(fcinfo).$test())
            }
        )*
    };
}

comparisons!(float2eq => is_eq, float2ne => is_ne, float2lt => is_lt, float2le => is_le, float2gt => is_gt, float2ge => is_ge);

/// btree support: -1, 0, 1.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2cmp(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    Datum::from(order(fcinfo) as i32)
}

/// hash support: equal values (0 and -0, every NaN) hash alike (the
/// canonical bits, mixed as murmur3's finalizer does).
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn float2hash(fcinfo: pg_sys::FunctionCallInfo) -> Datum {
    Datum::from(text::hash(f2_arg(fcinfo, 0)) as i32)
}

extension_sql!(
    r#"
CREATE TYPE pg_catalog.float2;
CREATE FUNCTION pgstrom.float2in(cstring) RETURNS float2
  AS 'MODULE_PATHNAME', 'float2in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2out(float2) RETURNS cstring
  AS 'MODULE_PATHNAME', 'float2out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2recv(internal) RETURNS float2
  AS 'MODULE_PATHNAME', 'float2recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2send(float2) RETURNS bytea
  AS 'MODULE_PATHNAME', 'float2send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE pg_catalog.float2 (
  INPUT = pgstrom.float2in, OUTPUT = pgstrom.float2out,
  RECEIVE = pgstrom.float2recv, SEND = pgstrom.float2send,
  INTERNALLENGTH = 2, PASSEDBYVALUE, ALIGNMENT = int2, STORAGE = plain,
  CATEGORY = 'N');
COMMENT ON TYPE pg_catalog.float2 IS 'half-precision floating-point number, 2-byte storage (pg_strom)';

CREATE FUNCTION pgstrom.float4(float2) RETURNS real
  AS 'MODULE_PATHNAME', 'float2_to_float4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float8(float2) RETURNS double precision
  AS 'MODULE_PATHNAME', 'float2_to_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2(real) RETURNS float2
  AS 'MODULE_PATHNAME', 'float4_to_float2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2(double precision) RETURNS float2
  AS 'MODULE_PATHNAME', 'float8_to_float2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2(smallint) RETURNS float2
  AS 'MODULE_PATHNAME', 'int2_to_float2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2(integer) RETURNS float2
  AS 'MODULE_PATHNAME', 'int4_to_float2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2(bigint) RETURNS float2
  AS 'MODULE_PATHNAME', 'int8_to_float2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.float2(numeric) RETURNS float2
  AS 'MODULE_PATHNAME', 'numeric_to_float2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.int2(float2) RETURNS smallint
  AS 'MODULE_PATHNAME', 'float2_to_int2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.int4(float2) RETURNS integer
  AS 'MODULE_PATHNAME', 'float2_to_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.int8(float2) RETURNS bigint
  AS 'MODULE_PATHNAME', 'float2_to_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgstrom.numeric(float2) RETURNS numeric
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT $1::double precision::numeric $$;

CREATE CAST (float2 AS real) WITH FUNCTION pgstrom.float4(float2) AS IMPLICIT;
CREATE CAST (float2 AS double precision) WITH FUNCTION pgstrom.float8(float2) AS IMPLICIT;
CREATE CAST (real AS float2) WITH FUNCTION pgstrom.float2(real) AS ASSIGNMENT;
CREATE CAST (double precision AS float2) WITH FUNCTION pgstrom.float2(double precision) AS ASSIGNMENT;
CREATE CAST (smallint AS float2) WITH FUNCTION pgstrom.float2(smallint) AS ASSIGNMENT;
CREATE CAST (integer AS float2) WITH FUNCTION pgstrom.float2(integer) AS ASSIGNMENT;
CREATE CAST (bigint AS float2) WITH FUNCTION pgstrom.float2(bigint) AS ASSIGNMENT;
CREATE CAST (numeric AS float2) WITH FUNCTION pgstrom.float2(numeric) AS ASSIGNMENT;
CREATE CAST (float2 AS smallint) WITH FUNCTION pgstrom.int2(float2) AS ASSIGNMENT;
CREATE CAST (float2 AS integer) WITH FUNCTION pgstrom.int4(float2) AS ASSIGNMENT;
CREATE CAST (float2 AS bigint) WITH FUNCTION pgstrom.int8(float2) AS ASSIGNMENT;
CREATE CAST (float2 AS numeric) WITH FUNCTION pgstrom.numeric(float2) AS ASSIGNMENT;

CREATE FUNCTION pgstrom.float2eq(float2, float2) RETURNS bool
  AS 'MODULE_PATHNAME', 'float2eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2ne(float2, float2) RETURNS bool
  AS 'MODULE_PATHNAME', 'float2ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2lt(float2, float2) RETURNS bool
  AS 'MODULE_PATHNAME', 'float2lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2le(float2, float2) RETURNS bool
  AS 'MODULE_PATHNAME', 'float2le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2gt(float2, float2) RETURNS bool
  AS 'MODULE_PATHNAME', 'float2gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2ge(float2, float2) RETURNS bool
  AS 'MODULE_PATHNAME', 'float2ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2cmp(float2, float2) RETURNS integer
  AS 'MODULE_PATHNAME', 'float2cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION pgstrom.float2hash(float2) RETURNS integer
  AS 'MODULE_PATHNAME', 'float2hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR pg_catalog.= (LEFTARG = float2, RIGHTARG = float2, FUNCTION = pgstrom.float2eq,
  COMMUTATOR = OPERATOR(pg_catalog.=), NEGATOR = OPERATOR(pg_catalog.<>), RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR pg_catalog.<> (LEFTARG = float2, RIGHTARG = float2, FUNCTION = pgstrom.float2ne,
  COMMUTATOR = OPERATOR(pg_catalog.<>), NEGATOR = OPERATOR(pg_catalog.=), RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR pg_catalog.< (LEFTARG = float2, RIGHTARG = float2, FUNCTION = pgstrom.float2lt,
  COMMUTATOR = OPERATOR(pg_catalog.>), NEGATOR = OPERATOR(pg_catalog.>=), RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR pg_catalog.<= (LEFTARG = float2, RIGHTARG = float2, FUNCTION = pgstrom.float2le,
  COMMUTATOR = OPERATOR(pg_catalog.>=), NEGATOR = OPERATOR(pg_catalog.>), RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR pg_catalog.> (LEFTARG = float2, RIGHTARG = float2, FUNCTION = pgstrom.float2gt,
  COMMUTATOR = OPERATOR(pg_catalog.<), NEGATOR = OPERATOR(pg_catalog.<=), RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR pg_catalog.>= (LEFTARG = float2, RIGHTARG = float2, FUNCTION = pgstrom.float2ge,
  COMMUTATOR = OPERATOR(pg_catalog.<=), NEGATOR = OPERATOR(pg_catalog.<), RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS pg_catalog.float2_ops DEFAULT FOR TYPE float2 USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 pgstrom.float2cmp(float2, float2);
CREATE OPERATOR CLASS pg_catalog.float2_ops DEFAULT FOR TYPE float2 USING hash AS
  OPERATOR 1 =, FUNCTION 1 pgstrom.float2hash(float2);
"#,
    name = "float2",
    requires = ["arrow_fdw"]
);
