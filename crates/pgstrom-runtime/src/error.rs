//! The runtime's error type.  Every failure of the driver, NVRTC, the cache
//! or a kernel becomes a [`DeviceError`]; nothing in this crate panics on
//! bad input or a missing library, and no C++ exception or CUDA error code
//! escapes unconverted.

use std::fmt;

/// Status codes the device code returns (device/include/pgstrom_device.h).
pub mod kernel_status {
    /// Success.
    pub const OK: i32 = 0;
    /// A kernel argument was out of its domain.
    pub const INVALID_ARGUMENT: i32 = 1;
    /// An internal inconsistency inside the device code.
    pub const INTERNAL: i32 = 2;
}

/// What went wrong below the extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceError {
    /// libcuda could not be loaded (no NVIDIA driver on this machine).
    DriverMissing(String),
    /// The driver is older than the runtime supports.
    DriverTooOld {
        /// cuDriverGetVersion(), e.g. 11080.
        found: i32,
        /// The oldest we accept.
        required: i32,
    },
    /// The driver loaded but reports no CUDA device.
    NoDevice,
    /// Start-up discovery found no usable GPU; the text says why.
    Unavailable(String),
    /// A driver API call failed.
    Cuda {
        /// The API function.
        call: &'static str,
        /// The CUresult code.
        code: i32,
        /// cuGetErrorName / cuGetErrorString, when available.
        message: String,
    },
    /// libnvrtc could not be found or loaded.
    NvrtcMissing(String),
    /// NVRTC rejected the device code.
    Compile {
        /// The target architecture (e.g. sm_90).
        arch: String,
        /// NVRTC's program log.
        log: String,
    },
    /// An NVRTC call failed for another reason.
    Nvrtc {
        /// The API function.
        call: &'static str,
        /// nvrtcResult code.
        code: i32,
        /// nvrtcGetErrorString.
        message: String,
    },
    /// Reading or writing the device-code cache failed.
    Cache(String),
    /// A kernel reported a failure status.
    Kernel {
        /// PGSTROM_STATUS_* code.
        status: i32,
        /// The kernel's message.
        message: String,
    },
    /// The caller asked for something this runtime cannot do.
    InvalidRequest(String),
    /// The GPU's memory budget cannot hold a request (it is larger than
    /// the budget, or others kept the memory for the whole wait).
    OutOfMemory(String),
    /// A device program is malformed or of another format version.
    InvalidProgram(String),
    /// Device code raised one of PostgreSQL's own errors at a row.
    Sql {
        /// The SQLSTATE, e.g. "22003".
        sqlstate: &'static str,
        /// PostgreSQL's message, e.g. "integer out of range".
        message: &'static str,
        /// Row of the chunk where it happened (the first such row).
        row: u32,
    },
    /// The GPU service failed a request, or its connection could not be
    /// set up; the text says why.
    Service(String),
    /// The GPU service went away (it crashed, was killed, or restarted)
    /// while this process was using it.
    ServiceLost(String),
    /// A GPU faulted (an illegal address, a trap, an Xid error): its CUDA
    /// context can do no more work, so the GPU service that owned it
    /// answered this and restarted with a new one.
    DeviceLost {
        /// The GPU, as EXPLAIN names it (`GPU0 (NVIDIA H100 ...)`).
        device: String,
        /// The driver's report.
        cause: String,
    },
    /// The caller asked to stop waiting for the GPU service (a query
    /// cancel or a timeout in the backend); the connection was dropped.
    Interrupted,
    /// An error the GPU service reported, as its message and hint.
    Remote {
        /// The message.
        message: String,
        /// The hint, if it had one.
        hint: Option<String>,
    },
    /// The engine cannot compute a value at this row exactly as PostgreSQL
    /// does (for example pow() on a GPU, whose libm rounds differently):
    /// PostgreSQL must evaluate it.  Executors take the CPU path.
    NeedsCpu {
        /// Row of the chunk (the first such row).
        row: u32,
    },
}

/// CUresult codes after which a CUDA context can do no more work (the
/// driver's "sticky" errors: every later call in the context fails).
const STICKY_CUDA_ERRORS: &[i32] = &[
    214, // CUDA_ERROR_ECC_UNCORRECTABLE
    700, // CUDA_ERROR_ILLEGAL_ADDRESS
    710, // CUDA_ERROR_ASSERT
    714, // CUDA_ERROR_HARDWARE_STACK_ERROR
    715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
    716, // CUDA_ERROR_MISALIGNED_ADDRESS
    717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
    718, // CUDA_ERROR_INVALID_PC
    719, // CUDA_ERROR_LAUNCH_FAILED
    999, // CUDA_ERROR_UNKNOWN
];

impl DeviceError {
    /// True for a driver error that leaves the CUDA context unusable.
    pub fn is_sticky(&self) -> bool {
        matches!(self, DeviceError::Cuda { code, .. } if STICKY_CUDA_ERRORS.contains(code))
    }

