//! The device catalog as codegen sees it: which PostgreSQL types and
//! functions the device has (device/include/device_types.def and
//! device_functions.def, the functions by their fixed OIDs; the
//! extension's own float2 functions by name), which date/time units it
//! computes, and under which collations its text functions match
//! PostgreSQL's.

use std::collections::HashMap;
use std::sync::OnceLock;

use pgrx::pg_sys;

use pgstrom_runtime::catalog::{self, func_info};
use pgstrom_runtime::program::type_id;

include!(concat!(env!("OUT_DIR"), "/device_function_oids.rs"));

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
        let names = crate::pg::compat::qualified_name_list(cname.as_ptr());
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

/// Whether device function `fid` depends on the session time zone (its
/// last argument is the zone's table, which codegen adds).
pub fn uses_time_zone(fid: u16) -> bool {
    func_info(fid).is_some_and(|f| f.nargs > 0 && f.args[f.nargs as usize - 1] == type_id("TZTAB"))
}

/// Units the device computes without PostgreSQL: of date_part over a
/// time (`time_only`), a timestamp or an `interval` (which has no isoyear,
/// dow, isodow or doy: PostgreSQL raises an error for them), or of
/// date_trunc (`trunc`).
pub(crate) fn device_unit(unit: &str, time_only: bool, trunc: bool, interval: bool) -> bool {
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
pub(crate) fn ascii_case_standard(collid: pg_sys::Oid) -> bool {
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
pub(crate) const POSIX_COLLATION_OID: pg_sys::Oid = pg_sys::Oid::from_u32(951);

/// The name PostgreSQL prints for type `oid`.
pub(crate) fn type_name(oid: pg_sys::Oid) -> String {
    // SAFETY: format_type_be works for any OID (it prints ??? for unknown).
    unsafe { std::ffi::CStr::from_ptr(pg_sys::format_type_be(oid)) }.to_string_lossy().into_owned()
}
