//! Device programs: the versioned byte code codegen produces from a
//! PostgreSQL expression, plans carry, EXPLAIN VERBOSE prints, and both
//! engines interpret (device/include/device_program.h is the device side of
//! this format; keep them in step).
//!
//! Serialized form (little-endian): a 32-byte header
//! `magic u32, version u16, flags u16, ninstrs u32, max_stack u32,
//! nparams u32, result_type u32, data_len u32, reserved u32`, then
//! `ninstrs` 16-byte instructions `op u16, type u16, arg i32, imm i64`,
//! then `data_len` bytes of constant data (text, bpchar and numeric
//! constants).  [`Program::from_bytes`] rejects
//! anything malformed or of another version with a clear error, and
//! [`Program::validate`] proves every path's stack depth before a program
//! may run.

use std::fmt::Write as _;

use crate::catalog::{self, func_info, type_info};
use crate::error::DeviceError;
use crate::numeric;

/// "PSPG" as a little-endian u32.
pub const MAGIC: u32 = 0x4750_5350;
/// Format version; bump on any incompatible change.
/// 2: constant data section (text and bpchar constants).
/// 3: numeric constants (24 bytes in the data section).
pub const VERSION: u16 = 3;
/// Deepest stack the interpreter has.
pub const MAX_STACK: u32 = 32;
/// Local slots per row.
pub const MAX_LOCALS: i32 = 16;

/// Instruction codes (OP_* in device_program.h).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum Op {
    Var = 1,
    Const = 2,
    Null = 3,
    Param = 4,
    Func = 5,
    Jump = 6,
    JumpIfFalseKeep = 7,
    JumpIfTrueKeep = 8,
    JumpIfNotTrue = 9,
    JumpIfNotNullKeep = 10,
    Pop = 11,
    And2 = 12,
    Or2 = 13,
    Not = 14,
    IsNull = 15,
    IsNotNull = 16,
    IsTrue = 17,
    IsNotTrue = 18,
    IsFalse = 19,
    IsNotFalse = 20,
    IsUnknown = 21,
    IsNotUnknown = 22,
    Distinct = 23,
    StoreLocal = 24,
    LoadLocal = 25,
    MinMax2 = 26,
    InSorted = 27,
}

impl Op {
    fn from_u16(v: u16) -> Option<Op> {
        use Op::*;
        Some(match v {
            1 => Var,
            2 => Const,
            3 => Null,
            4 => Param,
            5 => Func,
            6 => Jump,
            7 => JumpIfFalseKeep,
            8 => JumpIfTrueKeep,
            9 => JumpIfNotTrue,
            10 => JumpIfNotNullKeep,
            11 => Pop,
            12 => And2,
            13 => Or2,
            14 => Not,
            15 => IsNull,
            16 => IsNotNull,
            17 => IsTrue,
            18 => IsNotTrue,
            19 => IsFalse,
            20 => IsNotFalse,
            21 => IsUnknown,
            22 => IsNotUnknown,
            23 => Distinct,
            24 => StoreLocal,
            25 => LoadLocal,
            26 => MinMax2,
            27 => InSorted,
            _ => return None,
        })
    }

    fn is_jump(self) -> bool {
        matches!(self, Op::Jump | Op::JumpIfFalseKeep | Op::JumpIfTrueKeep | Op::JumpIfNotTrue | Op::JumpIfNotNullKeep)
    }

    fn mnemonic(self) -> &'static str {
        use Op::*;
        match self {
            Var => "var",
            Const => "const",
            Null => "null",
            Param => "param",
            Func => "func",
            Jump => "jump",
            JumpIfFalseKeep => "jump_if_false",
            JumpIfTrueKeep => "jump_if_true",
            JumpIfNotTrue => "pop_jump_if_not_true",
            JumpIfNotNullKeep => "jump_if_not_null",
            Pop => "pop",
            And2 => "and",
            Or2 => "or",
            Not => "not",
            IsNull => "is_null",
            IsNotNull => "is_not_null",
            IsTrue => "is_true",
            IsNotTrue => "is_not_true",
            IsFalse => "is_false",
            IsNotFalse => "is_not_false",
            IsUnknown => "is_unknown",
            IsNotUnknown => "is_not_unknown",
            Distinct => "distinct",
            StoreLocal => "store_local",
            LoadLocal => "load_local",
            MinMax2 => "minmax",
            InSorted => "in_sorted",
        }
    }
}

/// One instruction (DevInstr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Instr {
    /// Op code.
    pub op: u16,
    /// Device type id, where the op needs one.
    pub type_id: u16,
    /// Column, parameter, jump target or function id.
    pub arg: i32,
    /// Constant bits.
    pub imm: i64,
}

/// A device program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Result type id.
    pub result_type: u16,
    /// Parameters the program reads.
    pub nparams: u32,
    /// Deepest stack (set by [`Program::validate`]).
    pub max_stack: u32,
    /// The instructions.
    pub code: Vec<Instr>,
    /// Bytes of variable-length constants.
    pub data: Vec<u8>,
}

const HEADER_LEN: usize = 32;

/// Whether a device type is variable-length (text, bpchar).
pub fn is_varlena(type_id: u16) -> bool {
    type_info(type_id).is_some_and(|t| t.width == 0)
}

/// Whether a value of this type is wider than a DevDatum's 8-byte word
/// (numeric, uuid, interval, timetz): its columns and constants hold
/// more bytes, and a result needs the wide output.
pub fn is_wide(type_id: u16) -> bool {
    type_info(type_id).is_some_and(|t| t.width > 8)
}

/// Whether a constant of this type lies in the data section (text,
/// bpchar, bytea and the wide types).
fn in_data(type_id: u16) -> bool {
    is_varlena(type_id) || is_wide(type_id)
}

