//! The GPU engine, in-process: one CUDA primary context on one device, the
//! device-code module loaded from the cache (NVRTC builds it the first
//! time), and the kernels launched on it.
//!
//! This is the first runtime behind the [`Engine`] trait; the GPU service
//! (one process owning every GPU) will implement the same trait, so the
//! executor does not change when it lands.

use std::ffi::{CString, c_void};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::cache::{self, DeviceModule};
use crate::colcache::ColumnCache;
use crate::cuda::{self, CuContext, CuDevicePtr, CuFunction, CuModule, Driver};
use crate::device_code::KERNELS;
use crate::discovery::DeviceInfo;
use crate::engine::{
    ColumnData, CompareOp, DevColumnRepr, DevDatumRepr, Engine, EngineKind, EvalOutput, FilterColumn, FilterResult,
    ParamValue, eval_error, text_capacity, validate_eval, validate_filter, wide_result,
};
use crate::error::{DeviceError, kernel_status};
use crate::mempool::{self, Reservation};
use crate::nvrtc::Nvrtc;
use crate::program::Program;

/// Threads per block of the filter kernels.
const BLOCK_SIZE: u32 = 256;

/// A GPU ready to run device code.
pub struct GpuEngine {
    pub(crate) drv: &'static Driver,
    ctx: CuContext,
    _module: CuModule,
    functions: Vec<(&'static str, CuFunction)>,
    /// The device this engine runs on.
    pub device: DeviceInfo,
    /// How the device code was obtained.
    pub module_info: DeviceModule,
    /// Device and pinned host memory reused by evaluations: one per
    /// evaluation running at once (threads of the GPU service run theirs
    /// concurrently, each on its own per-thread default stream).
    scratch: Mutex<Vec<Scratch>>,
    /// Buffers of Arrow files read into device memory (the GPU service's
    /// sessions), kept between queries.
    pub columns: ColumnCache,
    /// Kernel launches left before an injected fault ([`Self::arm_fault`]);
    /// negative when none is armed.
    fault_after: AtomicI64,
    /// Whether evaluations hand the rows the GPU cannot compute exactly to
    /// the CPU engine (always, but for tests of the GPU's own rows).
    cpu_recompute: bool,
    /// Inner relations of joins kept for the other sessions of a query.
    pub(crate) shared_joins: crate::join::SharedBuilds<crate::join_gpu::GpuInner>,
    /// Device buffers join sessions gave back ([`PooledBuffer`]).
    idle_buffers: Mutex<Vec<IdleBuffer>>,
    /// Copies of GPU store tables (devstore.rs).
    pub(crate) stores: crate::devstore_gpu::GpuStores,
}

/// Most bytes of idle buffers an engine keeps for later sessions.
const IDLE_BUFFER_BYTES: usize = 2 << 30;

/// The idle scratch arenas' bytes beyond which a request that none fits
/// grows one of them instead of making a new one ([`GpuEngine::scratch`];
/// all of them go when the memory budget runs short).
const IDLE_SCRATCH_BYTES: usize = 4 << 30;

/// A buffer in an engine's pool: device memory, still reserved.
struct IdleBuffer {
    ptr: CuDevicePtr,
    size: usize,
    res: Reservation,
}

/// Device memory of a join session (its programs, counters and step
/// buffers), given back to its engine when dropped and handed to the next
/// session that asks for the same size (a power of two): the sessions of
/// every query want the same buffers again, and a `cuMemFree` waits for
/// the whole device (every connection's work).  The engine keeps up to
/// [`IDLE_BUFFER_BYTES`] of them, and frees them all when the memory
/// budget runs short ([`GpuEngine::release_buffers`]).
pub(crate) struct PooledBuffer<'a> {
    eng: &'a GpuEngine,
    pub(crate) ptr: CuDevicePtr,
    size: usize,
    res: Option<Reservation>,
}

impl PooledBuffer<'_> {
    /// Copy the buffer's first bytes into `out`.
    pub(crate) fn download<T: Copy>(&self, out: &mut [T]) -> Result<(), DeviceError> {
        let bytes = std::mem::size_of_val(out);
        if bytes == 0 {
            return Ok(());
        }
        assert!(bytes <= self.size, "download beyond a pooled buffer");
        let drv = self.eng.drv;
        // SAFETY: the allocation is at least `bytes` long (checked).
        drv.check("cuMemcpyDtoH", unsafe { (drv.cuMemcpyDtoH)(out.as_mut_ptr() as *mut c_void, self.ptr, bytes) })
    }
}

impl Drop for PooledBuffer<'_> {
    fn drop(&mut self) {
        let Some(res) = self.res.take() else { return };
        let buf = IdleBuffer { ptr: self.ptr, size: self.size, res };
        let mut idle = self.eng.idle_buffers.lock().unwrap_or_else(|p| p.into_inner());
        if idle.iter().map(|b| b.size).sum::<usize>() + buf.size <= IDLE_BUFFER_BYTES {
            idle.push(buf);
            return;
        }
        drop(idle);
        self.eng.free_idle(buf);
    }
}

