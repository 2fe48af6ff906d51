//! Codegen: PostgreSQL expression trees to device programs.
//!
//! [`compile`] walks an expression (after the planner's constant folding)
//! and emits a [`Program`] for the device interpreter, or explains why the
//! expression cannot run on the device.  An unsupported node, type or
//! function is never an error for the query: the caller keeps that part on
//! the CPU.  What the device supports is decided by one catalog
//! (device/include/device_functions.def): a function OID is offloaded only
//! when it is listed there.
//!
//! Supported now: Var (of the scanned relation), Const, OpExpr, FuncExpr,
//! BoolExpr (AND/OR with PostgreSQL's short-circuit and three-valued
//! logic, NOT), NullTest, BooleanTest, DistinctExpr (IS [NOT] DISTINCT
//! FROM), CASE (both forms), COALESCE, NULLIF, GREATEST/LEAST, IN / = ANY /
//! <> ALL over constant lists (up to 256 elements, compared in turn) and
//! ARRAY[...] of expressions, RelabelType between the same device type.
//! Types: bool, int2/4/8, float4/8, date, time, timestamp(tz), and
//! numeric (exact, 38 digits) and text / varchar / bpchar inside
//! expressions (equality under deterministic collations, ordering only
//! under "C"/"POSIX", lengths).
//! Sub-expressions without Vars that are not volatile (now(), current_date,
//! Params, ...) are hoisted: evaluated once on the CPU and passed to the
//! program as parameters.  Hashed large IN lists, text results and the
//! other types of the device-program issue come next.

use std::collections::HashMap;
use std::sync::OnceLock;

use pgrx::pg_guard;
use pgrx::pg_sys;

use pgstrom_runtime::catalog::{self, func_info};
use pgstrom_runtime::engine::ParamValue;
use pgstrom_runtime::numeric::DevNumeric;
use pgstrom_runtime::program::{
    Builder, Op, Program, SetElement, in_set_type, is_returned, is_varlena, is_wide, type_id,
};

pub mod aggregates;

include!(concat!(env!("OUT_DIR"), "/device_function_oids.rs"));

/// Why an expression stays on the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSupported(pub String);

/// A compiled expression and the inputs it needs.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The program.
    pub program: Program,
    /// Columns it reads, in program column order: (attnum, device type id).
    pub columns: Vec<(i16, u16)>,
    /// PostgreSQL type OID of the result.
    pub result_type: pg_sys::Oid,
    /// Sub-expressions evaluated once on the CPU per execution and passed
    /// as parameters, in parameter order: stable functions such as now()
    /// or current_date, Params, and any other Var-free, non-volatile part.
    pub params: Vec<(*mut pg_sys::Node, u16)>,
}

/// Device type id of a PostgreSQL type, if the device supports it.
pub fn device_type_of(oid: pg_sys::Oid) -> Option<u16> {
    let name = match oid {
        pg_sys::BOOLOID => "BOOL",
        pg_sys::INT2OID => "INT2",
        pg_sys::INT4OID => "INT4",
        pg_sys::INT8OID => "INT8",
        pg_sys::FLOAT4OID => "FLOAT4",
        pg_sys::FLOAT8OID => "FLOAT8",
        pg_sys::DATEOID => "DATE",
        pg_sys::TIMEOID => "TIME",
        pg_sys::TIMESTAMPOID => "TIMESTAMP",
        pg_sys::TIMESTAMPTZOID => "TIMESTAMPTZ",
        pg_sys::TEXTOID | pg_sys::VARCHAROID => "TEXT",
        pg_sys::BPCHAROID => "BPCHAR",
        pg_sys::NUMERICOID => "NUMERIC",
        pg_sys::UUIDOID => "UUID",
        pg_sys::INTERVALOID => "INTERVAL",
        pg_sys::TIMETZOID => "TIMETZ",
        pg_sys::BYTEAOID => "BYTEA",
        o if crate::float2::is_float2(o) => "FLOAT2",
        _ => return None,
    };
    Some(type_id(name))
}

/// The extension's own functions in the device catalog (PGSTROM_*
/// entries): (entry, schema-qualified name, number of float2 arguments).
const EXTENSION_FUNCTIONS: &[(&str, &str, usize)] = &[
    ("PGSTROM_FLOAT2_FLOAT4", "pgstrom.float4", 1),
    ("PGSTROM_FLOAT2_FLOAT8", "pgstrom.float8", 1),
    ("PGSTROM_FLOAT2EQ", "pgstrom.float2eq", 2),
    ("PGSTROM_FLOAT2NE", "pgstrom.float2ne", 2),
    ("PGSTROM_FLOAT2LT", "pgstrom.float2lt", 2),
    ("PGSTROM_FLOAT2LE", "pgstrom.float2le", 2),
    ("PGSTROM_FLOAT2GT", "pgstrom.float2gt", 2),
    ("PGSTROM_FLOAT2GE", "pgstrom.float2ge", 2),
    ("PGSTROM_INT2_FLOAT2", "pgstrom.int2", 1),
    ("PGSTROM_INT4_FLOAT2", "pgstrom.int4", 1),
    ("PGSTROM_INT8_FLOAT2", "pgstrom.int8", 1),
];

/// The OID of the extension's function behind catalog entry `entry`
/// (a PGSTROM_* name), InvalidOid when it does not exist (yet).
pub fn extension_function_oid(entry: &str) -> pg_sys::Oid {
    let Some(&(_, name, nargs)) = EXTENSION_FUNCTIONS.iter().find(|f| f.0 == entry) else {
        return pg_sys::InvalidOid;
    };
    let float2 = crate::float2::type_oid();
    if float2 == pg_sys::InvalidOid {
        return pg_sys::InvalidOid;
    }
    let cname = std::ffi::CString::new(name).expect("a function name");
    let mut args = [float2; 2];
    // SAFETY: a qualified name list of a constant name; LookupFuncName
    // with missing_ok returns InvalidOid when there is no such function.
    unsafe {
        let names = pg_sys::stringToQualifiedNameList(cname.as_ptr(), std::ptr::null_mut());
        pg_sys::LookupFuncName(names, nargs as i32, args.as_mut_ptr(), true)
    }
}

/// Device function id of a PostgreSQL function OID: a built-in one by
/// its fixed OID, one of the extension's (in schema pgstrom) by name and
/// signature.
pub fn device_function_of(funcid: pg_sys::Oid) -> Option<u16> {
    static MAP: OnceLock<HashMap<u32, u16>> = OnceLock::new();
    if let Some(id) =
        MAP.get_or_init(|| DEVICE_FUNCTION_OIDS.iter().map(|(o, id)| (o.to_u32(), *id)).collect()).get(&funcid.to_u32())
    {
        return Some(*id);
    }
    // SAFETY: a syscache lookup of the function's and the schema's names.
    let in_pgstrom = unsafe {
        let nsp = pg_sys::get_func_namespace(funcid);
        nsp != pg_sys::InvalidOid && nsp == pg_sys::get_namespace_oid(c"pgstrom".as_ptr(), true)
    };
    if !in_pgstrom {
        return None;
    }
    EXTENSION_FUNCTIONS
        .iter()
        .find(|f| extension_function_oid(f.0) == funcid)
        .and_then(|f| catalog::FUNCTIONS.iter().find(|g| g.pg_function == f.0))
        .map(|g| g.id)
}