/// Whether a sorted constant set (OP_IN_SORTED) may hold elements of this
/// type: those dev_set_cmp orders consistently with their equality.
pub fn in_set_type(type_id: u16) -> bool {
    type_info(type_id).is_some_and(|t| {
        matches!(
            t.name,
            "INT2"
                | "INT4"
                | "INT8"
                | "FLOAT4"
                | "FLOAT8"
                | "DATE"
                | "TIME"
                | "TIMESTAMP"
                | "TIMESTAMPTZ"
                | "TEXT"
                | "BPCHAR"
        )
    })
}

/// An element of a sorted constant set: a fixed-width value's bits (as
/// [`Builder::constant`] takes them) or a text / bpchar value's bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum SetElement {
    /// Bits of a fixed-width value.
    Bits(i64),
    /// Bytes of a text or bpchar value.
    Bytes(Vec<u8>),
}

/// Whether the device returns values of this type to the backend as a
/// program's result (numeric, the other wide types, variable-length
/// results and float2, held as a float4, stay on the device).
pub fn is_returned(type_id: u16) -> bool {
    !in_data(type_id) && type_info(type_id).is_some_and(|t| t.name != "FLOAT2")
}
const INSTR_LEN: usize = 16;

fn invalid(why: String) -> DeviceError {
    DeviceError::InvalidProgram(why)
}

impl Program {
    /// Check the program: known ops, operand ranges, forward jumps within
    /// the program, consistent stack depths on every path, one value left.
    /// `ncols` is the number of columns it will be given, when known.
    /// Sets `max_stack`.
    pub fn validate(&mut self, ncols: Option<u32>) -> Result<(), DeviceError> {
        self.max_stack = self.check(ncols)?;
        Ok(())
    }

    /// The checks of [`Program::validate`] without changing the program;
    /// returns the deepest stack any path reaches.
    pub fn check(&self, ncols: Option<u32>) -> Result<u32, DeviceError> {
        self.check_code(ncols)
    }

    /// OP_IN_SORTED's operands: a comparison function, an element type a
    /// sorted set holds, and the set inside the data section (with its
    /// text elements).  The order itself is the builder's to keep: a set
    /// out of order only makes the search miss, never read astray.
    fn check_in_set(&self, pc: usize, ins: &Instr) -> Result<(), DeviceError> {
        let f = u16::try_from(ins.arg)
            .ok()
            .and_then(func_info)
            .ok_or_else(|| invalid(format!("unknown function id {} at {pc}", ins.arg)))?;
        if f.nargs != 2 || f.result != type_id("BOOL") || !in_set_type(ins.type_id) {
            return Err(invalid(format!("in_sorted at {pc}: {} over type {}", f.name, ins.type_id)));
        }
        let at = usize::try_from(ins.imm).ok().filter(|o| o % 8 == 0 && o + 8 <= self.data.len());
        let Some(at) = at else {
            return Err(invalid(format!("in_sorted set at {pc} lies outside the data section")));
        };
        let word = |o: usize| u32::from_le_bytes([self.data[o], self.data[o + 1], self.data[o + 2], self.data[o + 3]]);
        let n = word(at) as usize;
        if n.checked_mul(8).and_then(|b| b.checked_add(at + 8)).is_none_or(|end| end > self.data.len()) {
            return Err(invalid(format!("in_sorted set at {pc} lies outside the data section")));
        }
        if is_varlena(ins.type_id) {
            for k in 0..n {
                let (off, len) = (word(at + 8 + 8 * k) as u64, word(at + 12 + 8 * k) as u64);
                if off + len > self.data.len() as u64 {
                    return Err(invalid(format!("in_sorted element {k} at {pc} lies outside the data section")));
                }
            }
        }
        Ok(())
    }

    /// The column the program reads when it is nothing but that column.
    pub fn single_column(&self) -> Option<u32> {
        match self.code.as_slice() {
            [ins] if ins.op == Op::Var as u16 && ins.arg >= 0 => Some(ins.arg as u32),
            _ => None,
        }
    }

