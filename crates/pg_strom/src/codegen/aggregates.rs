//! Which aggregates GpuPreAgg reduces, and their partial states.
//!
//! The device accumulates words per group (see pgstrom_runtime::agg); the
//! node returns, per group and chunk, the partial state PostgreSQL's own
//! transition function would have made from the same rows, in the partial
//! Aggref's type: the transition type, or for an `internal` state its
//! serial form.  PostgreSQL's Finalize Aggregate then combines and
//! finalizes them with the aggregate's own functions, so results (and
//! errors such as `bigint out of range`) are PostgreSQL's.
//!
//! | aggregate | device op | partial state |
//! |---|---|---|
//! | count(*), count(x), regr_count(y, x) | Count | int8 |
//! | sum(int2), sum(int4) | SumInt | int8 (NULL: no input) |
//! | sum(int8), avg(int8) | SumInt | int8_avg_serialize's bytea |
//! | avg(int2), avg(int4) | SumInt | int8[] {N, sum} |
//! | sum(float4), sum(float8) | SumFlt | float4 / float8 |
//! | avg, variance, stddev families (float4, float8) | Moments | float8[] {N, Sx, Sxx} |
//! | corr, covar_*, regr_* (float8, float8) | Moments2 | float8[] {N, Sx, Sxx, Sy, Syy, Sxy} |
//! | min, max (integers, date, time, timestamp(tz)) | MinInt/MaxInt | the type |
//! | min, max (float4, float8) | MinFlt/MaxFlt | the type |
//! | sum(numeric), avg(numeric) | SumNum | numeric_avg_serialize's bytea |
//! | sum(interval), avg(interval) | SumIntv | interval_avg_serialize's bytea |
//! | min, max (numeric(p,s) columns, p <= 18) | MinNum/MaxNum | numeric |
//! | min, max (other numerics of <= 38 digits, interval, timetz) | MinAny/MaxAny | the type |

use pgrx::IntoDatum;
use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::agg::{self, AggKind};

use crate::errors;

/// How a group's words become a partial state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Encoding {
    /// int8 count.
    Count = 1,
    /// int8 sum, NULL when no row.
    SumInt8 = 2,
    /// int8_avg_serialize's bytea {N, sum as numeric}.
    PolyNum = 3,
    /// int8[] {N, sum}.
    IntAvg = 4,
    /// float4 sum, NULL when no row.
    SumFloat4 = 5,
    /// float8 sum, NULL when no row.
    SumFloat8 = 6,
    /// float8[] {N, Sx, Sxx}.
    Moments = 7,
    /// float8[] {N, Sx, Sxx, Sy, Syy, Sxy}.
    Regr = 8,
    /// The argument's integer-like type, NULL when no row.
    MinMaxInt = 9,
    /// The argument's float type, NULL when no row.
    MinMaxFloat = 10,
    /// numeric_avg_serialize's bytea {N, sum, maxScale, maxScaleCount,
    /// NaN, +Infinity and -Infinity counts}.
    NumAvg = 11,
    /// interval_avg_serialize's bytea {N, sum, +Infinity and -Infinity
    /// counts}.
    IntervalAvg = 12,
    /// numeric at the operation's scale, NULL when no row.
    MinMaxNum = 13,
    /// The argument's type (numeric, interval, timetz) from the device's
    /// value, NULL when no row.
    MinMaxAny = 14,
}

impl Encoding {
    /// From its number in a plan.
    pub fn from_u32(v: u32) -> Option<Encoding> {
        use Encoding::*;
        [
            Count,
            SumInt8,
            PolyNum,
            IntAvg,
            SumFloat4,
            SumFloat8,
            Moments,
            Regr,
            MinMaxInt,
            MinMaxFloat,
            NumAvg,
            IntervalAvg,
            MinMaxNum,
            MinMaxAny,
        ]
        .into_iter()
        .find(|e| *e as u32 == v)
    }
}

const INT2: u32 = pg_sys::INT2OID.to_u32();
const INT4: u32 = pg_sys::INT4OID.to_u32();
const INT8: u32 = pg_sys::INT8OID.to_u32();
const FLOAT4: u32 = pg_sys::FLOAT4OID.to_u32();
const FLOAT8: u32 = pg_sys::FLOAT8OID.to_u32();

