//! The CUDA driver API, loaded with dlopen at run time.
//!
//! Only the entry points pg_strom uses are bound.  [`driver()`] loads
//! libcuda once per process, calls `cuInit` and checks the driver version;
//! every later call goes through [`Driver::check`] which turns a CUresult
//! into a [`DeviceError`] with the driver's own error name and text.
//!
//! Never call this in the postmaster: CUDA does not survive fork(), so only
//! backends, background workers and (later) the GPU service initialise it.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use libloading::Library;

use crate::error::DeviceError;

/// CUresult.
pub type CuResult = c_int;
/// CUdevice.
pub type CuDevice = c_int;
/// CUcontext.
pub type CuContext = *mut c_void;
/// CUmodule.
pub type CuModule = *mut c_void;
/// CUfunction.
pub type CuFunction = *mut c_void;
/// CUstream.
pub type CuStream = *mut c_void;
/// CUevent.
pub type CuEvent = *mut c_void;
/// CUdeviceptr.
pub type CuDevicePtr = u64;

/// The oldest driver we accept: CUDA 12.0.
pub const MIN_DRIVER_VERSION: i32 = 12000;

/// CUdevice_attribute values used by discovery and launch sizing.
#[allow(missing_docs)]
pub mod attr {
    pub const MAX_THREADS_PER_BLOCK: i32 = 1;
    pub const MAX_BLOCK_DIM_X: i32 = 2;
    pub const MAX_BLOCK_DIM_Y: i32 = 3;
    pub const MAX_BLOCK_DIM_Z: i32 = 4;
    pub const MAX_GRID_DIM_X: i32 = 5;
    pub const MAX_GRID_DIM_Y: i32 = 6;
    pub const MAX_GRID_DIM_Z: i32 = 7;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: i32 = 8;
    pub const TOTAL_CONSTANT_MEMORY: i32 = 9;
    pub const WARP_SIZE: i32 = 10;
    pub const MAX_PITCH: i32 = 11;
    pub const MAX_REGISTERS_PER_BLOCK: i32 = 12;
    pub const CLOCK_RATE: i32 = 13;
    pub const TEXTURE_ALIGNMENT: i32 = 14;
    pub const MULTIPROCESSOR_COUNT: i32 = 16;
    pub const KERNEL_EXEC_TIMEOUT: i32 = 17;
    pub const INTEGRATED: i32 = 18;
    pub const CAN_MAP_HOST_MEMORY: i32 = 19;
    pub const COMPUTE_MODE: i32 = 20;
    pub const SURFACE_ALIGNMENT: i32 = 30;
    pub const CONCURRENT_KERNELS: i32 = 31;
    pub const ECC_ENABLED: i32 = 32;
    pub const PCI_BUS_ID: i32 = 33;
    pub const PCI_DEVICE_ID: i32 = 34;
    pub const TCC_DRIVER: i32 = 35;
    pub const MEMORY_CLOCK_RATE: i32 = 36;
    pub const GLOBAL_MEMORY_BUS_WIDTH: i32 = 37;
    pub const L2_CACHE_SIZE: i32 = 38;
    pub const MAX_THREADS_PER_MULTIPROCESSOR: i32 = 39;
    pub const ASYNC_ENGINE_COUNT: i32 = 40;
    pub const UNIFIED_ADDRESSING: i32 = 41;
    pub const PCI_DOMAIN_ID: i32 = 50;
    pub const COMPUTE_CAPABILITY_MAJOR: i32 = 75;
    pub const COMPUTE_CAPABILITY_MINOR: i32 = 76;
    pub const STREAM_PRIORITIES_SUPPORTED: i32 = 78;
    pub const GLOBAL_L1_CACHE_SUPPORTED: i32 = 79;
    pub const LOCAL_L1_CACHE_SUPPORTED: i32 = 80;
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: i32 = 81;
    pub const MAX_REGISTERS_PER_MULTIPROCESSOR: i32 = 82;
    pub const MANAGED_MEMORY: i32 = 83;
    pub const MULTI_GPU_BOARD: i32 = 84;
    pub const MULTI_GPU_BOARD_GROUP_ID: i32 = 85;
    pub const COOPERATIVE_LAUNCH: i32 = 95;
    pub const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: i32 = 97;
    pub const MAX_BLOCKS_PER_MULTIPROCESSOR: i32 = 106;
    pub const GPU_DIRECT_RDMA_SUPPORTED: i32 = 116;
}

