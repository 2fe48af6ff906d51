//! pgstrom-sqlgen: writes the extension's install script (pg_strom--VERSION.sql)
//! from the SQL entities pgrx's macros embed in the built shared library
//! (the `.pgrxsc` ELF section), as `cargo pgrx install` would, without
//! needing cargo-pgrx itself (whose build took most of a fresh machine's
//! set-up).  scripts/build.sh builds the library with cargo and installs
//! the three files.
//!
//! The script is the same, byte for byte, for every build of the same
//! source: pgrx's own writer orders the objects by a graph whose node
//! numbers follow hash-map iteration, which differs from run to run (and a
//! changed script made every `make start` re-create the extension); here
//! the objects are emitted in dependency order, ties broken by the objects
//! themselves.
//!
//! Usage: pgstrom-sqlgen LIBRARY CONTROL_FILE VERSION OUTPUT

use petgraph::Direction;
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use pgrx_sql_entity_graph::section::{decode_entities, is_schema_section_name};
use pgrx_sql_entity_graph::{ControlFile, PgrxSql, SqlGraphEntity, ToSql};
use std::collections::HashMap;
use std::process::ExitCode;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The bytes of the first section whose name `wanted` accepts, in a
/// little-endian 64-bit ELF file.  Err for anything else or a damaged file.
fn elf_section<'a>(elf: &'a [u8], wanted: impl Fn(&str) -> bool) -> Result<Option<&'a [u8]>, String> {
    if elf.get(0..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("not a little-endian 64-bit ELF file".into());
    }
    let bad = || "damaged ELF section table".to_string();
    let shoff = u64_at(elf, 0x28).ok_or_else(bad)?;
    let shentsize = usize::from(u16_at(elf, 0x3a).ok_or_else(bad)?);
    let shnum = usize::from(u16_at(elf, 0x3c).ok_or_else(bad)?);
    let shstrndx = usize::from(u16_at(elf, 0x3e).ok_or_else(bad)?);
    if shentsize < 64 || shstrndx >= shnum {
        return Err(bad());
    }
    let header = |i: usize| -> Result<(usize, &'a [u8]), String> {
        let h = shoff.checked_add(i.checked_mul(shentsize).ok_or_else(bad)?).ok_or_else(bad)?;
        let name = u32_at(elf, h).ok_or_else(bad)? as usize;
        let off = u64_at(elf, h + 0x18).ok_or_else(bad)?;
        let size = u64_at(elf, h + 0x20).ok_or_else(bad)?;
        let data = elf.get(off..off.checked_add(size).ok_or_else(bad)?).ok_or_else(bad)?;
        Ok((name, data))
    };
    let (_, names) = header(shstrndx)?;
    for i in 0..shnum {
        let (name_at, data) = header(i)?;
        let name = names.get(name_at..).ok_or_else(bad)?;
        let name = &name[..name.iter().position(|&c| c == 0).ok_or_else(bad)?];
        if wanted(std::str::from_utf8(name).map_err(|_| bad())?) {
            return Ok(Some(data));
        }
    }
    Ok(None)
}

fn run(args: &[String]) -> Result<(), String> {
    let [library, control, version, output] = args else {
        return Err("usage: pgstrom-sqlgen LIBRARY CONTROL_FILE VERSION OUTPUT".into());
    };
    let so = std::fs::read(library).map_err(|e| format!("{library}: {e}"))?;
    let section = elf_section(&so, is_schema_section_name)
        .map_err(|e| format!("{library}: {e}"))?
        .ok_or_else(|| format!("{library}: no pgrx schema section (.pgrxsc): not built by pgrx, or stripped"))?;
    let entities = decode_entities(section).map_err(|e| format!("{library}: cannot decode the schema: {e:#}"))?;
    let control = ControlFile::from_path_with_cargo_version(control, version).map_err(|e| format!("{control}: {e}"))?;
    // the library's name: a control file without module_pathname means a
    // versioned library name (pg_strom-VERSION.so), as cargo-pgrx has it
    let versioned_so = control.module_pathname.is_none();
    let count = entities.len();
    let all = std::iter::once(SqlGraphEntity::ExtensionRoot(control)).chain(entities);
    let sql = PgrxSql::build(all, "pg_strom".into(), versioned_so).map_err(|e| format!("SQL generation: {e:#}"))?;
    let text = match stable_order(&sql)? {
        Some(text) => text,
        // a dependency cycle (none today): pgrx's own order
        None => sql.to_sql().map_err(|e| format!("SQL generation: {e:#}"))?,
    };
    std::fs::write(output, text).map_err(|e| format!("{output}: {e}"))?;
    eprintln!("pgstrom-sqlgen: {count} SQL entities from {library} written to {output}");
    Ok(())
}

/// The install script with every object after the objects it needs (the
/// graph's edges run from a dependency to its dependent), the ready ones
/// taken smallest first by the entities' own order: the same for the same
/// entities, whatever the graph's node numbers.  None when the graph has
/// a cycle.
fn stable_order(sql: &PgrxSql) -> Result<Option<String>, String> {
    let g = &sql.graph;
    let mut waiting: HashMap<NodeIndex, usize> = g.node_indices().map(|n| (n, 0)).collect();
    for e in g.edge_references() {
        *waiting.get_mut(&e.target()).expect("an edge's node") += 1;
    }
    let mut ready: Vec<NodeIndex> = waiting.iter().filter(|&(_, &w)| w == 0).map(|(&n, _)| n).collect();
    let mut out = String::new();
    let mut emitted = 0;
    while !ready.is_empty() {
        // the smallest entity last, to pop it
        ready.sort_by(|a, b| g[*b].cmp(&g[*a]));
        let n = ready.pop().expect("not empty");
        emitted += 1;
        let text = g[n].to_sql(sql).map_err(|e| format!("SQL generation: {e:#}"))?;
        let text = text.trim();
        if !text.is_empty() {
            out.push_str(text);
            out.push_str("\n\n");
        }
        for e in g.edges_directed(n, Direction::Outgoing) {
            let w = waiting.get_mut(&e.target()).expect("an edge's node");
            *w -= 1;
            if *w == 0 {
                ready.push(e.target());
            }
        }
    }
    Ok((emitted == g.node_count()).then_some(out))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pgstrom-sqlgen: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::elf_section;

    #[test]
    fn refuses_what_is_not_elf() {
        assert!(elf_section(b"hello, world", |_| true).is_err());
        let mut short = b"\x7fELF\x02\x01".to_vec();
        short.resize(40, 0);
        assert!(elf_section(&short, |_| true).is_err());
    }

    #[test]
    fn finds_a_section_of_this_test_binary() {
        // every ELF executable has .text; none has a section by this name
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(elf_section(&me, |n| n == ".text").unwrap().is_some_and(|d| !d.is_empty()));
        assert!(elf_section(&me, |n| n == ".no-such-section").unwrap().is_none());
    }
}