/// The device operation and partial encoding of an aggregate, by its
/// pg_catalog name and argument types; None when GpuPreAgg cannot reduce
/// it (the aggregation stays on the CPU).
pub fn classify(name: &str, args: &[pg_sys::Oid], star: bool) -> Option<(AggKind, Encoding)> {
    let a: Vec<u32> = args.iter().map(|o| o.to_u32()).collect();
    let one = if a.len() == 1 { a[0] } else { 0 };
    let int_like = |t: u32| {
        [INT2, INT4, INT8, pg_sys::DATEOID.to_u32(), pg_sys::TIMEOID.to_u32(), pg_sys::TIMESTAMPOID.to_u32()]
            .contains(&t)
            || t == pg_sys::TIMESTAMPTZOID.to_u32()
    };
    let float = |t: u32| t == FLOAT4 || t == FLOAT8;
    Some(match name {
        "count" if star || a.len() == 1 => (AggKind::Count, Encoding::Count),
        "sum" if one == INT2 || one == INT4 => (AggKind::SumInt, Encoding::SumInt8),
        "sum" if one == INT8 => (AggKind::SumInt, Encoding::PolyNum),
        "sum" if one == FLOAT4 => (AggKind::SumFlt, Encoding::SumFloat4),
        "sum" if one == FLOAT8 => (AggKind::SumFlt, Encoding::SumFloat8),
        "avg" if one == INT2 || one == INT4 => (AggKind::SumInt, Encoding::IntAvg),
        "avg" if one == INT8 => (AggKind::SumInt, Encoding::PolyNum),
        "sum" | "avg" if one == pg_sys::NUMERICOID.to_u32() => (AggKind::SumNum, Encoding::NumAvg),
        "sum" | "avg" if one == pg_sys::INTERVALOID.to_u32() => (AggKind::SumIntv, Encoding::IntervalAvg),
        "min" if one == pg_sys::NUMERICOID.to_u32() => (AggKind::MinNum, Encoding::MinMaxNum),
        "max" if one == pg_sys::NUMERICOID.to_u32() => (AggKind::MaxNum, Encoding::MinMaxNum),
        "min" if one == pg_sys::INTERVALOID.to_u32() || one == pg_sys::TIMETZOID.to_u32() => {
            (AggKind::MinAny, Encoding::MinMaxAny)
        }
        "max" if one == pg_sys::INTERVALOID.to_u32() || one == pg_sys::TIMETZOID.to_u32() => {
            (AggKind::MaxAny, Encoding::MinMaxAny)
        }
        "avg" | "variance" | "var_pop" | "var_samp" | "stddev" | "stddev_pop" | "stddev_samp" if float(one) => {
            (AggKind::Moments, Encoding::Moments)
        }
        "min" if int_like(one) => (AggKind::MinInt, Encoding::MinMaxInt),
        "max" if int_like(one) => (AggKind::MaxInt, Encoding::MinMaxInt),
        "min" if float(one) => (AggKind::MinFlt, Encoding::MinMaxFloat),
        "max" if float(one) => (AggKind::MaxFlt, Encoding::MinMaxFloat),
        "regr_count" if a == [FLOAT8, FLOAT8] => (AggKind::Count, Encoding::Count),
        "corr" | "covar_pop" | "covar_samp" | "regr_avgx" | "regr_avgy" | "regr_intercept" | "regr_r2"
        | "regr_slope" | "regr_sxx" | "regr_sxy" | "regr_syy"
            if a == [FLOAT8, FLOAT8] =>
        {
            (AggKind::Moments2, Encoding::Regr)
        }
        _ => return None,
    })
}

/// A partial Aggref GpuPreAgg reduces: its name, argument expressions and
/// types, device operation and partial encoding.
pub struct AggrefInfo {
    /// pg_catalog name.
    pub name: String,
    /// Argument expressions.
    pub args: Vec<*mut pg_sys::Node>,
    /// Their types.
    pub types: Vec<pg_sys::Oid>,
    /// The device operation.
    pub kind: AggKind,
    /// How its words become the partial state.
    pub enc: Encoding,
}

