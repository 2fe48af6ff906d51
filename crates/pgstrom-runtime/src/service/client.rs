//! The backend side: [`ServiceEngine`] implements [`Engine`] by sending
//! each request to the GPU service.  One connection per engine and process
//! (a backend or a parallel worker), opened on first use and kept; when
//! the service goes away the connection is dropped, the request fails with
//! [`DeviceError::ServiceLost`], and the next request connects again (to
//! the restarted service).  Join sessions opened before a restart fail the
//! same way instead of talking to a service that never saw them.

use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::shm::{Header, MAGIC, Region, Socket};
use super::wire::{self, Reader, Writer};
use super::{CPU_ENGINE, PROTOCOL_VERSION, ServiceInfo, op, status};
use crate::agg::AggGroups;
use crate::engine::{
    ColumnData, CompareOp, Engine, EngineKind, EvalOutput, FilterColumn, FilterResult, ParamValue, Pending,
    validate_eval,
};
use crate::error::DeviceError;
use crate::join::{Combos, JoinSession, JoinSpec, Probed};
use crate::program::Program;

/// The first shared region of a connection (grown on demand).
const INITIAL_REGION: usize = 8 << 20;

/// How often a client waiting for an answer asks whether to stop.
const POLL_MS: i32 = 50;

/// Asked while waiting for an answer: true stops waiting
/// ([`DeviceError::Interrupted`]; the connection is dropped, since its
/// answer is still to come).  Set by the process (a backend checks its
/// pending interrupts); never set, waits are not interrupted.
static INTERRUPT_CHECK: std::sync::OnceLock<fn() -> bool> = std::sync::OnceLock::new();

/// Install the interrupt check (once per process).
pub fn set_interrupt_check(f: fn() -> bool) {
    let _ = INTERRUPT_CHECK.set(f);
}

/// Whether the process's interrupt check says to stop waiting (false
/// where none is installed).
pub fn interrupted() -> bool {
    INTERRUPT_CHECK.get().is_some_and(|check| check())
}

/// One connection to the service.
struct Client {
    sock: Socket,
    region: Region,
    /// The region is new: its descriptor goes with the next request.
    send_region: bool,
    /// A file descriptor to go with the next request (FILE_OPEN).
    file: Option<RawFd>,
    info: ServiceInfo,
    /// The ticket of the request whose answer has not been read yet (one
    /// at most: the answer is written into the region the next request
    /// would overwrite).
    outstanding: Option<u64>,
    /// Answers read before their requester asked for them (a request was
    /// sent meanwhile): (ticket, status, payload).
    early: Vec<(u64, u32, Vec<u8>)>,
}

/// Tickets of requests under way, unique in the process (a ticket of a
/// dropped connection never matches one of a later connection).
static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

/// Answers read early that are kept for their requester; older ones are
/// dropped (their requester ended with an ERROR and will not ask).
const EARLY_KEPT: usize = 8;

