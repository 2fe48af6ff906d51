//! The device catalog: device types and device functions, generated at
//! build time from `device/include/device_types.def` and
//! `device/include/device_functions.def`, the files the device code itself
//! includes.  One source of truth: an entry exists in both engines and here,
//! or nowhere.

/// A device type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeInfo {
    /// Id used in programs (DT_* in the device code).
    pub id: u16,
    /// Name (BOOL, INT4, ...).
    pub name: &'static str,
    /// The PostgreSQL type, as its pg_type.h OID constant name.
    pub pg_type: &'static str,
    /// Bytes per value in a column buffer.
    pub width: usize,
}

/// A device function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuncInfo {
    /// Id used in programs (FUNC_* in the device code).
    pub id: u16,
    /// Opcode name.
    pub name: &'static str,
    /// The PostgreSQL function, as its fmgroids.h constant name.
    pub pg_function: &'static str,
    /// Result type id.
    pub result: u16,
    /// Number of arguments (1 to 3).
    pub nargs: u8,
    /// Argument type ids (0 where absent).
    pub args: [u16; 3],
    /// Implementation family (IMPL_*).
    pub family: &'static str,
    /// Human-readable form, e.g. "int4 + int4".
    pub label: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/device_catalog.rs"));

/// Look up a type by id.
pub fn type_info(id: u16) -> Option<&'static TypeInfo> {
    TYPES.get((id as usize).wrapping_sub(1))
}

/// Look up a type by name.
pub fn type_by_name(name: &str) -> Option<&'static TypeInfo> {
    TYPES.iter().find(|t| t.name == name)
}

/// Look up a function by id.
pub fn func_info(id: u16) -> Option<&'static FuncInfo> {
    FUNCTIONS.get((id as usize).wrapping_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_consistent() {
        assert!(TYPES.len() >= 10);
        assert!(FUNCTIONS.len() >= 190);
        for (i, f) in FUNCTIONS.iter().enumerate() {
            assert_eq!(f.id as usize, i + 1);
            assert!(type_info(f.result).is_some(), "{}", f.name);
            assert!((1..=3).contains(&f.nargs), "{}", f.name);
            for a in &f.args[..f.nargs as usize] {
                assert!(type_info(*a).is_some(), "{}", f.name);
            }
            assert!(FUNCTIONS.iter().filter(|g| g.pg_function == f.pg_function).count() == 1, "{}", f.pg_function);
        }
        assert_eq!(type_by_name("INT4").unwrap().width, 4);
    }
}