/// Classify a partial Aggref (mark_partial_aggref done); Err says why the
/// device cannot reduce it.
///
/// # Safety
/// `a` is a valid Aggref.
pub unsafe fn classify_aggref(a: *mut pg_sys::Aggref) -> Result<AggrefInfo, String> {
    // SAFETY: a valid Aggref; catalog lookups.
    unsafe {
        if !(*a).aggdistinct.is_null()
            || !(*a).aggorder.is_null()
            || !(*a).aggdirectargs.is_null()
            || (*a).aggkind != b'n' as std::ffi::c_char
            || (*a).agglevelsup != 0
            || (*a).aggvariadic
            || pg_sys::get_func_namespace((*a).aggfnoid) != pg_sys::Oid::from(pg_sys::PG_CATALOG_NAMESPACE)
        {
            return Err("an aggregate is not a plain built-in one".into());
        }
        let name_p = pg_sys::get_func_name((*a).aggfnoid);
        if name_p.is_null() {
            return Err("an aggregate has no name".into());
        }
        let name = std::ffi::CStr::from_ptr(name_p).to_string_lossy().into_owned();
        let args: Vec<*mut pg_sys::Node> = crate::pg::list::from_list((*a).args)
            .into_iter()
            .map(|t| (*(t as *mut pg_sys::TargetEntry)).expr.cast())
            .collect();
        let types: Vec<pg_sys::Oid> = args.iter().map(|&x| pg_sys::exprType(x)).collect();
        let Some((mut kind, mut enc)) = classify(&name, &types, (*a).aggstar) else {
            return Err(format!("aggregate {name} is not reduced on the device"));
        };
        // min / max of a numeric other than a numeric(p,s) column with p <=
        // 18 (compared as integers): by comparing device numerics
        if matches!(kind, AggKind::MinNum | AggKind::MaxNum) && crate::codegen::numeric_column_scale(args[0]).is_none()
        {
            kind = if kind == AggKind::MinNum { AggKind::MinAny } else { AggKind::MaxAny };
            enc = Encoding::MinMaxAny;
        }
        let arg0 = types.first().copied().unwrap_or(pg_sys::InvalidOid);
        if (*a).aggtype != partial_type(enc, arg0) {
            return Err(format!("the partial state of {name} is not the expected type"));
        }
        Ok(AggrefInfo { name, args, types, kind, enc })
    }
}

/// Where a grouping key's value comes from.
pub enum KeySource {
    /// A fixed-width key: the value the device computed.
    Device,
    /// A variable-length key (text, bpchar, bytea) that is a column (the
    /// Var under any RelabelType): read on the host at a representative
    /// row.
    Column(*mut pg_sys::Var),
    /// A variable-length key that is an expression: grouped on the device,
    /// its value evaluated by PostgreSQL at the group's representative
    /// combination.
    Expr,
}

/// Where grouping key `e` is read.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn key_source(e: *mut pg_sys::Node) -> KeySource {
    // SAFETY: a valid expression.
    unsafe {
        let by_row = crate::codegen::device_type_of(pg_sys::exprType(e))
            .and_then(pgstrom_runtime::catalog::type_info)
            .is_some_and(|ti| ti.width == 0);
        if !by_row {
            return KeySource::Device;
        }
        let v = crate::codegen::strip_relabel(e);
        if (*v).type_ == pg_sys::NodeTag::T_Var { KeySource::Column(v.cast()) } else { KeySource::Expr }
    }
}

/// The type the partial state has (what mark_partial_aggref made the
/// Aggref's type); `arg` is the first argument's type.
pub fn partial_type(enc: Encoding, arg: pg_sys::Oid) -> pg_sys::Oid {
    match enc {
        Encoding::Count | Encoding::SumInt8 => pg_sys::INT8OID,
        Encoding::PolyNum | Encoding::NumAvg | Encoding::IntervalAvg => pg_sys::BYTEAOID,
        Encoding::IntAvg => pg_sys::INT8ARRAYOID,
        Encoding::SumFloat4 => pg_sys::FLOAT4OID,
        Encoding::SumFloat8 => pg_sys::FLOAT8OID,
        Encoding::Moments | Encoding::Regr => pg_sys::FLOAT8ARRAYOID,
        Encoding::MinMaxInt | Encoding::MinMaxFloat | Encoding::MinMaxNum | Encoding::MinMaxAny => arg,
    }
}

fn overflow(msg: &str) -> ! {
    errors::raise_plain(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, msg.into(), None, None)
}

fn array(values: &[Datum8], elmtype: pg_sys::Oid) -> pg_sys::Datum {
    let mut d: Vec<pg_sys::Datum> = values.iter().map(|v| v.0).collect();
    // SAFETY: by-value elements of a built-in type.
    unsafe { pg_sys::Datum::from(pg_sys::construct_array_builtin(d.as_mut_ptr(), d.len() as i32, elmtype)) }
}

