//! Datums between PostgreSQL and the device: constants and hoisted
//! parameters as the device reads them, and the device's values (keys,
//! projections, partial states) back as datums.

use pgrx::IntoDatum;
use pgrx::pg_sys;
use pgrx::prelude::*;

use pgstrom_runtime::catalog;
use pgstrom_runtime::engine::ParamValue;
use pgstrom_runtime::numeric::DevNumeric;
use pgstrom_runtime::program::{Builder, is_varlena, is_wide, type_id};

use pgstrom_runtime::agg;

use super::{NotSupported, unsupported};
use crate::errors;

/// The bytes of a text / bpchar / bytea datum.
///
/// # Safety
/// `value` is a valid varlena datum.
pub(crate) unsafe fn varlena_bytes(value: pg_sys::Datum) -> Vec<u8> {
    // SAFETY: a varlena; detoasting gives a readable, uncompressed value.
    unsafe {
        let v = pg_sys::pg_detoast_datum_packed(value.cast_mut_ptr());
        let len = pgrx::varlena::varsize_any_exhdr(v);
        std::slice::from_raw_parts(pgrx::varlena::vardata_any(v) as *const u8, len).to_vec()
    }
}

/// A numeric datum as the device holds it.
///
/// # Safety
/// `value` is a valid numeric datum.
pub unsafe fn numeric_of(value: pg_sys::Datum) -> DevNumeric {
    // SAFETY: a numeric varlena; detoasting gives a readable value.
    unsafe {
        let p = value.cast_mut_ptr::<pg_sys::varlena>();
        let v = pg_sys::pg_detoast_datum_packed(p);
        let len = pgrx::varlena::varsize_any_exhdr(v);
        let data = pgrx::varlena::vardata_any(v) as *const u8;
        let n = DevNumeric::from_pg_payload(std::slice::from_raw_parts(data, len));
        if v != p {
            pg_sys::pfree(v.cast());
        }
        n
    }
}

/// The bytes of a uuid, interval or timetz datum (device type `t`), as
/// PostgreSQL stores them.
///
/// # Safety
/// `value` points to a value of the PostgreSQL type behind `t`.
pub unsafe fn wide_bytes(t: u16, value: pg_sys::Datum) -> Vec<u8> {
    let width = catalog::type_info(t).map_or(0, |ti| ti.width);
    // SAFETY: a by-reference datum of `width` bytes (caller).
    unsafe { std::slice::from_raw_parts(value.cast_mut_ptr::<u8>(), width) }.to_vec()
}

/// A non-NULL datum of device type `t` as a program parameter.
///
/// # Safety
/// `value` is a valid datum of the PostgreSQL type behind `t`.
pub unsafe fn param_value(t: u16, value: pg_sys::Datum) -> ParamValue {
    if t == type_id("NUMERIC") {
        // SAFETY: a numeric datum (caller).
        ParamValue::numeric(unsafe { numeric_of(value) })
    } else if is_wide(t) {
        // SAFETY: a by-reference datum of the type (caller).
        ParamValue::wide(&unsafe { wide_bytes(t, value) })
    } else {
        ParamValue::value(const_bits(t, value))
    }
}

/// Push a non-NULL constant datum of device type `t`.
///
/// # Safety
/// `value` is a valid datum of the PostgreSQL type behind `t`.
pub(crate) unsafe fn push_const(b: &mut Builder, t: u16, value: pg_sys::Datum) -> Result<(), NotSupported> {
    if t == type_id("NUMERIC") {
        // SAFETY: a numeric datum (caller).
        let n = unsafe { numeric_of(value) };
        if n.scale == pgstrom_runtime::numeric::NUM_BIG {
            return unsupported("a numeric constant of more than 38 digits".into());
        }
        b.numeric_constant(n);
    } else if is_wide(t) {
        // SAFETY: a by-reference datum of the type (caller).
        b.wide_constant(t, &unsafe { wide_bytes(t, value) });
    } else if is_varlena(t) {
        // SAFETY: a text/bpchar/bytea datum (caller).
        b.bytes_constant(t, &unsafe { varlena_bytes(value) });
    } else {
        b.constant(t, const_bits(t, value));
    }
    Ok(())
}

/// Raw datum bits of a by-value constant of device type `t`.
pub fn const_bits(t: u16, value: pg_sys::Datum) -> i64 {
    let raw = value.value() as u64;
    match catalog::type_info(t).map(|ti| ti.name) {
        Some("BOOL") => (raw & 0xff != 0) as i64,
        Some("INT2") => raw as u16 as i16 as i64,
        Some("INT4") | Some("DATE") => raw as u32 as i32 as i64,
        Some("FLOAT4") => (raw as u32) as i64,
        // float2 is held as the float4 of its value
        Some("FLOAT2") => pgstrom_arrow::float2::f16::from_bits(raw as u16).to_f32().to_bits() as i64,
        _ => raw as i64,
    }
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
