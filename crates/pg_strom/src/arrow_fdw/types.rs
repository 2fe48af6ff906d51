//! Arrow types as PostgreSQL types, and Arrow values as Datums.
//!
//! Owns the type mapping of Arrow_Fdw (docs/arrow_fdw.md has the table):
//! which PostgreSQL type a field becomes in IMPORT FOREIGN SCHEMA, which
//! column types CREATE FOREIGN TABLE may declare for it, and the
//! conversion of one value.  Unsigned integers widen to the next signed
//! type (uint64 to numeric), Float16 reads as float2 (or real, when a
//! table declares it so), dictionary-encoded
//! columns as their value type, List / LargeList as one-dimensional arrays
//! of a scalar element type (or of a composite type, for a list of
//! structs), Struct as a composite type with matching attributes.  Map, Union and the rest are an ERROR naming the column.

use std::ffi::CString;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, IntervalUnit, TimeUnit};
use pgrx::pg_sys::{self, Datum, Oid};
use pgstrom_runtime::engine::FileForm;
use pgstrom_runtime::widen::{self, END_DATE, MIN_DATE};

/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const EPOCH_DAYS: i64 = pgstrom_arrow::column::PG_EPOCH_DAYS as i64;
const EPOCH_USECS: i64 = EPOCH_DAYS * USECS_PER_DAY;
const USECS_PER_DAY: i64 = 86_400_000_000;
/// PostgreSQL's timestamp range (MIN_TIMESTAMP .. END_TIMESTAMP).
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// The device layout of a whole column slice in one pass, for the types
/// whose conversion is arithmetic: Date32 to date (epoch shift), Timestamp
/// in microseconds to timestamp(tz), Bool to one byte a value, Decimal128
/// to the device's numeric (the 128-bit mantissa and the scale: the value
/// and display scale numeric's input gives the decimal's text, when the
/// column's typmod keeps the file's scale and precision), appended to
/// `out` (the column's own buffer: no copy in between).  False, `out`
/// as it was, when the column is not one of them or a value lies outside
/// PostgreSQL's range (the value-by-value conversion then raises the
/// error).  NULL slots are converted too; their bytes are never read.
pub fn device_values(array: &dyn Array, typid: Oid, typmod: i32, out: &mut Vec<u8>) -> bool {
    use DataType::*;
    let len0 = out.len();
    // a NULL slot's value is not checked
    let nulls = array.null_count() > 0;
    let checked = |i: usize| !nulls || array.is_valid(i);
    // the widenings the GPU service does to file columns (widen.rs), here
    // to the column's values in memory
    let widened = |form: FileForm, raw: &[u8], out: &mut Vec<u8>| widen::widen(form, raw, checked, out).is_none();
    let ok = match (array.data_type(), typid) {
        (Decimal128(p, s), pg_sys::NUMERICOID) if *s >= 0 => match numeric_typmod_digits(typmod, *p, *s) {
            None => false,
            Some(digits) => {
                let form = FileForm::Decimal128 { scale: *s as u8, digits: digits as u8, strict: true };
                widened(form, array.as_primitive::<Decimal128Type>().values().inner().as_slice(), out)
            }
        },
        (Date32, pg_sys::DATEOID) => {
            widened(FileForm::Date32, array.as_primitive::<Date32Type>().values().inner().as_slice(), out)
        }
        (Timestamp(TimeUnit::Microsecond, _), pg_sys::TIMESTAMPOID | pg_sys::TIMESTAMPTZOID) => {
            let v = array.as_primitive::<TimestampMicrosecondType>().values();
            out.reserve(v.len() * 8);
            v.iter().enumerate().all(|(i, &t)| {
                let us = t.checked_sub(EPOCH_USECS);
                out.extend_from_slice(&us.unwrap_or(0).to_le_bytes());
                us.is_some_and(|u| (MIN_TIMESTAMP..END_TIMESTAMP).contains(&u)) || !checked(i)
            })
        }
        (Boolean, pg_sys::BOOLOID) => {
            out.extend(array.as_boolean().values().iter().map(u8::from));
            true
        }
        _ => false,
    };
    if !ok {
        out.truncate(len0);
    }
    ok
}

