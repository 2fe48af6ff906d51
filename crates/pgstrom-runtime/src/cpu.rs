//! The CPU engine: the device code under `device/` compiled by the host
//! C++ compiler (see build.rs) and called through its plain C ABI.  Each
//! entry point returns a PGSTROM_STATUS_* code and writes a message on
//! failure; no C++ exception can cross (the code is built -fno-exceptions).

use std::ffi::c_char;

use crate::engine::{
    ColumnData, CompareOp, DevColumnRepr, DevDatumRepr, Engine, EngineKind, EvalOutput, FilterColumn, FilterResult,
    ParamValue, eval_error, text_capacity, validate_eval, validate_filter, wide_result,
};
use crate::error::{DeviceError, kernel_status};
use crate::program::{Instr, Program};

unsafe extern "C" {
    fn pgstrom_cpu_eval_program(
        code: *const Instr,
        ninstrs: u32,
        data: *const u8,
        cols: *const DevColumnRepr,
        ncols: u32,
        params: *const DevDatumRepr,
        nparams: u32,
        nrows: u32,
        result_type: u32,
        out_values: *mut i64,
        out_nulls: *mut u8,
        out_wide: *mut i64,
        out_text: *mut u8,
        text_cap: u64,
        text_used: *mut u64,
        error_row: *mut u32,
    ) -> i32;
    fn pgstrom_cpu_filter_cmp_int32(
        values: *const i32,
        validity: *const u8,
        nrows: u32,
        op: i32,
        constant: i32,
        result: *mut u8,
        nmatched: *mut u32,
        errbuf: *mut c_char,
        errbuf_sz: usize,
    ) -> i32;
    fn pgstrom_cpu_filter_cmp_int64(
        values: *const i64,
        validity: *const u8,
        nrows: u32,
        op: i32,
        constant: i64,
        result: *mut u8,
        nmatched: *mut u32,
        errbuf: *mut c_char,
        errbuf_sz: usize,
    ) -> i32;
    fn pgstrom_cpu_filter_cmp_float64(
        values: *const f64,
        validity: *const u8,
        nrows: u32,
        op: i32,
        constant: f64,
        result: *mut u8,
        nmatched: *mut u32,
        errbuf: *mut c_char,
        errbuf_sz: usize,
    ) -> i32;
}

/// The CPU engine.  Stateless; always available.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuEngine;

impl CpuEngine {
    /// Run a filter with an operator code as the device code sees it (the
    /// public API takes [`CompareOp`]; tests use this to pass bad codes).
    pub fn filter_compare_raw(
        &self,
        column: &FilterColumn<'_>,
        validity: Option<&[u8]>,
        op_code: i32,
    ) -> Result<FilterResult, DeviceError> {
        let nrows = validate_filter(column, validity)?;
        let mut matches = vec![0u8; nrows as usize];
        let mut nmatched = 0u32;
        let mut errbuf = [0 as c_char; 256];
        let vptr = validity.map_or(std::ptr::null(), |v| v.as_ptr());
        // SAFETY: buffers are sized for nrows (validated above); the C code
        // reads values/validity and writes result/nmatched/errbuf only.
        let rc = unsafe {
            match column {
                FilterColumn::Int32 { values, constant } => pgstrom_cpu_filter_cmp_int32(
                    values.as_ptr(),
                    vptr,
                    nrows,
                    op_code,
                    *constant,
                    matches.as_mut_ptr(),
                    &mut nmatched,
                    errbuf.as_mut_ptr(),
                    errbuf.len(),
                ),
                FilterColumn::Int64 { values, constant } => pgstrom_cpu_filter_cmp_int64(
                    values.as_ptr(),
                    vptr,
                    nrows,
                    op_code,
                    *constant,
                    matches.as_mut_ptr(),
                    &mut nmatched,
                    errbuf.as_mut_ptr(),
                    errbuf.len(),
                ),
                FilterColumn::Float64 { values, constant } => pgstrom_cpu_filter_cmp_float64(
                    values.as_ptr(),
                    vptr,
                    nrows,
                    op_code,
                    *constant,
                    matches.as_mut_ptr(),
                    &mut nmatched,
                    errbuf.as_mut_ptr(),
                    errbuf.len(),
                ),
            }
        };
        if rc != kernel_status::OK {
            // SAFETY: the C code NUL-terminates (snprintf) within the buffer.
            let message = unsafe { std::ffi::CStr::from_ptr(errbuf.as_ptr()) }.to_string_lossy().into_owned();
            return Err(DeviceError::Kernel { status: rc, message });
        }
        Ok(FilterResult { matches, nmatched })
    }
}