impl Client {
    /// Connect and say hello, retrying until `wait` has passed while the
    /// service is not there or goes away during the hello: a killed
    /// service's socket can still accept for a moment while the process
    /// is torn down (a CUDA context takes a while), and the keeper starts
    /// a new one within a second or so.
    fn connect(path: &Path, engine: u32, wait: Duration) -> Result<Client, DeviceError> {
        let deadline = Instant::now() + wait;
        loop {
            let e = match Self::connect_once(path, engine) {
                Ok(c) => return Ok(c),
                Err(e @ (DeviceError::Service(_) | DeviceError::ServiceLost(_))) => e,
                Err(e) => return Err(e),
            };
            if Instant::now() >= deadline {
                return Err(e);
            }
            if interrupted() {
                return Err(DeviceError::Interrupted);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Connect as a client of `engine`: a GPU's connection hears the
    /// service's state once its GPUs are open (waiting while the service
    /// opens them), the CPU engine's at once.
    fn connect_once(path: &Path, engine: u32) -> Result<Client, DeviceError> {
        let sock = Socket::connect(path)
            .map_err(|e| DeviceError::Service(format!("cannot connect to the GPU service: {e}")))?;
        let region = Region::create(INITIAL_REGION)?;
        let mut c = Client {
            sock,
            region,
            send_region: true,
            file: None,
            info: ServiceInfo::default(),
            outstanding: None,
            early: Vec::new(),
        };
        c.info = c.call(
            op::HELLO,
            engine,
            0,
            |w| {
                w.u32(PROTOCOL_VERSION);
                Ok(())
            },
            ServiceInfo::get,
        )?;
        Ok(c)
    }

    /// One request and its answer.  Errors of the transport are
    /// [`DeviceError::Service`] / [`DeviceError::ServiceLost`]; errors the
    /// service answered are any other variant.
    fn call<T>(
        &mut self,
        opcode: u32,
        engine: u32,
        session: u32,
        encode: impl Fn(&mut Writer<'_>) -> Result<(), DeviceError>,
        decode: impl FnOnce(&mut Reader<'_>) -> Result<T, DeviceError>,
    ) -> Result<T, DeviceError> {
        let ticket = self.send(opcode, engine, session, encode)?;
        self.receive(ticket, decode)
    }

    /// Send a request; its ticket for [`Self::receive`].  The payload is
    /// copied into the region, so the caller's buffers are free again
    /// when this returns.  An answer still unread is read first and kept.
    fn send(
        &mut self,
        opcode: u32,
        engine: u32,
        session: u32,
        encode: impl Fn(&mut Writer<'_>) -> Result<(), DeviceError>,
    ) -> Result<u64, DeviceError> {
        if let Some(t) = self.outstanding.take() {
            let (status, len) = self.read_answer()?;
            let payload = self.region.bytes()[..len].to_vec();
            if self.early.len() >= EARLY_KEPT {
                self.early.remove(0);
            }
            self.early.push((t, status, payload));
        }
        let file = self.file.take();
        let mut w = Writer::new(self.region.bytes_mut());
        encode(&mut w)?;
        let (mut len, overflowed) = (w.len(), w.overflowed());
        if overflowed {
            let mut bigger = Region::create(len.next_power_of_two())?;
            let mut w = Writer::new(bigger.bytes_mut());
            encode(&mut w)?;
            len = w.len();
            self.region = bigger;
            self.send_region = true;
        }
        let h = Header {
            magic: MAGIC,
            op: opcode,
            engine,
            session,
            len: len as u64,
            region: if self.send_region { self.region.size() as u64 } else { 0 },
        };
        if file.is_some() && self.send_region {
            return Err(DeviceError::InvalidRequest("a file cannot go with a request that hands over a region".into()));
        }
        self.sock.send(&h, if self.send_region { Some(self.region.fd()) } else { file })?;
        self.send_region = false;
        let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
        self.outstanding = Some(ticket);
        Ok(ticket)
    }

    /// The answer to the request of `ticket`, decoded.
    fn receive<T>(
        &mut self,
        ticket: u64,
        decode: impl FnOnce(&mut Reader<'_>) -> Result<T, DeviceError>,
    ) -> Result<T, DeviceError> {
        if let Some(i) = self.early.iter().position(|e| e.0 == ticket) {
            let (_, status, payload) = self.early.remove(i);
            return Self::decode_answer(status, &payload, decode);
        }
        if self.outstanding != Some(ticket) {
            return Err(DeviceError::ServiceLost("the connection a request was sent on was lost".into()));
        }
        let (status, len) = self.read_answer()?;
        self.outstanding = None;
        Self::decode_answer(status, &self.region.bytes()[..len], decode)
    }

    /// Wait for the answer to the request sent last (polling the
    /// interrupt check) and take over a new region if it brings one: its
    /// status and length.
    fn read_answer(&mut self) -> Result<(u32, usize), DeviceError> {
        if let Some(check) = INTERRUPT_CHECK.get() {
            while !self.sock.wait_readable(POLL_MS)? {
                if check() {
                    return Err(DeviceError::Interrupted);
                }
            }
        }
        let (rh, fd) = self.sock.recv()?;
        if let Some(fd) = fd {
            self.region = Region::map(fd, rh.region as usize)?;
        }
        let len = usize::try_from(rh.len).ok().filter(|&l| l <= self.region.size());
        let len = len.ok_or_else(|| DeviceError::Service("answer longer than the shared region".into()))?;
        Ok((rh.op, len))
    }

    fn decode_answer<T>(
        status: u32,
        payload: &[u8],
        decode: impl FnOnce(&mut Reader<'_>) -> Result<T, DeviceError>,
    ) -> Result<T, DeviceError> {
        let mut r = Reader::new(payload);
        match status {
            status::OK => decode(&mut r),
            status::ERROR => Err(wire::get_error(&mut r)?),
            other => Err(DeviceError::Service(format!("unknown reply status {other}"))),
        }
    }
}

/// An engine of the GPU service (a GPU, or the CPU engine run there).
pub struct ServiceEngine {
    path: PathBuf,
    engine: u32,
    wait: Duration,
    conn: Mutex<Option<Client>>,
    /// Bumped whenever a connection is dropped.
    generation: AtomicU64,
}

impl ServiceEngine {
    /// JOIN_CACHE_ROWS or JOIN_CACHE_SUMMARY: `f` is handed the kept rows
    /// (or their summary) where the answer lies, not copied; false when
    /// none are kept under `key`.
    fn cached_rows(&self, op: u32, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        self.with(|c| {
            c.call(
                op,
                self.engine,
                0,
                |w| {
                    w.blob(key);
                    Ok(())
                },
                |r| Ok(r.opt(|r| r.blob())?.map(&mut *f).is_some()),
            )
        })
    }

    /// GPU `index` of the service listening at `path` (`index` =
    /// [`CPU_ENGINE`] for its CPU engine).  Connecting waits up to `wait`
    /// for the service to listen (it may be starting or restarting).
    pub const fn new(path: PathBuf, index: u32, wait: Duration) -> ServiceEngine {
        ServiceEngine { path, engine: index, wait, conn: Mutex::new(None), generation: AtomicU64::new(0) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Client) -> Result<T, DeviceError>) -> Result<T, DeviceError> {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(Client::connect(&self.path, self.engine, self.wait)?);
        }
        let result = f(guard.as_mut().expect("connected above"));
        if let Err(
            DeviceError::Service(_)
            | DeviceError::ServiceLost(_)
            | DeviceError::DeviceLost { .. }
            | DeviceError::Interrupted,
        ) = &result
        {
            // the connection is unusable: the next request opens a new one
            *guard = None;
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// What the service says about itself (connecting if needed).
    pub fn info(&self) -> Result<ServiceInfo, DeviceError> {
        self.with(|c| c.call(op::STATUS, 0, 0, |_| Ok(()), ServiceInfo::get))
    }

    /// The GPU a scan should run on: the least-loaded usable GPU among
    /// `wanted` (every usable GPU when `wanted` has none); an error when
    /// the service has no usable GPU.
    pub fn place(&self, wanted: &[u32]) -> Result<u32, DeviceError> {
        self.with(|c| {
            c.call(
                op::PLACE,
                0,
                0,
                |w| {
                    w.u64(wanted.len() as u64);
                    wanted.iter().for_each(|g| w.u32(*g));
                    Ok(())
                },
                |r| r.u32(),
            )
        })
    }

    /// What the service said about itself when this engine connected
    /// (connecting if needed): its GPUs do not change while it runs.
    pub fn hello_info(&self) -> Result<ServiceInfo, DeviceError> {
        self.with(|c| Ok(c.info.clone()))
    }

    /// Make this engine's GPU fault after `after_launches` more kernel
    /// launches (see `GpuEngine::arm_fault`); an error for the CPU engine.
    pub fn inject_fault(&self, after_launches: u32) -> Result<(), DeviceError> {
        self.with(|c| {
            c.call(
                op::INJECT_FAULT,
                self.engine,
                0,
                |w| {
                    w.u32(after_launches);
                    Ok(())
                },
                |_| Ok(()),
            )
        })
    }

    /// Make sure a connection is open and the engine usable: the GPU was
    /// opened by the service (or this is its CPU engine).
    pub fn check(&self) -> Result<(), DeviceError> {
        self.with(|c| {
            if self.engine == CPU_ENGINE {
                return Ok(());
            }
            match c.info.gpus.get(self.engine as usize) {
                Some(Ok(_)) => Ok(()),
                Some(Err(why)) => Err(DeviceError::Remote {
                    message: format!("the GPU service could not open GPU{}: {why}", self.engine),
                    hint: None,
                }),
                None => Err(DeviceError::Unavailable(format!("the GPU service has no GPU{}", self.engine))),
            }
        })
    }
}

impl Engine for ServiceEngine {
    fn kind(&self) -> EngineKind {
        if self.engine == CPU_ENGINE { EngineKind::Cpu } else { EngineKind::Gpu }
    }

    fn describe(&self) -> String {
        if self.engine == CPU_ENGINE {
            return "none (CPU engine in the GPU service)".into();
        }
        let d = self.with(|c| Ok(c.info.gpus.get(self.engine as usize).cloned()));
        match d {
            Ok(Some(Ok(d))) => d,
            Ok(Some(Err(why))) => format!("GPU{} (unavailable: {why})", self.engine),
            Ok(None) => format!("GPU{} (not in the GPU service)", self.engine),
            Err(e) => format!("GPU{} ({e})", self.engine),
        }
    }

    fn device_index(&self) -> Option<u32> {
        (self.engine != CPU_ENGINE).then_some(self.engine)
    }

    fn gpudirect(&self) -> Option<crate::cufile::Mode> {
        if self.engine == CPU_ENGINE {
            return None;
        }
        self.with(|c| Ok(c.info.gpudirect.clone())).ok().flatten().and_then(|r| r.ok())
    }

    fn filter_compare(
        &self,
        column: &FilterColumn<'_>,
        validity: Option<&[u8]>,
        op: CompareOp,
    ) -> Result<FilterResult, DeviceError> {
        self.with(|c| {
            c.call(
                op::FILTER,
                self.engine,
                0,
                |w| {
                    match column {
                        FilterColumn::Int32 { values, constant } => {
                            w.u8(0);
                            w.slice(values);
                            w.i64(*constant as i64);
                        }
                        FilterColumn::Int64 { values, constant } => {
                            w.u8(1);
                            w.slice(values);
                            w.i64(*constant);
                        }
                        FilterColumn::Float64 { values, constant } => {
                            w.u8(2);
                            w.slice(values);
                            w.i64(constant.to_bits() as i64);
                        }
                    }
                    w.opt(validity, |w, v| w.blob(v));
                    w.u32(CompareOp::ALL.iter().position(|o| *o == op).unwrap_or(0) as u32);
                    Ok(())
                },
                wire::get_filter_result,
            )
        })
    }

    fn eval_program(
        &self,
        program: &Program,
        columns: &[ColumnData<'_>],
        params: &[ParamValue],
        nrows: u32,
    ) -> Result<EvalOutput, DeviceError> {
        // one program: the multi-program request with one
        let mut outs = self.eval_end(self.eval_begin(&[program], columns, params, nrows))?;
        match (outs.pop(), outs.is_empty()) {
            (Some(out), true) => Ok(out),
            _ => Err(DeviceError::Service("the service answered one evaluation with another count".into())),
        }
    }

    fn eval_begin(
        &self,
        programs: &[&Program],
        columns: &[ColumnData<'_>],
        params: &[ParamValue],
        nrows: u32,
    ) -> Pending<Vec<EvalOutput>> {
        // the service checks again; checking here keeps bad requests local
        for p in programs {
            if let Err(e) = validate_eval(p, columns, params, nrows) {
                return Pending::Done(Err(e));
            }
        }
        let sent = self.with(|c| {
            c.send(op::EVAL_MULTI, self.engine, 0, |w| {
                w.u32(programs.len() as u32);
                for p in programs {
                    wire::put_program(w, p)?;
                }
                wire::put_params(w, params);
                w.u32(nrows);
                wire::put_columns(w, columns, nrows);
                Ok(())
            })
        });
        match sent {
            Ok(ticket) => Pending::Sent(ticket),
            Err(e) => Pending::Done(Err(e)),
        }
    }

    fn eval_end(&self, pending: Pending<Vec<EvalOutput>>) -> Result<Vec<EvalOutput>, DeviceError> {
        match pending {
            Pending::Done(r) => r,
            Pending::Sent(ticket) => self.with(|c| {
                c.receive(ticket, |r| {
                    let n = r.u32()? as usize;
                    (0..n).map(|_| wire::get_eval_output(r)).collect()
                })
            }),
        }
    }

    fn join_open<'e>(&'e self, spec: &JoinSpec<'_>) -> Result<Box<dyn JoinSession + 'e>, DeviceError> {
        self.join_open_shared(spec, 0)
    }

    fn shared_by_processes(&self) -> bool {
        true
    }

    fn join_open_shared<'e>(&'e self, spec: &JoinSpec<'_>, key: u64) -> Result<Box<dyn JoinSession + 'e>, DeviceError> {
        let (id, bytes) = self.join_request(op::JOIN_OPEN, spec, key, None)?;
        Ok(Box::new(self.remote_join(id, bytes)))
    }

    fn join_attach<'e>(
        &'e self,
        spec: &JoinSpec<'_>,
        key: u64,
    ) -> Result<Option<Box<dyn JoinSession + 'e>>, DeviceError> {
        let (id, bytes) = self.join_request(op::JOIN_ATTACH, spec, key, None)?;
        Ok((id != 0).then(|| Box::new(self.remote_join(id, bytes)) as Box<dyn JoinSession + 'e>))
    }

    fn join_cache_keep(&self, spec: &JoinSpec<'_>, share: u64, key: &[u8], rows: &[u8]) -> Result<bool, DeviceError> {
        self.with(|c| {
            c.call(
                op::JOIN_CACHE_KEEP,
                self.engine,
                0,
                |w| {
                    w.u64(share);
                    w.blob(key);
                    w.blob(rows);
                    wire::put_join_spec(w, spec)
                },
                |r| Ok(r.u32()? != 0),
            )
        })
    }

    fn join_cache_rows(&self, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        self.cached_rows(op::JOIN_CACHE_ROWS, key, f)
    }

    fn join_cache_summary(&self, key: &[u8], f: &mut dyn FnMut(&[u8])) -> Result<bool, DeviceError> {
        self.cached_rows(op::JOIN_CACHE_SUMMARY, key, f)
    }

    fn join_open_cached<'e>(
        &'e self,
        spec: &JoinSpec<'_>,
        key: &[u8],
        share: u64,
    ) -> Result<Option<Box<dyn JoinSession + 'e>>, DeviceError> {
        let (id, bytes) = self.join_request(op::JOIN_OPEN_CACHED, spec, share, Some(key))?;
        Ok((id != 0).then(|| Box::new(self.remote_join(id, bytes)) as Box<dyn JoinSession + 'e>))
    }
}

impl ServiceEngine {
    /// JOIN_OPEN, JOIN_ATTACH or JOIN_OPEN_CACHED (with `cache_key`) of
    /// `spec` under share key `key` (0: none): the session number (0: no
    /// build to attach to) and its inner bytes.
    fn join_request(
        &self,
        request: u32,
        spec: &JoinSpec<'_>,
        key: u64,
        cache_key: Option<&[u8]>,
    ) -> Result<(u32, u64), DeviceError> {
        self.with(|c| {
            c.call(
                request,
                self.engine,
                0,
                |w| {
                    w.u64(key);
                    if let Some(ck) = cache_key {
                        w.blob(ck);
                    }
                    wire::put_join_spec(w, spec)
                },
                |r| Ok((r.u32()?, r.u64()?)),
            )
        })
    }

    /// The backend's handle of service session `id`.
    fn remote_join(&self, id: u32, bytes: u64) -> RemoteJoin<'_> {
        RemoteJoin {
            eng: self,
            id,
            generation: self.generation.load(Ordering::Relaxed),
            inner_bytes: bytes as usize,
            agg_pending: false,
            store_rows: None,
        }
    }
}

/// A join session held by the service.
struct RemoteJoin<'e> {
    eng: &'e ServiceEngine,
    id: u32,
    generation: u64,
    inner_bytes: usize,
    /// The probe under way aggregates (its answer is groups).
    agg_pending: bool,
    /// The chunks are rows of a GPU store table: sent with each probe.
    store_rows: Option<crate::devstore::StoreRows>,
}

impl RemoteJoin<'_> {
    /// An error when the connection that loaded the session is gone (the
    /// service restarted: it never saw this session).
    fn connected(&self) -> Result<(), DeviceError> {
        if self.eng.generation.load(Ordering::Relaxed) != self.generation {
            return Err(DeviceError::ServiceLost(
                "the connection that loaded the join's inner relations was lost".into(),
            ));
        }
        Ok(())
    }

    fn call<T>(
        &self,
        opcode: u32,
        encode: impl Fn(&mut Writer<'_>) -> Result<(), DeviceError>,
        decode: impl FnOnce(&mut Reader<'_>) -> Result<T, DeviceError>,
    ) -> Result<T, DeviceError> {
        self.connected()?;
        self.eng.with(|c| c.call(opcode, self.eng.engine, self.id, encode, decode))
    }

    fn put_probe(
        w: &mut Writer<'_>,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
        store: Option<&crate::devstore::StoreRows>,
    ) {
        w.u32(nrows);
        w.opt(selection, |w, s| w.slice(s));
        w.opt(store, wire::put_store_rows);
        wire::put_columns(w, outer, nrows);
    }
}

impl JoinSession for RemoteJoin<'_> {
    fn probe(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<Combos, DeviceError> {
        crate::engine::validate_columns_in(outer, nrows, crate::engine::Holds::File)?;
        self.call(
            op::JOIN_PROBE,
            |w| {
                Self::put_probe(w, outer, nrows, selection, self.store_rows.as_ref());
                Ok(())
            },
            wire::get_combos,
        )
    }

    fn unmatched(&mut self) -> Result<Combos, DeviceError> {
        self.call(op::JOIN_UNMATCHED, |_| Ok(()), wire::get_combos)
    }

    fn reset_matched(&mut self) -> Result<(), DeviceError> {
        self.call(op::JOIN_RESET, |_| Ok(()), |_| Ok(()))
    }

    /// The service saves a session's matched rows itself before each
    /// request of the heap direct path (the only answers a backend drops).
    fn save_matched(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }

    fn restore_matched(&mut self) -> Result<(), DeviceError> {
        self.call(op::JOIN_RESTORE_MATCHED, |_| Ok(()), |_| Ok(()))
    }

    fn matched_bits(&mut self) -> Result<Vec<Vec<u64>>, DeviceError> {
        self.call(op::JOIN_MATCHED_BITS, |_| Ok(()), wire::get_bit_lists)
    }

    fn merge_matched(&mut self, bits: &[Vec<u64>]) -> Result<(), DeviceError> {
        self.call(
            op::JOIN_MERGE_MATCHED,
            |w| {
                wire::put_bit_lists(w, bits);
                Ok(())
            },
            |_| Ok(()),
        )
    }

    fn inner_bytes(&self) -> usize {
        self.inner_bytes
    }

    fn probe_agg(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
    ) -> Result<AggGroups, DeviceError> {
        crate::engine::validate_columns_in(outer, nrows, crate::engine::Holds::File)?;
        self.call(
            op::JOIN_PROBE_AGG,
            |w| {
                Self::put_probe(w, outer, nrows, selection, self.store_rows.as_ref());
                Ok(())
            },
            wire::get_groups,
        )
    }

    fn unmatched_agg(&mut self) -> Result<AggGroups, DeviceError> {
        self.call(op::JOIN_UNMATCHED_AGG, |_| Ok(()), wire::get_groups)
    }

    fn probe_begin(
        &mut self,
        outer: &[ColumnData<'_>],
        nrows: u32,
        selection: Option<&[u32]>,
        agg: bool,
    ) -> Pending<Probed> {
        if let Err(e) = crate::engine::validate_columns_in(outer, nrows, crate::engine::Holds::File) {
            return Pending::Done(Err(e));
        }
        if let Err(e) = self.connected() {
            return Pending::Done(Err(e));
        }
        let opcode = if agg { op::JOIN_PROBE_AGG } else { op::JOIN_PROBE };
        let sent = self.eng.with(|c| {
            c.send(opcode, self.eng.engine, self.id, |w| {
                Self::put_probe(w, outer, nrows, selection, self.store_rows.as_ref());
                Ok(())
            })
        });
        match sent {
            Ok(ticket) => {
                self.agg_pending = agg;
                Pending::Sent(ticket)
            }
            Err(e) => Pending::Done(Err(e)),
        }
    }

    fn probe_end(&mut self, pending: Pending<Probed>) -> Result<Probed, DeviceError> {
        match pending {
            Pending::Done(r) => r,
            Pending::Sent(ticket) if self.agg_pending => {
                self.eng.with(|c| c.receive(ticket, wire::get_groups)).map(Probed::Groups)
            }
            Pending::Sent(ticket) => self.eng.with(|c| c.receive(ticket, wire::get_combos)).map(Probed::Combos),
        }
    }

    fn open_file(
        &mut self,
        file: &std::fs::File,
        policy: &crate::fileread::Policy,
    ) -> Result<Option<(u32, crate::fileread::FileAccess)>, DeviceError> {
        self.connected()?;
        let fd = file.as_raw_fd();
        self.eng
            .with(|c| {
                c.file = Some(fd);
                c.call(
                    op::FILE_OPEN,
                    self.eng.engine,
                    self.id,
                    |w| {
                        wire::put_policy(w, policy);
                        Ok(())
                    },
                    |r| Ok((r.u32()?, wire::get_file_access(r)?)),
                )
            })
            .map(Some)
    }

    fn probe_heap(
        &mut self,
        file: u32,
        layout: &crate::heapscan::HeapLayout,
        blocks: &[u32],
        agg: bool,
    ) -> Result<crate::heapscan::HeapProbed, DeviceError> {
        layout.widths()?;
        self.call(
            op::JOIN_PROBE_HEAP,
            |w| {
                w.u32(file);
                w.u8(agg as u8);
                wire::put_heap_layout(w, layout);
                w.slice(blocks);
                Ok(())
            },
            wire::get_heap_probed,
        )
    }

    fn file_stats(&mut self) -> Result<Option<crate::fileread::ReadStats>, DeviceError> {
        self.connected()?;
        self.call(
            op::FILE_STATS,
            |_| Ok(()),
            |r| {
                Ok(Some(crate::fileread::ReadStats {
                    cufile_bytes: r.u64()?,
                    pinned_bytes: r.u64()?,
                    cached_bytes: r.u64()?,
                }))
            },
        )
    }

    fn take_clock(&mut self) -> Result<crate::clock::DeviceClock, DeviceError> {
        self.call(op::JOIN_CLOCK, |_| Ok(()), wire::get_clock)
    }

    fn store_sync(
        &mut self,
        batch: &crate::devstore::StoreSync<'_>,
    ) -> Result<Option<crate::devstore::StoreState>, DeviceError> {
        batch.validate()?;
        self.call(
            op::STORE_SYNC,
            |w| {
                wire::put_store_sync(w, batch);
                Ok(())
            },
            wire::get_store_state,
        )
    }

    fn set_store_rows(&mut self, rows: Option<crate::devstore::StoreRows>) -> Result<(), DeviceError> {
        self.store_rows = rows;
        Ok(())
    }
}

impl Drop for RemoteJoin<'_> {
    fn drop(&mut self) {
        if self.eng.generation.load(Ordering::Relaxed) == self.generation {
            // a failure here only means the service is gone, and the
            // session with it
            let _ = self.call(op::JOIN_CLOSE, |_| Ok(()), |_| Ok(()));
        }
    }
}