/// The most digits a Decimal128(p, s) value may have for numeric's
/// typmod `typmod` to leave it as it is, None where it never does: no
/// typmod (-1), 38 (the device's numerics; a larger value is converted
/// one by one); the same scale and a precision p2 of at least p: p2
/// (numeric's input raises an overflow for a larger value, which the
/// value-by-value conversion then reports); another scale: None (numeric's
/// input rounds).
pub(crate) fn numeric_typmod_digits(typmod: i32, p: u8, s: i8) -> Option<u32> {
    match pgstrom_arrow::pgtype::numeric_typmod(typmod) {
        None => (typmod == -1).then_some(38),
        Some((precision, scale)) => (scale == s as i32 && precision >= p as i32).then_some(precision.min(38) as u32),
    }
}

/// The PostgreSQL type of a field (oid, typmod) for IMPORT FOREIGN SCHEMA,
/// or why it has none.
pub fn pg_type(field: &Field) -> Result<(Oid, i32), String> {
    use DataType::*;
    let scalar = |dt: &DataType| -> Result<(Oid, i32), String> {
        Ok(match dt {
            Boolean => (pg_sys::BOOLOID, -1),
            Int8 | Int16 | UInt8 => (pg_sys::INT2OID, -1),
            Int32 | UInt16 => (pg_sys::INT4OID, -1),
            Int64 | UInt32 => (pg_sys::INT8OID, -1),
            UInt64 => (pg_sys::NUMERICOID, -1),
            Float16 => match crate::float2::type_oid() {
                t if t == pg_sys::InvalidOid => (pg_sys::FLOAT4OID, -1),
                t => (t, -1),
            },
            Float32 => (pg_sys::FLOAT4OID, -1),
            Float64 => (pg_sys::FLOAT8OID, -1),
            Utf8 | LargeUtf8 => (pg_sys::TEXTOID, -1),
            Binary | LargeBinary => (pg_sys::BYTEAOID, -1),
            FixedSizeBinary(n) => {
                if field.metadata().get("pg_type").is_some_and(|t| t == "bpchar") {
                    (pg_sys::BPCHAROID, n + pg_sys::VARHDRSZ as i32)
                } else if *n == 16 && field.metadata().get("ARROW:extension:name").is_some_and(|t| t == "arrow.uuid") {
                    (pg_sys::UUIDOID, -1)
                } else {
                    (pg_sys::BYTEAOID, -1)
                }
            }
            Decimal128(p, s) | Decimal256(p, s) if *s >= 0 && *s as u8 <= *p && *p <= 38 => {
                (pg_sys::NUMERICOID, ((*p as i32) << 16 | *s as i32) + pg_sys::VARHDRSZ as i32)
            }
            Decimal128(..) | Decimal256(..) => (pg_sys::NUMERICOID, -1),
            Date32 | Date64 => (pg_sys::DATEOID, -1),
            Time32(_) | Time64(_) => (pg_sys::TIMEOID, -1),
            Timestamp(_, None) => (pg_sys::TIMESTAMPOID, -1),
            Timestamp(_, Some(_)) => (pg_sys::TIMESTAMPTZOID, -1),
            Interval(_) => (pg_sys::INTERVALOID, -1),
            other => return Err(format!("Arrow type {other} is not supported")),
        })
    };
    let dt = match field.data_type() {
        Dictionary(_, v) => v.as_ref(),
        dt => dt,
    };
    match dt {
        List(c) | LargeList(c) => {
            let (elem, _) = scalar(match c.data_type() {
                Dictionary(_, v) => v.as_ref(),
                dt => dt,
            })
            .map_err(|e| format!("{e} as a list element"))?;
            // SAFETY: catalog lookup of a built-in type.
            let arr = unsafe { pg_sys::get_array_type(elem) };
            if arr == pg_sys::InvalidOid {
                return Err(format!("no array type for the list element type {}", c.data_type()));
            }
            Ok((arr, -1))
        }
        Struct(_) => Err("a Struct column needs a composite type: create one and declare the column with it \
                          in CREATE FOREIGN TABLE"
            .into()),
        dt => scalar(dt),
    }
}

