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

/// `pg_strom.gpudirect`: when the GPU service reads Arrow columns with
/// cuFile (GPUDirect Storage).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum GpuDirectSetting {
    /// cuFile when it moves bytes peer to peer (nvidia-fs loaded); pinned
    /// host buffers otherwise.
    #[name = c"auto"]
    Auto,
    /// cuFile whenever it opens, compatibility mode included.
    #[name = c"on"]
    On,
    /// Pinned host buffers only.
    #[name = c"off"]
    Off,
}

/// `pg_strom.gpudirect`.
pub static GPUDIRECT: GucSetting<GpuDirectSetting> = GucSetting::<GpuDirectSetting>::new(GpuDirectSetting::Auto);
/// `pg_strom.gpudirect_threshold`, in kB: smaller column buffers go
/// through pinned buffers even when cuFile reads the file.
pub static GPUDIRECT_THRESHOLD: GucSetting<i32> = GucSetting::<i32>::new(1024);

/// `pg_strom.enabled`: master switch for every GPU plan.
pub static ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_gpuscan`.
pub static ENABLE_GPUSCAN: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_gpujoin`.
pub static ENABLE_GPUJOIN: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_gpupreagg`.
pub static ENABLE_GPUPREAGG: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_decorrelation`: correlated scalar aggregate
/// sub-queries are also planned as a join with a grouped sub-query.
pub static ENABLE_DECORRELATION: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_eager_aggregate`: an aggregation over joins is also
/// planned partly below the joins with some of its tables.
pub static ENABLE_EAGER_AGGREGATE: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_distinct_grouping`: aggregates over DISTINCT values
/// are also planned with the duplicates removed by a grouping first.
pub static ENABLE_DISTINCT_GROUPING: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_not_in_anti_join`: `x NOT IN (SELECT y ...)` is
/// planned as `NOT EXISTS` (an anti-join) where neither side can be NULL.
pub static ENABLE_NOT_IN_ANTI_JOIN: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.enable_parallel_finalize`: a parallel GpuPreAgg's partial
/// groups are also planned exchanged between the processes by their keys,
/// each process finalizing its share (gpupreagg::exchange).
pub static ENABLE_PARALLEL_FINALIZE: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.debug_prefer_parallel_finalize`: the planner keeps the plan
/// with a parallel GpuPreAgg's groups finalized in every process wherever
/// there is one, whatever it costs (tests of its answers).
pub static DEBUG_PREFER_PARALLEL_FINALIZE: GucSetting<bool> = GucSetting::<bool>::new(false);
/// `pg_strom.debug_prefer_rewrites`: the planner keeps a rewritten plan
/// (rewrite::plan_query) wherever a rewrite applies, whatever it costs
/// (tests of the rewrites' answers).
pub static DEBUG_PREFER_REWRITES: GucSetting<bool> = GucSetting::<bool>::new(false);
/// `pg_strom.gpu_service`: GPUs are used through the GPU service process.
pub static GPU_SERVICE: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `pg_strom.cpu_engine_in_service`: the CPU engine runs in the service too.
pub static CPU_ENGINE_IN_SERVICE: GucSetting<bool> = GucSetting::<bool>::new(false);
/// `pg_strom.heap_gather_cost`: host cost of gathering a heap row into columns.
pub static HEAP_GATHER_COST: GucSetting<f64> = GucSetting::<f64>::new(0.03);
/// `pg_strom.arrow_tuple_cost`: host cost of forming one Arrow_Fdw row as
/// a tuple (about 1 us a row measured, ten times cpu_tuple_cost's row).
pub static ARROW_TUPLE_COST: GucSetting<f64> = GucSetting::<f64>::new(0.1);
/// `pg_strom.arrow_convert_cost`: host cost of converting one value of an
/// Arrow_Fdw column for a device node (about 50 ns a value measured).
pub static ARROW_CONVERT_COST: GucSetting<f64> = GucSetting::<f64>::new(0.005);
/// `pg_strom.engine`.
pub static ENGINE: GucSetting<EngineSetting> = GucSetting::<EngineSetting>::new(EngineSetting::Auto);
/// `pg_strom.nvrtc_library`: where libnvrtc is ('' = search).
pub static NVRTC_LIBRARY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
/// `pg_strom.gpu_setup_cost`: planner cost of starting a device scan.
pub static GPU_SETUP_COST: GucSetting<f64> = GucSetting::<f64>::new(100.0);
/// `pg_strom.gpu_context_cost`: planner cost of opening the GPU in a process
/// that has not yet (CUDA context and device code: about 1 s on an H100).
pub static GPU_CONTEXT_COST: GucSetting<f64> = GucSetting::<f64>::new(100_000.0);
/// `pg_strom.gpu_tuple_cost`: planner cost of moving one row through the device.
pub static GPU_TUPLE_COST: GucSetting<f64> = GucSetting::<f64>::new(-1.0);
/// `pg_strom.gpu_operator_cost`: planner cost of one operator on the device, per row.
pub static GPU_OPERATOR_COST: GucSetting<f64> = GucSetting::<f64>::new(-1.0);
/// `pg_strom.chunk_rows`: rows per chunk handed to the device engine.
pub static CHUNK_ROWS: GucSetting<i32> = GucSetting::<i32>::new(65536);
/// `pg_strom.gpu_join_memory_limit`, in kB: the most memory the inner
/// relations of one GpuJoin may take on the device.
pub static GPU_JOIN_MEMORY_LIMIT: GucSetting<i32> = GucSetting::<i32>::new(4 * 1024 * 1024);
/// kB of a gstore_fdw table's redo log that start a background checkpoint
/// (0: never).
pub static GSTORE_CHECKPOINT_LOG_SIZE: GucSetting<i32> = GucSetting::<i32>::new(1024 * 1024);

/// `pg_strom.gstore_checkpoint_timeout`: seconds without writes after which
/// a gstore_fdw table with a redo log is checkpointed in the background
/// (gstore::autockpt; 0: never).
pub static GSTORE_CHECKPOINT_TIMEOUT: GucSetting<i32> = GucSetting::<i32>::new(300);

/// `pg_strom.heap_page_reads`: device nodes read heap pages directly.
pub static HEAP_PAGE_READS: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.enable_brin`: heap scans skip the block ranges a BRIN index
/// rules out (source::brin).
pub static ENABLE_BRIN: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.heap_direct`: the GPU service reads all-visible heap blocks
/// from the table's files itself (source::heap_direct).
pub static HEAP_DIRECT: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.debug_drop_heap_direct_answers`: the backend drops every
/// n-th answer of the heap direct path as if a block had changed while it
/// was read (tests of that path; 0: never).
pub static DEBUG_DROP_HEAP_DIRECT_ANSWERS: GucSetting<i32> = GucSetting::<i32>::new(0);

