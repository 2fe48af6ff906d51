//! Device discovery: what GPUs this machine has and what they can do.
//!
//! [`discover`] enumerates devices through the driver and reads the
//! properties listed in [`PROPERTIES`], in that order; [`describe`] turns a
//! device's values into the (property, value) rows users see in
//! `pgstrom.gpu_device_info`.  The values are plain integers so that the
//! extension can keep them in fixed-size shared memory.

use std::ffi::c_char;

use crate::cuda::{self, attr};
use crate::error::DeviceError;

/// How a property's raw integer is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A plain number.
    Count,
    /// Bytes, shown in KBytes.
    KBytes,
    /// kHz, shown in MHz.
    KHzAsMHz,
    /// A flag.
    Bool,
    /// Bits.
    Bits,
    /// CUcomputemode.
    ComputeMode,
}

/// The device properties pg_strom reads, with their labels.
pub const PROPERTIES: &[(i32, &str, Unit)] = &[
    (attr::COMPUTE_CAPABILITY_MAJOR, "Compute capability major", Unit::Count),
    (attr::COMPUTE_CAPABILITY_MINOR, "Compute capability minor", Unit::Count),
    (attr::MULTIPROCESSOR_COUNT, "Number of multiprocessors on device", Unit::Count),
    (attr::MAX_THREADS_PER_BLOCK, "Maximum threads per block", Unit::Count),
    (attr::MAX_BLOCK_DIM_X, "Maximum block dimension X", Unit::Count),
    (attr::MAX_BLOCK_DIM_Y, "Maximum block dimension Y", Unit::Count),
    (attr::MAX_BLOCK_DIM_Z, "Maximum block dimension Z", Unit::Count),
    (attr::MAX_GRID_DIM_X, "Maximum grid dimension X", Unit::Count),
    (attr::MAX_GRID_DIM_Y, "Maximum grid dimension Y", Unit::Count),
    (attr::MAX_GRID_DIM_Z, "Maximum grid dimension Z", Unit::Count),
    (attr::MAX_SHARED_MEMORY_PER_BLOCK, "Maximum shared memory available per block", Unit::KBytes),
    (attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "Maximum shared memory per block (opt-in)", Unit::KBytes),
    (attr::TOTAL_CONSTANT_MEMORY, "Memory available on device for __constant__", Unit::KBytes),
    (attr::WARP_SIZE, "Warp size in threads", Unit::Count),
    (attr::MAX_PITCH, "Maximum pitch in bytes allowed by memory copies", Unit::Count),
    (attr::MAX_REGISTERS_PER_BLOCK, "Maximum number of 32bit registers available per block", Unit::Count),
    (attr::CLOCK_RATE, "Typical clock frequency", Unit::KHzAsMHz),
    (attr::TEXTURE_ALIGNMENT, "Alignment requirement for textures", Unit::Count),
    (attr::KERNEL_EXEC_TIMEOUT, "Has kernel execution timeout", Unit::Bool),
    (attr::INTEGRATED, "Integrated with host memory", Unit::Bool),
    (attr::CAN_MAP_HOST_MEMORY, "Host memory can be mapped to CUDA address space", Unit::Bool),
    (attr::COMPUTE_MODE, "Compute mode", Unit::ComputeMode),
    (attr::SURFACE_ALIGNMENT, "Alignment requirement for surfaces", Unit::Count),
    (attr::CONCURRENT_KERNELS, "Multiple concurrent kernel support", Unit::Bool),
    (attr::ECC_ENABLED, "Device has ECC support enabled", Unit::Bool),
    (attr::PCI_DOMAIN_ID, "PCI domain ID of the device", Unit::Count),
    (attr::PCI_BUS_ID, "PCI bus ID of the device", Unit::Count),
    (attr::PCI_DEVICE_ID, "PCI device ID of the device", Unit::Count),
    (attr::TCC_DRIVER, "Device is using TCC driver model", Unit::Bool),
    (attr::MEMORY_CLOCK_RATE, "Peak memory clock frequency", Unit::KHzAsMHz),
    (attr::GLOBAL_MEMORY_BUS_WIDTH, "Global memory bus width", Unit::Bits),
    (attr::L2_CACHE_SIZE, "Size of L2 cache", Unit::KBytes),
    (attr::MAX_THREADS_PER_MULTIPROCESSOR, "Maximum threads per multiprocessor", Unit::Count),
    (attr::MAX_BLOCKS_PER_MULTIPROCESSOR, "Maximum blocks per multiprocessor", Unit::Count),
    (attr::ASYNC_ENGINE_COUNT, "Number of asynchronous engines", Unit::Count),
    (attr::UNIFIED_ADDRESSING, "Device shares unified address space", Unit::Bool),
    (attr::STREAM_PRIORITIES_SUPPORTED, "Device supports stream priorities", Unit::Bool),
    (attr::GLOBAL_L1_CACHE_SUPPORTED, "Device supports caching globals in L1", Unit::Bool),
    (attr::LOCAL_L1_CACHE_SUPPORTED, "Device supports caching locals in L1", Unit::Bool),
    (attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "Maximum shared memory per multiprocessor", Unit::KBytes),
    (attr::MAX_REGISTERS_PER_MULTIPROCESSOR, "Maximum number of 32bit registers per multiprocessor", Unit::Count),
    (attr::MANAGED_MEMORY, "Device can allocate managed memory on this system", Unit::Bool),
    (attr::MULTI_GPU_BOARD, "Device is on a multi-GPU board", Unit::Bool),
    (attr::MULTI_GPU_BOARD_GROUP_ID, "Unique id if device is on a multi-GPU board", Unit::Count),
    (attr::COOPERATIVE_LAUNCH, "Device supports cooperative launch", Unit::Bool),
    (attr::GPU_DIRECT_RDMA_SUPPORTED, "Device supports GPUDirect RDMA", Unit::Bool),
];