struct Datum8(pg_sys::Datum);

fn i8d(v: i64) -> Datum8 {
    Datum8(v.into_datum().expect("int8 datum"))
}

fn f8d(v: f64) -> Datum8 {
    Datum8(v.into_datum().expect("float8 datum"))
}

/// A text, bpchar or bytea datum of `b` (in the current memory context).
pub(crate) fn varlena_datum(b: &[u8]) -> pg_sys::Datum {
    // SAFETY: a fresh varlena of the bytes' length.
    unsafe {
        let v = pg_sys::palloc(b.len() + pg_sys::VARHDRSZ) as *mut u8;
        std::ptr::copy_nonoverlapping(b.as_ptr(), v.add(pg_sys::VARHDRSZ), b.len());
        pgrx::set_varsize_4b(v.cast(), (b.len() + pg_sys::VARHDRSZ) as i32);
        pg_sys::Datum::from(v)
    }
}

/// Compile aggregate argument `x` for operation `kind`: the program and
/// the operation's scale (`AggOp::scale`).
///
/// # Safety
/// `x` is a valid expression.
pub unsafe fn compile_agg_arg(
    kind: AggKind,
    x: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut crate::codegen::Inputs,
) -> Result<(pgstrom_runtime::program::Program, i32), crate::codegen::NotSupported> {
    use crate::codegen;
    // SAFETY: a valid expression (caller).
    unsafe {
        match kind {
            AggKind::SumNum => codegen::compile_numeric_sum(x, resolve, inputs),
            AggKind::MinNum | AggKind::MaxNum => codegen::compile_numeric_column(x, resolve, inputs),
            AggKind::MinAny | AggKind::MaxAny => codegen::compile_minmax_any(x, resolve, inputs).map(|p| (p, 0)),
            AggKind::Count => codegen::compile_count_arg(x, resolve, inputs).map(|(p, _)| (p, 0)),
            // an interval sum's argument stays on the device
            AggKind::SumIntv => codegen::compile_shared(x, resolve, inputs, true).map(|(p, _)| (p, 0)),
            _ => codegen::compile_shared(x, resolve, inputs, false).map(|(p, _)| (p, 0)),
        }
    }
}

/// The partial state of one operation's words: (datum, is NULL).  `scale`
/// is the scale a SumNum kept its sum at.  Memory comes from the current
/// context.
pub fn partial_datum(enc: Encoding, kind: AggKind, arg: pg_sys::Oid, scale: i32, w: &[u64]) -> (pg_sys::Datum, bool) {
    let null = (pg_sys::Datum::from(0), true);
    let n = w[0];
    match enc {
        Encoding::NumAvg => (varlena_datum(&agg::num_avg_state(w, scale)), false),
        Encoding::IntervalAvg => match agg::interval_avg_state(w) {
            Some(b) => (varlena_datum(&b), false),
            None => errors::raise_plain(
                PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, // 22008
                "interval out of range".into(),
                None,
                None,
            ),
        },
        Encoding::Count => (i8d(n as i64).0, false),
        Encoding::SumInt8 => {
            if n == 0 {
                return null;
            }
            match i64::try_from(agg::sum_int(w)) {
                Ok(v) => (i8d(v).0, false),
                Err(_) => overflow("bigint out of range"),
            }
        }
        Encoding::PolyNum => {
            (varlena_datum(&pgstrom_runtime::numeric::poly_num_bytes(n as i64, agg::sum_int(w))), false)
        }
        Encoding::IntAvg => {
            let s = agg::sum_int(w);
            // int4_avg_accum adds in int64 without a check; the device sum
            // is exact, so wrap as PostgreSQL would
            (array(&[i8d(n as i64), i8d(s as i64)], pg_sys::INT8OID), false)
        }
        Encoding::SumFloat4 | Encoding::SumFloat8 => {
            if n == 0 {
                return null;
            }
            let s = agg::word_f8(w[1]);
            if enc == Encoding::SumFloat8 {
                return (s.into_datum().expect("float8"), false);
            }
            let f = s as f32;
            if f.is_infinite() && s.is_finite() {
                overflow("value out of range: overflow");
            }
            (f.into_datum().expect("float4"), false)
        }
        Encoding::Moments => {
            if agg::moments_overflow(AggKind::Moments, w) {
                overflow("value out of range: overflow");
            }
            let m = agg::moments(w);
            (array(&[f8d(m[0]), f8d(m[1]), f8d(m[2])], pg_sys::FLOAT8OID), false)
        }
        Encoding::Regr => {
            if agg::moments_overflow(AggKind::Moments2, w) {
                overflow("value out of range: overflow");
            }
            let m = agg::moments2(w);
            (array(&m.iter().map(|v| f8d(*v)).collect::<Vec<_>>(), pg_sys::FLOAT8OID), false)
        }
        Encoding::MinMaxNum => {
            // NaN is above every number: the max once any, the min when all
            let nan = w[2];
            if n == 0 {
                return null;
            }
            let text = if (kind == AggKind::MaxNum && nan > 0) || nan == n {
                "NaN".to_string()
            } else {
                agg::scaled_decimal(w[1] as i64, scale)
            };
            let numeric = pgrx::AnyNumeric::try_from(text.as_str()).unwrap_or_else(|e| {
                errors::raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("numeric min/max: {e}"), None, None)
            });
            (numeric.into_datum().expect("numeric datum"), false)
        }
        Encoding::MinMaxInt => {
            if n == 0 {
                return null;
            }
            (int_datum(arg, w[1] as i64), false)
        }
        Encoding::MinMaxAny => match agg::any_value(w) {
            Some(v) => (device_datum(arg, &v), false),
            None => null,
        },
        Encoding::MinMaxFloat => {
            if n == 0 {
                return null;
            }
            let _ = kind;
            let v = agg::flt_from_order(w[1]);
            if arg == pg_sys::FLOAT4OID {
                ((v as f32).into_datum().expect("float4"), false)
            } else {
                (v.into_datum().expect("float8"), false)
            }
        }
    }
}

