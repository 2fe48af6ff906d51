//! The PCIe topology between storage and GPUs, read from sysfs: which
//! GPUs are closest to the device a file lies on (the `GPU Preference` of
//! a scan on a machine with several GPUs).
//!
//! Owns: resolving a file's block device (`st_dev` through
//! `/sys/dev/block/MAJOR:MINOR`, following device-mapper and md members
//! through `slaves/`) and a GPU's PCI address to their paths in the PCIe
//! tree (`/sys/devices/pci0000:00/0000:00:01.0/0000:3b:00.0/...`), the
//! distance between two such paths, and the set of closest GPUs.
//!
//! Distances are ranks, smaller is closer:
//! 1. under one PCIe switch or root port (the paths share a bridge below
//!    the root complex: peer-to-peer DMA never crosses the CPU);
//! 2. under one root complex (host bridge);
//! 3. different root complexes of one NUMA node (or NUMA unknown);
//! 4. different NUMA nodes.
//!
//! Storage that is not a PCIe device (tmpfs, overlay, NFS, btrfs's
//! anonymous devices) has no position: every GPU is as close as any other.
//! Nothing here needs privileges; everything reads sysfs, by default at
//! `/sys` (tests give a tree of their own).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The default sysfs mount point.
pub const SYSFS: &str = "/sys";

/// Where one device sits in the PCIe tree: the host bridge first
/// (`pci0000:00`), then each bridge and the device's own function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciPath {
    /// Components from the root complex down.
    pub components: Vec<String>,
    /// The device's NUMA node, when sysfs says (-1 is unknown).
    pub numa_node: Option<i32>,
}

impl PciPath {
    /// The device's own PCI address (the last component).
    pub fn address(&self) -> &str {
        self.components.last().map(String::as_str).unwrap_or("")
    }
}

/// The block device a file lies on, with the PCIe positions of the
/// devices that hold it (one, or the members of a RAID / LVM volume).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Storage {
    /// The block device's name (`nvme0n1p2`, `dm-0`, `vda1`).
    pub name: String,
    /// The names of the device and what it is part of, nearest first
    /// (`nvme0n1p2`, `nvme0n1`, `nvme0`): matched by the manual setting.
    pub names: Vec<String>,
    /// Where each underlying PCIe device sits; empty when none is on PCIe.
    pub pci: Vec<PciPath>,
}

/// `pci0000:00`: a host bridge (root complex).
fn is_host_bridge(c: &str) -> bool {
    c.strip_prefix("pci").is_some_and(|r| r.len() == 7 && r.as_bytes()[4] == b':')
}

/// `0000:3b:00.0`: a PCI function.
fn is_pci_function(c: &str) -> bool {
    let b = c.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && c.chars().enumerate().all(|(i, ch)| matches!(i, 4 | 7 | 10) || ch.is_ascii_hexdigit())
}

/// The PCIe components of a canonical sysfs device path (None when the
/// device is not below a host bridge), with the NUMA node of its last PCI
/// function.
fn pci_path_of(root: &Path, device_dir: &Path) -> Option<PciPath> {
    let devices = root.join("devices").canonicalize().ok()?;
    let rel = device_dir.strip_prefix(&devices).ok()?;
    let mut components = Vec::new();
    let mut dir = devices.clone();
    let mut numa_node = None;
    for c in rel.components() {
        let c = c.as_os_str().to_string_lossy().into_owned();
        dir.push(&c);
        if components.is_empty() {
            if !is_host_bridge(&c) {
                return None;
            }
        } else if !is_pci_function(&c) {
            break; // below the PCI device: nvme/nvme0/..., virtio2/block/...
        }
        if is_pci_function(&c) {
            numa_node = std::fs::read_to_string(dir.join("numa_node")).ok().and_then(|s| s.trim().parse().ok());
        }
        components.push(c);
    }
    (components.len() >= 2).then_some(PciPath { components, numa_node })
}

/// Where the GPU at `address` (`0000:3b:00.0`) sits, None when sysfs does
/// not know it.
pub fn gpu_path(root: &Path, address: &str) -> Option<PciPath> {
    let dir = root.join("bus/pci/devices").join(address.to_ascii_lowercase()).canonicalize().ok()?;
    pci_path_of(root, &dir)
}

/// The storage behind device number `dev` (a file's `st_dev`), None when
/// it is not a block device sysfs knows (tmpfs, overlay, NFS, ...).
pub fn storage_of_dev(root: &Path, dev: u64) -> Option<Storage> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return None; // anonymous devices: tmpfs, overlay, btrfs subvolumes
    }
    let dir = root.join(format!("dev/block/{major}:{minor}")).canonicalize().ok()?;
    let name = dir.file_name()?.to_string_lossy().into_owned();
    let mut names = Vec::new();
    let mut pci = Vec::new();
    collect(root, &dir, &mut names, &mut pci, 0);
    Some(Storage { name, names, pci })
}