/// Index of an attribute in [`PROPERTIES`].
pub fn property_index(attribute: i32) -> Option<usize> {
    PROPERTIES.iter().position(|(a, _, _)| *a == attribute)
}

/// One GPU as discovery saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// CUDA device ordinal.
    pub ordinal: i32,
    /// cuDeviceGetName.
    pub name: String,
    /// Global memory in bytes.
    pub total_memory: u64,
    /// Values of [`PROPERTIES`], same order.
    pub values: Vec<i32>,
}

impl DeviceInfo {
    fn value(&self, attribute: i32) -> i32 {
        property_index(attribute).and_then(|i| self.values.get(i).copied()).unwrap_or(0)
    }

    /// `sm_90` and the like: the NVRTC target of this device.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.value(attr::COMPUTE_CAPABILITY_MAJOR), self.value(attr::COMPUTE_CAPABILITY_MINOR))
    }

    /// PCI address, `0000:3b:00.0` style.
    pub fn pci_address(&self) -> String {
        format!(
            "{:04x}:{:02x}:{:02x}.0",
            self.value(attr::PCI_DOMAIN_ID),
            self.value(attr::PCI_BUS_ID),
            self.value(attr::PCI_DEVICE_ID)
        )
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> i32 {
        self.value(attr::MULTIPROCESSOR_COUNT)
    }
}

/// What [`discover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// cuDriverGetVersion().
    pub driver_version: i32,
    /// Every device, in ordinal order.
    pub devices: Vec<DeviceInfo>,
}