/// Check that a column of type `typid` can hold `field`'s values; the
/// error says what the field would need.
pub fn check_column(field: &Field, typid: Oid) -> Result<(), String> {
    // SAFETY: catalog lookups.
    unsafe {
        let dt = match field.data_type() {
            DataType::Dictionary(_, v) => v.as_ref(),
            dt => dt,
        };
        if let DataType::Struct(children) = dt {
            let relid = pg_sys::typeidTypeRelid(typid);
            if relid == pg_sys::InvalidOid {
                return Err(format!("Arrow type Struct needs a composite type, not {}", type_name(typid)));
            }
            let tupdesc = pg_sys::lookup_rowtype_tupdesc(typid, -1);
            let attrs = live_attrs(tupdesc);
            let result = if attrs.len() != children.len() {
                Err(format!(
                    "Struct has {} fields, type {} has {} attributes",
                    children.len(),
                    type_name(typid),
                    attrs.len()
                ))
            } else {
                children
                    .iter()
                    .zip(&attrs)
                    .try_for_each(|(c, &(_, t))| check_column(c, t).map_err(|e| format!("field \"{}\": {e}", c.name())))
            };
            pg_sys::DecrTupleDescRefCount(tupdesc);
            return result;
        }
        // lists of structs: arrays of a composite type
        if let DataType::List(c) | DataType::LargeList(c) = dt
            && matches!(c.data_type(), DataType::Struct(_))
        {
            let elem = pg_sys::get_element_type(typid);
            if elem == pg_sys::InvalidOid {
                return Err(format!("Arrow type {dt} needs an array of a composite type, not {}", type_name(typid)));
            }
            return check_column(c, elem).map_err(|e| format!("list element: {e}"));
        }
        let (want, _) = pg_type(field)?;
        let ok = want == typid
            || (want == pg_sys::TEXTOID && matches!(typid, pg_sys::VARCHAROID | pg_sys::BPCHAROID))
            || (matches!(dt, DataType::FixedSizeBinary(_)) && typid == pg_sys::BPCHAROID)
            || (matches!(dt, DataType::FixedSizeBinary(16)) && typid == pg_sys::UUIDOID)
            || (matches!(dt, DataType::Float16) && typid == pg_sys::FLOAT4OID);
        if ok {
            Ok(())
        } else {
            Err(format!("Arrow type {} reads as {}, not {}", dt, type_name(want), type_name(typid)))
        }
    }
}

/// (attnum - 1, type) of the live attributes of a tuple descriptor.
///
/// # Safety
/// `tupdesc` is valid.
pub unsafe fn live_attrs(tupdesc: pg_sys::TupleDesc) -> Vec<(usize, Oid)> {
    // SAFETY: caller's promise.
    unsafe {
        (0..(*tupdesc).natts as usize)
            .filter_map(|i| {
                let a = crate::pg::compat::tuple_desc_attr(tupdesc, i as i32);
                (!(*a).attisdropped).then_some((i, (*a).atttypid))
            })
            .collect()
    }
}

/// A type's name as format_type writes it.
pub fn type_name(typid: Oid) -> String {
    // SAFETY: format_type_be handles any oid.
    unsafe { std::ffi::CStr::from_ptr(pg_sys::format_type_be(typid)).to_string_lossy().into_owned() }
}

/// How to make Datums of one column type (resolved once per scan).
pub struct Target {
    pub typid: Oid,
    pub typmod: i32,
    input_fn: Oid,
    ioparam: Oid,
    /// Arrays: the element's target, length, by-value, alignment.
    elem: Option<(Box<Target>, i16, bool, std::ffi::c_char)>,
    /// Composites: the descriptor (pinned) and each field's target.
    fields: Option<(pg_sys::TupleDesc, Vec<(usize, Target)>)>,
}