struct Ctx<'r> {
    b: Builder,
    /// Where a Var is read: (source, column key), or None when the
    /// program cannot read it.
    resolve: &'r dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    /// Columns read, in program column order: (source, key, device type).
    columns: Vec<(u8, i16, u16)>,
    /// Local slots in use (allocated and freed like a stack).
    locals: i32,
    /// Slots holding the test value of each enclosing CASE x WHEN ...
    case_values: Vec<i32>,
    /// Hoisted sub-expressions (see [`Compiled::params`]).
    params: Vec<(*mut pg_sys::Node, u16)>,
    /// Whether the caller evaluates rows with PostgreSQL when the device
    /// reports it cannot compute them (DEVERR_NEEDS_CPU).  Without that
    /// (join keys and quals, aggregates), nothing that can report it on
    /// the CPU engine too is compiled: numerics (which may exceed 38
    /// digits) and date/time units the device does not know.
    pg_fallback: bool,
    /// Numerics are compiled without `pg_fallback`: the planner bounded
    /// the expression's numerics to 38 digits ([`numeric_bound`]).
    numeric_ok: bool,
}

/// What may report DEVERR_NEEDS_CPU in a program (see `Ctx::pg_fallback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fallback {
    /// Nothing: no caller fallback (join keys and quals, aggregates).
    None,
    /// Nothing but numerics the planner bounded to 38 digits, which then
    /// never do (numeric sums, min/max and grouping keys).
    BoundedNumeric,
    /// Anything: PostgreSQL evaluates those rows (filters, device_eval).
    Pg,
}

/// Whether device function `fid` depends on the session time zone (its
/// last argument is the zone's table, which codegen adds).
pub fn uses_time_zone(fid: u16) -> bool {
    func_info(fid).is_some_and(|f| f.nargs > 0 && f.args[f.nargs as usize - 1] == type_id("TZTAB"))
}

/// Units the device computes without PostgreSQL: of date_part over a
/// time (`time_only`), a timestamp or an `interval` (which has no isoyear,
/// dow, isodow or doy: PostgreSQL raises an error for them), or of
/// date_trunc (`trunc`).
fn device_unit(unit: &str, time_only: bool, trunc: bool, interval: bool) -> bool {
    const TIME: [&str; 5] = ["microseconds", "milliseconds", "second", "minute", "hour"];
    const DATE: [&str; 8] = ["day", "week", "month", "quarter", "year", "decade", "century", "millennium"];
    const PART: [&str; 5] = ["epoch", "isoyear", "dow", "isodow", "doy"];
    TIME.contains(&unit)
        || (!time_only && DATE.contains(&unit))
        || (!trunc && (unit == "epoch" || (!time_only && !interval && PART.contains(&unit))))
}

/// Whether lower / upper / ILIKE under collation `collid` map the ASCII
/// letters A-Z and a-z to each other (the device maps only those and
/// leaves values with other characters to PostgreSQL): C and POSIX, or
/// the database default when its provider is libc or builtin and its
/// LC_CTYPE is not Turkish or Azerbaijani (where I and i map to dotted
/// and dotless forms).  ICU defaults and other collations stay on the CPU.
fn ascii_case_standard(collid: pg_sys::Oid) -> bool {
    if collid == pg_sys::C_COLLATION_OID || collid == POSIX_COLLATION_OID {
        return true;
    }
    if collid != pg_sys::DEFAULT_COLLATION_OID {
        return false;
    }
    // SAFETY: a syscache lookup of this database's row, released below;
    // GetConfigOption returns the setting's string.
    unsafe {
        let tup = pg_sys::SearchSysCache1(
            pg_sys::SysCacheIdentifier::DATABASEOID as i32,
            pg_sys::Datum::from(pg_sys::MyDatabaseId),
        );
        if tup.is_null() {
            return false;
        }
        let form = pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_database>(tup);
        let provider = (*form).datlocprovider as u8;
        pg_sys::ReleaseSysCache(tup);
        // the backend's LC_CTYPE is the database's (set at connection)
        let ctype = setlocale(LC_CTYPE, std::ptr::null());
        let ctype = if ctype.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(ctype).to_string_lossy().to_ascii_lowercase()
        };
        matches!(provider, b'c' | b'b') && !ctype.starts_with("tr") && !ctype.starts_with("az")
    }
}

unsafe extern "C" {
    /// libc's setlocale (a NULL locale reads the category's setting).
    fn setlocale(category: std::ffi::c_int, locale: *const std::ffi::c_char) -> *mut std::ffi::c_char;
}

/// glibc's LC_CTYPE category.
const LC_CTYPE: std::ffi::c_int = 0;

/// The "POSIX" collation (pg_collation.dat; not among pgrx's constants).
const POSIX_COLLATION_OID: pg_sys::Oid = pg_sys::Oid::from_u32(951);

/// Most elements of a constant IN / ANY list compiled inline when it
/// cannot be a sorted set (OP_IN_SORTED).
const MAX_ARRAY_ELEMENTS: i32 = 256;

/// Longest constant `= ANY` / `<> ALL` list compiled as a chain of tests;
/// a longer one becomes one binary search of the sorted constants.
const INLINE_ARRAY_ELEMENTS: i32 = 16;

/// The bytes of a text / bpchar / bytea datum.
///
/// # Safety
/// `value` is a valid varlena datum.
unsafe fn varlena_bytes(value: pg_sys::Datum) -> Vec<u8> {
    // SAFETY: a varlena; detoasting gives a readable, uncompressed value.
    unsafe {
        let v = pg_sys::pg_detoast_datum_packed(value.cast_mut_ptr());
        let len = pgrx::varlena::varsize_any_exhdr(v);
        std::slice::from_raw_parts(pgrx::varlena::vardata_any(v) as *const u8, len).to_vec()
    }
}

fn type_name(oid: pg_sys::Oid) -> String {
    // SAFETY: format_type_be works for any OID (it prints ??? for unknown).
    unsafe { std::ffi::CStr::from_ptr(pg_sys::format_type_be(oid)) }.to_string_lossy().into_owned()
}

fn unsupported<T>(why: String) -> Result<T, NotSupported> {
    Err(NotSupported(why))
}