impl Engine for CpuEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Cpu
    }

    fn describe(&self) -> String {
        "none (CPU engine)".to_string()
    }

    fn filter_compare(
        &self,
        column: &FilterColumn<'_>,
        validity: Option<&[u8]>,
        op: CompareOp,
    ) -> Result<FilterResult, DeviceError> {
        self.filter_compare_raw(column, validity, op as i32)
    }

    fn eval_program(
        &self,
        program: &Program,
        columns: &[ColumnData<'_>],
        params: &[ParamValue],
        nrows: u32,
    ) -> Result<EvalOutput, DeviceError> {
        validate_eval(program, columns, params, nrows)?;
        let cols: Vec<DevColumnRepr> = columns
            .iter()
            .map(|c| DevColumnRepr {
                type_id: c.type_id as u32,
                source: 0,
                values: c.values.as_ptr() as u64,
                validity: c.validity.map_or(0, |v| v.as_ptr() as u64),
                offsets: c.offsets.map_or(0, |o| o.as_ptr() as u64),
            })
            .collect();
        let pars = DevDatumRepr::from_params(params);
        let mut out = EvalOutput::with_rows(nrows as usize, wide_result(program));
        let mut text = vec![0u8; text_capacity(program, nrows as usize)];
        let mut text_used = 0u64;
        let mut error_row = 0u32;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Eval);
        // SAFETY: the request was validated against the program (operand
        // ranges, buffer lengths); pointers stay alive for the call.
        let rc = unsafe {
            pgstrom_cpu_eval_program(
                program.code.as_ptr(),
                program.code.len() as u32,
                program.data.as_ptr(),
                cols.as_ptr(),
                cols.len() as u32,
                pars.as_ptr(),
                pars.len() as u32,
                nrows,
                program.result_type as u32,
                out.values.as_mut_ptr(),
                out.nulls.as_mut_ptr(),
                if out.wide.is_empty() { std::ptr::null_mut() } else { out.wide.as_mut_ptr() },
                if text.is_empty() { std::ptr::null_mut() } else { text.as_mut_ptr() },
                text.len() as u64,
                &mut text_used,
                &mut error_row,
            )
        };
        if rc != kernel_status::OK {
            return Err(eval_error(rc, error_row));
        }
        text.truncate(text_used as usize);
        out.text = text;
        out.collect_cpu_rows();
        Ok(out)
    }

    fn join_open<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
    ) -> Result<Box<dyn crate::join::JoinSession + 'e>, DeviceError> {
        Ok(Box::new(crate::clock::Clocked::open(|| crate::join_cpu::CpuJoin::open(spec))?))
    }

    fn join_open_shared<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: u64,
    ) -> Result<Box<dyn crate::join::JoinSession + 'e>, DeviceError> {
        Ok(Box::new(crate::clock::Clocked::open(|| crate::join_cpu::CpuJoin::open_shared(spec, key))?))
    }

    fn join_attach<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: u64,
    ) -> Result<Option<Box<dyn crate::join::JoinSession + 'e>>, DeviceError> {
        let s = crate::clock::Clocked::open_if(|| crate::join_cpu::CpuJoin::attach(spec, key))?;
        Ok(s.map(|s| Box::new(s) as Box<dyn crate::join::JoinSession + 'e>))
    }

    fn join_cache_keep(
        &self,
        spec: &crate::join::JoinSpec<'_>,
        share: u64,
        key: &[u8],
        rows: &[u8],
    ) -> Result<bool, DeviceError> {
        Ok(crate::join_cpu::CpuJoin::cache_keep(spec, share, key, rows))
    }

    fn join_cache_rows(&self, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        Ok(crate::join_cpu::CpuJoin::cache_rows(key).map(|r| f(&r)).is_some())
    }

    fn join_cache_rows_kept(&self, key: &[u8]) -> Option<std::sync::Arc<Vec<u8>>> {
        crate::join_cpu::CpuJoin::cache_rows(key)
    }

    fn join_open_cached<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: &[u8],
        share: u64,
    ) -> Result<Option<Box<dyn crate::join::JoinSession + 'e>>, DeviceError> {
        let s = crate::clock::Clocked::open_if(|| crate::join_cpu::CpuJoin::open_cached(spec, key, share))?;
        Ok(s.map(|s| Box::new(s) as Box<dyn crate::join::JoinSession + 'e>))
    }
}
