//! Generates the map from PostgreSQL function OIDs to device function ids,
//! from device/include/device_functions.def (the catalog's one source).
//! Each entry names its fmgroids.h constant, so a wrong name fails the
//! build rather than mis-mapping a function.

use std::fmt::Write as _;
use std::path::PathBuf;

/// fmgroids.h constants of functions that came after PostgreSQL 15, with
/// the version that brought them.
const SINCE: &[(&str, u32)] = &[("F_TIMEZONE_TIMESTAMPTZ", 17), ("F_TIMEZONE_TIMESTAMP", 17)];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let def = manifest.join("../../device/include/device_functions.def");
    println!("cargo:rerun-if-changed={}", def.display());
    let text = std::fs::read_to_string(&def).expect("device_functions.def");
    let mut out = String::from("/// (PostgreSQL function OID, device function id), in catalog order.\n");
    out.push_str("pub static DEVICE_FUNCTION_OIDS: &[(pgrx::pg_sys::Oid, u16)] = &[\n");
    let mut id = 0u16;
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("DEVFUNC(") else { continue };
        id += 1;
        let pgf = rest.split(',').nth(1).expect("DEVFUNC pg_function").trim();
        // the extension's own functions (PGSTROM_*) have no fixed OID:
        // codegen finds them by name and signature
        if pgf.starts_with("PGSTROM_") {
            continue;
        }
        // functions newer than the oldest PostgreSQL we build for exist
        // only in the builds for their versions
        if let Some((_, since)) = SINCE.iter().find(|(f, _)| *f == pgf) {
            let older: Vec<String> = (15..*since).map(|v| format!("feature = \"pg{v}\"")).collect();
            writeln!(out, "    #[cfg(not(any({})))]", older.join(", ")).unwrap();
        }
        writeln!(out, "    (pgrx::pg_sys::Oid::from_u32(pgrx::pg_sys::{pgf}), {id}),").unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("device_function_oids.rs");
    std::fs::write(dest, out).expect("write device_function_oids.rs");
}
