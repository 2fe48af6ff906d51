//! Which GPUs a scan prefers on a machine with several (EXPLAIN's `GPU
//! Preference` and `GPU Candidates`), from where its rows lie.
//!
//! Owns the syntax of `pg_strom.manual_optimal_gpus` ([`parse_manual`]),
//! and the choice of candidates for a scan's storage ([`prefer_with`]):
//! the setting's entry when one names a path (the longest directory
//! holding it), the tablespace or the block device, else the GPUs
//! closest to the storage in the PCIe tree ([`crate::topology`]).  The
//! GPU service then runs the scan on the least-loaded candidate
//! (`service::server::choose_gpu`).

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use crate::topology::{self, PciPath, Storage};

/// GPU numbers the setting may name.
pub const MAX_GPUS: u32 = 16;

/// What an entry of the setting names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// An absolute directory: files under it.
    Dir(PathBuf),
    /// A tablespace, or a block device (`nvme0`, `nvme0n1`, `md0`).
    Name(String),
}

/// One entry: `key=gpu0:gpu1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What it applies to.
    pub key: Key,
    /// The GPUs it prefers.
    pub gpus: Vec<u32>,
}

/// Parse `pg_strom.manual_optimal_gpus`: comma-separated entries
/// `KEY=gpuN[:gpuM...]`, KEY an absolute directory, a tablespace name or
/// a block device name.
pub fn parse_manual(s: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, gpus) = item.split_once('=').ok_or_else(|| format!("entry \"{item}\" has no \"=\""))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("entry \"{item}\" names no directory, tablespace or device"));
        }
        let key = if key.starts_with('/') {
            Key::Dir(PathBuf::from(key))
        } else if key.contains('/') {
            return Err(format!("\"{key}\" is not an absolute directory"));
        } else {
            Key::Name(key.to_string())
        };
        let mut list = Vec::new();
        for g in gpus.split(':').map(str::trim) {
            let n = g
                .strip_prefix("gpu")
                .or_else(|| g.strip_prefix("GPU"))
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n < MAX_GPUS)
                .ok_or_else(|| format!("\"{g}\" is not a GPU (gpu0 to gpu{})", MAX_GPUS - 1))?;
            if !list.contains(&n) {
                list.push(n);
            }
        }
        out.push(Entry { key, gpus: list });
    }
    Ok(out)
}

/// Where a scan's rows lie.
#[derive(Debug, Clone, Default)]
pub struct StorageRefs {
    /// Directories or files.
    pub paths: Vec<PathBuf>,
    /// The tablespace of a heap table.
    pub tablespace: Option<String>,
    /// The GPU whose memory holds the rows already, and why (a
    /// gstore_fdw table's `gpu_device_id`): the only candidate when the
    /// machine has it, whatever the paths and the setting say.
    pub pinned: Option<(u32, String)>,
}

/// The candidates for a scan and why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Preference {
    /// GPU numbers, ascending; empty means any GPU.
    pub gpus: Vec<u32>,
    /// Why these: `closest to nvme0n1 (same PCIe switch)`,
    /// `pg_strom.manual_optimal_gpus: /data`, ...
    pub why: String,
}

