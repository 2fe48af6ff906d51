#![allow(dead_code)] // each test crate uses a part of it
//! Helpers the program, join and aggregation tests share: the engines to
//! test (each also through the GPU service, run on a thread of the test),
//! and small programs.

use pgstrom_runtime::catalog::FUNCTIONS;
use pgstrom_runtime::cpu::CpuEngine;
use pgstrom_runtime::program::{Builder, Program, type_id};
use pgstrom_runtime::service::CPU_ENGINE;
use pgstrom_runtime::service::client::ServiceEngine;
use pgstrom_runtime::service::server::{ServiceConfig, serve};
use pgstrom_runtime::{Engine, discovery, gpu};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// A device function's id by its name in the catalog.
pub fn f(name: &str) -> u16 {
    FUNCTIONS.iter().find(|x| x.name == name).unwrap_or_else(|| panic!("{name}")).id
}

pub fn expect_gpu() -> bool {
    std::env::var("PGSTROM_EXPECT_GPU").as_deref() == Ok("1")
}

/// The socket of a GPU service running on a thread of this test process
/// (started on first use; with PGSTROM_EXPECT_GPU=1 it opens the GPUs).
pub fn service_socket() -> PathBuf {
    static SOCKET: OnceLock<PathBuf> = OnceLock::new();
    SOCKET
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("pgstrom-service-test-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let config = ServiceConfig {
                socket: dir.join("service.sock"),
                cache_dir: dir.join("device_code"),
                nvrtc_library: std::env::var("PGSTROM_NVRTC_LIBRARY").ok(),
                open_gpus: expect_gpu(),
                column_cache: None,
                memory_budget: None,
            };
            let socket = config.socket.clone();
            std::thread::spawn(move || serve(&config).unwrap());
            socket
        })
        .clone()
}

/// The service's CPU engine, or its GPU `index`.
pub fn service_engine(index: u32) -> ServiceEngine {
    ServiceEngine::new(service_socket(), index, Duration::from_secs(60))
}

/// The CPU engine, and with PGSTROM_EXPECT_GPU=1 the first GPU (its
/// device-code cache in a temporary folder named after `tag`); then the
/// same engines through the GPU service.
pub fn engines(tag: &str) -> Vec<Box<dyn Engine>> {
    let mut v: Vec<Box<dyn Engine>> = vec![Box::new(CpuEngine)];
    if expect_gpu() {
        let d = discovery::discover().unwrap();
        let dir = std::env::temp_dir().join(format!("pgstrom-{tag}-test-{}", std::process::id()));
        let lib = std::env::var("PGSTROM_NVRTC_LIBRARY").ok();
        v.push(Box::new(gpu::GpuEngine::open(&d.devices[0], &dir, lib.as_deref()).unwrap()));
    }
    v.push(Box::new(service_engine(CPU_ENGINE)));
    if expect_gpu() {
        v.push(Box::new(service_engine(0)));
    }
    v
}

/// The GPU engine leaving the rows it cannot compute exactly in
/// `cpu_rows` (not handing them to the CPU engine), when there is a GPU.
pub fn raw_gpu_engine(tag: &str) -> Option<Box<dyn Engine>> {
    if !expect_gpu() {
        return None;
    }
    let d = discovery::discover().unwrap();
    let dir = std::env::temp_dir().join(format!("pgstrom-{tag}-raw-test-{}", std::process::id()));
    let lib = std::env::var("PGSTROM_NVRTC_LIBRARY").ok();
    Some(Box::new(gpu::GpuEngine::open(&d.devices[0], &dir, lib.as_deref()).unwrap().without_cpu_recompute()))
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