/// Arguments of a List of expressions.
///
/// # Safety
/// `list` is a valid List of Node pointers (or NULL).
unsafe fn list_nodes(list: *mut pg_sys::List) -> Vec<*mut pg_sys::Node> {
    // SAFETY: caller guarantees a valid list.
    unsafe {
        let n = pg_sys::list_length(list);
        (0..n).map(|i| pg_sys::list_nth(list, i) as *mut pg_sys::Node).collect()
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
unsafe fn push_const(b: &mut Builder, t: u16, value: pg_sys::Datum) -> Result<(), NotSupported> {
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

impl Ctx<'_> {
    fn alloc_local(&mut self) -> Result<i32, NotSupported> {
        if self.locals >= pgstrom_runtime::program::MAX_LOCALS {
            return unsupported("expression nests too deeply for the device".into());
        }
        self.locals += 1;
        Ok(self.locals - 1)
    }

    fn free_local(&mut self, slot: i32) {
        debug_assert_eq!(slot, self.locals - 1);
        self.locals -= 1;
    }

    /// The catalog's comparison `family` (IMPL_CMP_GT, ...) on two values
    /// of device type `t`.
    fn comparison(&self, family: &str, t: u16) -> Result<u16, NotSupported> {
        catalog::FUNCTIONS
            .iter()
            .find(|f| f.family == family && f.nargs == 2 && f.args[..2] == [t, t])
            .map(|f| f.id)
            .ok_or_else(|| NotSupported(format!("no device comparison for device type {t}")))
    }

    /// Emit `<slot value> op element` for each element, combined by OR
    /// (ANY) or AND (ALL) with short-circuit; `elements` pushes element i.
    fn emit_array_test(
        &mut self,
        slot: i32,
        fid: u16,
        use_or: bool,
        n: usize,
        mut element: impl FnMut(&mut Ctx, usize) -> Result<(), NotSupported>,
    ) -> Result<(), NotSupported> {
        if n == 0 {
            // PostgreSQL: an empty array gives FALSE for ANY, TRUE for ALL,
            // whatever the scalar is.
            self.b.constant(type_id("BOOL"), (!use_or) as i64);
            return Ok(());
        }
        let (decide, combine) = if use_or { (Op::JumpIfTrueKeep, Op::Or2) } else { (Op::JumpIfFalseKeep, Op::And2) };
        let mut pending = None;
        for i in 0..n {
            if i > 0 {
                let j = self.b.jump(decide);
                pending = Some(match pending {
                    None => j,
                    Some(p) => self.b.merge(p, j),
                });
            }
            self.b.load_local(slot);
            element(self, i)?;
            self.b.func(fid);
            if i > 0 {
                self.b.op(combine);
            }
        }
        if let Some(p) = pending {
            self.b.place(p);
        }
        Ok(())
    }

    fn expr_type(&self, node: *mut pg_sys::Node) -> Result<u16, NotSupported> {
        // SAFETY: node is a valid expression node.
        let oid = unsafe { pg_sys::exprType(node) };
        device_type_of(oid)
            .ok_or_else(|| NotSupported(format!("type {} is not supported on the device", type_name(oid))))
    }

    /// Text comparisons follow the collation: equality and LIKE need a
    /// deterministic one (then they work on bytes), ordering needs C or
    /// POSIX (then it is byte order).  Character counting and LIKE's '_'
    /// assume UTF-8: in databases of other encodings they stay on the CPU.
    fn check_collation(&self, fid: u16, collid: pg_sys::Oid) -> Result<(), NotSupported> {
        let family = func_info(fid).map_or("", |f| f.family);
        if matches!(
            family,
            "IMPL_LIKE"
                | "IMPL_NOT_LIKE"
                | "IMPL_TEXT_LENGTH"
                | "IMPL_BPCHAR_LENGTH"
                | "IMPL_STRPOS"
                | "IMPL_SUBSTR"
                | "IMPL_LEFT"
                | "IMPL_RIGHT"
                | "IMPL_BTRIM"
                | "IMPL_LTRIM"
                | "IMPL_RTRIM"
                | "IMPL_SPLIT_PART"
                | "IMPL_LOWER"
                | "IMPL_UPPER"
                | "IMPL_ILIKE"
                | "IMPL_NOT_ILIKE"
        )
            // SAFETY: reads the database encoding.
            && unsafe { pg_sys::GetDatabaseEncoding() } != pg_sys::pg_enc::PG_UTF8 as i32
        {
            return unsupported("character-based text functions in a database that is not UTF-8".into());
        }
        if matches!(family, "IMPL_LOWER" | "IMPL_UPPER" | "IMPL_ILIKE" | "IMPL_NOT_ILIKE")
            && !ascii_case_standard(collid)
        {
            return unsupported(
                "lower / upper / ILIKE under a collation whose case mapping of ASCII letters may differ".into(),
            );
        }
        if matches!(family, "IMPL_TEXT_LT" | "IMPL_TEXT_LE" | "IMPL_TEXT_GT" | "IMPL_TEXT_GE") {
            if collid != pg_sys::C_COLLATION_OID && collid != POSIX_COLLATION_OID {
                return unsupported("text ordering under a collation other than \"C\" or \"POSIX\"".into());
            }
        } else if matches!(
            family,
            "IMPL_TEXT_EQ"
                | "IMPL_TEXT_NE"
                | "IMPL_BPCHAR_EQ"
                | "IMPL_BPCHAR_NE"
                | "IMPL_LIKE"
                | "IMPL_NOT_LIKE"
                | "IMPL_STRPOS"
                | "IMPL_STARTS_WITH"
                | "IMPL_SPLIT_PART"
        )
            && collid != pg_sys::InvalidOid
            // SAFETY: syscache lookup of a collation OID from the expression.
            && !unsafe { pg_sys::get_collation_isdeterministic(collid) }
        {
            return unsupported("text equality under a nondeterministic collation".into());
        }
        Ok(())
    }

    fn call(
        &mut self,
        funcid: pg_sys::Oid,
        args: *mut pg_sys::List,
        collid: pg_sys::Oid,
        what: &str,
    ) -> Result<(), NotSupported> {
        let to_local = funcid == pg_sys::Oid::from(pg_sys::F_TIMEZONE_TEXT_TIMESTAMPTZ);
        if to_local || funcid == pg_sys::Oid::from(pg_sys::F_TIMEZONE_TEXT_TIMESTAMP) {
            return self.at_time_zone(to_local, args);
        }
        if !self.pg_fallback
            && let Some(fid) = device_function_of(funcid)
            && func_info(fid).is_some_and(|f| {
                matches!(
                    f.family,
                    "IMPL_MAKE_DATE"
                        | "IMPL_LOWER"
                        | "IMPL_UPPER"
                        | "IMPL_TEXTCAT"
                        | "IMPL_ILIKE"
                        | "IMPL_NOT_ILIKE"
                        | "IMPL_TO_TEXT"
                )
            })
        {
            return unsupported(
                "make_date, lower, upper, ||, ILIKE or a cast to text in a join or an aggregate (values the device leaves to PostgreSQL)"
                    .into(),
            );
        }
        if !self.pg_fallback
            && let Some(fid) = device_function_of(funcid)
            && let Some(f) = func_info(fid)
            && matches!(
                f.family,
                "IMPL_EXTRACT" | "IMPL_DATE_TRUNC" | "IMPL_TZ_EXTRACT" | "IMPL_TZ_DATE_TRUNC" | "IMPL_EXTRACT_INTERVAL"
            )
        {
            // SAFETY: the arguments of an OpExpr/FuncExpr.
            let first = unsafe { list_nodes(args) }.first().copied().unwrap_or(std::ptr::null_mut());
            // SAFETY: a valid node; a text Const's datum is a text
            // (detoasted before reading; not UTF-8: no device unit).
            let unit = unsafe {
                (!first.is_null()
                    && (*first).type_ == pg_sys::NodeTag::T_Const
                    && !(*(first as *mut pg_sys::Const)).constisnull)
                    .then(|| {
                        let v =
                            pg_sys::pg_detoast_datum_packed((*(first as *mut pg_sys::Const)).constvalue.cast_mut_ptr());
                        pgrx::varlena::text_to_rust_str(v).map(str::to_string).ok()
                    })
                    .flatten()
            };
            let trunc = matches!(f.family, "IMPL_DATE_TRUNC" | "IMPL_TZ_DATE_TRUNC");
            let (time_only, interval) = (f.args[1] == type_id("TIME"), f.args[1] == type_id("INTERVAL"));
            if !unit.is_some_and(|u| device_unit(&u, time_only, trunc, interval)) {
                return unsupported(format!(
                    "{} with a unit the device does not compute, here",
                    f.name.to_ascii_lowercase()
                ));
            }
        }
        let fid = self.push_args(funcid, args, what)?;
        self.check_collation(fid, collid)?;
        self.b.func(fid);
        Ok(())
    }

    /// `x AT TIME ZONE 'name'` (timezone(text, timestamptz) when
    /// `to_local`, else timezone(text, timestamp)): with a constant zone
    /// name or fixed-offset abbreviation, the casts between timestamptz
    /// and timestamp computed in that zone, whose table the program
    /// carries.
    fn at_time_zone(&mut self, to_local: bool, args: *mut pg_sys::List) -> Result<(), NotSupported> {
        // SAFETY: the arguments of a FuncExpr; a text Const's datum is a
        // text (detoasted before reading).
        let (zone, value) = unsafe {
            let args = list_nodes(args);
            let zone = args.first().copied().filter(|z| (**z).type_ == pg_sys::NodeTag::T_Const).and_then(|z| {
                let c = z as *mut pg_sys::Const;
                (!(*c).constisnull).then(|| {
                    let v = pg_sys::pg_detoast_datum_packed((*c).constvalue.cast_mut_ptr());
                    pgrx::varlena::text_to_rust_str(v).map(str::to_string).ok()
                })?
            });
            (zone, args.get(1).copied())
        };
        let (Some(zone), Some(value)) = (zone, value) else {
            return unsupported("AT TIME ZONE with a zone that is not a constant".into());
        };
        let Some(table) = crate::timezone::named_table(&zone) else {
            return unsupported(format!(
                "AT TIME ZONE '{zone}' (zone names and fixed-offset abbreviations run on the device, not this)"
            ));
        };
        let (from, name) =
            if to_local { ("TIMESTAMPTZ", "TIMESTAMP_TIMESTAMPTZ") } else { ("TIMESTAMP", "TIMESTAMPTZ_TIMESTAMP") };
        if self.expr_type(value)? != type_id(from) {
            return unsupported("AT TIME ZONE of another device type".into());
        }
        let fid = catalog::FUNCTIONS.iter().find(|f| f.name == name).expect("catalog").id;
        self.emit(value)?;
        self.b.zone_table(&table);
        self.b.func(fid);
        Ok(())
    }

    /// Check `funcid` against the catalog and emit its arguments; returns
    /// the device function id.
    fn push_args(&mut self, funcid: pg_sys::Oid, args: *mut pg_sys::List, what: &str) -> Result<u16, NotSupported> {
        let Some(fid) = device_function_of(funcid) else {
            // SAFETY: prints any OID.
            let name =
                unsafe { std::ffi::CStr::from_ptr(pg_sys::format_procedure(funcid)) }.to_string_lossy().into_owned();
            return unsupported(format!("{what} {name} is not in the device catalog"));
        };
        let f = func_info(fid).expect("generated map and catalog agree");
        // SAFETY: args of an OpExpr/FuncExpr are a valid List.
        let args = unsafe { list_nodes(args) };
        // the functions of the session time zone take its table last
        let zoned = uses_time_zone(fid);
        if args.len() + zoned as usize != f.nargs as usize {
            return unsupported(format!("{} takes {} arguments, not {}", f.name, f.nargs, args.len()));
        }
        if zoned && !crate::timezone::session_usable() {
            return unsupported("the session time zone could not be tabulated for the device".into());
        }
        for (i, a) in args.iter().enumerate() {
            let t = self.expr_type(*a)?;
            if t != f.args[i] {
                return unsupported(format!("argument {} of {} has device type {t}, not {}", i + 1, f.name, f.args[i]));
            }
            self.emit(*a)?;
        }
        if zoned {
            self.b.tz_table(&crate::timezone::session_table());
        }
        Ok(fid)
    }

    /// A sub-expression that is the same for every row (no Vars, nothing
    /// volatile) but not a plain constant: evaluated once on the CPU.
    ///
    /// # Safety
    /// `node` is a valid expression node.
    unsafe fn hoistable(&self, node: *mut pg_sys::Node) -> bool {
        // SAFETY: valid node (caller).
        unsafe {
            !matches!((*node).type_, pg_sys::NodeTag::T_Const | pg_sys::NodeTag::T_CaseTestExpr)
                && !pg_sys::contain_var_clause(node)
                && !pg_sys::contain_volatile_functions(node)
                && !contains_case_test(node)
                // an InitPlan's output only as the bare Param: a function
                // over it is evaluated where the device reaches it (its
                // error caught on the CPU would abandon a subquery's run)
                && ((*node).type_ == pg_sys::NodeTag::T_Param || !contains_exec_param(node))
        }
    }

    fn emit(&mut self, node: *mut pg_sys::Node) -> Result<(), NotSupported> {
        if node.is_null() {
            return unsupported("empty expression".into());
        }
        if !self.pg_fallback && !self.numeric_ok && self.expr_type(node) == Ok(type_id("NUMERIC")) {
            return unsupported("numeric in a join or an aggregate (values beyond 38 digits need PostgreSQL)".into());
        }
        // SAFETY: node is a valid expression node.
        if unsafe { self.hoistable(node) } && !self.expr_type(node).is_ok_and(is_varlena) {
            let t = self.expr_type(node)?;
            let idx = self.params.len() as u32;
            self.params.push((node, t));
            self.b.param(idx);
            return Ok(());
        }
        // SAFETY: node is a valid Node; each branch casts to the type its
        // tag names.
        unsafe {
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    let v = node as *mut pg_sys::Var;
                    if (*v).varlevelsup != 0 {
                        return unsupported("a column of an outer query".into());
                    }
                    if (*v).varattno <= 0 {
                        return unsupported("system or whole-row columns".into());
                    }
                    let Some((source, key)) = (self.resolve)(v) else {
                        return unsupported("a column of another relation".into());
                    };
                    let t = self.expr_type(node)?;
                    let idx = match self.columns.iter().position(|(s, k, _)| (*s, *k) == (source, key)) {
                        Some(i) => i,
                        None => {
                            self.columns.push((source, key, t));
                            self.columns.len() - 1
                        }
                    };
                    self.b.var(idx as i32);
                }
                pg_sys::NodeTag::T_Const => {
                    let c = node as *mut pg_sys::Const;
                    let t = self.expr_type(node)?;
                    if (*c).constisnull {
                        self.b.null();
                    } else {
                        push_const(&mut self.b, t, (*c).constvalue)?;
                    }
                }
                pg_sys::NodeTag::T_OpExpr => {
                    let o = node as *mut pg_sys::OpExpr;
                    let mut funcid = (*o).opfuncid;
                    if funcid == pg_sys::InvalidOid {
                        funcid = pg_sys::get_opcode((*o).opno);
                    }
                    self.call(funcid, (*o).args, (*o).inputcollid, "operator function")?;
                }
                pg_sys::NodeTag::T_DistinctExpr => {
                    // DistinctExpr has OpExpr's layout
                    let o = node as *mut pg_sys::OpExpr;
                    let mut funcid = (*o).opfuncid;
                    if funcid == pg_sys::InvalidOid {
                        funcid = pg_sys::get_opcode((*o).opno);
                    }
                    if device_function_of(funcid).is_some_and(uses_time_zone) {
                        return unsupported("IS DISTINCT FROM across date / timestamp and timestamptz".into());
                    }
                    let fid = self.push_args(funcid, (*o).args, "equality function")?;
                    self.check_collation(fid, (*o).inputcollid)?;
                    if func_info(fid).map(|f| f.result) != Some(type_id("BOOL")) {
                        return unsupported("IS DISTINCT FROM with a non-boolean equality".into());
                    }
                    self.b.distinct(fid);
                }
                pg_sys::NodeTag::T_FuncExpr => {
                    let f = node as *mut pg_sys::FuncExpr;
                    if (*f).funcretset {
                        return unsupported("set-returning functions".into());
                    }
                    self.call((*f).funcid, (*f).args, (*f).inputcollid, "function")?;
                }
                pg_sys::NodeTag::T_BoolExpr => {
                    let e = node as *mut pg_sys::BoolExpr;
                    let args = list_nodes((*e).args);
                    for a in &args {
                        if self.expr_type(*a)? != type_id("BOOL") {
                            return unsupported("a non-boolean argument of AND/OR/NOT".into());
                        }
                    }
                    match (*e).boolop {
                        pg_sys::BoolExprType::NOT_EXPR => {
                            self.emit(args[0])?;
                            self.b.op(Op::Not);
                        }
                        kind => {
                            // a1 [jump if decided] a2 and/or [jump] a3 ...:
                            // later arguments are skipped once the result is
                            // known, as PostgreSQL skips them.
                            let (decide, combine) = if kind == pg_sys::BoolExprType::AND_EXPR {
                                (Op::JumpIfFalseKeep, Op::And2)
                            } else {
                                (Op::JumpIfTrueKeep, Op::Or2)
                            };
                            self.emit(args[0])?;
                            let mut pending = None;
                            for a in &args[1..] {
                                let j = self.b.jump(decide);
                                pending = Some(match pending {
                                    None => j,
                                    Some(p) => self.b.merge(p, j),
                                });
                                self.emit(*a)?;
                                self.b.op(combine);
                            }
                            if let Some(p) = pending {
                                self.b.place(p);
                            }
                        }
                    }
                }
                pg_sys::NodeTag::T_NullTest => {
                    let n = node as *mut pg_sys::NullTest;
                    if (*n).argisrow {
                        return unsupported("IS NULL on a row value".into());
                    }
                    self.expr_type((*n).arg as *mut pg_sys::Node)?;
                    self.emit((*n).arg as *mut pg_sys::Node)?;
                    self.b.op(if (*n).nulltesttype == pg_sys::NullTestType::IS_NULL {
                        Op::IsNull
                    } else {
                        Op::IsNotNull
                    });
                }
                pg_sys::NodeTag::T_BooleanTest => {
                    let t = node as *mut pg_sys::BooleanTest;
                    self.emit((*t).arg as *mut pg_sys::Node)?;
                    use pg_sys::BoolTestType::*;
                    self.b.op(match (*t).booltesttype {
                        IS_TRUE => Op::IsTrue,
                        IS_NOT_TRUE => Op::IsNotTrue,
                        IS_FALSE => Op::IsFalse,
                        IS_NOT_FALSE => Op::IsNotFalse,
                        IS_UNKNOWN => Op::IsUnknown,
                        _ => Op::IsNotUnknown,
                    });
                }
                pg_sys::NodeTag::T_CoerceViaIO => {
                    // a cast to text or varchar through the source type's
                    // output function, where the catalog has it
                    let c = node as *mut pg_sys::CoerceViaIO;
                    if (*c).resulttype != pg_sys::TEXTOID && (*c).resulttype != pg_sys::VARCHAROID {
                        return unsupported("a cast through text input and output functions".into());
                    }
                    let arg = (*c).arg as *mut pg_sys::Node;
                    let mut out_fn = pg_sys::InvalidOid;
                    let mut varlena = false;
                    pg_sys::getTypeOutputInfo(pg_sys::exprType(arg), &mut out_fn, &mut varlena);
                    let args = pg_sys::lappend(std::ptr::null_mut(), arg.cast());
                    self.call(out_fn, args, pg_sys::InvalidOid, "output function")?;
                }
                pg_sys::NodeTag::T_RelabelType => {
                    let r = node as *mut pg_sys::RelabelType;
                    let from = self.expr_type((*r).arg as *mut pg_sys::Node)?;
                    if from != self.expr_type(node)? {
                        return unsupported("a relabeling between different device types".into());
                    }
                    self.emit((*r).arg as *mut pg_sys::Node)?;
                }
                pg_sys::NodeTag::T_CaseExpr => {
                    let c = node as *mut pg_sys::CaseExpr;
                    self.expr_type(node)?;
                    let slot = if (*c).arg.is_null() {
                        None
                    } else {
                        self.expr_type((*c).arg as *mut pg_sys::Node)?;
                        self.emit((*c).arg as *mut pg_sys::Node)?;
                        let s = self.alloc_local()?;
                        self.b.store_local(s);
                        self.case_values.push(s);
                        Some(s)
                    };
                    let mut done = None;
                    for w in list_nodes((*c).args) {
                        let w = w as *mut pg_sys::CaseWhen;
                        let cond = (*w).expr as *mut pg_sys::Node;
                        if self.expr_type(cond)? != type_id("BOOL") {
                            return unsupported("a non-boolean WHEN condition".into());
                        }
                        self.emit(cond)?;
                        let next = self.b.jump(Op::JumpIfNotTrue);
                        self.emit((*w).result as *mut pg_sys::Node)?;
                        let j = self.b.jump(Op::Jump);
                        done = Some(match done {
                            None => j,
                            Some(p) => self.b.merge(p, j),
                        });
                        self.b.place(next);
                    }
                    if (*c).defresult.is_null() {
                        self.b.null();
                    } else {
                        self.emit((*c).defresult as *mut pg_sys::Node)?;
                    }
                    if let Some(d) = done {
                        self.b.place(d);
                    }
                    if let Some(s) = slot {
                        self.case_values.pop();
                        self.free_local(s);
                    }
                }
                pg_sys::NodeTag::T_CaseTestExpr => {
                    let Some(s) = self.case_values.last().copied() else {
                        return unsupported("a CaseTestExpr outside CASE".into());
                    };
                    self.b.load_local(s);
                }
                pg_sys::NodeTag::T_CoalesceExpr => {
                    let c = node as *mut pg_sys::CoalesceExpr;
                    let args = list_nodes((*c).args);
                    let mut done = None;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            self.b.op(Op::Pop);
                        }
                        self.emit(*a)?;
                        if i + 1 < args.len() {
                            let j = self.b.jump(Op::JumpIfNotNullKeep);
                            done = Some(match done {
                                None => j,
                                Some(p) => self.b.merge(p, j),
                            });
                        }
                    }
                    if let Some(d) = done {
                        self.b.place(d);
                    }
                }
                pg_sys::NodeTag::T_NullIfExpr => {
                    // NULLIF(a, b): NULL when a = b, else a; a is evaluated once
                    let o = node as *mut pg_sys::OpExpr;
                    let mut funcid = (*o).opfuncid;
                    if funcid == pg_sys::InvalidOid {
                        funcid = pg_sys::get_opcode((*o).opno);
                    }
                    let args = list_nodes((*o).args);
                    let fid = device_function_of(funcid)
                        .ok_or_else(|| NotSupported("NULLIF with an equality not in the device catalog".into()))?;
                    let f = func_info(fid).expect("catalog");
                    if args.len() != 2 || f.nargs != 2 || f.result != type_id("BOOL") {
                        return unsupported("NULLIF with an unusual equality".into());
                    }
                    self.check_collation(fid, (*o).inputcollid)?;
                    for (i, a) in args.iter().enumerate() {
                        if self.expr_type(*a)? != f.args[i] {
                            return unsupported("NULLIF arguments of other device types".into());
                        }
                    }
                    self.emit(args[0])?;
                    let s = self.alloc_local()?;
                    self.b.store_local(s);
                    self.b.load_local(s);
                    self.emit(args[1])?;
                    self.b.func(fid);
                    let not_equal = self.b.jump(Op::JumpIfNotTrue);
                    self.b.null();
                    let done = self.b.jump(Op::Jump);
                    self.b.place(not_equal);
                    self.b.load_local(s);
                    self.b.place(done);
                    self.free_local(s);
                }
                pg_sys::NodeTag::T_MinMaxExpr => {
                    let m = node as *mut pg_sys::MinMaxExpr;
                    let t = self.expr_type(node)?;
                    let family = if (*m).op == pg_sys::MinMaxOp::IS_GREATEST { "IMPL_CMP_GT" } else { "IMPL_CMP_LT" };
                    let cmp = self.comparison(family, t)?;
                    for (i, a) in list_nodes((*m).args).iter().enumerate() {
                        if self.expr_type(*a)? != t {
                            return unsupported("GREATEST/LEAST arguments of other device types".into());
                        }
                        self.emit(*a)?;
                        if i > 0 {
                            self.b.minmax(cmp);
                        }
                    }
                }
                pg_sys::NodeTag::T_ScalarArrayOpExpr => {
                    let sa = node as *mut pg_sys::ScalarArrayOpExpr;
                    let args = list_nodes((*sa).args);
                    let mut funcid = (*sa).opfuncid;
                    if funcid == pg_sys::InvalidOid {
                        funcid = pg_sys::get_opcode((*sa).opno);
                    }
                    let fid = device_function_of(funcid)
                        .ok_or_else(|| NotSupported("IN / ANY with an operator not in the device catalog".into()))?;
                    let f = func_info(fid).expect("catalog");
                    let elem_oid = pg_sys::get_element_type(pg_sys::exprType(args[1]));
                    let elem_t = device_type_of(elem_oid)
                        .ok_or_else(|| NotSupported(format!("arrays of {} on the device", type_name(elem_oid))))?;
                    if f.nargs != 2 || f.result != type_id("BOOL") || f.args[..2] != [self.expr_type(args[0])?, elem_t]
                    {
                        return unsupported("IN / ANY with mismatched operand types".into());
                    }
                    let use_or = (*sa).useOr;
                    match (*args[1]).type_ {
                        pg_sys::NodeTag::T_Const => {
                            let c = args[1] as *mut pg_sys::Const;
                            if (*c).constisnull {
                                // a NULL array gives NULL; the scalar is still
                                // evaluated first, for its errors
                                self.emit(args[0])?;
                                self.b.op(Op::Pop);
                                self.b.null();
                                return Ok(());
                            }
                            let arr =
                                pg_sys::pg_detoast_datum((*c).constvalue.cast_mut_ptr()) as *mut pg_sys::ArrayType;
                            let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
                            pg_sys::get_typlenbyvalalign(elem_oid, &mut len, &mut byval, &mut align);
                            let mut elems: *mut pg_sys::Datum = std::ptr::null_mut();
                            let mut nulls: *mut bool = std::ptr::null_mut();
                            let mut n = 0;
                            pg_sys::deconstruct_array(
                                arr, elem_oid, len as i32, byval, align, &mut elems, &mut nulls, &mut n,
                            );
                            let values: Vec<Option<pg_sys::Datum>> =
                                (0..n as usize).map(|i| (!*nulls.add(i)).then(|| *elems.add(i))).collect();
                            // a longer list of equality tests: one binary
                            // search of the sorted constants
                            let scalar_t = self.expr_type(args[0])?;
                            let int = |t: u16| t == type_id("INT2") || t == type_id("INT4") || t == type_id("INT8");
                            let test = if use_or {
                                matches!(f.family, "IMPL_CMP_EQ" | "IMPL_TEXT_EQ" | "IMPL_BPCHAR_EQ")
                            } else {
                                matches!(f.family, "IMPL_CMP_NE" | "IMPL_TEXT_NE" | "IMPL_BPCHAR_NE")
                            };
                            if n > INLINE_ARRAY_ELEMENTS
                                && test
                                && in_set_type(elem_t)
                                && (scalar_t == elem_t || (int(scalar_t) && int(elem_t)))
                            {
                                self.check_collation(fid, (*sa).inputcollid)?;
                                self.emit(args[0])?;
                                let elements = values
                                    .iter()
                                    .flatten()
                                    .map(|&v| {
                                        if is_varlena(elem_t) {
                                            SetElement::Bytes(varlena_bytes(v))
                                        } else {
                                            SetElement::Bits(const_bits(elem_t, v))
                                        }
                                    })
                                    .collect();
                                self.b.in_sorted(elem_t, fid, use_or, values.contains(&None), elements);
                                return Ok(());
                            }
                            if n > MAX_ARRAY_ELEMENTS {
                                return unsupported(format!(
                                    "IN / ANY lists longer than {MAX_ARRAY_ELEMENTS} elements of this type or operator"
                                ));
                            }
                            self.check_collation(fid, (*sa).inputcollid)?;
                            self.emit(args[0])?;
                            let s = self.alloc_local()?;
                            self.b.store_local(s);
                            self.emit_array_test(s, fid, use_or, values.len(), |ctx, i| {
                                match values[i] {
                                    // an element of the array constant
                                    Some(v) => push_const(&mut ctx.b, elem_t, v)?,
                                    None => ctx.b.null(),
                                }
                                Ok(())
                            })?;
                            self.free_local(s);
                        }
                        pg_sys::NodeTag::T_ArrayExpr => {
                            // PostgreSQL builds the whole array before comparing:
                            // every element is evaluated (and may raise) first.
                            let ae = args[1] as *mut pg_sys::ArrayExpr;
                            if (*ae).multidims {
                                return unsupported("multi-dimensional ARRAY[] in IN / ANY".into());
                            }
                            let elems = list_nodes((*ae).elements);
                            self.check_collation(fid, (*sa).inputcollid)?;
                            self.emit(args[0])?;
                            let s = self.alloc_local()?;
                            self.b.store_local(s);
                            let mut slots = Vec::with_capacity(elems.len());
                            for e in &elems {
                                if self.expr_type(*e)? != elem_t {
                                    return unsupported("ARRAY[] elements of other device types".into());
                                }
                                self.emit(*e)?;
                                let es = self.alloc_local()?;
                                self.b.store_local(es);
                                slots.push(es);
                            }
                            self.emit_array_test(s, fid, use_or, slots.len(), |ctx, i| {
                                ctx.b.load_local(slots[i]);
                                Ok(())
                            })?;
                            for es in slots.into_iter().rev() {
                                self.free_local(es);
                            }
                            self.free_local(s);
                        }
                        _ => return unsupported("IN / ANY over a non-constant array".into()),
                    }
                }
                other => return unsupported(format!("expression node {other:?} is not supported on the device")),
            }
        }
        Ok(())
    }
}

