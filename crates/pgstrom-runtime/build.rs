//! Builds the device code (../../device) for the host as the CPU engine, and
//! generates the table of device sources that NVRTC compiles for the GPU.
//! One source, two targets: the same files feed both.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn list_sources(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let device = manifest.join("../../device").canonicalize().expect("device/ folder");
    let include = device.join("include");
    let kernels = device.join("kernels");
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-changed={}", kernels.display());

    let mut headers = list_sources(&include, "h");
    headers.extend(list_sources(&include, "def"));
    let units = list_sources(&kernels, "cu");
    for f in headers.iter().chain(units.iter()) {
        println!("cargo:rerun-if-changed={}", f.display());
    }

    // CPU engine: each kernel file is one C++ translation unit.
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .include(&include)
        .flag("-x")
        .flag("c++")
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .flag("-fvisibility=hidden")
        // each float operation rounded on its own, as on the GPU (NVRTC
        // runs with --fmad=false)
        .flag("-ffp-contract=off")
        .warnings(true)
        .extra_warnings(true)
        .flag("-Werror")
        .flag("-Wno-unused-function")
        .opt_level(2);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    check_headers_stand_alone(&build, &headers, &out_dir);
    for unit in &units {
        build.file(unit);
    }
    build.compile("pgstrom_device_cpu");

    // GPU engine: the same files, embedded for NVRTC.
    let mut table =
        String::from("/// Device headers: (include name, text).\npub const DEVICE_HEADERS: &[(&str, &str)] = &[\n");
    for h in &headers {
        let name = h.file_name().unwrap().to_string_lossy();
        writeln!(table, "    ({name:?}, include_str!({:?})),", h.display().to_string()).unwrap();
    }
    table.push_str(
        "];\n/// Device translation units: (file name, text).\npub const DEVICE_UNITS: &[(&str, &str)] = &[\n",
    );
    for u in &units {
        let name = u.file_name().unwrap().to_string_lossy();
        writeln!(table, "    ({name:?}, include_str!({:?})),", u.display().to_string()).unwrap();
    }
    table.push_str("];\n");
    let out = out_dir.join("device_sources.rs");
    std::fs::write(out, table).expect("write device_sources.rs");

    // The device catalog (types and functions), from the same .def files
    // the device code includes.
    let out = out_dir.join("device_catalog.rs");
    std::fs::write(out, catalog_rs(&include)).expect("write device_catalog.rs");

    // The program format (constants, op codes, error codes) and the
    // accumulator operations, from the .def files the device code includes.
    let out = out_dir.join("device_format.rs");
    std::fs::write(out, format_rs(&include)).expect("write device_format.rs");
    let out = out_dir.join("device_aggops.rs");
    std::fs::write(out, aggops_rs(&include)).expect("write device_aggops.rs");
}

/// Every header must stand alone: a translation unit that includes it
/// (twice, which proves its include guard too) and nothing else must
/// compile with the CPU engine's compiler and flags.  A header that leans
/// on what another happened to include before it fails the build here,
/// naming the header, instead of some later unit that includes it first.
/// NVRTC's view of the same headers is checked by the tests
/// (`tests/engines.rs`, each header alone with `-fdevice-syntax-only`).
fn check_headers_stand_alone(build: &cc::Build, headers: &[PathBuf], out_dir: &Path) {
    let dir = out_dir.join("standalone");
    std::fs::create_dir_all(&dir).expect("create standalone/");
    let compiler = build.get_compiler();
    let mut running = Vec::new();
    for h in headers.iter().filter(|h| h.extension().is_some_and(|x| x == "h")) {
        let name = h.file_name().unwrap().to_string_lossy().into_owned();
        let unit = dir.join(format!("{name}.cpp"));
        std::fs::write(&unit, format!("#include \"{name}\"\n#include \"{name}\"\n")).expect("write unit");
        let child = compiler
            .to_command()
            .arg("-fsyntax-only")
            .arg(&unit)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", compiler.path()));
        running.push((name, child));
    }
    let mut failed = String::new();
    for (name, child) in running {
        let out = child.wait_with_output().expect("wait for the compiler");
        if !out.status.success() {
            writeln!(
                failed,
                "{name} does not compile as the only include of a unit:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
            .unwrap();
        }
    }
    assert!(failed.is_empty(), "device headers must stand alone (include what they use):\n{failed}");
}

/// The arguments of each `NAME(...)` line of a .def file.
fn def_entries(path: &Path, macro_name: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let prefix = format!("{macro_name}(");
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(&prefix))
        .map(|rest| {
            let body = rest.trim_end().strip_suffix(')').unwrap_or_else(|| panic!("bad line: {rest}"));
            // split on commas outside the quoted label
            let mut fields = Vec::new();
            let mut cur = String::new();
            let mut quoted = false;
            for c in body.chars() {
                match c {
                    '"' => quoted = !quoted,
                    ',' if !quoted => {
                        fields.push(cur.trim().to_string());
                        cur.clear();
                    }
                    _ => cur.push(c),
                }
            }
            fields.push(cur.trim().to_string());
            fields
        })
        .collect()
}