/// Grow-only memory for [`Engine::eval_program`]: one device arena and one
/// pinned host staging buffer of the same size, so a chunk costs one
/// host-to-device and one device-to-host DMA from pinned memory, with no
/// allocation after the first chunks (pageable copies run at a fraction of
/// the PCIe bandwidth, and cuMemAlloc/cuMemFree per chunk cost more than
/// the kernel).
struct Scratch {
    dev: CuDevicePtr,
    host: *mut u8,
    size: usize,
    /// `size` bytes of the GPU's memory pool, held with `dev`.
    _res: Reservation,
}

// SAFETY: a Scratch is used by one evaluation at a time (taken from the
// engine's pool and given back).
unsafe impl Send for Scratch {}

impl Scratch {
    const EMPTY: Scratch = Scratch { dev: 0, host: std::ptr::null_mut(), size: 0, _res: Reservation::NONE };
}

/// A Scratch taken from the pool, given back when the evaluation ends.
/// Taken and given back, an arena is never freed: `cuMemFree` waits for
/// the whole device, so freeing per request would make every connection's
/// work wait for every other's.
pub(crate) struct ScratchGuard<'a> {
    pool: &'a Mutex<Vec<Scratch>>,
    s: Scratch,
}

impl ScratchGuard<'_> {
    /// The arena's device address.
    pub(crate) fn dev(&self) -> CuDevicePtr {
        self.s.dev
    }

    /// Its pinned host staging buffer (as long as the arena).
    pub(crate) fn host(&self) -> *mut u8 {
        self.s.host
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.s.size
    }
}

impl Drop for ScratchGuard<'_> {
    fn drop(&mut self) {
        let s = std::mem::replace(&mut self.s, Scratch::EMPTY);
        self.pool.lock().unwrap_or_else(|p| p.into_inner()).push(s);
    }
}

/// Round up to the alignment every device segment gets.
fn align_up(n: usize) -> usize {
    n.next_multiple_of(256)
}

// SAFETY: CUDA driver handles may be used from any thread once the context
// is current there; every method makes `ctx` current before using them.
unsafe impl Send for GpuEngine {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for GpuEngine {}

/// Device memory freed on drop, reserved in its GPU's memory pool
/// (mempool.rs) while it lives.
pub(crate) struct DeviceBuffer<'a> {
    drv: &'a Driver,
    pub(crate) ptr: CuDevicePtr,
    // dropped after the memory is freed (Drop below)
    _res: Reservation,
}

/// CUDA_ERROR_OUT_OF_MEMORY.
const CUDA_ERROR_OUT_OF_MEMORY: i32 = 2;

/// Reserve `bytes` in the pool of the GPU whose context is current
/// (waiting for memory when the budget is spent), or nothing for a GPU
/// without a pool.
fn reserve_current(drv: &Driver, bytes: usize) -> Result<Reservation, DeviceError> {
    let mut dev = 0;
    // SAFETY: valid out-pointer.
    drv.check("cuCtxGetDevice", unsafe { (drv.cuCtxGetDevice)(&mut dev) })?;
    match mempool::pool(dev as usize) {
        Some(p) => p.reserve(bytes as u64, mempool::MEMORY_WAIT),
        None => Ok(Reservation::NONE),
    }
}

/// cuMemAlloc of `bytes` (at least 1) after reserving them; when the
/// device refuses memory the budget allowed (other processes use it), the
/// pool's waiters are given a chance to free some first.
fn device_alloc(drv: &Driver, bytes: usize) -> Result<(CuDevicePtr, Reservation), DeviceError> {
    let _clock = crate::clock::Timer::start(crate::clock::Phase::Alloc);
    let res = reserve_current(drv, bytes)?;
    let deadline = std::time::Instant::now() + mempool::MEMORY_WAIT;
    loop {
        let mut ptr = 0;
        // SAFETY: valid out-pointer; size at least 1 byte.
        let rc = unsafe { (drv.cuMemAlloc)(&mut ptr, bytes.max(1)) };
        if rc == CUDA_ERROR_OUT_OF_MEMORY {
            let mut dev = 0;
            // SAFETY: valid out-pointer.
            unsafe { (drv.cuCtxGetDevice)(&mut dev) };
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if let Some(p) = mempool::pool(dev as usize)
                && !left.is_zero()
                && p.wait_for_free(left)
            {
                continue;
            }
        }
        drv.check("cuMemAlloc", rc)?;
        return Ok((ptr, res));
    }
}

impl<'a> DeviceBuffer<'a> {
    pub(crate) fn alloc(drv: &'a Driver, bytes: usize) -> Result<Self, DeviceError> {
        let (ptr, res) = device_alloc(drv, bytes)?;
        Ok(DeviceBuffer { drv, ptr, _res: res })
    }

