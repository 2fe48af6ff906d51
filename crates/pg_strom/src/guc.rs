//! The `pg_strom.*` settings.  Every setting defined here is documented in
//! docs/settings.md; a test compares that list with `pg_settings`.

use std::ffi::CString;

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};

/// Which engine runs device code (`pg_strom.engine`).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum EngineSetting {
    /// The GPU when one was found at start-up, else the CPU engine.
    #[name = c"auto"]
    Auto,
    /// Always the GPU; an ERROR when none can be used.
    #[name = c"gpu"]
    Gpu,
    /// Always the CPU engine, even when a GPU is present.
    #[name = c"cpu"]
    Cpu,
}

/// `pg_strom.enabled`: master switch for every GPU plan.
pub static ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_gpuscan`.
pub static ENABLE_GPUSCAN: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_gpujoin`.
pub static ENABLE_GPUJOIN: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_gpupreagg`.
pub static ENABLE_GPUPREAGG: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.engine`.
pub static ENGINE: GucSetting<EngineSetting> = GucSetting::<EngineSetting>::new(EngineSetting::Auto);
/// `pg_strom.nvrtc_library`: where libnvrtc is ('' = search).
pub static NVRTC_LIBRARY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Register the settings and reserve the prefix.
pub fn init() {
    GucRegistry::define_bool_guc(
        c"pg_strom.enabled",
        c"Enables the planner's use of pg_strom's GPU plans.",
        c"When off, every query is planned as if pg_strom were not loaded.",
        &ENABLED,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_gpuscan",
        c"Enables the planner's use of GpuScan.",
        c"",
        &ENABLE_GPUSCAN,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_gpujoin",
        c"Enables the planner's use of GpuJoin.",
        c"",
        &ENABLE_GPUJOIN,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_gpupreagg",
        c"Enables the planner's use of GpuPreAgg.",
        c"",
        &ENABLE_GPUPREAGG,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"pg_strom.engine",
        c"Selects the engine that runs device code: auto, gpu or cpu.",
        c"auto uses the GPU when one was found at start-up and the CPU engine otherwise; gpu and cpu force one.",
        &ENGINE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"pg_strom.nvrtc_library",
        c"Path of libnvrtc (a file or the folder holding it); empty searches the CUDA toolkit and the linker path.",
        c"",
        &NVRTC_LIBRARY,
        GucContext::Suset,
        GucFlags::default(),
    );
    // SAFETY: called from _PG_init in the postmaster's main thread.
    unsafe { pgrx::pg_sys::MarkGUCPrefixReserved(c"pg_strom".as_ptr()) };
}

/// `pg_strom.nvrtc_library` as a Rust string (None when empty).
pub fn nvrtc_library() -> Option<String> {
    NVRTC_LIBRARY.get().map(|c| c.to_string_lossy().into_owned()).filter(|s| !s.is_empty())
}
