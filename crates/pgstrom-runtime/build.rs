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

    let headers = list_sources(&include, "h");
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
        .warnings(true)
        .extra_warnings(true)
        .flag("-Werror")
        .flag("-Wno-unused-function")
        .opt_level(2);
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
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("device_sources.rs");
    std::fs::write(out, table).expect("write device_sources.rs");
}