    pub(crate) fn upload<T: Copy>(drv: &'a Driver, data: &[T]) -> Result<Self, DeviceError> {
        let bytes = std::mem::size_of_val(data);
        let buf = Self::alloc(drv, bytes)?;
        if bytes > 0 {
            // SAFETY: `buf` holds at least `bytes`; `data` is that long.
            drv.check("cuMemcpyHtoD", unsafe { (drv.cuMemcpyHtoD)(buf.ptr, data.as_ptr() as *const c_void, bytes) })?;
        }
        Ok(buf)
    }

    pub(crate) fn zeroed(drv: &'a Driver, bytes: usize) -> Result<Self, DeviceError> {
        let buf = Self::alloc(drv, bytes)?;
        // SAFETY: within the allocation.
        drv.check("cuMemsetD8", unsafe { (drv.cuMemsetD8)(buf.ptr, 0, bytes.max(1)) })?;
        Ok(buf)
    }

    pub(crate) fn download<T: Copy>(&self, out: &mut [T]) -> Result<(), DeviceError> {
        let bytes = std::mem::size_of_val(out);
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the allocation is at least `bytes` long.
        self.drv
            .check("cuMemcpyDtoH", unsafe { (self.drv.cuMemcpyDtoH)(out.as_mut_ptr() as *mut c_void, self.ptr, bytes) })
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Alloc);
        // SAFETY: ptr came from cuMemAlloc; a failure here cannot be
        // reported and leaks nothing worse than the allocation.
        unsafe { (self.drv.cuMemFree)(self.ptr) };
    }
}