fn catalog_rs(include: &Path) -> String {
    let types = def_entries(&include.join("device_types.def"), "DEVTYPE");
    let funcs = def_entries(&include.join("device_functions.def"), "DEVFUNC");
    let type_id = |name: &str| -> usize {
        if name == "NONE" {
            return 0;
        }
        1 + types.iter().position(|t| t[0] == name).unwrap_or_else(|| panic!("unknown device type {name}"))
    };
    let mut s = String::from("/// Device types, in id order (id = index + 1).\npub const TYPES: &[TypeInfo] = &[\n");
    for (i, t) in types.iter().enumerate() {
        writeln!(s, "    TypeInfo {{ id: {}, name: {:?}, pg_type: {:?}, width: {} }},", i + 1, t[0], t[1], t[2])
            .unwrap();
    }
    s.push_str("];\n/// Device functions, in id order (id = index + 1).\npub const FUNCTIONS: &[FuncInfo] = &[\n");
    for (i, f) in funcs.iter().enumerate() {
        assert_eq!(f.len(), 9, "DEVFUNC needs 9 fields: {f:?}");
        writeln!(
            s,
            "    FuncInfo {{ id: {}, name: {:?}, pg_function: {:?}, result: {}, nargs: {}, args: [{}, {}, {}], family: {:?}, label: {:?} }},",
            i + 1,
            f[0],
            f[1],
            type_id(&f[2]),
            f[3],
            type_id(&f[4]),
            type_id(&f[5]),
            type_id(&f[6]),
            f[7],
            f[8]
        )
        .unwrap();
    }
    s.push_str("];\n");
    s
}

/// Panics unless every value of `key` is unique: a duplicated name or code
/// in a .def file would make two entries one.
fn assert_unique(what: &str, rows: &[Vec<String>], key: usize) {
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        assert!(seen.insert(&r[key]), "{what}: {} appears twice", r[key]);
    }
}

/// A `#[doc = ...]` attribute of `text`.
fn doc_attr(indent: &str, text: &str) -> String {
    format!("{indent}#[doc = {:?}]\n", format!(" {text}"))
}

