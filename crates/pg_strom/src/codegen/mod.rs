//! Codegen: PostgreSQL expression trees to device programs.
//!
//! [`compile`] and its siblings walk an expression (after the planner's
//! constant folding) and emit a [`Program`] for the device interpreter, or
//! say why the expression cannot run on the device ([`NotSupported`]).
//! An unsupported node, type or function is never an error for the query:
//! the caller leaves that part to PostgreSQL.  What the device supports is
//! decided by one catalog (device/include/device_functions.def and
//! device_types.def): a function OID is offloaded only when it is listed.
//!
//! - [`catalog`]: PostgreSQL types and functions to device ones, date/time
//!   units, collations.
//! - [`datum`]: constants and parameters to the device's values, and the
//!   device's values back to datums.
//! - [`expr`]: the compiler, one emit function per node type: Var (of the
//!   sources a caller resolves), Const, OpExpr, FuncExpr, BoolExpr (AND/OR
//!   with PostgreSQL's short-circuit and three-valued logic, NOT),
//!   NullTest, BooleanTest, DistinctExpr, CoerceViaIO to text, CASE (both
//!   forms), COALESCE, NULLIF, GREATEST/LEAST, RelabelType, and
//!   `= ANY` / `<> ALL` over constant arrays (a chain of tests, or one
//!   binary search of the sorted constants beyond 16) and ARRAY[...].
//! - [`aggregates`]: the aggregates GpuPreAgg reduces, their arguments and
//!   grouping keys, and their partial states.
//!
//! Types: bool, int2/4/8, float2/4/8, numeric (exact, 38 digits; longer
//! values are left to PostgreSQL where a caller can), date, time, timetz,
//! timestamp(tz), interval, uuid, text / varchar / bpchar / bytea
//! (equality under deterministic collations, ordering under "C"/"POSIX").
//! Which results a program may return depends on its caller (filters:
//! bool; GPU Projection and `device_eval`: any device type; join keys and
//! grouping keys stay on the device).  Sub-expressions without Vars that
//! are not volatile (now(), current_date, Params, ...) are hoisted:
//! evaluated once by PostgreSQL and passed to the program as parameters.

use pgrx::pg_sys;

use pgstrom_runtime::program::Program;

pub mod aggregates;
pub mod catalog;
pub mod datum;
pub mod expr;
pub mod having;

pub use aggregates::{
    compile_count_arg, compile_group_key, compile_minmax_any, compile_numeric_column, compile_numeric_sum,
    numeric_bound, numeric_column_scale, strip_relabel,
};
pub use catalog::{DEVICE_FUNCTION_OIDS, device_function_of, device_type_of, extension_function_oid, uses_time_zone};
pub use datum::{const_bits, numeric_of, param_value, wide_bytes};
pub use expr::contains_exec_param;
use expr::{Fallback, compile_inner};

/// Why an expression stays on the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSupported(pub String);

/// A compiled expression and the inputs it needs.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The program.
    pub program: Program,
    /// Columns it reads, in program column order: (attnum, device type id).
    pub columns: Vec<(i16, u16)>,
    /// PostgreSQL type OID of the result.
    pub result_type: pg_sys::Oid,
    /// Sub-expressions evaluated once on the CPU per execution and passed
    /// as parameters, in parameter order: stable functions such as now()
    /// or current_date, Params, and any other Var-free, non-volatile part.
    pub params: Vec<(*mut pg_sys::Node, u16)>,
}

pub(crate) fn unsupported<T>(why: String) -> Result<T, NotSupported> {
    Err(NotSupported(why))
}

/// Compile `expr` (whose Vars of relation `varno` are the scanned columns).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile(expr: *mut pg_sys::Node, varno: i32) -> Result<Compiled, NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_single(expr, varno, false) }
}

/// [`compile`], also for a numeric result (which only `device_eval`
/// reads back so far).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_any_result(expr: *mut pg_sys::Node, varno: i32) -> Result<Compiled, NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_single(expr, varno, true) }
}

unsafe fn compile_single(expr: *mut pg_sys::Node, varno: i32, numeric_result: bool) -> Result<Compiled, NotSupported> {
    let resolve = |v: *mut pg_sys::Var| {
        // SAFETY: the walker hands valid Vars.
        unsafe { ((*v).varno == varno).then_some((0u8, (*v).varattno)) }
    };
    let mut inputs = Inputs::default();
    // SAFETY: valid expression (caller).
    let (program, result_type) =
        unsafe { compile_inner(expr, &resolve, &mut inputs, false, numeric_result, Fallback::Pg)? };
    Ok(Compiled {
        program,
        columns: inputs.columns.iter().map(|&(_, a, t)| (a, t)).collect(),
        result_type,
        params: inputs.params,
    })
}

/// Columns and hoisted parameters shared by several programs (a join's):
/// every program numbers them the same way.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    /// (source, column key, device type), in column order.
    pub columns: Vec<(u8, i16, u16)>,
    /// Hoisted sub-expressions, in parameter order (see [`Compiled::params`]).
    pub params: Vec<(*mut pg_sys::Node, u16)>,
}

/// Compile `expr` adding the columns and parameters it needs to `inputs`
/// (left as they were when it does not compile).  `resolve` says where
/// each Var is read; `text_result` allows a text result (a join's hash
/// key, which never leaves the device).  Returns the program and the
/// result's type OID.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_shared(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
    text_result: bool,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_inner(expr, resolve, inputs, text_result, false, Fallback::None) }
}

/// [`compile_shared`] for a filter whose rows PostgreSQL evaluates when
/// the device cannot (GpuScan, a GpuJoin's scan quals): numerics and every
/// date/time unit are compiled.
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_shared_fallback(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_inner(expr, resolve, inputs, false, false, Fallback::Pg) }
}

/// [`compile_shared_fallback`] for a GpuScan's GPU Projection: the result
/// may be of any device type (numeric, uuid, interval, timetz, float2 and
/// text, bpchar or bytea too: the scan reads them back).
///
/// # Safety
/// `expr` must be a valid expression tree.
pub unsafe fn compile_projection(
    expr: *mut pg_sys::Node,
    resolve: &dyn Fn(*mut pg_sys::Var) -> Option<(u8, i16)>,
    inputs: &mut Inputs,
) -> Result<(Program, pg_sys::Oid), NotSupported> {
    // SAFETY: valid expression (caller).
    unsafe { compile_inner(expr, resolve, inputs, false, true, Fallback::Pg) }
}