impl GpuEngine {
    /// Open `device`: retain its primary context and load the device code,
    /// from `cache_dir` or by compiling with NVRTC (`nvrtc_library` as in
    /// [`Nvrtc::load`]).
    pub fn open(device: &DeviceInfo, cache_dir: &Path, nvrtc_library: Option<&str>) -> Result<GpuEngine, DeviceError> {
        let drv = cuda::driver()?;
        let mut dev = 0;
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            drv.check("cuDeviceGet", (drv.cuDeviceGet)(&mut dev, device.ordinal))?;
            drv.check("cuDevicePrimaryCtxRetain", (drv.cuDevicePrimaryCtxRetain)(&mut ctx, dev))?;
            drv.check("cuCtxSetCurrent", (drv.cuCtxSetCurrent)(ctx))?;
        }
        let arch = device.arch();
        let module_info = cache::load_or_build(cache_dir, &arch, || Nvrtc::load(nvrtc_library))?;
        let mut module: CuModule = std::ptr::null_mut();
        // SAFETY: the CUBIN image stays alive for the call.
        drv.check("cuModuleLoadData", unsafe {
            (drv.cuModuleLoadData)(&mut module, module_info.cubin.as_ptr() as *const c_void)
        })?;
        let mut functions = Vec::new();
        for name in KERNELS {
            let cname = CString::new(*name).expect("kernel names have no NUL");
            let mut f: CuFunction = std::ptr::null_mut();
            // SAFETY: module is loaded; valid out-pointer.
            drv.check("cuModuleGetFunction", unsafe { (drv.cuModuleGetFunction)(&mut f, module, cname.as_ptr()) })?;
            functions.push((*name, f));
        }
        Ok(GpuEngine {
            drv,
            ctx,
            _module: module,
            functions,
            device: device.clone(),
            module_info,
            scratch: Mutex::new(Vec::new()),
            columns: ColumnCache::new(0),
            fault_after: AtomicI64::new(-1),
            cpu_recompute: true,
            shared_joins: crate::join::SharedBuilds::new(),
            idle_buffers: Mutex::new(Vec::new()),
            stores: Default::default(),
        })
    }

    /// This engine, leaving the rows the GPU cannot compute exactly in
    /// `cpu_rows` (tests of which rows the GPU computes itself).
    pub fn without_cpu_recompute(mut self) -> GpuEngine {
        self.cpu_recompute = false;
        self
    }

    fn function(&self, name: &str) -> Result<CuFunction, DeviceError> {
        self.functions
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| DeviceError::InvalidRequest(format!("kernel {name} is not in the device module")))
    }

    /// Make the kernel launch after the next `after_launches` ones fault
    /// instead (a store to an address no allocation has: the driver reports
    /// CUDA_ERROR_ILLEGAL_ADDRESS and the context can do no more work), to
    /// test how a faulting GPU is handled.  Once armed, it fires once.
    pub fn arm_fault(&self, after_launches: u32) {
        self.fault_after.store(after_launches as i64, Ordering::SeqCst);
    }

    /// True when this launch is the armed fault's (disarming it).
    fn fault_fires(&self) -> bool {
        let mut cur = self.fault_after.load(Ordering::SeqCst);
        while cur >= 0 {
            match self.fault_after.compare_exchange(cur, cur - 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return cur == 0,
                Err(now) => cur = now,
            }
        }
        false
    }

    /// Launch `kernel` over `grid` blocks of BLOCK_SIZE threads and wait.
    ///
    /// # Safety
    /// `params` must point at values of the kernel's parameter types, in
    /// order, and every buffer they reference must outlive this call.
    pub(crate) unsafe fn launch_and_wait(
        &self,
        kernel: &str,
        grid: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), DeviceError> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_shared_and_wait(kernel, grid, 0, params) }
    }

    /// As launch_and_wait, with `shared` bytes of dynamic shared memory
    /// per block (at most 48 KiB: no attribute raises the limit).
    ///
    /// # Safety
    /// As launch_and_wait's.
    pub(crate) unsafe fn launch_shared_and_wait(
        &self,
        kernel: &str,
        grid: u32,
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), DeviceError> {
        if self.fault_fires() {
            eprintln!("pg_strom service: GPU{}: injected device fault instead of {kernel}", self.device.ordinal);
            // an address below the first page: never device memory
            let mut address: u64 = 16;
            let mut fault_params = [(&raw mut address).cast::<c_void>()];
            // SAFETY: the kernel takes one u64 by value (the fault fired
            // once: this launch is the fault kernel's own).
            unsafe { self.launch_and_wait("kern_fault_illegal_address", 1, &mut fault_params)? };
            // never the requested kernel's results: it did not run
            return Err(DeviceError::Kernel {
                status: kernel_status::INTERNAL,
                message: "the injected device fault did not fault".into(),
            });
        }
        let f = self.function(kernel)?;
        let drv = self.drv;
        let _clock = crate::clock::Timer::start(crate::clock::Phase::of_kernel(kernel));
        // SAFETY: caller's contract.
        unsafe {
            drv.check(
                "cuLaunchKernel",
                (drv.cuLaunchKernel)(
                    f,
                    grid,
                    1,
                    1,
                    BLOCK_SIZE,
                    1,
                    1,
                    shared,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
            )?;
            // this thread's default stream only: other threads of the GPU
            // service keep their own work in flight
            drv.check("cuStreamSynchronize", (drv.cuStreamSynchronize)(std::ptr::null_mut()))
        }
    }

    /// Blocks for `nrows` rows: enough to fill the device, no more.
    pub(crate) fn grid_for(&self, nrows: u32) -> u32 {
        nrows.div_ceil(BLOCK_SIZE).clamp(1, (self.device.sm_count().max(1) as u32) * 16)
    }

    /// Blocks for `nrows` rows, no more than the device runs at once
    /// (BLOCK_SIZE threads each, 2048 threads per multiprocessor): for a
    /// step whose blocks pay a fixed cost at their end, as the
    /// aggregation's block tables.
    pub(crate) fn grid_resident(&self, nrows: u32) -> u32 {
        self.grid_for(nrows).min((self.device.sm_count().max(1) as u32) * (2048 / BLOCK_SIZE))
    }

    /// Device memory in use now (total less free), in bytes: every
    /// process's, as the driver counts it.
    pub fn memory_used(&self) -> Result<u64, DeviceError> {
        self.make_current()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers; the context is current.
        self.drv.check("cuMemGetInfo", unsafe { (self.drv.cuMemGetInfo)(&mut free, &mut total) })?;
        Ok(total.saturating_sub(free) as u64)
    }

    pub(crate) fn make_current(&self) -> Result<(), DeviceError> {
        // SAFETY: ctx is a retained primary context.
        self.drv.check("cuCtxSetCurrent", unsafe { (self.drv.cuCtxSetCurrent)(self.ctx) })
    }

    /// Run a filter with a raw operator code (tests pass bad codes).
    pub fn filter_compare_raw(
        &self,
        column: &FilterColumn<'_>,
        validity: Option<&[u8]>,
        op_code: i32,
    ) -> Result<FilterResult, DeviceError> {
        let nrows = validate_filter(column, validity)?;
        if nrows == 0 {
            return Ok(FilterResult { matches: Vec::new(), nmatched: 0 });
        }
        self.make_current()?;
        let drv = self.drv;
        let (kernel, values) = match column {
            FilterColumn::Int32 { values, .. } => ("kern_filter_cmp_int32", DeviceBuffer::upload(drv, values)?),
            FilterColumn::Int64 { values, .. } => ("kern_filter_cmp_int64", DeviceBuffer::upload(drv, values)?),
            FilterColumn::Float64 { values, .. } => ("kern_filter_cmp_float64", DeviceBuffer::upload(drv, values)?),
        };
        let validity_buf =
            validity.map(|v| DeviceBuffer::upload(drv, &v[..(nrows as usize).div_ceil(8)])).transpose()?;
        let result = DeviceBuffer::alloc(drv, nrows as usize)?;
        let counters = DeviceBuffer::zeroed(drv, 8)?; // nmatched (u32), status (i32)

        let mut p_values = values.ptr;
        let mut p_validity: CuDevicePtr = validity_buf.as_ref().map_or(0, |b| b.ptr);
        let mut p_nrows = nrows;
        let mut p_op = op_code;
        let mut p_result = result.ptr;
        let mut p_nmatched = counters.ptr;
        let mut p_status = counters.ptr + 4;
        // the constant's bytes, little-endian: the driver reads as many as
        // the kernel parameter's type has (4 for int32, 8 otherwise)
        let mut konst: [u8; 8] = match column {
            FilterColumn::Int32 { constant, .. } => (*constant as u32 as u64).to_le_bytes(),
            FilterColumn::Int64 { constant, .. } => constant.to_le_bytes(),
            FilterColumn::Float64 { constant, .. } => constant.to_le_bytes(),
        };
        let p_const = konst.as_mut_ptr() as *mut c_void;
        let mut params: [*mut c_void; 8] = [
            &mut p_values as *mut _ as *mut c_void,
            &mut p_validity as *mut _ as *mut c_void,
            &mut p_nrows as *mut _ as *mut c_void,
            &mut p_op as *mut _ as *mut c_void,
            p_const,
            &mut p_result as *mut _ as *mut c_void,
            &mut p_nmatched as *mut _ as *mut c_void,
            &mut p_status as *mut _ as *mut c_void,
        ];
        // SAFETY: params point at locals of the kernel's parameter types, in
        // order; all device buffers outlive the call.
        unsafe { self.launch_and_wait(kernel, self.grid_for(nrows), &mut params)? };
        let mut counts = [0u32; 2];
        counters.download(&mut counts)?;
        let status = counts[1] as i32;
        if status != kernel_status::OK {
            let message = match status {
                kernel_status::INVALID_ARGUMENT => format!("unknown comparison operator code {op_code}"),
                other => format!("device code reported status {other}"),
            };
            return Err(DeviceError::Kernel { status, message });
        }
        let mut matches = vec![0u8; nrows as usize];
        result.download(&mut matches)?;
        Ok(FilterResult { matches, nmatched: counts[0] })
    }
}