macro_rules! driver_api {
    ($( $field:ident : $sym:literal => fn($($arg:ty),*) ; )*) => {
        /// Entry points of libcuda, resolved at load time.
        #[allow(non_snake_case, missing_docs)]
        pub struct Driver {
            _lib: Library,
            /// cuDriverGetVersion(), e.g. 13000 for CUDA 13.0.
            pub version: i32,
            $( pub $field: unsafe extern "C" fn($($arg),*) -> CuResult, )*
            get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
            get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
        }

        impl Driver {
            fn open(lib: Library) -> Result<Driver, DeviceError> {
                // SAFETY: the symbol types are those of cuda.h for the
                // versioned names we ask for.
                unsafe {
                    Ok(Driver {
                        $( $field: *lib.get(concat!($sym, "\0").as_bytes()).map_err(|e| {
                            DeviceError::DriverMissing(format!("libcuda lacks {}: {e}", $sym))
                        })?, )*
                        get_error_name: *lib.get(b"cuGetErrorName\0").map_err(|e| {
                            DeviceError::DriverMissing(format!("libcuda lacks cuGetErrorName: {e}"))
                        })?,
                        get_error_string: *lib.get(b"cuGetErrorString\0").map_err(|e| {
                            DeviceError::DriverMissing(format!("libcuda lacks cuGetErrorString: {e}"))
                        })?,
                        version: 0,
                        _lib: lib,
                    })
                }
            }
        }
    };
}

driver_api! {
    cuInit: "cuInit" => fn(c_uint);
    cuDriverGetVersion: "cuDriverGetVersion" => fn(*mut c_int);
    cuDeviceGetCount: "cuDeviceGetCount" => fn(*mut c_int);
    cuDeviceGet: "cuDeviceGet" => fn(*mut CuDevice, c_int);
    cuDeviceGetName: "cuDeviceGetName" => fn(*mut c_char, c_int, CuDevice);
    cuDeviceTotalMem: "cuDeviceTotalMem_v2" => fn(*mut usize, CuDevice);
    cuDeviceGetAttribute: "cuDeviceGetAttribute" => fn(*mut c_int, c_int, CuDevice);
    cuDevicePrimaryCtxRetain: "cuDevicePrimaryCtxRetain" => fn(*mut CuContext, CuDevice);
    cuCtxSetCurrent: "cuCtxSetCurrent" => fn(CuContext);
    cuCtxSynchronize: "cuCtxSynchronize" => fn();
    cuModuleLoadData: "cuModuleLoadData" => fn(*mut CuModule, *const c_void);
    cuModuleGetFunction: "cuModuleGetFunction" => fn(*mut CuFunction, CuModule, *const c_char);
    cuMemAlloc: "cuMemAlloc_v2" => fn(*mut CuDevicePtr, usize);
    cuMemFree: "cuMemFree_v2" => fn(CuDevicePtr);
    // The per-thread default stream variants (what cuda.h maps these names
    // to under CUDA_API_PER_THREAD_DEFAULT_STREAM): each thread of the GPU
    // service copies and launches on its own stream, so connections run
    // concurrently instead of queueing behind the legacy default stream.
    cuMemcpyHtoD: "cuMemcpyHtoD_v2_ptds" => fn(CuDevicePtr, *const c_void, usize);
    cuMemcpyDtoH: "cuMemcpyDtoH_v2_ptds" => fn(*mut c_void, CuDevicePtr, usize);
    cuMemsetD8: "cuMemsetD8_v2_ptds" => fn(CuDevicePtr, u8, usize);
    cuStreamSynchronize: "cuStreamSynchronize_ptsz" => fn(CuStream);
    cuMemGetInfo: "cuMemGetInfo_v2" => fn(*mut usize, *mut usize);
    cuMemHostAlloc: "cuMemHostAlloc" => fn(*mut *mut c_void, usize, c_uint);
    cuMemFreeHost: "cuMemFreeHost" => fn(*mut c_void);
    cuMemcpyHtoDAsync: "cuMemcpyHtoDAsync_v2_ptsz" => fn(CuDevicePtr, *const c_void, usize, CuStream);
    cuMemcpyDtoDAsync: "cuMemcpyDtoDAsync_v2_ptsz" => fn(CuDevicePtr, CuDevicePtr, usize, CuStream);
    cuEventCreate: "cuEventCreate" => fn(*mut CuEvent, c_uint);
    cuEventRecord: "cuEventRecord_ptsz" => fn(CuEvent, CuStream);
    cuEventSynchronize: "cuEventSynchronize" => fn(CuEvent);
    cuEventDestroy: "cuEventDestroy_v2" => fn(CuEvent);
    cuCtxGetCurrent: "cuCtxGetCurrent" => fn(*mut CuContext);
    cuCtxGetDevice: "cuCtxGetDevice" => fn(*mut CuDevice);
    cuLaunchKernel: "cuLaunchKernel_ptsz" => fn(CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CuStream, *mut *mut c_void, *mut *mut c_void);
}