/// device_program.def, device_ops.def and device_errors.def as Rust
/// (included by program.rs).
fn format_rs(include: &Path) -> String {
    let mut s = String::from(
        "// Generated by build.rs from device/include/device_program.def,\n// device_ops.def and device_errors.def: do not edit.\n\n",
    );

    let consts = def_entries(&include.join("device_program.def"), "DEVPROG");
    for c in &consts {
        assert_eq!(c.len(), 5, "DEVPROG needs 5 fields: {c:?}");
        s.push_str(&doc_attr("", &c[4]));
        writeln!(s, "pub const {}: {} = {};", c[1], c[2], c[3]).unwrap();
    }

    let ops = def_entries(&include.join("device_ops.def"), "DEVOP");
    for o in &ops {
        assert_eq!(o.len(), 5, "DEVOP needs 5 fields: {o:?}");
        o[2].parse::<u16>().unwrap_or_else(|_| panic!("DEVOP {}: code {} is no u16", o[0], o[2]));
    }
    for key in [0, 1, 2, 3] {
        assert_unique("device_ops.def", &ops, key);
    }
    s.push_str("\n/// Instruction codes (OP_* in the device code, from device_ops.def).\n");
    s.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq)]\n#[repr(u16)]\npub enum Op {\n");
    for o in &ops {
        s.push_str(&doc_attr("    ", &o[4]));
        writeln!(s, "    {} = {},", o[1], o[2]).unwrap();
    }
    s.push_str("}\n\nimpl Op {\n    fn from_u16(v: u16) -> Option<Op> {\n        Some(match v {\n");
    for o in &ops {
        writeln!(s, "            {} => Op::{},", o[2], o[1]).unwrap();
    }
    s.push_str("            _ => return None,\n        })\n    }\n\n");
    s.push_str(
        "    /// How EXPLAIN VERBOSE prints the op.\n    fn mnemonic(self) -> &'static str {\n        match self {\n",
    );
    for o in &ops {
        writeln!(s, "            Op::{} => {:?},", o[1], o[3]).unwrap();
    }
    s.push_str("        }\n    }\n}\n");

    let errs = def_entries(&include.join("device_errors.def"), "DEVERR");
    for e in &errs {
        assert_eq!(e.len(), 4, "DEVERR needs 4 fields: {e:?}");
        e[1].parse::<i32>().unwrap_or_else(|_| panic!("DEVERR {}: code {} is no i32", e[0], e[1]));
        assert!(
            e[2].is_empty() || (e[2].len() == 5 && e[2].chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())),
            "DEVERR {}: {:?} is no SQLSTATE",
            e[0],
            e[2]
        );
    }
    assert_unique("device_errors.def", &errs, 0);
    assert_unique("device_errors.def", &errs, 1);
    s.push('\n');
    for e in &errs {
        let what = if e[2].is_empty() { e[3].clone() } else { format!("SQLSTATE {}: {}", e[2], e[3]) };
        s.push_str(&doc_attr("", &format!("Device error code: {what}.")));
        writeln!(s, "pub const DEVERR_{}: i32 = {};", e[0], e[1]).unwrap();
    }
    s.push_str("\n/// Every device error code, in device_errors.def order.\npub const DEVICE_ERRORS: &[DeviceErrorCode] = &[\n");
    for e in &errs {
        writeln!(
            s,
            "    DeviceErrorCode {{ code: {}, name: {:?}, sqlstate: {:?}, message: {:?} }},",
            e[1], e[0], e[2], e[3]
        )
        .unwrap();
    }
    s.push_str("];\n");
    s
}

/// device_aggops.def as Rust (included by agg.rs).
fn aggops_rs(include: &Path) -> String {
    let aggs = def_entries(&include.join("device_aggops.def"), "DEVAGG");
    for a in &aggs {
        assert_eq!(a.len(), 5, "DEVAGG needs 5 fields: {a:?}");
        a[2].parse::<u32>().unwrap_or_else(|_| panic!("DEVAGG {}: code {} is no u32", a[0], a[2]));
        a[3].parse::<usize>().unwrap_or_else(|_| panic!("DEVAGG {}: nwords {} is no number", a[0], a[3]));
    }
    for key in [0, 1, 2] {
        assert_unique("device_aggops.def", &aggs, key);
    }
    let mut s = String::from("// Generated by build.rs from device/include/device_aggops.def: do not edit.\n\n");
    s.push_str("/// An accumulator operation (AGGOP_* in preagg.cu, from device_aggops.def).\n");
    s.push_str("#[derive(Debug, Clone, Copy, PartialEq, Eq)]\n#[repr(u32)]\npub enum AggKind {\n");
    for a in &aggs {
        s.push_str(&doc_attr("    ", &a[4]));
        writeln!(s, "    {} = {},", a[1], a[2]).unwrap();
    }
    s.push_str("}\n\nimpl AggKind {\n    /// From its number (AGGOP_*).\n    pub fn from_u32(v: u32) -> Option<AggKind> {\n        Some(match v {\n");
    for a in &aggs {
        writeln!(s, "            {} => AggKind::{},", a[2], a[1]).unwrap();
    }
    s.push_str("            _ => return None,\n        })\n    }\n\n");
    s.push_str(
        "    /// Accumulator words the operation takes.\n    pub fn nwords(self) -> usize {\n        match self {\n",
    );
    for a in &aggs {
        writeln!(s, "            AggKind::{} => {},", a[1], a[3]).unwrap();
    }
    s.push_str("        }\n    }\n}\n");
    s
}