/// Whether `node` contains a CaseTestExpr (whose value comes from the
/// enclosing CASE, so it cannot be hoisted out of it).
///
/// # Safety
/// `node` is a valid expression tree.
unsafe fn contains_case_test(node: *mut pg_sys::Node) -> bool {
    #[pg_guard]
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, _ctx: *mut std::ffi::c_void) -> bool {
        if node.is_null() {
            return false;
        }
        // SAFETY: expression_tree_walker hands us valid nodes.
        unsafe {
            if (*node).type_ == pg_sys::NodeTag::T_CaseTestExpr {
                return true;
            }
            pg_sys::expression_tree_walker_impl(node, Some(walker), std::ptr::null_mut())
        }
    }
    // SAFETY: valid tree (caller).
    unsafe { walker(node, std::ptr::null_mut()) }
}

/// Whether `node` holds a subquery or an executor Param (an InitPlan's
/// output).
///
/// # Safety
/// `node` is a valid expression.
pub(crate) unsafe fn contains_exec_param(node: *mut pg_sys::Node) -> bool {
    #[pg_guard]
    unsafe extern "C-unwind" fn walker(node: *mut pg_sys::Node, _ctx: *mut std::ffi::c_void) -> bool {
        if node.is_null() {
            return false;
        }
        // SAFETY: expression_tree_walker hands us valid nodes.
        unsafe {
            match (*node).type_ {
                pg_sys::NodeTag::T_SubPlan | pg_sys::NodeTag::T_AlternativeSubPlan | pg_sys::NodeTag::T_SubLink => {
                    return true;
                }
                pg_sys::NodeTag::T_Param
                    if (*(node as *mut pg_sys::Param)).paramkind == pg_sys::ParamKind::PARAM_EXEC =>
                {
                    return true;
                }
                _ => {}
            }
            pg_sys::expression_tree_walker_impl(node, Some(walker), std::ptr::null_mut())
        }
    }
    // SAFETY: valid tree (caller).
    unsafe { walker(node, std::ptr::null_mut()) }
}