/// The candidates for storage `refs`: `manual` (the setting's entries)
/// when one names it, else the GPUs closest to it among `gpus` (each
/// GPU's place in the PCIe tree); `storage` gives a device number's
/// block device.
pub fn prefer_with(
    refs: &StorageRefs,
    manual: &[Entry],
    gpus: &[Option<PciPath>],
    storage: impl Fn(u64) -> Option<Storage>,
) -> Preference {
    let n = gpus.len() as u32;
    if let Some((g, why)) = &refs.pinned {
        if *g < n {
            return Preference { gpus: vec![*g], why: why.clone() };
        }
        if refs.paths.is_empty() {
            return Preference { gpus: Vec::new(), why: format!("any GPU: {why}, which this machine lacks") };
        }
    }
    let mut manual_sets: Vec<(BTreeSet<u32>, String)> = Vec::new();
    // the storage on PCIe that no entry names, as one volume over all of
    // its devices (a GPU's distance is to the farthest of them)
    let mut placed = Storage { name: String::new(), names: Vec::new(), pci: Vec::new() };
    for path in &refs.paths {
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        let dev = std::fs::metadata(&real).map(|m| m.dev()).ok();
        let st = dev.and_then(&storage);
        // the setting: the longest directory holding the path, else the
        // tablespace, else the block device
        let dir = manual
            .iter()
            .filter_map(|e| match &e.key {
                Key::Dir(d) if real.starts_with(d) || path.starts_with(d) => Some((d.as_os_str().len(), e)),
                _ => None,
            })
            .max_by_key(|(l, _)| *l)
            .map(|(_, e)| e);
        let named = || {
            manual.iter().find(|e| match &e.key {
                Key::Name(k) => {
                    refs.tablespace.as_deref() == Some(k.as_str())
                        || st.as_ref().is_some_and(|s| s.names.iter().any(|n| n == k))
                }
                Key::Dir(_) => false,
            })
        };
        if let Some(e) = dir.or_else(named) {
            let key = match &e.key {
                Key::Dir(d) => d.to_string_lossy().trim_end_matches('/').to_string(),
                Key::Name(k) => k.clone(),
            };
            manual_sets.push((e.gpus.iter().copied().filter(|&g| g < n).collect(), key));
            continue;
        }
        let Some(st) = st else { continue };
        if st.pci.is_empty() || placed.names.contains(&st.name) {
            continue;
        }
        placed.names.push(st.name);
        placed.pci.extend(st.pci.into_iter().filter(|p| !placed.pci.contains(p)).collect::<Vec<_>>());
    }
    let mut candidates: Option<BTreeSet<u32>> = None;
    let mut why = Vec::new();
    if !manual_sets.is_empty() {
        let mut set = manual_sets[0].0.clone();
        for (s, _) in &manual_sets[1..] {
            set = set.intersection(s).copied().collect();
        }
        if set.is_empty() {
            set = manual_sets.iter().flat_map(|(s, _)| s.iter().copied()).collect();
        }
        let mut keys: Vec<&str> = manual_sets.iter().map(|(_, k)| k.as_str()).collect();
        keys.dedup();
        why.push(format!("pg_strom.manual_optimal_gpus: {}", keys.join(", ")));
        candidates = Some(set);
    }
    if let Some((best, closest)) = topology::closest(&placed, gpus) {
        let set = match candidates.take() {
            None => closest,
            Some(m) => {
                let both: BTreeSet<u32> = m.intersection(&closest).copied().collect();
                if both.is_empty() { m } else { both }
            }
        };
        why.push(format!("closest to {} ({})", placed.names.join(", "), topology::distance_text(best)));
        candidates = Some(set);
    }
    match candidates {
        Some(set) if !set.is_empty() => Preference { gpus: set.into_iter().collect(), why: why.join("; ") },
        Some(_) => Preference {
            gpus: Vec::new(),
            why: "any GPU: pg_strom.manual_optimal_gpus names none of this machine's GPUs".into(),
        },
        None => Preference { gpus: Vec::new(), why: "any GPU: the storage's place in the PCIe tree is unknown".into() },
    }
}