impl Engine for GpuEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Gpu
    }

    fn describe(&self) -> String {
        format!("GPU{} ({})", self.device.ordinal, self.device.name)
    }

    fn device_index(&self) -> Option<u32> {
        u32::try_from(self.device.ordinal).ok()
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
        if nrows == 0 {
            return Ok(EvalOutput::with_rows(0, false));
        }
        self.make_current()?;
        let n = nrows as usize;
        // Lay out every input, then the outputs, in one arena.
        let mut inputs: Vec<(usize, &[u8])> = Vec::new();
        let mut at = 0usize;
        let mut place = |bytes: &[u8]| -> usize {
            let off = at;
            at = align_up(at + bytes.len().max(1));
            off
        };
        let as_bytes = |p: *const u8, len: usize| -> &[u8] {
            // SAFETY: views of live slices of plain-old-data.
            unsafe { std::slice::from_raw_parts(p, len) }
        };
        let code = as_bytes(program.code.as_ptr().cast(), std::mem::size_of_val(program.code.as_slice()));
        let code_off = place(code);
        inputs.push((code_off, code));
        let data_off = place(&program.data);
        inputs.push((data_off, &program.data));
        let mut col_offs = Vec::with_capacity(columns.len());
        for c in columns {
            let v = place(c.values);
            inputs.push((v, c.values));
            let vb = c.validity.map(|b| {
                let o = place(b);
                inputs.push((o, b));
                o
            });
            let ob = c.offsets.map(|o| {
                let bytes = as_bytes(o.as_ptr().cast(), (n + 1) * 4);
                let off = place(bytes);
                inputs.push((off, bytes));
                off
            });
            col_offs.push((v, vb, ob));
        }
        let pars = DevDatumRepr::from_params(params);
        let pars_bytes = as_bytes(pars.as_ptr().cast(), std::mem::size_of_val(pars.as_slice()));
        let pars_off = place(pars_bytes);
        inputs.push((pars_off, pars_bytes));
        let reprs_len = columns.len() * std::mem::size_of::<DevColumnRepr>();
        let reprs_off = at;
        at = align_up(at + reprs_len.max(1));
        let input_end = at;
        let values_off = at;
        let nulls_off = values_off + n * 8;
        let wide = wide_result(program);
        let wide_off = align_up(nulls_off + n);
        let error_off = align_up(wide_off + if wide { n * 16 } else { 0 });
        // then the count of made text bytes and their room
        let used_off = error_off + 8;
        let text_cap = text_capacity(program, n);
        let text_off = align_up(used_off + 8);
        let total = text_off + text_cap;

        let scratch = self.scratch(total)?;
        let (dev, host) = (scratch.dev(), scratch.host());
        let reprs: Vec<DevColumnRepr> = columns
            .iter()
            .zip(&col_offs)
            .map(|(c, (v, vb, ob))| DevColumnRepr {
                type_id: c.type_id as u32,
                source: 0,
                values: dev + *v as u64,
                validity: vb.map_or(0, |o| dev + o as u64),
                offsets: ob.map_or(0, |o| dev + o as u64),
            })
            .collect();
        let reprs_bytes = as_bytes(reprs.as_ptr().cast(), reprs_len);
        inputs.push((reprs_off, reprs_bytes));
        // SAFETY: every (offset, bytes) lies inside the `total` bytes of
        // the pinned buffer (laid out above); the error word starts as
        // all ones (no error).
        unsafe {
            for (off, bytes) in &inputs {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), host.add(*off), bytes.len());
            }
            self.drv.check("cuMemcpyHtoD", (self.drv.cuMemcpyHtoD)(dev, host as *const c_void, input_end))?;
            self.drv.check("cuMemsetD8", (self.drv.cuMemsetD8)(dev + error_off as u64, 0xff, 8))?;
            self.drv.check("cuMemsetD8", (self.drv.cuMemsetD8)(dev + used_off as u64, 0, 8))?;
        }

        let mut p_code = dev + code_off as u64;
        let mut p_ninstrs = program.code.len() as u32;
        let mut p_data = dev + data_off as u64;
        let mut p_cols = dev + reprs_off as u64;
        let mut p_ncols = reprs.len() as u32;
        let mut p_params = dev + pars_off as u64;
        let mut p_nparams = pars.len() as u32;
        let mut p_nrows = nrows;
        let mut p_result_type = program.result_type as u32;
        let mut p_values = dev + values_off as u64;
        let mut p_nulls = dev + nulls_off as u64;
        let mut p_wide = if wide { dev + wide_off as u64 } else { 0 };
        let mut p_text = if text_cap > 0 { dev + text_off as u64 } else { 0 };
        let mut p_text_cap = text_cap as u64;
        let mut p_text_used = dev + used_off as u64;
        let mut p_error = dev + error_off as u64;
        let mut kparams: [*mut c_void; 16] = [
            &mut p_code as *mut _ as *mut c_void,
            &mut p_ninstrs as *mut _ as *mut c_void,
            &mut p_data as *mut _ as *mut c_void,
            &mut p_cols as *mut _ as *mut c_void,
            &mut p_ncols as *mut _ as *mut c_void,
            &mut p_params as *mut _ as *mut c_void,
            &mut p_nparams as *mut _ as *mut c_void,
            &mut p_nrows as *mut _ as *mut c_void,
            &mut p_result_type as *mut _ as *mut c_void,
            &mut p_values as *mut _ as *mut c_void,
            &mut p_nulls as *mut _ as *mut c_void,
            &mut p_wide as *mut _ as *mut c_void,
            &mut p_text as *mut _ as *mut c_void,
            &mut p_text_cap as *mut _ as *mut c_void,
            &mut p_text_used as *mut _ as *mut c_void,
            &mut p_error as *mut _ as *mut c_void,
        ];
        // SAFETY: kparams point at locals of the kernel's parameter types, in
        // order; the arena outlives the call (we hold its lock).
        unsafe { self.launch_and_wait("kern_eval_program", self.grid_for(nrows), &mut kparams)? };
        let mut out = EvalOutput::with_rows(n, wide);
        // SAFETY: outputs and the error word lie within the arena and the
        // pinned buffer, at the same offsets.
        unsafe {
            self.drv.check(
                "cuMemcpyDtoH",
                (self.drv.cuMemcpyDtoH)(
                    host.add(values_off) as *mut c_void,
                    dev + values_off as u64,
                    text_off - values_off,
                ),
            )?;
            let err = std::ptr::read_unaligned(host.add(error_off) as *const u64);
            if err != u64::MAX {
                return Err(eval_error((err & 0xff) as i32, (err >> 8) as u32));
            }
            // (no error: every row's text fitted)
            let used = (std::ptr::read_unaligned(host.add(used_off) as *const u64) as usize).min(text_cap);
            if used > 0 {
                self.drv.check(
                    "cuMemcpyDtoH",
                    (self.drv.cuMemcpyDtoH)(host.add(text_off) as *mut c_void, dev + text_off as u64, used),
                )?;
                out.text = std::slice::from_raw_parts(host.add(text_off), used).to_vec();
            }
            std::ptr::copy_nonoverlapping(host.add(values_off) as *const i64, out.values.as_mut_ptr(), n);
            std::ptr::copy_nonoverlapping(host.add(nulls_off), out.nulls.as_mut_ptr(), n);
            if wide {
                std::ptr::copy_nonoverlapping(host.add(wide_off) as *const i64, out.wide.as_mut_ptr(), 2 * n);
            }
        }
        out.collect_cpu_rows();
        // the rows this GPU cannot compute exactly, by the CPU engine here
        if self.cpu_recompute {
            crate::engine::recompute_on_cpu(program, columns, params, &mut out)?;
        }
        Ok(out)
    }

    fn join_open<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
    ) -> Result<Box<dyn crate::join::JoinSession + 'e>, DeviceError> {
        Ok(Box::new(crate::clock::Clocked::open(|| crate::join_gpu::GpuJoin::open(self, spec))?))
    }

    fn join_open_shared<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: u64,
    ) -> Result<Box<dyn crate::join::JoinSession + 'e>, DeviceError> {
        Ok(Box::new(crate::clock::Clocked::open(|| crate::join_gpu::GpuJoin::open_shared(self, spec, key))?))
    }

    fn join_attach<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: u64,
    ) -> Result<Option<Box<dyn crate::join::JoinSession + 'e>>, DeviceError> {
        let s = crate::clock::Clocked::open_if(|| crate::join_gpu::GpuJoin::attach(self, spec, key))?;
        Ok(s.map(|s| Box::new(s) as Box<dyn crate::join::JoinSession + 'e>))
    }

    fn join_cache_keep(
        &self,
        spec: &crate::join::JoinSpec<'_>,
        share: u64,
        key: &[u8],
        rows: &[u8],
    ) -> Result<bool, DeviceError> {
        Ok(crate::join_gpu::GpuJoin::cache_keep(self, spec, share, key, rows))
    }

    fn join_cache_rows(&self, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        Ok(self.shared_joins.cache_rows(key).map(|r| f(&r)).is_some())
    }

    fn join_cache_rows_kept(&self, key: &[u8]) -> Option<std::sync::Arc<Vec<u8>>> {
        self.shared_joins.cache_rows(key)
    }

    fn join_open_cached<'e>(
        &'e self,
        spec: &crate::join::JoinSpec<'_>,
        key: &[u8],
        share: u64,
    ) -> Result<Option<Box<dyn crate::join::JoinSession + 'e>>, DeviceError> {
        let s = crate::clock::Clocked::open_if(|| crate::join_gpu::GpuJoin::open_cached(self, spec, key, share))?;
        Ok(s.map(|s| Box::new(s) as Box<dyn crate::join::JoinSession + 'e>))
    }
}