impl Target {
    /// The target for a column of type `typid` (typmod `typmod`).
    pub fn new(typid: Oid, typmod: i32) -> Target {
        // SAFETY: catalog lookups of an existing type.
        unsafe {
            let mut input_fn = pg_sys::InvalidOid;
            let mut ioparam = pg_sys::InvalidOid;
            pg_sys::getTypeInputInfo(typid, &mut input_fn, &mut ioparam);
            let elem_type = pg_sys::get_element_type(typid);
            let elem = (elem_type != pg_sys::InvalidOid).then(|| {
                let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
                pg_sys::get_typlenbyvalalign(elem_type, &mut len, &mut byval, &mut align);
                (Box::new(Target::new(elem_type, -1)), len, byval, align)
            });
            let fields = (pg_sys::typeidTypeRelid(typid) != pg_sys::InvalidOid).then(|| {
                let tupdesc = pg_sys::lookup_rowtype_tupdesc_copy(typid, -1);
                let attrs = live_attrs(tupdesc)
                    .into_iter()
                    .map(|(i, t)| {
                        (i, Target::new(t, (*crate::pg::compat::tuple_desc_attr(tupdesc, i as i32)).atttypmod))
                    })
                    .collect();
                (tupdesc, attrs)
            });
            Target { typid, typmod, input_fn, ioparam, elem, fields }
        }
    }

    /// A value through the type's input function (numeric, bpchar).
    fn input(&self, text: &str) -> Datum {
        self.input_bytes(text.as_bytes())
    }

    fn input_bytes(&self, text: &[u8]) -> Datum {
        let c = CString::new(text).expect("no NUL: formatted numbers, or text checked by pg_verify_mbstr");
        // SAFETY: a valid input function of the target type.
        unsafe { pg_sys::OidInputFunctionCall(self.input_fn, c.as_ptr().cast_mut(), self.ioparam, self.typmod) }
    }
}

fn out_of_range(what: &str) -> ! {
    crate::errors::raise_plain(
        pgrx::PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        format!("{what} out of range"),
        None,
        None,
    )
}

fn ts_from(v: i64, unit: &TimeUnit) -> i64 {
    let us = match unit {
        TimeUnit::Second => v.checked_mul(1_000_000),
        TimeUnit::Millisecond => v.checked_mul(1_000),
        TimeUnit::Microsecond => Some(v),
        TimeUnit::Nanosecond => Some(v.div_euclid(1_000)),
    };
    match us.and_then(|u| u.checked_sub(EPOCH_USECS)) {
        Some(t) if (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t) => t,
        _ => out_of_range("timestamp"),
    }
}

fn varlena(bytes: &[u8]) -> Datum {
    // SAFETY: palloc'd copy in the current (per-tuple) memory context.
    unsafe {
        let len = bytes.len() + pg_sys::VARHDRSZ;
        let p = pg_sys::palloc(len) as *mut u8;
        pgrx::set_varsize_4b(p.cast(), len as i32);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(pg_sys::VARHDRSZ), bytes.len());
        Datum::from(p)
    }
}

/// Text for a column of `t`: char(n) and varchar(n) through their input
/// function (padding, length check), as a cast from text would.
fn text_for(bytes: &[u8], t: &Target) -> Datum {
    if t.typmod >= 0 && matches!(t.typid, pg_sys::BPCHAROID | pg_sys::VARCHAROID) {
        // checked (no NUL) and in the database encoding
        let d = text(bytes);
        // SAFETY: d is a 4-byte-header varlena just made.
        let server = unsafe { pgrx::varlena::varlena_to_byte_slice(d.cast_mut_ptr()) };
        return t.input_bytes(server);
    }
    text(bytes)
}