impl Driver {
    /// Turn a CUresult into `Ok(())` or a [`DeviceError::Cuda`] naming `call`.
    pub fn check(&self, call: &'static str, rc: CuResult) -> Result<(), DeviceError> {
        if rc == 0 {
            return Ok(());
        }
        Err(DeviceError::Cuda { call, code: rc, message: self.error_text(rc) })
    }

    fn error_text(&self, rc: CuResult) -> String {
        let mut name: *const c_char = std::ptr::null();
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: both calls only write a pointer to a static string.
        unsafe {
            (self.get_error_name)(rc, &mut name);
            (self.get_error_string)(rc, &mut text);
        }
        let as_str = |p: *const c_char| {
            if p.is_null() {
                None
            } else {
                // SAFETY: the driver returns NUL-terminated static strings.
                Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            }
        };
        match (as_str(name), as_str(text)) {
            (Some(n), Some(t)) => format!("{n}: {t}"),
            (Some(n), None) => n,
            (None, Some(t)) => t,
            (None, None) => "unknown CUDA error".to_string(),
        }
    }
}

/// Library names tried, in order.  `PGSTROM_CUDA_LIBRARY` overrides them
/// (tests use it to simulate a missing driver).
fn candidate_names() -> Vec<String> {
    if let Ok(path) = std::env::var("PGSTROM_CUDA_LIBRARY") {
        return vec![path];
    }
    vec!["libcuda.so.1".into(), "libcuda.so".into()]
}

fn load_driver() -> Result<Driver, DeviceError> {
    load_driver_from(&candidate_names())
}

/// Load and initialise the driver from the first of `names` that opens.
pub(crate) fn load_driver_from(names: &[String]) -> Result<Driver, DeviceError> {
    let mut tried: Vec<String> = Vec::new();
    for name in names {
        // SAFETY: loading libcuda runs its initialisers, which are sound.
        match unsafe { Library::new(name) } {
            Ok(lib) => {
                let mut driver = Driver::open(lib)?;
                // SAFETY: plain driver calls with valid out-pointers.
                unsafe {
                    driver.check("cuInit", (driver.cuInit)(0))?;
                    let mut version = 0;
                    driver.check("cuDriverGetVersion", (driver.cuDriverGetVersion)(&mut version))?;
                    driver.version = version;
                }
                if driver.version < MIN_DRIVER_VERSION {
                    return Err(DeviceError::DriverTooOld { found: driver.version, required: MIN_DRIVER_VERSION });
                }
                return Ok(driver);
            }
            // libloading's message already names the file.
            Err(e) => tried.push(e.to_string()),
        }
    }
    if tried.is_empty() {
        tried.push("no library name to try".into());
    }
    Err(DeviceError::DriverMissing(tried.join("; ")))
}

static DRIVER: OnceLock<Result<Driver, DeviceError>> = OnceLock::new();

/// The process-wide driver: loaded and initialised on first use.
pub fn driver() -> Result<&'static Driver, DeviceError> {
    DRIVER.get_or_init(load_driver).as_ref().map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_reported_by_name() {
        let err = load_driver_from(&["/nonexistent/libcuda.so.1".to_string()]).err().unwrap();
        match &err {
            DeviceError::DriverMissing(why) => assert!(why.contains("/nonexistent/libcuda.so.1"), "{why}"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.hint().is_some());
    }
}