/// The storage of the file or directory at `path`.
pub fn storage_of_path(root: &Path, path: &Path) -> Option<Storage> {
    use std::os::unix::fs::MetadataExt;
    storage_of_dev(root, std::fs::metadata(path).ok()?.dev())
}

/// Names and PCIe positions of a block device: its own when it is on
/// PCIe, else its members' (device-mapper, md), recursively.
fn collect(root: &Path, dir: &Path, names: &mut Vec<String>, pci: &mut Vec<PciPath>, depth: u32) {
    // the device and its parents up to the PCI function: nvme0n1p2,
    // nvme0n1, nvme0 (the parent of a partition is its disk)
    let mut d = dir.to_path_buf();
    while let Some(n) = d.file_name().map(|n| n.to_string_lossy().into_owned()) {
        if is_pci_function(&n) || is_host_bridge(&n) || n == "devices" {
            break;
        }
        if !matches!(n.as_str(), "block" | "nvme" | "virtual") && !names.contains(&n) {
            names.push(n);
        }
        if !d.pop() {
            break;
        }
    }
    if let Some(p) = pci_path_of(root, dir) {
        if !pci.contains(&p) {
            pci.push(p);
        }
        return;
    }
    if depth >= 8 {
        return;
    }
    // a loop device: where its backing file lies
    if let Ok(backing) = std::fs::read_to_string(dir.join("loop/backing_file"))
        && let Some(s) = storage_of_path(root, Path::new(backing.trim()))
    {
        names.extend(s.names.into_iter().filter(|n| !names.contains(n)).collect::<Vec<_>>());
        pci.extend(s.pci.into_iter().filter(|p| !pci.contains(p)).collect::<Vec<_>>());
        return;
    }
    // a volume over other devices: its members are listed in slaves/
    // (for a partition of such a volume, in its disk's)
    let slaves = [dir.join("slaves"), dir.parent().map(|p| p.join("slaves")).unwrap_or_default()];
    for s in slaves {
        let Ok(entries) = std::fs::read_dir(&s) else { continue };
        let mut members: Vec<PathBuf> = entries.flatten().filter_map(|e| e.path().canonicalize().ok()).collect();
        members.sort();
        for m in members {
            collect(root, &m, names, pci, depth + 1);
        }
        break;
    }
}

/// The distance rank between two PCIe positions (see the module's text).
pub fn distance(a: &PciPath, b: &PciPath) -> u32 {
    let common = a.components.iter().zip(&b.components).take_while(|(x, y)| x == y).count();
    if common >= 2 {
        1
    } else if common == 1 {
        2
    } else {
        match (a.numa_node, b.numa_node) {
            (Some(x), Some(y)) if x >= 0 && y >= 0 && x != y => 4,
            _ => 3,
        }
    }
}

/// Each GPU's distance to `storage` (the farthest of its members), None
/// for a GPU sysfs does not place, or when the storage is not on PCIe.
pub fn distances(storage: &Storage, gpus: &[Option<PciPath>]) -> Vec<Option<u32>> {
    gpus.iter()
        .map(|g| {
            let g = g.as_ref()?;
            storage.pci.iter().map(|s| distance(s, g)).max()
        })
        .collect()
}

/// The smallest distance to `storage` and the numbers of the GPUs at it;
/// None when no GPU has a distance (the storage, or every GPU, is not
/// placed in the PCIe tree).
pub fn closest(storage: &Storage, gpus: &[Option<PciPath>]) -> Option<(u32, BTreeSet<u32>)> {
    let d = distances(storage, gpus);
    let best = *d.iter().flatten().min()?;
    Some((best, d.iter().enumerate().filter(|(_, x)| **x == Some(best)).map(|(i, _)| i as u32).collect()))
}