/// Compile `expr` (whose Vars of relation `varno` are the scanned columns).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile(expr: *mut pg_sys::Node, varno: i32) -> Result<Compiled, NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_single(expr, varno, false) }
}

/// [`compile`], also for a numeric result (which only `device_eval`
/// reads back so far).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_any_result(expr: *mut pg_sys::Node, varno: i32) -> Result<Compiled, NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_single(expr, varno, true) }
}

unsafe fn compile_single(expr: *mut pg_sys::Node, varno: i32, numeric_result: bool) -> Result<Compiled, NotSupported> {
    let resolve = |v: *mut pg_sys::Var| {
        // SAFETY: the walker hands valid Vars.
        unsafe { ((*v).varno == varno).then_some((0u8, (*v).varattno)) }
    };
    let mut inputs = Inputs::default();
    // SAFETY: valid expression (caller).
    let (program, result_type) =
        unsafe { compile_inner(expr, &resolve, &mut inputs, false, numeric_result, Fallback::Pg)? };
    Ok(Compiled {
        program,
        columns: inputs.columns.iter().map(|&(_, a, t)| (a, t)).collect(),
        result_type,
        params: inputs.params,
    })
}

/// Columns and hoisted parameters shared by several programs (a join's):
/// every program numbers them the same way.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    /// (source, column key, device type), in column order.
    pub columns: Vec<(u8, i16, u16)>,
    /// Hoisted sub-expressions, in parameter order (see [`Compiled::params`]).
    pub params: Vec<(*mut pg_sys::Node, u16)>,
}