    fn check_code(&self, ncols: Option<u32>) -> Result<u32, DeviceError> {
        let n = self.code.len();
        if n == 0 {
            return Err(invalid("program has no instructions".into()));
        }
        if type_info(self.result_type).is_none() {
            return Err(invalid(format!("unknown result type id {}", self.result_type)));
        }
        // depth[pc] = stack depth on entry to pc, once known.
        let mut depth: Vec<Option<u32>> = vec![None; n + 1];
        depth[0] = Some(0);
        let mut max = 0u32;
        for pc in 0..n {
            let ins = self.code[pc];
            let Some(d) = depth[pc] else {
                // unreachable code: only possible after an unconditional jump
                continue;
            };
            let op = Op::from_u16(ins.op).ok_or_else(|| invalid(format!("unknown op code {} at {pc}", ins.op)))?;
            let (pops, pushes): (u32, u32) = match op {
                Op::Var => {
                    if ins.arg < 0 || ncols.is_some_and(|c| ins.arg as u32 >= c) {
                        return Err(invalid(format!("column {} out of range at {pc}", ins.arg)));
                    }
                    (0, 1)
                }
                Op::Const => {
                    if type_info(ins.type_id).is_none() {
                        return Err(invalid(format!("unknown constant type {} at {pc}", ins.type_id)));
                    }
                    if in_data(ins.type_id)
                        && (ins.imm < 0 || ins.arg < 0 || ins.imm as u64 + ins.arg as u64 > self.data.len() as u64)
                    {
                        return Err(invalid(format!("constant at {pc} lies outside the data section")));
                    }
                    if ins.type_id == type_id("TZTAB") {
                        let at = ins.imm as usize;
                        tz_table_check(&self.data[at..at + ins.arg as usize])
                            .map_err(|e| invalid(format!("time zone table at {pc}: {e}")))?;
                    }
                    if let Some(t) = type_info(ins.type_id).filter(|t| t.width > 8)
                        && ins.arg as usize != t.width
                    {
                        let name = t.name.to_ascii_lowercase();
                        return Err(invalid(format!("{name} constant at {pc} is not {} bytes", t.width)));
                    }
                    (0, 1)
                }
                Op::Null => (0, 1),
                Op::Param => {
                    if ins.arg < 0 || ins.arg as u32 >= self.nparams {
                        return Err(invalid(format!("parameter {} out of range at {pc}", ins.arg)));
                    }
                    (0, 1)
                }
                Op::Func => {
                    let f = u16::try_from(ins.arg)
                        .ok()
                        .and_then(func_info)
                        .ok_or_else(|| invalid(format!("unknown function id {} at {pc}", ins.arg)))?;
                    (f.nargs as u32, 1)
                }
                Op::Distinct | Op::MinMax2 => {
                    let f = u16::try_from(ins.arg)
                        .ok()
                        .and_then(func_info)
                        .ok_or_else(|| invalid(format!("unknown function id {} at {pc}", ins.arg)))?;
                    if f.nargs != 2 || f.result != type_id("BOOL") {
                        return Err(invalid(format!("{} is not a comparison, at {pc}", f.name)));
                    }
                    (2, 1)
                }
                Op::InSorted => {
                    self.check_in_set(pc, &ins)?;
                    (1, 1)
                }
                Op::StoreLocal | Op::LoadLocal => {
                    if !(0..MAX_LOCALS).contains(&ins.arg) {
                        return Err(invalid(format!("local slot {} out of range at {pc}", ins.arg)));
                    }
                    if op == Op::StoreLocal { (1, 0) } else { (0, 1) }
                }
                Op::Jump => (0, 0),
                Op::JumpIfFalseKeep | Op::JumpIfTrueKeep | Op::JumpIfNotNullKeep => (1, 1),
                Op::JumpIfNotTrue | Op::Pop => (1, 0),
                Op::And2 | Op::Or2 => (2, 1),
                _ => (1, 1),
            };
            if d < pops {
                return Err(invalid(format!("stack underflow at {pc}")));
            }
            let after = d - pops + pushes;
            max = max.max(after);
            if max > MAX_STACK {
                return Err(invalid(format!("stack deeper than {MAX_STACK} at {pc}")));
            }
            let mut merge = |target: usize, depth_there: u32| -> Result<(), DeviceError> {
                match depth[target] {
                    None => depth[target] = Some(depth_there),
                    Some(x) if x == depth_there => {}
                    Some(x) => {
                        return Err(invalid(format!("stack depth {x} and {depth_there} meet at {target}")));
                    }
                }
                Ok(())
            };
            if op.is_jump() {
                let t = ins.arg;
                if t <= pc as i32 || t as usize > n {
                    return Err(invalid(format!("jump from {pc} to {t} is not forward within the program")));
                }
                // a conditional jump that pops does so on both edges
                merge(t as usize, after)?;
            }
            if op != Op::Jump {
                merge(pc + 1, after)?;
            }
        }
        match depth[n] {
            Some(1) => {}
            other => return Err(invalid(format!("program ends with {other:?} values on the stack, not 1"))),
        }
        Ok(max)
    }