/// How a distance rank reads.
pub fn distance_text(d: u32) -> &'static str {
    match d {
        1 => "same PCIe switch",
        2 => "same root complex",
        3 => "other root complex",
        _ => "other NUMA node",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A sysfs tree: two root complexes (NUMA 0 and 1); GPU0 and nvme0
    /// under one switch of the first, GPU1 on its own root port of the
    /// first, GPU2 under the second; a virtio disk under the first root;
    /// dm-0 over nvme0n1 and nvme1n1 (the latter under the second root).
    fn tree() -> PathBuf {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let root = std::env::temp_dir().join(format!(
            "pgstrom-sysfs-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let dev = |p: &str, numa: Option<i32>| {
            let d = root.join("devices").join(p);
            std::fs::create_dir_all(&d).unwrap();
            if let Some(n) = numa {
                std::fs::write(d.join("numa_node"), format!("{n}\n")).unwrap();
            }
            d
        };
        let sw = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0";
        let gpu0 = dev(&format!("{sw}/0000:03:00.0"), Some(0));
        let nvme0 = dev("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0", Some(0));
        let gpu1 = dev("pci0000:00/0000:00:03.0/0000:05:00.0", Some(0));
        let gpu2 = dev("pci0000:80/0000:80:01.0/0000:81:00.0", Some(1));
        let nvme1 = dev("pci0000:80/0000:80:02.0/0000:82:00.0", Some(1));
        let virtio = dev("pci0000:00/0000:00:05.0", None);
        let n0 = nvme0.join("nvme/nvme0/nvme0n1");
        let n0p1 = n0.join("nvme0n1p1");
        let n1 = nvme1.join("nvme/nvme1/nvme1n1");
        let vda = virtio.join("virtio2/block/vda");
        let dm = root.join("devices/virtual/block/dm-0");
        for d in [&n0p1, &n1, &vda, &dm.join("slaves")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(root.join("bus/pci/devices")).unwrap();
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        for (a, d) in [("0000:03:00.0", &gpu0), ("0000:05:00.0", &gpu1), ("0000:81:00.0", &gpu2)] {
            symlink(d, root.join("bus/pci/devices").join(a)).unwrap();
        }
        for (n, d) in [("259:1", &n0p1), ("259:0", &n0), ("259:5", &n1), ("253:0", &dm), ("254:0", &vda)] {
            symlink(d, root.join("dev/block").join(n)).unwrap();
        }
        symlink(&n0, dm.join("slaves/nvme0n1")).unwrap();
        symlink(&n1, dm.join("slaves/nvme1n1")).unwrap();
        root
    }

    fn dev(major: u32, minor: u32) -> u64 {
        libc::makedev(major, minor)
    }

    #[test]
    fn storage_and_gpus_are_placed_in_the_pcie_tree() {
        let root = tree();
        let gpus: Vec<Option<PciPath>> =
            ["0000:03:00.0", "0000:05:00.0", "0000:81:00.0"].iter().map(|a| gpu_path(&root, a)).collect();
        let g0 = gpus[0].as_ref().unwrap();
        assert_eq!(g0.components[0], "pci0000:00");
        assert_eq!(g0.address(), "0000:03:00.0");
        assert_eq!(g0.numa_node, Some(0));
        assert!(gpu_path(&root, "0000:99:00.0").is_none());

        // a partition of nvme0: under GPU0's switch
        let p = storage_of_dev(&root, dev(259, 1)).unwrap();
        assert_eq!(p.name, "nvme0n1p1");
        assert_eq!(p.names, ["nvme0n1p1", "nvme0n1", "nvme0"]);
        assert_eq!(p.pci.len(), 1);
        assert_eq!(p.pci[0].address(), "0000:04:00.0");
        assert_eq!(distances(&p, &gpus), [Some(1), Some(2), Some(4)]);
        assert_eq!(closest(&p, &gpus), Some((1, BTreeSet::from([0]))));

        // nvme1 on the second root complex: GPU2 only
        let n1 = storage_of_dev(&root, dev(259, 5)).unwrap();
        assert_eq!(distances(&n1, &gpus), [Some(4), Some(4), Some(2)]);
        assert_eq!(closest(&n1, &gpus), Some((2, BTreeSet::from([2]))));

        // a volume over both: the farthest member counts
        let dm = storage_of_dev(&root, dev(253, 0)).unwrap();
        assert_eq!(dm.name, "dm-0");
        assert_eq!(dm.pci.len(), 2);
        assert!(dm.names.contains(&"nvme0n1".to_string()) && dm.names.contains(&"nvme1n1".to_string()));
        assert_eq!(distances(&dm, &gpus), [Some(4), Some(4), Some(4)]);
        assert_eq!(closest(&dm, &gpus), Some((4, BTreeSet::from([0, 1, 2]))));

        // a virtio disk on the first root complex, NUMA unknown
        let vda = storage_of_dev(&root, dev(254, 0)).unwrap();
        assert_eq!(distances(&vda, &gpus), [Some(2), Some(2), Some(3)]);
        assert_eq!(closest(&vda, &gpus), Some((2, BTreeSet::from([0, 1]))));

        // not a block device: no position, every GPU
        assert!(storage_of_dev(&root, dev(0, 45)).is_none());
        assert!(storage_of_dev(&root, dev(8, 0)).is_none());
        let none = Storage { name: "x".into(), names: vec![], pci: vec![] };
        assert_eq!(closest(&none, &gpus), None);
        // a GPU sysfs does not place is never preferred over placed ones
        assert_eq!(closest(&p, &[None, gpus[1].clone()]), Some((2, BTreeSet::from([1]))));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn names_of_pci_components() {
        assert!(is_host_bridge("pci0000:00") && !is_host_bridge("pci0000:0") && !is_host_bridge("0000:00:01.0"));
        assert!(is_pci_function("0000:3b:00.0") && !is_pci_function("nvme0") && !is_pci_function("0000:3b:00"));
        assert!(!is_pci_function("0000:3g:00.0"));
        for d in 1..=4 {
            assert!(!distance_text(d).is_empty());
        }
    }

    #[test]
    fn this_machine_reads_without_error() {
        // whatever the machine is: no panic, and a file's storage (if on a
        // block device) names a device
        if let Some(s) = storage_of_path(Path::new(SYSFS), &std::env::temp_dir()) {
            assert!(!s.name.is_empty());
        }
    }
}
