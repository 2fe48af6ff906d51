//! Runtime errors as PostgreSQL errors: each [`DeviceError`] gets a SQLSTATE,
//! a message, and the runtime's detail and hint.  Raised with `ereport`, so
//! the backend survives and the transaction aborts cleanly.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

use pgstrom_arrow::message::os_plain;
use pgstrom_runtime::DeviceError;

/// The SQLSTATE for a runtime error.
pub fn sqlstate(e: &DeviceError) -> PgSqlErrorCode {
    match e {
        DeviceError::DriverMissing(_)
        | DeviceError::NoDevice
        | DeviceError::Unavailable(_)
        | DeviceError::DriverTooOld { .. } => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        DeviceError::NvrtcMissing(_) => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
        DeviceError::Cache(_) => PgSqlErrorCode::ERRCODE_IO_ERROR,
        DeviceError::Cuda { .. }
        | DeviceError::Nvrtc { .. }
        | DeviceError::Service(_)
        | DeviceError::ServiceLost(_)
        | DeviceError::DeviceLost { .. }
        | DeviceError::Remote { .. } => PgSqlErrorCode::ERRCODE_SYSTEM_ERROR,
        DeviceError::Interrupted => PgSqlErrorCode::ERRCODE_QUERY_CANCELED,
        DeviceError::Compile { .. } | DeviceError::Kernel { .. } => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        DeviceError::InvalidRequest(_) => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        DeviceError::OutOfMemory(_) => PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY,
        DeviceError::InvalidProgram(_) | DeviceError::NeedsCpu { .. } => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        DeviceError::Sql { sqlstate, .. } => sqlstate_code(sqlstate),
    }
}

/// PostgreSQL's error code of a SQLSTATE (MAKE_SQLSTATE of its five
/// characters), so that every SQLSTATE of device/include/device_errors.def
/// is raised as itself with no list to keep in step; INTERNAL_ERROR for
/// one pgrx does not know.
fn sqlstate_code(sqlstate: &str) -> PgSqlErrorCode {
    let b = sqlstate.as_bytes();
    if b.len() != 5 {
        return PgSqlErrorCode::ERRCODE_INTERNAL_ERROR;
    }
    let code = b.iter().enumerate().fold(0i32, |acc, (i, &c)| acc + (((c as i32 - '0' as i32) & 0x3F) << (6 * i)));
    PgSqlErrorCode::from(code)
}

/// How an error message names the engine a node ran on: the GPU's
/// description, or "the CPU engine" (EXPLAIN's `none (CPU engine)` reads
/// oddly in a sentence).
pub fn engine_phrase(e: &dyn pgstrom_runtime::engine::Engine) -> String {
    match e.kind() {
        pgstrom_runtime::engine::EngineKind::Cpu => "the CPU engine".to_string(),
        _ => e.describe(),
    }
}

/// Raise `e` as an ERROR, prefixed with what we were doing.  An
/// interrupted wait raises PostgreSQL's own error for the interrupt
/// (cancel, statement_timeout, termination).
pub fn raise(what: &str, e: &DeviceError) -> ! {
    if let DeviceError::Interrupted = e {
        pgrx::check_for_interrupts!();
    }
    let (message, detail) = match e {
        // PostgreSQL's own errors read exactly as PostgreSQL writes them.
        DeviceError::Sql { message, .. } => (message.to_string(), None),
        // NVRTC's log can be long: it goes to DETAIL.
        DeviceError::Compile { arch, log } => {
            (format!("{what}: device code failed to compile for {arch}"), Some(log.clone()))
        }
        other => (format!("{what}: {other}"), None),
    };
    let mut report = ErrorReport::new(sqlstate(e), os_plain(&message), "pg_strom");
    if let Some(d) = detail {
        report = report.set_detail(os_plain(&d));
    }
    if let Some(h) = e.hint() {
        report = report.set_hint(h);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

/// Raise an ERROR that is not a runtime error.
pub fn raise_plain(code: PgSqlErrorCode, message: String, detail: Option<String>, hint: Option<&str>) -> ! {
    let mut report = ErrorReport::new(code, os_plain(&message), "pg_strom");
    if let Some(d) = detail {
        report = report.set_detail(os_plain(&d));
    }
    if let Some(h) = hint {
        report = report.set_hint(h);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}
