//! Helpers the join and aggregation tests share: the engines to test, and
//! small programs.

use pgstrom_runtime::catalog::FUNCTIONS;
use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::program::{Builder, Program, type_id};
use pgstrom_runtime::{Engine, discovery, gpu};

/// A device function's id by its name in the catalog.
pub fn f(name: &str) -> u16 {
    FUNCTIONS.iter().find(|x| x.name == name).unwrap_or_else(|| panic!("{name}")).id
}

/// The CPU engine, and with PGSTROM_EXPECT_GPU=1 the first GPU (its
/// device-code cache in a temporary folder named after `tag`).
pub fn engines(tag: &str) -> Vec<Box<dyn Engine>> {
    let mut v: Vec<Box<dyn Engine>> = vec![Box::new(CpuEngine)];
    if std::env::var("PGSTROM_EXPECT_GPU").as_deref() == Ok("1") {
        let d = discovery::discover().unwrap();
        let dir = std::env::temp_dir().join(format!("pgstrom-{tag}-test-{}", std::process::id()));
        let lib = std::env::var("PGSTROM_NVRTC_LIBRARY").ok();
        v.push(Box::new(gpu::GpuEngine::open(&d.devices[0], &dir, lib.as_deref()).unwrap()));
    }
    v
}

/// Column `col` as a value of type `t`.
pub fn var(col: i32, t: &str) -> Program {
    let mut b = Builder::new();
    b.var(col);
    b.finish(type_id(t)).unwrap()
}

/// `func(column a, column b)`, a boolean.
pub fn cmp(a: i32, b: i32, func: &str) -> Program {
    let mut p = Builder::new();
    p.var(a);
    p.var(b);
    p.func(f(func));
    p.finish(type_id("BOOL")).unwrap()
}