/// Enumerate the GPUs.  Errors when the driver is missing or too old;
/// a machine with a driver and no device gives [`DeviceError::NoDevice`].
pub fn discover() -> Result<Discovery, DeviceError> {
    let drv = cuda::driver()?;
    let mut count = 0;
    // SAFETY: valid out-pointer.
    drv.check("cuDeviceGetCount", unsafe { (drv.cuDeviceGetCount)(&mut count) })?;
    if count <= 0 {
        return Err(DeviceError::NoDevice);
    }
    let mut devices = Vec::with_capacity(count as usize);
    for ordinal in 0..count {
        let mut dev = 0;
        let mut name = [0 as c_char; 256];
        let mut total = 0usize;
        // SAFETY: valid out-pointers and buffer length.
        unsafe {
            drv.check("cuDeviceGet", (drv.cuDeviceGet)(&mut dev, ordinal))?;
            drv.check("cuDeviceGetName", (drv.cuDeviceGetName)(name.as_mut_ptr(), 255, dev))?;
            drv.check("cuDeviceTotalMem", (drv.cuDeviceTotalMem)(&mut total, dev))?;
        }
        let mut values = Vec::with_capacity(PROPERTIES.len());
        for (attribute, _, _) in PROPERTIES {
            let mut v = 0;
            // SAFETY: valid out-pointer; an attribute this driver does not
            // know reports an error, which we show as 0 rather than fail.
            let rc = unsafe { (drv.cuDeviceGetAttribute)(&mut v, *attribute, dev) };
            values.push(if rc == 0 { v } else { 0 });
        }
        // SAFETY: cuDeviceGetName NUL-terminates within the buffer.
        let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        devices.push(DeviceInfo { ordinal, name, total_memory: total as u64, values });
    }
    Ok(Discovery { driver_version: drv.version, devices })
}

fn format_value(unit: Unit, v: i32) -> String {
    match unit {
        Unit::Count => v.to_string(),
        Unit::KBytes => format!("{} KBytes", v / 1024),
        Unit::KHzAsMHz => format!("{} MHz", v / 1000),
        Unit::Bool => if v != 0 { "True" } else { "False" }.to_string(),
        Unit::Bits => format!("{v} bits"),
        Unit::ComputeMode => match v {
            0 => "Default".to_string(),
            2 => "Prohibited".to_string(),
            3 => "Exclusive process".to_string(),
            other => format!("Unknown ({other})"),
        },
    }
}

/// The (property, value) rows of one device, as `pgstrom.gpu_device_info`
/// shows them: name, memory, architecture and PCI address first.
pub fn describe(device: &DeviceInfo) -> Vec<(String, String)> {
    let mut rows = vec![
        ("Device name".to_string(), device.name.clone()),
        ("Total global memory size".to_string(), format!("{} MBytes", device.total_memory >> 20)),
        ("GPU architecture".to_string(), device.arch()),
        ("PCI address".to_string(), device.pci_address()),
    ];
    for ((_, label, unit), v) in PROPERTIES.iter().zip(device.values.iter()) {
        rows.push((label.to_string(), format_value(*unit, *v)));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_h100() -> DeviceInfo {
        let mut values = vec![0; PROPERTIES.len()];
        values[property_index(attr::COMPUTE_CAPABILITY_MAJOR).unwrap()] = 9;
        values[property_index(attr::COMPUTE_CAPABILITY_MINOR).unwrap()] = 0;
        values[property_index(attr::MULTIPROCESSOR_COUNT).unwrap()] = 132;
        values[property_index(attr::PCI_BUS_ID).unwrap()] = 0x3b;
        values[property_index(attr::L2_CACHE_SIZE).unwrap()] = 50 << 20;
        values[property_index(attr::ECC_ENABLED).unwrap()] = 1;
        DeviceInfo { ordinal: 0, name: "NVIDIA H100 80GB HBM3".into(), total_memory: 81559 << 20, values }
    }

    #[test]
    fn properties_are_distinct() {
        for (i, (a, label, _)) in PROPERTIES.iter().enumerate() {
            assert_eq!(property_index(*a), Some(i), "duplicate attribute {a}");
            assert!(PROPERTIES.iter().filter(|(_, l, _)| l == label).count() == 1, "{label}");
        }
    }

    #[test]
    fn describes_a_device() {
        let d = fake_h100();
        assert_eq!(d.arch(), "sm_90");
        assert_eq!(d.pci_address(), "0000:3b:00.0");
        let rows = describe(&d);
        assert_eq!(rows.len(), PROPERTIES.len() + 4);
        let get = |k: &str| rows.iter().find(|(p, _)| p == k).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("Device name"), "NVIDIA H100 80GB HBM3");
        assert_eq!(get("Total global memory size"), "81559 MBytes");
        assert_eq!(get("Size of L2 cache"), "51200 KBytes");
        assert_eq!(get("Device has ECC support enabled"), "True");
        assert_eq!(get("Compute mode"), "Default");
    }
}