    /// True when the engine that ran the request is gone (the GPU service
    /// died, or its GPU faulted and it restarted): nothing of the request
    /// is left there, so a node that keeps no state in it may go on on
    /// another engine.
    pub fn engine_lost(&self) -> bool {
        matches!(self, DeviceError::ServiceLost(_) | DeviceError::DeviceLost { .. })
    }

    /// A hint for the user, where one helps.
    pub fn hint(&self) -> Option<&str> {
        match self {
            DeviceError::Remote { hint, .. } => hint.as_deref(),
            DeviceError::DriverMissing(_) | DeviceError::NoDevice | DeviceError::Unavailable(_) => Some(
                "Install the NVIDIA driver, or set pg_strom.engine = 'cpu' (or 'auto') to run device code on the CPU.",
            ),
            DeviceError::DriverTooOld { .. } => {
                Some("Upgrade the NVIDIA driver to one that supports CUDA 12.0 or later.")
            }
            DeviceError::NvrtcMissing(_) => Some(
                "Install the CUDA toolkit's NVRTC (libnvrtc.so.13), or `pip install nvidia-cuda-nvrtc`, and point pg_strom.nvrtc_library at it.",
            ),
            DeviceError::Compile { .. } => {
                Some("This is a bug in pg_strom's device code; please report it with the log above.")
            }
            DeviceError::Cache(_) => {
                Some("Check the permissions of the pg_strom folder under the data directory; removing it is safe.")
            }
            DeviceError::ServiceLost(_) => {
                Some("The GPU service restarts by itself; run the query again. Its exit is logged in the server log.")
            }
            DeviceError::DeviceLost { .. } => Some(
                "The GPU service restarts by itself with a new CUDA context; run the query again. The fault is logged in the server log.",
            ),
            DeviceError::OutOfMemory(_) => Some(
                "Raise pg_strom.gpu_memory_budget, lower pg_strom.chunk_rows or pg_strom.gpu_join_memory_limit, or run fewer GPU queries at once.",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::DriverMissing(why) => write!(f, "CUDA driver not found: {why}"),
            DeviceError::DriverTooOld { found, required } => write!(
                f,
                "CUDA driver too old: it supports CUDA {}.{}, pg_strom needs {}.{} or later",
                found / 1000,
                (found % 1000) / 10,
                required / 1000,
                (required % 1000) / 10
            ),
            DeviceError::NoDevice => write!(f, "no CUDA device found"),
            DeviceError::Unavailable(why) => write!(f, "no GPU available ({why})"),
            DeviceError::Cuda { call, code, message } => {
                write!(f, "{call} failed: {message} (CUresult {code})")
            }
            DeviceError::NvrtcMissing(why) => write!(f, "NVRTC not found: {why}"),
            DeviceError::Compile { arch, log } => {
                write!(f, "device code failed to compile for {arch}:\n{log}")
            }
            DeviceError::Nvrtc { call, code, message } => {
                write!(f, "{call} failed: {message} (nvrtcResult {code})")
            }
            DeviceError::Cache(why) => write!(f, "device code cache: {why}"),
            DeviceError::Kernel { status, message } => {
                write!(f, "device kernel failed (status {status}): {message}")
            }
            DeviceError::InvalidRequest(why) => write!(f, "{why}"),
            DeviceError::OutOfMemory(why) => write!(f, "{why}"),
            DeviceError::InvalidProgram(why) => write!(f, "invalid device program: {why}"),
            DeviceError::Sql { message, .. } => write!(f, "{message}"),
            DeviceError::Service(why) => write!(f, "GPU service: {why}"),
            DeviceError::ServiceLost(why) => write!(f, "the GPU service terminated ({why})"),
            DeviceError::DeviceLost { device, cause } => write!(f, "{device} faulted: {cause}"),
            DeviceError::Remote { message, .. } => write!(f, "{message}"),
            DeviceError::Interrupted => write!(f, "interrupted while waiting for the GPU service"),
            DeviceError::NeedsCpu { row } => {
                write!(f, "this engine cannot evaluate row {row} exactly as PostgreSQL does")
            }
        }
    }
}

impl std::error::Error for DeviceError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_versions_and_give_hints() {
        let e = DeviceError::DriverTooOld { found: 11080, required: 12000 };
        assert_eq!(e.to_string(), "CUDA driver too old: it supports CUDA 11.8, pg_strom needs 12.0 or later");
        assert!(e.hint().unwrap().contains("Upgrade"));
        let e = DeviceError::Compile { arch: "sm_90".into(), log: "x.cu(1): error".into() };
        assert!(e.to_string().starts_with("device code failed to compile for sm_90:"));
        assert!(DeviceError::Unavailable("why".into()).to_string().contains("why"));
        let e = DeviceError::Cuda { call: "cuStreamSynchronize", code: 700, message: "x".into() };
        assert!(e.is_sticky() && !e.engine_lost());
        assert!(!DeviceError::Cuda { call: "cuMemAlloc", code: 2, message: "x".into() }.is_sticky());
        let e = DeviceError::DeviceLost { device: "GPU0 (X)".into(), cause: "y".into() };
        assert!(e.engine_lost() && e.to_string() == "GPU0 (X) faulted: y" && e.hint().is_some());
    }
}