/// `pg_strom.parallel_inner_build`: a parallel GpuJoin may scan an inner
/// relation with a partial plan, each process a share (gpujoin::shared_build).
pub static PARALLEL_INNER_BUILD: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.shared_inner_tables`: the processes of a parallel GpuJoin
/// probe one load of the inner relations in the engine (gpujoin::shared_build),
/// and the nodes of one query with the same inner plans share their rows
/// and load (gpujoin/exec/query_share.rs).
pub static SHARED_INNER_TABLES: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.gstore_device_copy`: GpuJoin and GpuPreAgg read a
/// gstore_fdw table from the GPU service's copy of it (source/gstore.rs).
pub static GSTORE_DEVICE_COPY: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.inner_cache`: the GPU service keeps GpuJoin inner builds
/// across queries while the inner relations do not change
/// (gpujoin::inner_cache).
pub static INNER_CACHE: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.chunk_read_ahead`: a heap scan reads its next chunk while
/// the GPU service works on the current one.
pub static CHUNK_READ_AHEAD: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.enable_gpu_projection`: GpuScan computes target-list
/// expressions on the device.
pub static GPU_PROJECTION: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pg_strom.arrow_cache_size`, in MB: Arrow file columns each GPU keeps
/// in device memory between queries (-1: a quarter of the GPU's memory).
pub static ARROW_CACHE_SIZE: GucSetting<i32> = GucSetting::<i32>::new(-1);

/// `pg_strom.gpu_memory_budget`, in MB: device memory each GPU's work may
/// take at once in the GPU service (-1: 90% of the GPU's memory).
pub static GPU_MEMORY_BUDGET: GucSetting<i32> = GucSetting::<i32>::new(-1);

