//! Which of a relation's quals the device evaluates and which stay on
//! the host: GpuScan's `GPU Filter` and `Filter`, and a GpuJoin's scan
//! quals and host quals (`gpujoin::path::JoinDesc::host_quals`).

use pgrx::pg_sys;

use crate::codegen;

/// The relation's quals split by where they can run.
pub struct QualSplit {
    /// Quals (bare expressions, in the given order) that compile.
    pub device: Vec<*mut pg_sys::Node>,
    /// The others.
    pub host: Vec<*mut pg_sys::Node>,
}

/// Split bare qual expressions into device and host quals.
///
/// # Safety
/// `quals` are valid expressions over relation `varno`.
pub unsafe fn split_quals(quals: &[*mut pg_sys::Node], varno: i32) -> QualSplit {
    let mut split = QualSplit { device: Vec::new(), host: Vec::new() };
    for &q in quals {
        // SAFETY: valid expression (caller).
        match unsafe { codegen::compile(q, varno) } {
            Ok(c) if c.program.result_type == pgstrom_runtime::program::type_id("BOOL") => split.device.push(q),
            _ => split.host.push(q),
        }
    }
    split
}
