//! The runtime interface the executor programs against.
//!
//! An [`Engine`] runs device code over a chunk of columnar data.  Two
//! implementations exist: [`crate::gpu::GpuEngine`] (CUDA, in this process
//! for now; the GPU service will implement the same trait) and
//! [`crate::cpu::CpuEngine`] (the same device sources built for the host).
//! The executor never knows which one it has.

use crate::error::DeviceError;

/// Which engine runs the device code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// An NVIDIA GPU through CUDA.
    Gpu,
    /// The host CPU running the same device code.
    Cpu,
}

impl EngineKind {
    /// Lower-case name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Gpu => "gpu",
            EngineKind::Cpu => "cpu",
        }
    }
}

/// A comparison operator of the filter kernels (PGSTROM_CMP_* codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `=`
    Eq = 0,
    /// `<>`
    Ne = 1,
    /// `<`
    Lt = 2,
    /// `<=`
    Le = 3,
    /// `>`
    Gt = 4,
    /// `>=`
    Ge = 5,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [CompareOp; 6] =
        [CompareOp::Eq, CompareOp::Ne, CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge];

    /// Parse a SQL operator name.
    pub fn from_sql(op: &str) -> Option<CompareOp> {
        Some(match op {
            "=" => CompareOp::Eq,
            "<>" | "!=" => CompareOp::Ne,
            "<" => CompareOp::Lt,
            "<=" => CompareOp::Le,
            ">" => CompareOp::Gt,
            ">=" => CompareOp::Ge,
            _ => return None,
        })
    }

    /// The SQL spelling.
    pub fn sql(self) -> &'static str {
        match self {
            CompareOp::Eq => "=",
            CompareOp::Ne => "<>",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }

    fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CompareOp::Eq => ord == Equal,
            CompareOp::Ne => ord != Equal,
            CompareOp::Lt => ord == Less,
            CompareOp::Le => ord != Greater,
            CompareOp::Gt => ord == Greater,
            CompareOp::Ge => ord != Less,
        }
    }
}

/// One column of a chunk with the constant it is compared to.
#[derive(Debug, Clone, Copy)]
pub enum FilterColumn<'a> {
    /// int4 values.
    Int32 {
        /// The values (undefined where NULL).
        values: &'a [i32],
        /// Right-hand constant.
        constant: i32,
    },
    /// int8 values.
    Int64 {
        /// The values (undefined where NULL).
        values: &'a [i64],
        /// Right-hand constant.
        constant: i64,
    },
    /// float8 values.
    Float64 {
        /// The values (undefined where NULL).
        values: &'a [f64],
        /// Right-hand constant.
        constant: f64,
    },
}

impl FilterColumn<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            FilterColumn::Int32 { values, .. } => values.len(),
            FilterColumn::Int64 { values, .. } => values.len(),
            FilterColumn::Float64 { values, .. } => values.len(),
        }
    }

    /// True when the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a filter kernel returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterResult {
    /// One byte per row: 1 when the predicate is true, else 0.
    pub matches: Vec<u8>,
    /// Number of rows where it is true.
    pub nmatched: u32,
}

/// The interface every engine implements.
pub trait Engine {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// Evaluate `column <op> constant` for each row, with WHERE semantics
    /// (NULL is not a match).  `validity` is an Arrow validity bitmap
    /// (bit set = not NULL) or None when the chunk has no NULLs.
    fn filter_compare(
        &self,
        column: &FilterColumn<'_>,
        validity: Option<&[u8]>,
        op: CompareOp,
    ) -> Result<FilterResult, DeviceError>;
}

/// Check the shape of a filter request; shared by the engines.
pub fn validate_filter(column: &FilterColumn<'_>, validity: Option<&[u8]>) -> Result<u32, DeviceError> {
    let n = column.len();
    let nrows = u32::try_from(n)
        .map_err(|_| DeviceError::InvalidRequest(format!("chunk of {n} rows exceeds the 2^32-1 row limit")))?;
    if let Some(v) = validity
        && v.len() < n.div_ceil(8)
    {
        return Err(DeviceError::InvalidRequest(format!(
            "validity bitmap of {} bytes is too short for {n} rows",
            v.len()
        )));
    }
    Ok(nrows)
}

/// The reference semantics in plain Rust: PostgreSQL's comparison rules
/// (NaN equals NaN and sorts above all numbers), NULL never matches.
/// Tests compare both engines against this.
pub fn reference_filter(column: &FilterColumn<'_>, validity: Option<&[u8]>, op: CompareOp) -> FilterResult {
    let valid = |i: usize| validity.is_none_or(|v| (v[i / 8] >> (i % 8)) & 1 == 1);
    let pg_cmp_f64 = |a: f64, b: f64| match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    };
    let matches: Vec<u8> = (0..column.len())
        .map(|i| {
            if !valid(i) {
                return 0;
            }
            let ord = match column {
                FilterColumn::Int32 { values, constant } => values[i].cmp(constant),
                FilterColumn::Int64 { values, constant } => values[i].cmp(constant),
                FilterColumn::Float64 { values, constant } => pg_cmp_f64(values[i], *constant),
            };
            op.holds(ord) as u8
        })
        .collect();
    let nmatched = matches.iter().map(|&m| m as u32).sum();
    FilterResult { matches, nmatched }
}