/// `arrow_fdw.stats_hint_enabled`: skip record batches by min/max.
pub static ARROW_STATS_HINT: GucSetting<bool> = GucSetting::<bool>::new(true);

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
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_decorrelation",
        c"Plans correlated scalar aggregate sub-queries also as a join with a grouped sub-query.",
        c"The planner keeps the cheaper of the two plans; off plans the sub-query once per outer row only, as PostgreSQL does.",
        &ENABLE_DECORRELATION,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_eager_aggregate",
        c"Plans an aggregation over joins also with part of it done below the joins.",
        c"The tables the aggregates read are grouped first by the columns the rest of the query needs, then joined with the other tables; the planner keeps the cheaper plan.",
        &ENABLE_EAGER_AGGREGATE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_distinct_grouping",
        c"Plans aggregates over DISTINCT values also with the duplicates removed by a grouping first.",
        c"count(DISTINCT x) ... GROUP BY g is also planned as count(x) over the rows grouped by g and x, a grouping that can run in parallel and on the GPU; the planner keeps the cheaper plan.",
        &ENABLE_DISTINCT_GROUPING,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_not_in_anti_join",
        c"Plans x NOT IN (SELECT y ...) as NOT EXISTS, an anti-join, where neither x nor y can be NULL.",
        c"Both must be columns with a validated NOT NULL constraint of ordinary tables, outside the nullable side of outer joins, compared by a hashable or mergeable equality; the answer is the same, and the anti-join can run on the GPU where the sub-plan PostgreSQL makes of NOT IN cannot.",
        &ENABLE_NOT_IN_ANTI_JOIN,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_parallel_finalize",
        c"Plans a parallel GpuPreAgg also with its partial groups finalized in every process, each taking the groups of its share of the keys.",
        c"The processes exchange their partial groups by a hash of the grouping keys (through temporary files), and each process's Finalize Aggregate combines the groups of its share below the Gather, instead of one Finalize Aggregate above it; the planner keeps the cheaper plan.",
        &ENABLE_PARALLEL_FINALIZE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.debug_prefer_parallel_finalize",
        c"Keeps a plan with a parallel GpuPreAgg's groups finalized in every process wherever there is one, whatever it costs (for tests).",
        c"The exchange of partial groups between the processes is planned beside the other plans; with this on, it is chosen wherever it applies.",
        &DEBUG_PREFER_PARALLEL_FINALIZE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.debug_prefer_rewrites",
        c"Keeps a rewritten plan wherever a query rewrite applies, whatever it costs (for tests).",
        c"Correlated aggregate sub-queries as a grouped join, aggregation below joins, DISTINCT aggregates over a grouping: the cheapest rewritten plan is kept even where the query as written costs less.",
        &DEBUG_PREFER_REWRITES,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.heap_page_reads",
        c"Lets GpuScan, GpuJoin and GpuPreAgg read a heap table's pages directly.",
        c"off reads the rows through the table access method, as a SeqScan does (slower; the same rows).",
        &HEAP_PAGE_READS,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_brin",
        c"Lets GpuScan, GpuJoin and GpuPreAgg skip the block ranges of a heap table that a BRIN index on it rules out for the scan's quals.",
        c"off reads every block.",
        &ENABLE_BRIN,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.heap_direct",
        c"Lets the GPU service read the heap table of a GpuScan, GpuJoin or GpuPreAgg from its files itself (all-visible blocks not dirty in shared buffers), and take the tuples apart on the device.",
        c"off reads every block through the buffer manager in the backend. The files are read by the path pg_strom.gpudirect picks.",
        &HEAP_DIRECT,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_strom.debug_drop_heap_direct_answers",
        c"Drops every n-th answer of the heap direct path as if one of its blocks had changed while it was read (for tests).",
        c"The request's groups are dropped, the inner rows its rows marked matched are forgotten, and its blocks are read through the buffer manager; 0 drops none.",
        &DEBUG_DROP_HEAP_DIRECT_ANSWERS,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.parallel_inner_build",
        c"Lets a parallel GpuJoin or GpuPreAgg scan an inner relation with a partial plan (a Parallel Seq Scan, say): every process scans a share and the shares are put together once, for all of them.",
        c"off runs each inner relation's whole plan in one process of the query (the others wait for its rows).",
        &PARALLEL_INNER_BUILD,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.shared_inner_tables",
        c"Lets the processes of a parallel GpuJoin or GpuPreAgg, and the nodes of one query with the same inner plans (a join per partition), share one load of the inner relations in the engine: one loads and hashes them, the others probe the same tables.",
        c"off loads the inner relations into the engine once per process and node.",
        &SHARED_INNER_TABLES,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.gstore_device_copy",
        c"Lets GpuJoin and GpuPreAgg read a gstore_fdw table from the GPU service's copy of it, kept on the GPU.",
        c"The copy is brought up to date with the table's redo log before a query reads it, and the GPU decides which row versions the query's snapshot sees; off moves the rows from the backend for every query.",
        &GSTORE_DEVICE_COPY,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.inner_cache",
        c"Lets the GPU service keep the inner relations of a GpuJoin or GpuPreAgg, hashed, for later queries, while no row of them changes.",
        c"A build is kept and used only when every page of its inner tables is all-visible and unchanged since; off builds the inner relations for every query.",
        &INNER_CACHE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.chunk_read_ahead",
        c"Lets GpuScan, GpuJoin and GpuPreAgg read a heap table's next chunk while the GPU service works on the current one.",
        c"off reads a chunk only when the previous one is done (no overlap of reading and device work).",
        &CHUNK_READ_AHEAD,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"pg_strom.gpudirect",
        c"Sets when the GPU service reads Arrow columns into GPU memory with cuFile (GPUDirect SQL).",
        c"auto uses cuFile when it moves data peer to peer (the nvidia-fs module is loaded), on also in cuFile's compatibility mode, off never; other reads go through pinned host buffers.",
        &GPUDIRECT,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_strom.gpudirect_threshold",
        c"Sets the smallest Arrow column buffer the GPU service reads with cuFile.",
        c"Smaller buffers go through pinned host buffers.",
        &GPUDIRECT_THRESHOLD,
        0,
        i32::MAX,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.enable_gpu_projection",
        c"Lets GpuScan compute target-list expressions on the device (GPU Projection).",
        c"off computes every output expression on the CPU.",
        &GPU_PROJECTION,
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
    GucRegistry::define_bool_guc(
        c"pg_strom.gpu_service",
        c"Runs the GPU engine's work in the GPU service, one process that owns the GPUs for the whole server.",
        c"off makes every backend and parallel worker open the GPU itself (a CUDA context each); a crash in CUDA then restarts the server.",
        &GPU_SERVICE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pg_strom.cpu_engine_in_service",
        c"Runs the CPU engine inside the GPU service instead of the backend.",
        c"Isolates the CPU engine as the GPU engine is; also tests the service on a machine without a GPU.",
        &CPU_ENGINE_IN_SERVICE,
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
    GucRegistry::define_float_guc(
        c"pg_strom.gpu_setup_cost",
        c"Sets the planner's estimate of the cost of starting a scan on the device.",
        c"",
        &GPU_SETUP_COST,
        0.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"pg_strom.gpu_context_cost",
        c"Sets the planner's estimate of the cost of opening the GPU in a process that has not yet.",
        c"Charged to a device scan whose engine is a GPU not yet opened by this backend, and always to parallel ones (every worker opens it).",
        &GPU_CONTEXT_COST,
        0.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"pg_strom.heap_gather_cost",
        c"Sets the planner's estimate of the host's cost of gathering one heap-table row into the device's columns.",
        c"Paid per row of a heap table read by a device node, on top of gpu_tuple_cost; Arrow tables pay none.",
        &HEAP_GATHER_COST,
        0.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"pg_strom.arrow_tuple_cost",
        c"Sets the planner's estimate of the host's cost of forming one row of an Arrow_Fdw table as a tuple.",
        c"Paid instead of cpu_tuple_cost by every Arrow row returned to PostgreSQL: by its foreign scan, and by a GpuScan or GpuJoin over it (rows GpuPreAgg reduces on the device pay none).",
        &ARROW_TUPLE_COST,
        0.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"pg_strom.arrow_convert_cost",
        c"Sets the planner's estimate of the host's cost of converting one value of an Arrow_Fdw column for a device node.",
        c"Paid per row read for every referenced column the GPU service does not read from the file itself and that is not text handed over as it is (decimals, dates, timestamps, char(n) ...); parallel workers share it.",
        &ARROW_CONVERT_COST,
        0.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"pg_strom.gpu_tuple_cost",
        c"Sets the planner's estimate of the cost of moving one row through the device.",
        c"Paid for every row the device reads; rows it returns pay cpu_tuple_cost as well. -1: 0.002 when a GPU is planned, cpu_tuple_cost on the CPU engine.",
        &GPU_TUPLE_COST,
        -1.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"pg_strom.gpu_operator_cost",
        c"Sets the planner's estimate of the cost of one operator or function on the device, per row.",
        c"-1: cpu_operator_cost / 16 when a GPU is planned, cpu_operator_cost on the CPU engine.",
        &GPU_OPERATOR_COST,
        -1.0,
        f64::MAX,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_strom.chunk_rows",
        c"Sets how many rows the executor gathers into one chunk for the device engine.",
        c"Larger chunks keep the device busier and cost more memory in the backend.",
        &CHUNK_ROWS,
        1,
        16 * 1024 * 1024,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pg_strom.gpu_join_memory_limit",
        c"Sets the most memory the inner relations of one GpuJoin may take on the device.",
        c"The planner does not offload a join whose inner relations are estimated larger; at run time a larger one is joined by the CPU engine.",
        &GPU_JOIN_MEMORY_LIMIT,
        1024,
        i32::MAX,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_int_guc(
        c"pg_strom.gstore_checkpoint_log_size",
        c"Redo log size of a gstore_fdw table that starts a checkpoint of it in the background.",
        c"A statement that leaves the log larger starts a background worker that writes a new base file and an empty log when the table is free of queries; 0 never does.",
        &GSTORE_CHECKPOINT_LOG_SIZE,
        0,
        i32::MAX,
        GucContext::Suset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_int_guc(
        c"pg_strom.gstore_checkpoint_timeout",
        c"Time without writes after which a gstore_fdw table with a redo log is checkpointed in the background.",
        c"A statement that writes to such a table makes sure its database's checkpoint timer runs, a background worker that checkpoints each table whose redo log has not been written for this long once no query holds it; 0 never does.",
        &GSTORE_CHECKPOINT_TIMEOUT,
        0,
        i32::MAX,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    GucRegistry::define_int_guc(
        c"pg_strom.arrow_cache_size",
        c"Device memory each GPU keeps Arrow file columns in between queries.",
        c"The GPU service reads the fixed-width columns of Arrow_Fdw tables into device memory itself and keeps them, least recently used dropped first; -1 is a quarter of the GPU's memory, 0 keeps nothing.",
        &ARROW_CACHE_SIZE,
        -1,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::UNIT_MB,
    );
    GucRegistry::define_int_guc(
        c"pg_strom.gpu_memory_budget",
        c"Sets the device memory each GPU's work may take at once in the GPU service.",
        c"Requests that would exceed it first make the Arrow column cache give memory back, then wait for other requests to finish (up to 30 s); -1 is 90% of the GPU's memory.",
        &GPU_MEMORY_BUDGET,
        -1,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::UNIT_MB,
    );
    GucRegistry::define_bool_guc(
        c"arrow_fdw.stats_hint_enabled",
        c"Enables Arrow_Fdw's skipping of record batches by their min/max statistics.",
        c"",
        &ARROW_STATS_HINT,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: called from _PG_init in the postmaster's main thread.
    unsafe {
        pgrx::pg_sys::MarkGUCPrefixReserved(c"pg_strom".as_ptr());
        pgrx::pg_sys::MarkGUCPrefixReserved(c"arrow_fdw".as_ptr());
    }
}

/// `pg_strom.arrow_cache_size` in bytes (None: the default).
pub fn arrow_cache_bytes() -> Option<u64> {
    let mb = ARROW_CACHE_SIZE.get();
    (mb >= 0).then(|| mb as u64 * 1024 * 1024)
}

/// `pg_strom.gpu_memory_budget` in bytes (None: the default).
pub fn gpu_memory_budget_bytes() -> Option<u64> {
    let mb = GPU_MEMORY_BUDGET.get();
    (mb >= 0).then(|| mb as u64 * 1024 * 1024)
}

/// `pg_strom.nvrtc_library` as a Rust string (None when empty).
pub fn nvrtc_library() -> Option<String> {
    NVRTC_LIBRARY.get().map(|c| c.to_string_lossy().into_owned()).filter(|s| !s.is_empty())
}

/// The storage policy these settings give the GPU service's file reads.
pub fn read_policy() -> pgstrom_runtime::fileread::Policy {
    use pgstrom_runtime::fileread::{Direct, Policy};
    let direct = match GPUDIRECT.get() {
        GpuDirectSetting::Auto => Direct::Auto,
        GpuDirectSetting::On => Direct::On,
        GpuDirectSetting::Off => Direct::Off,
    };
    Policy { direct, threshold: GPUDIRECT_THRESHOLD.get().max(0) as u64 * 1024 }
}