/// A by-value datum of an integer-like type (int2, int4, date: 32 bits or
/// fewer; int8, time, timestamp(tz): 64) from its sign-extended value.
pub fn int_datum(t: pg_sys::Oid, v: i64) -> pg_sys::Datum {
    match t {
        pg_sys::INT2OID => (v as i16).into_datum().expect("int2"),
        pg_sys::INT4OID | pg_sys::DATEOID => (v as i32).into_datum().expect("int4"),
        pg_sys::BOOLOID => (v != 0).into_datum().expect("bool"),
        _ => v.into_datum().expect("int8"),
    }
}

/// A non-NULL value the device computed (a grouping key, MinAny's
/// value) as a datum of type `t`, a fixed-width device type.  Memory comes
/// from the current context.
pub fn device_datum(t: pg_sys::Oid, v: &agg::KeyValue) -> pg_sys::Datum {
    let dtype = crate::codegen::device_type_of(t);
    let info = dtype.and_then(pgstrom_runtime::catalog::type_info);
    match t {
        pg_sys::FLOAT4OID => f32::from_bits(v.bits as u32).into_datum().expect("float4"),
        pg_sys::FLOAT8OID => f64::from_bits(v.bits as u64).into_datum().expect("float8"),
        pg_sys::NUMERICOID => {
            let n = v.numeric();
            if n.scale == pgstrom_runtime::numeric::NUM_BIG {
                errors::raise_plain(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "a numeric beyond the device's digits came back as a value".into(),
                    None,
                    None,
                )
            }
            let numeric = pgrx::AnyNumeric::try_from(n.to_text().as_str()).unwrap_or_else(|e| {
                errors::raise_plain(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("device numeric: {e}"), None, None)
            });
            numeric.into_datum().expect("numeric datum")
        }
        _ if info.is_some_and(|i| i.name == "FLOAT2") => {
            // held as the float4 of its value (exact)
            let h = pgstrom_arrow::float2::f16::from_f32(f32::from_bits(v.bits as u32));
            pg_sys::Datum::from(h.to_bits() as usize)
        }
        _ if info.is_some_and(|i| i.width > 8) => {
            // uuid, interval, timetz: their stored bytes
            let width = info.map_or(0, |i| i.width);
            let bytes = v.wide_bytes(width);
            // SAFETY: a fresh allocation of the type's length.
            unsafe {
                let p = pg_sys::palloc(width) as *mut u8;
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, width);
                pg_sys::Datum::from(p)
            }
        }
        _ => int_datum(t, v.bits),
    }
}