    /// Serialize (validating first).
    pub fn to_bytes(&self) -> Result<Vec<u8>, DeviceError> {
        let max_stack = self.check(None)?;
        let p = self;
        let mut b = Vec::with_capacity(HEADER_LEN + INSTR_LEN * p.code.len());
        b.extend_from_slice(&MAGIC.to_le_bytes());
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(p.code.len() as u32).to_le_bytes());
        b.extend_from_slice(&max_stack.to_le_bytes());
        b.extend_from_slice(&p.nparams.to_le_bytes());
        b.extend_from_slice(&(p.result_type as u32).to_le_bytes());
        b.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        for i in &p.code {
            b.extend_from_slice(&i.op.to_le_bytes());
            b.extend_from_slice(&i.type_id.to_le_bytes());
            b.extend_from_slice(&i.arg.to_le_bytes());
            b.extend_from_slice(&i.imm.to_le_bytes());
        }
        b.extend_from_slice(&p.data);
        Ok(b)
    }

    /// Deserialize and validate.  A program from another format version
    /// (a plan cached before an upgrade) is rejected with a clear error.
    pub fn from_bytes(b: &[u8]) -> Result<Program, DeviceError> {
        if b.len() < HEADER_LEN {
            return Err(invalid(format!("{} bytes is too short for a device program header", b.len())));
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u16_at = |o: usize| u16::from_le_bytes(b[o..o + 2].try_into().unwrap());
        if u32_at(0) != MAGIC {
            return Err(invalid("not a device program (bad magic number)".into()));
        }
        let version = u16_at(4);
        if version != VERSION {
            return Err(invalid(format!(
                "device program format version {version} is not supported (this build reads version {VERSION}); re-plan the query"
            )));
        }
        let ninstrs = u32_at(8) as usize;
        let data_len = u32_at(24) as usize;
        let code_end = HEADER_LEN.saturating_add(ninstrs.saturating_mul(INSTR_LEN));
        if b.len() != code_end.saturating_add(data_len) {
            return Err(invalid(format!(
                "device program of {} bytes does not hold {ninstrs} instructions and {data_len} bytes of data",
                b.len()
            )));
        }
        let nparams = u32_at(16);
        let result_type = u16::try_from(u32_at(20)).map_err(|_| invalid("result type out of range".into()))?;
        let code = (0..ninstrs)
            .map(|k| {
                let o = HEADER_LEN + k * INSTR_LEN;
                Instr {
                    op: u16_at(o),
                    type_id: u16_at(o + 2),
                    arg: i32::from_le_bytes(b[o + 4..o + 8].try_into().unwrap()),
                    imm: i64::from_le_bytes(b[o + 8..o + 16].try_into().unwrap()),
                }
            })
            .collect();
        let data = b[code_end..].to_vec();
        let mut p = Program { result_type, nparams, max_stack: 0, code, data };
        p.validate(None)?;
        if p.max_stack != u32_at(12) {
            return Err(invalid("device program header disagrees with its code (max_stack)".into()));
        }
        Ok(p)
    }

    /// The constants that are the session time zone's table (named zones'
    /// tables are other TZTAB constants).
    fn session_tz_consts(&self) -> impl Iterator<Item = usize> + '_ {
        let tz = type_id("TZTAB");
        self.code.iter().enumerate().filter_map(move |(k, i)| {
            let magic = usize::try_from(i.imm).ok().and_then(|o| self.data.get(o..o + 4));
            (i.op == Op::Const as u16 && i.type_id == tz && magic == Some(&tz::MAGIC.to_le_bytes()[..])).then_some(k)
        })
    }

    /// Whether the program reads the session time zone's table.
    pub fn uses_time_zone(&self) -> bool {
        self.session_tz_consts().next().is_some()
    }

    /// Replace the time zone table (placed last by [`Builder::tz_table`])
    /// with `table`, the executing session's: a plan made under another
    /// TimeZone setting then computes in this one.  Programs without a
    /// table are left alone.
    pub fn set_time_zone(&mut self, table: &[u8]) -> Result<(), DeviceError> {
        let consts: Vec<usize> = self.session_tz_consts().collect();
        let mut at = None;
        for &k in &consts {
            let i = self.code[k];
            if at.is_some_and(|a| a != i.imm) || i.imm as u64 + i.arg as u64 != self.data.len() as u64 {
                return Err(invalid("the time zone table is not last in the data section".into()));
            }
            at = Some(i.imm);
        }
        let Some(at) = at else { return Ok(()) };
        tz_table_check(table).map_err(|e| invalid(format!("time zone table: {e}")))?;
        if table.get(0..4) != Some(&tz::MAGIC.to_le_bytes()[..]) {
            return Err(invalid("not a session time zone table".into()));
        }
        self.data.truncate(at as usize);
        self.data.extend_from_slice(table);
        for k in consts {
            self.code[k].arg = table.len() as i32;
        }
        Ok(())
    }

    /// A readable listing, one instruction per line, for EXPLAIN VERBOSE.
    /// `column_name` names column indexes.
    pub fn disassemble(&self, column_name: &dyn Fn(i32) -> String) -> String {
        let mut s = String::new();
        let tname = |id: u16| type_info(id).map_or("?", |t| t.name).to_ascii_lowercase();
        for (pc, i) in self.code.iter().enumerate() {
            let Some(op) = Op::from_u16(i.op) else {
                let _ = writeln!(s, "{pc:3}: ?{}", i.op);
                continue;
            };
            let _ = write!(s, "{pc:3}: {}", op.mnemonic());
            match op {
                Op::Var => {
                    let _ = write!(s, " {}", column_name(i.arg));
                }
                Op::Const if i.type_id == type_id("NUMERIC") => {
                    let n = usize::try_from(i.imm)
                        .ok()
                        .and_then(|o| self.data.get(o..o + numeric::WIDTH))
                        .and_then(numeric::DevNumeric::from_bytes);
                    let _ = write!(s, " {}::numeric", n.map_or("?".into(), |n| n.to_text()));
                }
                Op::Const if is_wide(i.type_id) => {
                    let bytes = usize::try_from(i.imm)
                        .ok()
                        .and_then(|o| self.data.get(o..o + i.arg.max(0) as usize))
                        .unwrap_or(&[]);
                    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                    let _ = write!(s, " '\\x{hex}'::{}", tname(i.type_id));
                }
                Op::Const if i.type_id == type_id("TZTAB") => {
                    let bytes = usize::try_from(i.imm)
                        .ok()
                        .and_then(|o| self.data.get(o..o + i.arg.max(0) as usize))
                        .unwrap_or(&[]);
                    let _ = write!(s, " {}", tz_table_label(bytes));
                }
                Op::Const if is_varlena(i.type_id) => {
                    let bytes = usize::try_from(i.imm)
                        .ok()
                        .and_then(|o| self.data.get(o..o + i.arg.max(0) as usize))
                        .unwrap_or(&[]);
                    let text = String::from_utf8_lossy(bytes).replace('\'', "''");
                    let _ = write!(s, " '{text}'::{}", tname(i.type_id));
                }
                Op::Const => {
                    let _ = write!(s, " {}::{}", const_text(i.type_id, i.imm), tname(i.type_id));
                }
                Op::Param => {
                    let _ = write!(s, " ${}", i.arg + 1);
                }
                Op::StoreLocal | Op::LoadLocal => {
                    let _ = write!(s, " #{}", i.arg);
                }
                Op::InSorted => {
                    let f = u16::try_from(i.arg).ok().and_then(func_info);
                    let n = usize::try_from(i.imm)
                        .ok()
                        .and_then(|o| self.data.get(o..o + 4))
                        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    let _ = write!(
                        s,
                        " {} of {n} {} constants (sorted)",
                        f.map_or("?".to_string(), |f| format!("{} ({})", f.name.to_ascii_lowercase(), f.label)),
                        tname(i.type_id)
                    );
                }
                Op::Func | Op::Distinct | Op::MinMax2 => {
                    let f = u16::try_from(i.arg).ok().and_then(func_info);
                    let _ = write!(
                        s,
                        " {}",
                        f.map_or("?".to_string(), |f| format!("{} ({})", f.name.to_ascii_lowercase(), f.label))
                    );
                }
                o if o.is_jump() => {
                    let _ = write!(s, " -> {}", i.arg);
                }
                _ => {}
            }
            s.push('\n');
        }
        s
    }
}