impl Drop for GpuEngine {
    fn drop(&mut self) {
        if self.make_current().is_ok() {
            self.release_buffers();
        }
    }
}

impl GpuEngine {
    /// A device buffer of at least `bytes` for a join session: an idle one
    /// of the pool when it has one of that size class, else a new one.
    /// The GPU's context is current.
    pub(crate) fn buffer(&self, bytes: usize) -> Result<PooledBuffer<'_>, DeviceError> {
        let size = bytes.max(1).next_power_of_two().max(4096);
        let found = {
            let mut idle = self.idle_buffers.lock().unwrap_or_else(|p| p.into_inner());
            idle.iter().position(|b| b.size == size).map(|i| idle.swap_remove(i))
        };
        let (ptr, res) = match found {
            Some(b) => (b.ptr, b.res),
            None => device_alloc(self.drv, size)?,
        };
        Ok(PooledBuffer { eng: self, ptr, size, res: Some(res) })
    }

    /// As [`Self::buffer`], its first `bytes` zeroed.
    pub(crate) fn buffer_zeroed(&self, bytes: usize) -> Result<PooledBuffer<'_>, DeviceError> {
        let b = self.buffer(bytes)?;
        // SAFETY: within the allocation.
        self.drv.check("cuMemsetD8", unsafe { (self.drv.cuMemsetD8)(b.ptr, 0, bytes.max(1)) })?;
        Ok(b)
    }

    /// Free every idle pooled buffer (the memory budget ran short).
    pub fn release_buffers(&self) {
        let idle = std::mem::take(&mut *self.idle_buffers.lock().unwrap_or_else(|p| p.into_inner()));
        for b in idle {
            self.free_idle(b);
        }
    }

    /// Free the scratch arenas no request holds now (the memory budget
    /// ran short); requests make new ones as they need them.
    pub fn release_scratch(&self) {
        let idle = std::mem::take(&mut *self.scratch.lock().unwrap_or_else(|p| p.into_inner()));
        for mut s in idle {
            self.free_scratch(&mut s);
        }
    }

    fn free_idle(&self, b: IdleBuffer) {
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Alloc);
        // SAFETY: a buffer of cuMemAlloc no session uses; its reservation
        // goes after the memory.
        unsafe { (self.drv.cuMemFree)(b.ptr) };
        drop(b.res);
    }

    /// A scratch arena of at least `bytes` (device memory and a pinned
    /// staging buffer) from the engine's pool, given back when dropped.
    pub(crate) fn scratch(&self, bytes: usize) -> Result<ScratchGuard<'_>, DeviceError> {
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Alloc);
        // the smallest arena that is large enough; else a new one, so
        // that the smaller ones stay for the requests they fit (growing
        // one frees it, a `cuMemFree` that waits for the whole device, and
        // requests of two sizes would take turns at that); only when the
        // idle arenas hold IDLE_SCRATCH_BYTES already, the largest, grown
        let s = {
            let mut pool = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
            let fits = pool.iter().enumerate().filter(|(_, s)| s.size >= bytes).min_by_key(|(_, s)| s.size);
            let idle: usize = pool.iter().map(|s| s.size).sum();
            let pick = fits
                .or_else(|| {
                    (idle >= IDLE_SCRATCH_BYTES).then(|| pool.iter().enumerate().max_by_key(|(_, s)| s.size)).flatten()
                })
                .map(|(i, _)| i);
            pick.map_or(Scratch::EMPTY, |i| pool.swap_remove(i))
        };
        let mut g = ScratchGuard { pool: &self.scratch, s };
        self.ensure_scratch(&mut g.s, bytes)?;
        Ok(g)
    }

    /// Make `g` at least `bytes` long (its contents are lost when it
    /// grows).
    pub(crate) fn grow_scratch(&self, g: &mut ScratchGuard<'_>, bytes: usize) -> Result<(), DeviceError> {
        self.ensure_scratch(&mut g.s, bytes)
    }

    /// Make the arena and the staging buffer at least `bytes` long.
    fn ensure_scratch(&self, scratch: &mut Scratch, bytes: usize) -> Result<(), DeviceError> {
        if scratch.size >= bytes {
            return Ok(());
        }
        let _clock = crate::clock::Timer::start(crate::clock::Phase::Alloc);
        let size = bytes.next_power_of_two();
        self.free_scratch(scratch);
        let drv = self.drv;
        let (dev, res) = device_alloc(drv, size)?;
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointers; freed by free_scratch.
        unsafe {
            if let Err(e) = drv.check("cuMemHostAlloc", (drv.cuMemHostAlloc)(&mut host, size, 0)) {
                (drv.cuMemFree)(dev);
                return Err(e);
            }
        }
        *scratch = Scratch { dev, host: host.cast(), size, _res: res };
        Ok(())
    }

    fn free_scratch(&self, scratch: &mut Scratch) {
        // SAFETY: the pointers came from cuMemAlloc / cuMemHostAlloc.
        unsafe {
            if scratch.dev != 0 {
                (self.drv.cuMemFree)(scratch.dev);
            }
            if !scratch.host.is_null() {
                (self.drv.cuMemFreeHost)(scratch.host.cast());
            }
        }
        *scratch = Scratch::EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Device allocations reserve their bytes in the GPU's pool: one that
    /// does not fit waits until another buffer is freed, one larger than
    /// the budget fails at once, and freeing gives the bytes back.  Needs
    /// a GPU (PGSTROM_EXPECT_GPU=1); this test process's only pool.
    #[test]
    fn device_memory_waits_for_the_budget() {
        if std::env::var("PGSTROM_EXPECT_GPU").as_deref() != Ok("1") {
            return;
        }
        let drv = cuda::driver().unwrap();
        let (mut dev, mut ctx) = (0, std::ptr::null_mut());
        // SAFETY: valid out-pointers.
        unsafe {
            drv.check("cuDeviceGet", (drv.cuDeviceGet)(&mut dev, 0)).unwrap();
            drv.check("cuDevicePrimaryCtxRetain", (drv.cuDevicePrimaryCtxRetain)(&mut ctx, dev)).unwrap();
            drv.check("cuCtxSetCurrent", (drv.cuCtxSetCurrent)(ctx)).unwrap();
        }
        let pool = mempool::configure(0, 64 << 20).unwrap();
        let a = DeviceBuffer::alloc(drv, 48 << 20).unwrap();
        assert_eq!(pool.stats().reserved, 48 << 20);
        let ctx_addr = ctx as usize;
        let waiter = std::thread::spawn(move || {
            // SAFETY: the test's context.
            unsafe { (drv.cuCtxSetCurrent)(ctx_addr as CuContext) };
            let t = std::time::Instant::now();
            let b = DeviceBuffer::alloc(drv, 32 << 20).map(|b| b.ptr);
            (b, t.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(a);
        let (b, waited) = waiter.join().unwrap();
        assert!(b.is_ok() && waited >= Duration::from_millis(250), "{b:?} after {waited:?}");
        let err = DeviceBuffer::alloc(drv, 65 << 20).err().unwrap().to_string();
        assert!(err.contains("more than the GPU's budget of 64 MB"), "{err}");
        let s = pool.stats();
        assert_eq!((s.reserved, s.waits, s.failures), (0, 1, 1), "{s:?}");
        assert_eq!(s.peak, 48 << 20);
    }
}