fn text(bytes: &[u8]) -> Datum {
    // SAFETY: checks the bytes are valid in the database encoding
    // (converting from UTF-8 when it is another); raises PostgreSQL's
    // error otherwise (the caller's error context names the column).
    unsafe {
        let p = pg_sys::pg_any_to_server(bytes.as_ptr().cast(), bytes.len() as i32, pg_sys::pg_enc::PG_UTF8 as i32);
        if p as *const u8 == bytes.as_ptr() { varlena(bytes) } else { varlena(std::ffi::CStr::from_ptr(p).to_bytes()) }
    }
}

fn decimal_text(v: i128, scale: i8) -> String {
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let s = if scale <= 0 {
        format!("{digits}{}", "0".repeat((-scale) as usize))
    } else {
        let scale = scale as usize;
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        format!("{int}.{frac}")
    };
    if neg { format!("-{s}") } else { s }
}

/// Value `row` of `array` as a Datum of `t` (None: NULL).  Conversions
/// allocate in the current memory context.
pub fn datum(array: &ArrayRef, row: usize, t: &Target) -> Option<Datum> {
    if array.is_null(row) {
        return None;
    }
    use DataType::*;
    let i = row;
    Some(match array.data_type() {
        Boolean => Datum::from(array.as_boolean().value(i)),
        Int8 => Datum::from(array.as_primitive::<Int8Type>().value(i) as i16),
        Int16 => Datum::from(array.as_primitive::<Int16Type>().value(i)),
        Int32 => Datum::from(array.as_primitive::<Int32Type>().value(i)),
        Int64 => Datum::from(array.as_primitive::<Int64Type>().value(i)),
        UInt8 => Datum::from(array.as_primitive::<UInt8Type>().value(i) as i16),
        UInt16 => Datum::from(array.as_primitive::<UInt16Type>().value(i) as i32),
        UInt32 => Datum::from(array.as_primitive::<UInt32Type>().value(i) as i64),
        UInt64 => t.input(&array.as_primitive::<UInt64Type>().value(i).to_string()),
        Float16 if t.typid == pg_sys::FLOAT4OID => {
            Datum::from(array.as_primitive::<Float16Type>().value(i).to_f32().to_bits())
        }
        Float16 => Datum::from(array.as_primitive::<Float16Type>().value(i).to_bits() as i16),
        Float32 => Datum::from(array.as_primitive::<Float32Type>().value(i).to_bits()),
        Float64 => Datum::from(array.as_primitive::<Float64Type>().value(i).to_bits()),
        Utf8 => text_for(array.as_string::<i32>().value(i).as_bytes(), t),
        LargeUtf8 => text_for(array.as_string::<i64>().value(i).as_bytes(), t),
        Binary => varlena(array.as_binary::<i32>().value(i)),
        LargeBinary => varlena(array.as_binary::<i64>().value(i)),
        FixedSizeBinary(_) => {
            let v = array.as_fixed_size_binary().value(i);
            match t.typid {
                pg_sys::BPCHAROID => text_for(v, t),
                // SAFETY: a palloc'd copy of the 16 bytes (uuid is passed by reference)
                pg_sys::UUIDOID => unsafe {
                    let p = pg_sys::palloc(16) as *mut u8;
                    std::ptr::copy_nonoverlapping(v.as_ptr(), p, 16);
                    Datum::from(p)
                },
                _ => varlena(v),
            }
        }
        Decimal128(_, s) => t.input(&decimal_text(array.as_primitive::<Decimal128Type>().value(i), *s)),
        Decimal256(_, s) => {
            let v = array.as_primitive::<Decimal256Type>().value(i);
            match v.to_i128() {
                Some(v) => t.input(&decimal_text(v, *s)),
                None => t.input(&array.as_primitive::<Decimal256Type>().value_as_string(i)),
            }
        }
        Date32 | Date64 => {
            let days = match array.data_type() {
                Date32 => array.as_primitive::<Date32Type>().value(i) as i64,
                _ => array.as_primitive::<Date64Type>().value(i).div_euclid(86_400_000),
            } - EPOCH_DAYS;
            if !(MIN_DATE..END_DATE).contains(&days) {
                out_of_range("date");
            }
            Datum::from(days as i32)
        }
        Time32(u) | Time64(u) => {
            let us = match (array.data_type(), u) {
                (Time32(_), TimeUnit::Second) => array.as_primitive::<Time32SecondType>().value(i) as i64 * 1_000_000,
                (Time32(_), _) => array.as_primitive::<Time32MillisecondType>().value(i) as i64 * 1_000,
                (_, TimeUnit::Microsecond) => array.as_primitive::<Time64MicrosecondType>().value(i),
                _ => array.as_primitive::<Time64NanosecondType>().value(i).div_euclid(1_000),
            };
            if !(0..=USECS_PER_DAY).contains(&us) {
                out_of_range("time");
            }
            Datum::from(us)
        }
        Timestamp(u, _) => {
            let v = match u {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(i),
            };
            Datum::from(ts_from(v, u))
        }
        Interval(u) => {
            let (month, day, time) = match u {
                IntervalUnit::YearMonth => (array.as_primitive::<IntervalYearMonthType>().value(i), 0, 0),
                IntervalUnit::DayTime => {
                    let v = array.as_primitive::<IntervalDayTimeType>().value(i);
                    (0, v.days, v.milliseconds as i64 * 1_000)
                }
                IntervalUnit::MonthDayNano => {
                    let v = array.as_primitive::<IntervalMonthDayNanoType>().value(i);
                    (v.months, v.days, v.nanoseconds / 1_000)
                }
            };
            // SAFETY: palloc'd Interval in the current memory context.
            unsafe {
                let p = pg_sys::palloc(std::mem::size_of::<pg_sys::Interval>()) as *mut pg_sys::Interval;
                (*p).time = time;
                (*p).day = day;
                (*p).month = month;
                Datum::from(p)
            }
        }
        Dictionary(..) => {
            let d = array.as_any_dictionary();
            let k = d.normalized_keys()[i];
            return datum(d.values(), k, t);
        }
        List(_) | LargeList(_) => {
            let values = match array.data_type() {
                List(_) => array.as_list::<i32>().value(i),
                _ => array.as_list::<i64>().value(i),
            };
            let (et, len, byval, align) = t.elem.as_ref().expect("checked: an array type");
            let n = values.len();
            let mut elems = Vec::with_capacity(n);
            let mut nulls = Vec::with_capacity(n);
            for j in 0..n {
                let v = datum(&values, j, et);
                nulls.push(v.is_none());
                elems.push(v.unwrap_or(Datum::from(0)));
            }
            let mut dims = [n as i32];
            let mut lbs = [1i32];
            // SAFETY: n element Datums of the element type.
            unsafe {
                Datum::from(pg_sys::construct_md_array(
                    elems.as_mut_ptr(),
                    nulls.as_mut_ptr(),
                    1,
                    dims.as_mut_ptr(),
                    lbs.as_mut_ptr(),
                    et.typid,
                    *len as i32,
                    *byval,
                    *align,
                ))
            }
        }
        Struct(_) => {
            let s = array.as_struct();
            let (tupdesc, fields) = t.fields.as_ref().expect("checked: a composite type");
            // SAFETY: tupdesc is the composite's descriptor; values and
            // nulls have one entry per attribute.
            unsafe {
                let natts = (**tupdesc).natts as usize;
                let mut values = vec![Datum::from(0); natts];
                let mut nulls = vec![true; natts];
                for (k, (att, ft)) in fields.iter().enumerate() {
                    if let Some(v) = datum(s.column(k), i, ft) {
                        values[*att] = v;
                        nulls[*att] = false;
                    }
                }
                let tuple = pg_sys::heap_form_tuple(*tupdesc, values.as_mut_ptr(), nulls.as_mut_ptr());
                pg_sys::heap_copy_tuple_as_datum(tuple, *tupdesc)
            }
        }
        other => crate::errors::raise_plain(
            pgrx::PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("Arrow type {other} is not supported"),
            None,
            None,
        ),
    })
}