/// Compile `expr` adding the columns and parameters it needs to `inputs`
/// (left as they were when it does not compile).  `resolve` says where
/// each Var is read; `text_result` allows a text result (a join's hash
/// key, which never leaves the device).  Returns the program and the
/// result's type OID.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_shared(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
    text_result: bool,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_inner(expr, resolve, inputs, text_result, false, Fallback::None) }
}

/// A bound on the values of numeric expression `e`: (precision, scale):
/// every value has at most `scale` decimals and, at that scale, at most
/// `precision` digits.  Known for typmod'd columns, constants, integers
/// cast to numeric, + - * and the unary functions, round/trunc to a
/// constant scale, ceil/floor/sign; None otherwise (division, ...).
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn numeric_bound(e: *mut pg_sys::Node) -> Option<(i32, i32)> {
    // SAFETY: a valid expression (caller); each branch casts to the type
    // its tag names.
    unsafe {
        let digits = |m: u128| m.checked_ilog10().map_or(1, |d| d as i32 + 1);
        let int_digits = |t: pg_sys::Oid| match t {
            pg_sys::INT2OID => Some(5),
            pg_sys::INT4OID => Some(10),
            pg_sys::INT8OID => Some(19),
            _ => None,
        };
        match (*e).type_ {
            pg_sys::NodeTag::T_RelabelType => numeric_bound((*(e as *mut pg_sys::RelabelType)).arg.cast()),
            pg_sys::NodeTag::T_Var if (*(e as *mut pg_sys::Var)).vartype == pg_sys::NUMERICOID => {
                let typmod = (*(e as *mut pg_sys::Var)).vartypmod;
                if typmod < pg_sys::VARHDRSZ as i32 {
                    return None;
                }
                let t = typmod - pg_sys::VARHDRSZ as i32;
                let (p, s) = ((t >> 16) & 0xffff, (((t & 0x7ff) ^ 1024) - 1024));
                (s >= 0 && p >= s).then_some((p, s))
            }
            pg_sys::NodeTag::T_Const => {
                let c = e as *mut pg_sys::Const;
                if (*c).constisnull {
                    return Some((1, 0));
                }
                match (*c).consttype {
                    pg_sys::NUMERICOID => {
                        let n = numeric_of((*c).constvalue);
                        match n.scale {
                            pgstrom_runtime::numeric::NUM_BIG => None,
                            s if s < 0 => Some((1, 0)),
                            s => Some((digits(n.mant.unsigned_abs()).max(s), s)),
                        }
                    }
                    t => int_digits(t).map(|p| (p, 0)),
                }
            }
            pg_sys::NodeTag::T_OpExpr | pg_sys::NodeTag::T_FuncExpr => {
                let (funcid, args) = if (*e).type_ == pg_sys::NodeTag::T_OpExpr {
                    let o = e as *mut pg_sys::OpExpr;
                    ((*o).opfuncid, (*o).args)
                } else {
                    let f = e as *mut pg_sys::FuncExpr;
                    ((*f).funcid, (*f).args)
                };
                let f = func_info(device_function_of(funcid)?)?;
                let args = list_nodes(args);
                let arg = |i: usize| args.get(i).and_then(|&a| numeric_bound(a));
                Some(match f.name {
                    "NUMERIC_ADD" | "NUMERIC_SUB" => {
                        let ((p1, s1), (p2, s2)) = (arg(0)?, arg(1)?);
                        let s = s1.max(s2);
                        ((p1 - s1).max(p2 - s2) + 1 + s, s)
                    }
                    "NUMERIC_MUL" => {
                        let ((p1, s1), (p2, s2)) = (arg(0)?, arg(1)?);
                        (p1 + p2, s1 + s2)
                    }
                    "NUMERIC_UMINUS" | "NUMERIC_UPLUS" | "NUMERIC_ABS" | "ABS_NUMERIC" => arg(0)?,
                    "NUMERIC_INT2" | "NUMERIC_INT4" | "NUMERIC_INT8" => (int_digits(pg_sys::exprType(args[0]))?, 0),
                    "ROUND_NUMERIC" | "TRUNC_NUMERIC" => {
                        let (p, s) = arg(0)?;
                        let c = args.get(1).copied()?;
                        if (*c).type_ != pg_sys::NodeTag::T_Const || (*(c as *mut pg_sys::Const)).constisnull {
                            return None;
                        }
                        let to = (*(c as *mut pg_sys::Const)).constvalue.value() as i32;
                        if !(0..=38).contains(&to) {
                            return None;
                        }
                        (p - s + 1 + to, to)
                    }
                    "CEIL_NUMERIC" | "CEILING_NUMERIC" | "FLOOR_NUMERIC" => {
                        let (p, s) = arg(0)?;
                        (p - s + 1, 0)
                    }
                    "SIGN_NUMERIC" => (1, 0),
                    _ => return None,
                })
            }
            _ => None,
        }
    }
}