/// `GPU Candidates` of EXPLAIN: `GPU0, GPU1 (closest to nvme0n1 (same
/// PCIe switch))`.
pub fn candidates_text(pref: &Preference) -> String {
    let list: Vec<String> = pref.gpus.iter().map(|g| format!("GPU{g}")).collect();
    format!("{} ({})", list.join(", "), pref.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_parses_or_says_why() {
        assert_eq!(parse_manual("").unwrap(), vec![]);
        assert_eq!(
            parse_manual(" nvme0=gpu1 , /data/arrow/=gpu0:GPU2:gpu0, fast=gpu3").unwrap(),
            vec![
                Entry { key: Key::Name("nvme0".into()), gpus: vec![1] },
                Entry { key: Key::Dir("/data/arrow/".into()), gpus: vec![0, 2] },
                Entry { key: Key::Name("fast".into()), gpus: vec![3] },
            ]
        );
        for (bad, why) in [
            ("nvme0", "has no \"=\""),
            ("=gpu0", "names no directory"),
            ("data/x=gpu0", "not an absolute directory"),
            ("nvme0=gpu", "is not a GPU"),
            ("nvme0=gpu16", "gpu0 to gpu15"),
            ("nvme0=cpu0", "is not a GPU"),
            ("nvme0=gpu0:", "is not a GPU"),
        ] {
            let e = parse_manual(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    fn gpu(components: &[&str], numa: i32) -> Option<PciPath> {
        Some(PciPath { components: components.iter().map(|c| c.to_string()).collect(), numa_node: Some(numa) })
    }

    #[test]
    fn candidates_come_from_the_setting_or_the_pcie_tree() {
        let gpus = vec![
            gpu(&["pci0000:00", "0000:00:01.0", "0000:01:00.0"], 0),
            gpu(&["pci0000:00", "0000:00:02.0", "0000:02:00.0"], 0),
            gpu(&["pci0000:80", "0000:80:01.0", "0000:81:00.0"], 1),
        ];
        let nvme = Storage {
            name: "nvme0n1".into(),
            names: vec!["nvme0n1".into(), "nvme0".into()],
            pci: vec![PciPath {
                components: ["pci0000:80", "0000:80:01.0", "0000:83:00.0"].iter().map(|c| c.to_string()).collect(),
                numa_node: Some(1),
            }],
        };
        let tmp = std::env::temp_dir();
        let refs = StorageRefs { paths: vec![tmp.clone()], tablespace: Some("fast".into()), pinned: None };
        let on_nvme = |_: u64| Some(nvme.clone());
        // the PCIe tree: the GPU under the same root port
        let p = prefer_with(&refs, &[], &gpus, on_nvme);
        assert_eq!(p.gpus, [2]);
        assert_eq!(p.why, "closest to nvme0n1 (same PCIe switch)");
        assert_eq!(candidates_text(&p), "GPU2 (closest to nvme0n1 (same PCIe switch))");
        // storage not on PCIe: any GPU
        let p = prefer_with(&refs, &[], &gpus, |_| None);
        assert!(p.gpus.is_empty() && p.why.starts_with("any GPU"), "{p:?}");
        // the setting: by device name, by tablespace, by directory (the
        // longest wins); GPUs the machine lacks are dropped
        let m = parse_manual("nvme0=gpu1").unwrap();
        assert_eq!(prefer_with(&refs, &m, &gpus, on_nvme).gpus, [1]);
        let m = parse_manual("fast=gpu0:gpu7").unwrap();
        let p = prefer_with(&refs, &m, &gpus, on_nvme);
        assert_eq!((p.gpus.as_slice(), p.why.as_str()), (&[0u32][..], "pg_strom.manual_optimal_gpus: fast"));
        let m = parse_manual(&format!("/=gpu0, {}=gpu1:gpu2, nvme0=gpu0", tmp.display())).unwrap();
        assert_eq!(prefer_with(&refs, &m, &gpus, on_nvme).gpus, [1, 2]);
        // an entry naming only GPUs the machine lacks: any GPU
        let m = parse_manual("fast=gpu9").unwrap();
        let p = prefer_with(&refs, &m, &gpus, on_nvme);
        assert!(p.gpus.is_empty() && p.why.contains("names none of this machine's GPUs"), "{p:?}");
        // a GPU holding the rows already: it alone, whatever the setting
        let pinned = |g: u32| StorageRefs { pinned: Some((g, format!("gpu_device_id {g}"))), ..Default::default() };
        let m = parse_manual("nvme0=gpu1").unwrap();
        let p = prefer_with(&pinned(2), &m, &gpus, on_nvme);
        assert_eq!((p.gpus.as_slice(), p.why.as_str()), (&[2u32][..], "gpu_device_id 2"));
        let p = prefer_with(&pinned(5), &m, &gpus, on_nvme);
        assert!(p.gpus.is_empty() && p.why == "any GPU: gpu_device_id 5, which this machine lacks", "{p:?}");
    }
}
