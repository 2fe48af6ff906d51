//! pg_strom's device runtime.
//!
//! Owns everything that touches a GPU or the device code: the CUDA driver
//! and NVRTC (both loaded at run time, so nothing here needs CUDA to build
//! or load), device discovery, the compile-once device-code cache, and the
//! two engines that run the device code (GPU through CUDA, CPU through the
//! same sources built by the host compiler).
//!
//! This crate knows nothing of PostgreSQL and must never call it: its
//! functions may run on threads that are not PostgreSQL backends, and in
//! the GPU service process ([`service`]).  Errors are values ([`DeviceError`]); the
//! extension turns them into `ereport`s.

#![warn(missing_docs)]

/// A kernel's parameter array: the address of each local, in order, as
/// `cuLaunchKernel` takes them (`kparams!(p_src, p_dst, p_n)`).  Defined
/// before the modules so that each of them can use it.
macro_rules! kparams {
    ($($v:ident),* $(,)?) => {
        [$(&mut $v as *mut _ as *mut std::ffi::c_void),*]
    };
}

pub mod agg;
pub mod bitmap;
pub mod cache;
pub mod catalog;
pub mod clock;
pub mod colcache;
pub mod cpu;
pub mod cuda;
pub mod cufile;
pub mod device_code;
pub mod devstore;
mod devstore_gpu;
pub mod discovery;
pub mod engine;
pub mod error;
pub mod fileread;
pub mod gpu;
pub mod group_filter;
pub mod heapscan;
pub mod join;
mod join_cpu;
mod join_gpu;
pub mod mempool;
pub mod numeric;
pub mod nvrtc;
pub mod placement;
pub mod program;
pub mod selftest;
pub mod service;
pub mod signal_safe;
pub mod store;
pub mod topology;
pub mod widen;

pub use engine::{CompareOp, Engine, EngineKind, FilterColumn, FilterResult};
pub use error::DeviceError;