/// Compile sum()'s or avg()'s numeric argument, when [`numeric_bound`]
/// proves its values fit the device (38 digits): then the device never
/// needs PostgreSQL for it.  Returns the program and the scale to sum at.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_numeric_sum(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, i32), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        match numeric_bound(expr) {
            Some((p, s)) if p <= 38 => {
                let (program, _) = compile_inner(expr, resolve, inputs, false, true, Fallback::BoundedNumeric)?;
                Ok((program, s))
            }
            Some((p, _)) => unsupported(format!("a numeric sum of up to {p} digits (the device sums 38)")),
            None => unsupported("a numeric sum whose digits the planner cannot bound (declare numeric(p,s))".into()),
        }
    }
}

/// A grouping key, hashed and compared on the device, which returns its
/// value (text, bpchar and bytea keys are read at the group's
/// representative row instead).  A numeric key needs [`numeric_bound`] to
/// prove at most 38 digits: with no PostgreSQL fallback in an aggregation,
/// the device must hold every value.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_group_key(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        if pg_sys::exprType(expr) != pg_sys::NUMERICOID {
            return compile_inner(expr, resolve, inputs, true, false, Fallback::None);
        }
        match numeric_bound(expr) {
            Some((p, _)) if p <= 38 => compile_inner(expr, resolve, inputs, true, true, Fallback::BoundedNumeric),
            Some((p, _)) => unsupported(format!("a numeric grouping key of up to {p} digits (the device holds 38)")),
            None => unsupported(
                "a numeric grouping key whose digits the planner cannot bound (declare numeric(p,s))".into(),
            ),
        }
    }
}