/// Layout of a time zone table (device/include/device_tz.h).
pub mod tz {
    /// "PTZ1" as a little-endian u32: the session time zone's table,
    /// replaced when a plan is loaded.
    pub const MAGIC: u32 = 0x315A_5450;
    /// "PTZN": a named zone's table (AT TIME ZONE 'name'), kept.
    pub const MAGIC_NAMED: u32 = 0x4E5A_5450;
    /// Bytes before the segments.
    pub const HEADER: usize = 104;
    /// Bytes per segment.
    pub const SEGMENT: usize = 32;
    /// Bytes of the zone's name (NUL-padded).
    pub const NAME: usize = 64;
    /// Past the covered seconds: PostgreSQL decides.
    pub const NONE: i32 = 0;
    /// Past the covered seconds: as at the nearest covered one.
    pub const CONST: i32 = 1;
    /// Past the covered seconds: repeats with the period.
    pub const PERIODIC: i32 = 2;
}

fn le_i64(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Check a time zone table's layout, so that the device may read it
/// without checks: magic, length, modes, the segments in order from `lo`.
pub fn tz_table_check(b: &[u8]) -> Result<(), String> {
    if b.len() < tz::HEADER {
        return Err(format!("{} bytes is shorter than its header", b.len()));
    }
    if ![tz::MAGIC, tz::MAGIC_NAMED].contains(&u32::from_le_bytes(b[0..4].try_into().unwrap())) {
        return Err("bad magic number".into());
    }
    let n = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    if b.len() != tz::HEADER + n * tz::SEGMENT {
        return Err(format!("{} bytes do not hold {n} segments", b.len()));
    }
    let (lo, hi, period) = (le_i64(b, 8), le_i64(b, 16), le_i64(b, 32));
    for mode in [le_i32(b, 24), le_i32(b, 28)] {
        if !(tz::NONE..=tz::PERIODIC).contains(&mode) {
            return Err(format!("unknown mode {mode}"));
        }
        if mode == tz::PERIODIC && !(1..=hi.saturating_sub(lo)).contains(&period) {
            return Err(format!("period {period} does not fit the covered seconds"));
        }
    }
    if n == 0 {
        return Ok(());
    }
    if lo > hi || le_i64(b, tz::HEADER) != lo {
        return Err("the segments do not start at the covered seconds".into());
    }
    let mut last = lo;
    for k in 1..n {
        let start = le_i64(b, tz::HEADER + k * tz::SEGMENT);
        if start <= last || start > hi {
            return Err(format!("segment {k} is out of order"));
        }
        last = start;
    }
    Ok(())
}

/// A time zone table as EXPLAIN VERBOSE shows it.
pub fn tz_table_label(b: &[u8]) -> String {
    if tz_table_check(b).is_err() {
        return "(bad time zone table)".into();
    }
    let name = &b[40..40 + tz::NAME];
    let name = String::from_utf8_lossy(&name[..name.iter().position(|&c| c == 0).unwrap_or(tz::NAME)]);
    let n = u32::from_le_bytes(b[4..8].try_into().unwrap());
    let what = if u32::from_le_bytes(b[0..4].try_into().unwrap()) == tz::MAGIC { "time zone" } else { "zone" };
    format!("{what} '{}' ({n} segments)", name.replace('\'', "''"))
}

/// A constant's bits as text, by type.
pub fn const_text(type_id: u16, imm: i64) -> String {
    match type_info(type_id).map(|t| t.name) {
        Some("FLOAT8") => f64::from_bits(imm as u64).to_string(),
        Some("FLOAT4") => f32::from_bits(imm as u32).to_string(),
        Some("BOOL") => (imm != 0).to_string(),
        _ => imm.to_string(),
    }
}

/// Builds a program, with forward jumps patched when their label is placed.
#[derive(Debug, Default)]
pub struct Builder {
    code: Vec<Instr>,
    nparams: u32,
    data: Vec<u8>,
    /// The session time zone's table, once a function needs it.
    tz: Option<Vec<u8>>,
}

/// A forward-jump placeholder.
#[derive(Debug)]
#[must_use = "a jump must be placed"]
pub struct Jump(Vec<usize>);

impl Builder {
    /// An empty program.
    pub fn new() -> Builder {
        Builder::default()
    }

    fn push(&mut self, op: Op, type_id: u16, arg: i32, imm: i64) {
        self.code.push(Instr { op: op as u16, type_id, arg, imm });
    }

    /// Push column `col`.
    pub fn var(&mut self, col: i32) {
        self.push(Op::Var, 0, col, 0);
    }

    /// Push a constant of device type `type_id` with raw bits `imm`.
    pub fn constant(&mut self, type_id: u16, imm: i64) {
        self.push(Op::Const, type_id, 0, imm);
    }

    /// Push a variable-length constant (text, bpchar) with these bytes.
    pub fn bytes_constant(&mut self, type_id: u16, bytes: &[u8]) {
        let offset = self.data.len() as i64;
        self.data.extend_from_slice(bytes);
        self.push(Op::Const, type_id, bytes.len() as i32, offset);
    }

    /// Push the session time zone's table (device_tz.h), the hidden last
    /// argument of the functions that depend on the zone.  The table is
    /// placed once, last in the data section, so that
    /// [`Program::set_time_zone`] can replace it at executor start.
    pub fn tz_table(&mut self, table: &[u8]) {
        if self.tz.is_none() {
            self.tz = Some(table.to_vec());
        }
        self.push(Op::Const, type_id("TZTAB"), 0, -1);
    }

    /// Push a named zone's table (AT TIME ZONE 'name'), a constant like
    /// any other that [`Program::set_time_zone`] leaves alone.
    pub fn zone_table(&mut self, table: &[u8]) {
        self.data.resize(self.data.len().next_multiple_of(8), 0);
        self.bytes_constant(type_id("TZTAB"), table);
    }

    /// Push a numeric constant (in the data section, 8-byte aligned).
    pub fn numeric_constant(&mut self, n: numeric::DevNumeric) {
        self.data.resize(self.data.len().next_multiple_of(8), 0);
        self.bytes_constant(type_id("NUMERIC"), &n.to_bytes());
    }

    /// Push a constant of a wide type other than numeric (uuid, interval,
    /// timetz): its bytes as PostgreSQL stores them, 8-byte aligned.
    pub fn wide_constant(&mut self, type_id: u16, bytes: &[u8]) {
        self.data.resize(self.data.len().next_multiple_of(8), 0);
        self.bytes_constant(type_id, bytes);
    }

    /// `x = ANY (elements)` (`any`, `cmp` an equality) or `x <> ALL
    /// (elements)` (`cmp` an inequality) of the value on top of the stack,
    /// by binary search over the elements sorted here; `has_null`: the
    /// array also holds a NULL.  Elements are of device type `elem_type`
    /// ([`in_set_type`]); bpchar values lose their trailing blanks.
    pub fn in_sorted(&mut self, elem_type: u16, cmp: u16, any: bool, has_null: bool, elements: Vec<SetElement>) {
        let name = type_info(elem_type).map_or("", |t| t.name);
        let key = |e: &SetElement| -> (f64, i64, Vec<u8>) {
            match e {
                SetElement::Bits(b) if name == "FLOAT4" => (f32::from_bits(*b as u32) as f64, 0, Vec::new()),
                SetElement::Bits(b) if name == "FLOAT8" => (f64::from_bits(*b as u64), 0, Vec::new()),
                SetElement::Bits(b) => (0.0, *b, Vec::new()),
                SetElement::Bytes(v) => (0.0, 0, v.clone()),
            }
        };
        let mut elems: Vec<(f64, i64, Vec<u8>)> = elements
            .iter()
            .map(key)
            .map(|(f, i, mut b)| {
                if name == "BPCHAR" {
                    while b.last() == Some(&b' ') {
                        b.pop();
                    }
                }
                (f, i, b)
            })
            .collect();
        // dev_set_cmp's order: NaN above every float, -0 = 0
        elems.sort_by(|a, b| {
            let fa = if a.0.is_nan() { f64::INFINITY } else { a.0 };
            let fb = if b.0.is_nan() { f64::INFINITY } else { b.0 };
            let nan = a.0.is_nan().cmp(&b.0.is_nan());
            fa.partial_cmp(&fb).unwrap_or(std::cmp::Ordering::Equal).then(nan).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
        });
        let varlena = is_varlena(elem_type);
        // text elements' bytes first, then the 8-byte aligned set
        let mut at = Vec::with_capacity(elems.len());
        for e in &elems {
            at.push(self.data.len() as u32);
            if varlena {
                self.data.extend_from_slice(&e.2);
            }
        }
        self.data.resize(self.data.len().next_multiple_of(8), 0);
        let set = self.data.len();
        let flags = u32::from(has_null) | if any { 2 } else { 0 };
        self.data.extend_from_slice(&(elems.len() as u32).to_le_bytes());
        self.data.extend_from_slice(&flags.to_le_bytes());
        for (k, e) in elems.iter().enumerate() {
            if varlena {
                self.data.extend_from_slice(&at[k].to_le_bytes());
                self.data.extend_from_slice(&(e.2.len() as u32).to_le_bytes());
            } else {
                let bits = match name {
                    "FLOAT4" => (e.0 as f32).to_bits() as i64,
                    "FLOAT8" => e.0.to_bits() as i64,
                    _ => e.1,
                };
                self.data.extend_from_slice(&bits.to_le_bytes());
            }
        }
        self.push(Op::InSorted, elem_type, cmp as i32, set as i64);
    }

    /// Push NULL.
    pub fn null(&mut self) {
        self.push(Op::Null, 0, 0, 0);
    }

    /// Push parameter `idx` (0-based); the program reads at least idx+1.
    pub fn param(&mut self, idx: u32) {
        self.nparams = self.nparams.max(idx + 1);
        self.push(Op::Param, 0, idx as i32, 0);
    }

    /// Call device function `func_id` on the arguments on the stack.
    pub fn func(&mut self, func_id: u16) {
        self.push(Op::Func, 0, func_id as i32, 0);
    }

    /// `a IS DISTINCT FROM b` of the top two values, deciding equality
    /// with function `eq_func_id`.
    pub fn distinct(&mut self, eq_func_id: u16) {
        self.push(Op::Distinct, 0, eq_func_id as i32, 0);
    }

    /// GREATEST/LEAST step with comparison function `cmp_func_id`
    /// (`>` for GREATEST, `<` for LEAST).
    pub fn minmax(&mut self, cmp_func_id: u16) {
        self.push(Op::MinMax2, 0, cmp_func_id as i32, 0);
    }

    /// Pop into local slot `slot`.
    pub fn store_local(&mut self, slot: i32) {
        self.push(Op::StoreLocal, 0, slot, 0);
    }

    /// Push local slot `slot`.
    pub fn load_local(&mut self, slot: i32) {
        self.push(Op::LoadLocal, 0, slot, 0);
    }

    /// Emit a stack-only op (And2, Or2, Not, Pop, Is*).
    pub fn op(&mut self, op: Op) {
        debug_assert!(
            !op.is_jump()
                && !matches!(
                    op,
                    Op::Var
                        | Op::Const
                        | Op::Param
                        | Op::Func
                        | Op::Distinct
                        | Op::MinMax2
                        | Op::InSorted
                        | Op::StoreLocal
                        | Op::LoadLocal
                )
        );
        self.push(op, 0, 0, 0);
    }

    /// Emit a jump to a label placed later.
    pub fn jump(&mut self, op: Op) -> Jump {
        debug_assert!(op.is_jump());
        self.push(op, 0, -1, 0);
        Jump(vec![self.code.len() - 1])
    }

    /// Merge two pending jumps to the same label.
    pub fn merge(&self, mut a: Jump, b: Jump) -> Jump {
        a.0.extend(b.0);
        a
    }

    /// Place the label of `j` here.
    pub fn place(&mut self, j: Jump) {
        let here = self.code.len() as i32;
        for at in j.0 {
            self.code[at].arg = here;
        }
    }

    /// Finish: a validated program with the given result type.
    pub fn finish(self, result_type: u16) -> Result<Program, DeviceError> {
        let mut p = Program { result_type, nparams: self.nparams, max_stack: 0, code: self.code, data: self.data };
        if let Some(table) = self.tz {
            let tz = type_id("TZTAB");
            let at = p.data.len().next_multiple_of(8);
            for i in p.code.iter_mut().filter(|i| i.op == Op::Const as u16 && i.type_id == tz && i.imm == -1) {
                i.imm = at as i64;
                i.arg = table.len() as i32;
            }
            p.data.resize(at, 0);
            p.data.extend_from_slice(&table);
        }
        p.validate(None)?;
        Ok(p)
    }
}

/// A PostgreSQL error raised by device code: the same SQLSTATE and message
/// PostgreSQL gives.
pub fn sql_error(code: i32) -> Option<(&'static str, &'static str)> {
    Some(match code {
        16 => ("22003", "smallint out of range"),
        17 => ("22003", "integer out of range"),
        18 => ("22003", "bigint out of range"),
        19 => ("22012", "division by zero"),
        20 => ("22003", "value out of range: overflow"),
        21 => ("22003", "value out of range: underflow"),
        22 => ("22008", "date out of range"),
        23 => ("22008", "cannot subtract infinite dates"),
        24 => ("2201F", "cannot take square root of a negative number"),
        25 => ("22025", "LIKE pattern must not end with escape character"),
        26 => ("2201F", "zero raised to a negative power is undefined"),
        27 => ("2201F", "a negative number raised to a non-integer power yields a complex result"),
        28 => ("0A000", "cannot convert NaN to smallint"),
        29 => ("0A000", "cannot convert NaN to integer"),
        30 => ("0A000", "cannot convert NaN to bigint"),
        31 => ("0A000", "cannot convert infinity to smallint"),
        32 => ("0A000", "cannot convert infinity to integer"),
        33 => ("0A000", "cannot convert infinity to bigint"),
        34 => ("22008", "date out of range for timestamp"),
        35 => ("22008", "timestamp out of range"),
        36 => ("22008", "interval out of range"),
        37 => ("22008", "cannot add infinite interval to time"),
        38 => ("22008", "cannot subtract infinite interval from time"),
        39 => ("22011", "negative substring length not allowed"),
        40 => ("22023", "field position must not be zero"),
        41 => ("2201E", "cannot take logarithm of zero"),
        42 => ("2201E", "cannot take logarithm of a negative number"),
        43 => ("22003", "input is out of range"),
        _ => return None,
    })
}

/// The static (SQLSTATE, message) of [`sql_error`] with this SQLSTATE and
/// message, if any (errors coming back from the GPU service).
pub fn sql_error_by_state(state: &str, message: &str) -> Option<(&'static str, &'static str)> {
    (0..64).filter_map(sql_error).find(|(s, m)| *s == state && *m == message)
}

/// Device error code of a broken program.
pub const DEVERR_INVALID_PROGRAM: i32 = 3;
/// Device error code of a value this engine cannot compute exactly as
/// PostgreSQL does (the row must be evaluated by PostgreSQL).
pub const DEVERR_NEEDS_CPU: i32 = 5;

/// Type id by name; panics on a name not in device_types.def (a bug).
pub fn type_id(name: &str) -> u16 {
    catalog::type_by_name(name).unwrap_or_else(|| panic!("no device type {name}")).id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func_id(name: &str) -> u16 {
        catalog::FUNCTIONS.iter().find(|f| f.name == name).unwrap().id
    }

    /// A time zone table of `n` segments a day apart from 0, offset `off`.
    fn tz_table(name: &str, n: usize, off: i32) -> Vec<u8> {
        named_table(tz::MAGIC, name, n, off)
    }

    fn named_table(magic: u32, name: &str, n: usize, off: i32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&magic.to_le_bytes());
        b.extend_from_slice(&(n as u32).to_le_bytes());
        b.extend_from_slice(&0i64.to_le_bytes());
        b.extend_from_slice(&(n as i64 * 86_400).to_le_bytes());
        b.extend_from_slice(&tz::CONST.to_le_bytes());
        b.extend_from_slice(&tz::CONST.to_le_bytes());
        b.extend_from_slice(&86_400i64.to_le_bytes());
        let mut nm = [0u8; tz::NAME];
        nm[..name.len()].copy_from_slice(name.as_bytes());
        b.extend_from_slice(&nm);
        for k in 0..n as i64 {
            for v in [k * 86_400, (k + 1) * 86_400] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            for v in [off, off, 1, off] {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        b
    }

    #[test]
    fn time_zone_table_is_last_and_replaced() {
        let mut b = Builder::new();
        b.bytes_constant(type_id("TEXT"), b"day");
        b.var(0);
        b.tz_table(&tz_table("Here", 3, 3600));
        b.func(func_id("DATE_TRUNC_TIMESTAMPTZ"));
        b.var(1);
        b.tz_table(&tz_table("Here", 3, 3600));
        b.func(func_id("TIMESTAMPTZ_GT_TIMESTAMP"));
        // AT TIME ZONE 'Fixed': a named zone's table, kept as it is
        let fixed = named_table(tz::MAGIC_NAMED, "Fixed", 2, 7200);
        b.var(2);
        b.zone_table(&fixed);
        b.func(func_id("TIMESTAMP_TIMESTAMPTZ"));
        b.var(1);
        b.func(func_id("TIMESTAMP_GT"));
        b.op(Op::And2);
        let mut p = b.finish(type_id("BOOL")).unwrap();
        assert!(p.uses_time_zone());
        let first = tz_table("Here", 3, 3600);
        assert!(p.data.ends_with(&first));
        assert!(p.disassemble(&|c| format!("c{c}")).contains("const time zone 'Here' (3 segments)"));
        // a plan loaded in another session: the table is replaced, the
        // program still valid and serializable
        let other = tz_table("There", 5, -18_000);
        p.set_time_zone(&other).unwrap();
        assert!(p.data.ends_with(&other));
        let q = Program::from_bytes(&p.to_bytes().unwrap()).unwrap();
        let listing = q.disassemble(&|c| format!("c{c}"));
        assert!(listing.contains("const time zone 'There' (5 segments)"), "{listing}");
        assert!(listing.contains("const zone 'Fixed' (2 segments)"), "{listing}");
        assert!(q.data.windows(fixed.len()).any(|w| w == fixed));
        // a named zone's table is no session table
        assert!(p.set_time_zone(&fixed).is_err());
        // a malformed table is refused, in a program and as a replacement
        let mut bad = other.clone();
        bad[tz::HEADER + tz::SEGMENT..tz::HEADER + tz::SEGMENT + 8].copy_from_slice(&(-5i64).to_le_bytes());
        assert!(p.set_time_zone(&bad).is_err());
        let mut bytes = p.to_bytes().unwrap();
        let n = bytes.len();
        bytes[n - 1] ^= 0xff;
        bytes[n - other.len() + 4] = 9;
        assert!(Program::from_bytes(&bytes).is_err());
        assert!(tz_table_check(&other[..tz::HEADER - 1]).is_err());
        // a program without the table is left alone
        let mut b = Builder::new();
        b.var(0);
        let mut plain = b.finish(type_id("INT4")).unwrap();
        plain.set_time_zone(&other).unwrap();
        assert!(!plain.uses_time_zone() && plain.data.is_empty());
    }

    #[test]
    fn round_trip_and_listing() {
        let mut b = Builder::new();
        b.var(0);
        b.constant(type_id("INT4"), 10);
        b.func(func_id("INT4LT"));
        let j = b.jump(Op::JumpIfFalseKeep);
        b.var(1);
        b.op(Op::IsNull);
        b.op(Op::And2);
        b.place(j);
        let p = b.finish(type_id("BOOL")).unwrap();
        assert_eq!(p.max_stack, 2);
        let bytes = p.to_bytes().unwrap();
        assert_eq!(bytes.len(), 32 + 16 * 7);
        assert_eq!(Program::from_bytes(&bytes).unwrap(), p);
        let text = p.disassemble(&|c| format!("c{c}"));
        assert!(text.contains("  0: var c0\n"), "{text}");
        assert!(text.contains("func int4lt (int4 < int4)"), "{text}");
        assert!(text.contains("jump_if_false -> 7"), "{text}");
    }

    #[test]
    fn malformed_programs_are_rejected() {
        let mut b = Builder::new();
        b.var(0);
        let good = b.finish(type_id("INT4")).unwrap().to_bytes().unwrap();
        // wrong version
        let mut v = good.clone();
        v[4] = 99;
        let e = Program::from_bytes(&v).unwrap_err().to_string();
        assert!(e.contains("version 99 is not supported"), "{e}");
        // bad magic, truncated, trailing garbage
        let mut m = good.clone();
        m[0] ^= 1;
        assert!(Program::from_bytes(&m).is_err());
        assert!(Program::from_bytes(&good[..30]).is_err());
        // text constants survive the round trip
        let mut t = Builder::new();
        t.bytes_constant(type_id("TEXT"), "日本'語".as_bytes());
        let tp = t.finish(type_id("TEXT")).unwrap();
        assert_eq!(Program::from_bytes(&tp.to_bytes().unwrap()).unwrap(), tp);
        assert!(tp.disassemble(&|c| c.to_string()).contains("const '日本''語'::text"));
        // text constants survive the round trip
        let mut t = Builder::new();
        t.bytes_constant(type_id("TEXT"), "日本'語".as_bytes());
        let tp = t.finish(type_id("TEXT")).unwrap();
        assert_eq!(Program::from_bytes(&tp.to_bytes().unwrap()).unwrap(), tp);
        assert!(tp.disassemble(&|c| c.to_string()).contains("const '日本''語'::text"));
        assert!(Program::from_bytes(&[good.clone(), vec![0; 16]].concat()).is_err());
        // unknown op, unknown function, stack underflow, backward jump
        let bad = |code: Vec<Instr>| {
            Program { result_type: type_id("INT4"), nparams: 0, max_stack: 0, code, data: Vec::new() }.validate(Some(2))
        };
        assert!(bad(vec![Instr { op: 99, type_id: 0, arg: 0, imm: 0 }]).is_err());
        // a text constant pointing past the data section
        assert!(bad(vec![Instr { op: Op::Const as u16, type_id: type_id("TEXT"), arg: 4, imm: 0 }]).is_err());
        assert!(bad(vec![Instr { op: Op::Func as u16, type_id: 0, arg: 60000, imm: 0 }]).is_err());
        assert!(bad(vec![Instr { op: Op::And2 as u16, type_id: 0, arg: 0, imm: 0 }]).is_err());
        assert!(bad(vec![Instr { op: Op::Var as u16, type_id: 0, arg: 5, imm: 0 }]).is_err());
        assert!(
            bad(vec![
                Instr { op: Op::Var as u16, type_id: 0, arg: 0, imm: 0 },
                Instr { op: Op::Jump as u16, type_id: 0, arg: 0, imm: 0 }
            ])
            .is_err()
        );
        assert!(bad(vec![Instr { op: Op::Param as u16, type_id: 0, arg: 0, imm: 0 }]).is_err());
    }
}