/// The argument of min() / max() over numeric (of at most 38 digits, by
/// [`numeric_bound`]), interval or timetz, compared on the device, which
/// returns the winning value.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_minmax_any(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<Program, NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        if pg_sys::exprType(expr) != pg_sys::NUMERICOID {
            return compile_inner(expr, resolve, inputs, false, true, Fallback::None).map(|(p, _)| p);
        }
        match numeric_bound(expr) {
            Some((p, _)) if p <= 38 => {
                compile_inner(expr, resolve, inputs, false, true, Fallback::BoundedNumeric).map(|(p, _)| p)
            }
            Some((p, _)) => unsupported(format!("min / max of a numeric of up to {p} digits (the device holds 38)")),
            None => unsupported(
                "min / max of a numeric whose digits the planner cannot bound (declare numeric(p,s))".into(),
            ),
        }
    }
}

/// The scale s of `e` when it is a column of type numeric(p,s) with p <=
/// 18 (under any RelabelType): its values, NaN aside, are integers below
/// 10^18 at scale s, which min() and max() compare on the device.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn numeric_column_scale(e: *mut pg_sys::Node) -> Option<i32> {
    // SAFETY: a valid expression (caller).
    unsafe {
        let v = strip_relabel(e);
        if (*v).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        // a numeric Var's bound is its typmod's (precision, scale)
        numeric_bound(v).filter(|&(p, _)| p <= 18).map(|(_, s)| s)
    }
}

/// `e` without the RelabelTypes (binary-compatible casts) above it.
///
/// # Safety
/// `e` is a valid expression.
pub unsafe fn strip_relabel(e: *mut pg_sys::Node) -> *mut pg_sys::Node {
    let mut v = e;
    // SAFETY: a valid expression (caller); a RelabelType's arg is one too.
    unsafe {
        while (*v).type_ == pg_sys::NodeTag::T_RelabelType {
            v = (*(v as *mut pg_sys::RelabelType)).arg.cast();
        }
    }
    v
}

/// The argument of min() / max() over a numeric(p,s) column
/// ([`numeric_column_scale`]): the column, its value kept on the device.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_numeric_column(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, i32), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        let Some(scale) = numeric_column_scale(expr) else {
            return unsupported("min / max of numeric other than a numeric(p,s) column with p <= 18".into());
        };
        // a column of the type holds no value the device cannot
        let (p, _) = compile_inner(expr, resolve, inputs, true, true, Fallback::BoundedNumeric)?;
        Ok((p, scale))
    }
}

/// A count() argument, of which only NULLs matter: a bare column of any
/// device type compiles as `CASE WHEN col IS NOT NULL THEN true END`
/// (numeric included: testing a value never needs PostgreSQL, and the
/// program returns no numeric), anything else as [`compile_shared`] with
/// its value kept on the device.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_count_arg(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe {
        if (*strip_relabel(expr)).type_ != pg_sys::NodeTag::T_Var {
            return compile_inner(expr, resolve, inputs, true, false, Fallback::None);
        }
        let nt = pg_sys::palloc0(std::mem::size_of::<pg_sys::NullTest>()) as *mut pg_sys::NullTest;
        (*nt).xpr.type_ = pg_sys::NodeTag::T_NullTest;
        (*nt).arg = expr.cast();
        (*nt).nulltesttype = pg_sys::NullTestType::IS_NOT_NULL;
        (*nt).location = -1;
        let cw = pg_sys::palloc0(std::mem::size_of::<pg_sys::CaseWhen>()) as *mut pg_sys::CaseWhen;
        (*cw).xpr.type_ = pg_sys::NodeTag::T_CaseWhen;
        (*cw).expr = nt.cast();
        (*cw).result = pg_sys::makeBoolConst(true, false).cast();
        (*cw).location = -1;
        let ce = pg_sys::palloc0(std::mem::size_of::<pg_sys::CaseExpr>()) as *mut pg_sys::CaseExpr;
        (*ce).xpr.type_ = pg_sys::NodeTag::T_CaseExpr;
        (*ce).casetype = pg_sys::BOOLOID;
        (*ce).args = pg_sys::lappend(std::ptr::null_mut(), cw.cast());
        (*ce).defresult = pg_sys::makeBoolConst(false, true).cast();
        (*ce).location = -1;
        compile_inner(ce.cast(), resolve, inputs, false, false, Fallback::BoundedNumeric)
    }
}

/// [`compile_shared`] for a filter whose rows PostgreSQL evaluates when
/// the device cannot (GpuScan, a GpuJoin's scan quals): numerics and every
/// date/time unit are compiled.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_shared_fallback(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_inner(expr, resolve, inputs, false, false, Fallback::Pg) }
}

/// [`compile_shared_fallback`] for a GpuScan's GPU Projection: the result
/// may be of any device type (numeric, uuid, interval, timetz, float2 and
/// text, bpchar or bytea too: the scan reads them back).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_projection(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_inner(expr, resolve, inputs, false, true, Fallback::Pg) }
}

unsafe fn compile_inner(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
    text_result: bool,
    wide_result: bool,
    fallback: Fallback,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    let mut ctx = Ctx {
        b: Builder::new(),
        resolve,
        columns: inputs.columns.clone(),
        locals: 0,
        case_values: Vec::new(),
        params: inputs.params.clone(),
        pg_fallback: fallback == Fallback::Pg,
        numeric_ok: fallback == Fallback::BoundedNumeric,
    };
    let rtype = ctx.expr_type(expr)?;
    // (a text_result, a join's hash key, is hashed and compared on the
    // device, which works for the wide types too)
    if is_wide(rtype) && !wide_result && !text_result {
        let name = catalog::type_info(rtype).map_or("?", |t| t.name).to_ascii_lowercase();
        return unsupported(format!(
            "{name} results are not returned by the device yet ({name} works inside expressions)"
        ));
    }
    // (device_eval reads wide and variable-length results back)
    let kept_on_device =
        text_result || (wide_result && (is_wide(rtype) || is_varlena(rtype) || rtype == type_id("FLOAT2")));
    if !is_returned(rtype) && !kept_on_device {
        return unsupported("text results are not returned by the device yet (text works inside expressions)".into());
    }
    ctx.emit(expr)?;
    // SAFETY: valid expression.
    let result_type = unsafe { pg_sys::exprType(expr) };
    let program = ctx.b.finish(rtype).map_err(|e| NotSupported(format!("{e}")))?;
    inputs.columns = ctx.columns;
    inputs.params = ctx.params;
    Ok((program, result_type))
}
