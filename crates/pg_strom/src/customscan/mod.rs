//! What every device node (GpuScan, GpuJoin, GpuPreAgg) shares above the
//! PostgreSQL helpers of [`crate::pg`]: the cost model's view of the
//! relations they read ([`cost`]), the one encoding of plan-private state
//! ([`private`]), hoisted parameters ([`params`]), the executor life and
//! parallel DSM callbacks ([`node`]) with the EXPLAIN ANALYZE counters
//! ([`counters`]), the EXPLAIN fields about GPUs ([`explain`]), and the
//! split of a relation's quals between the device and the host ([`quals`]).
//! Node folders import from here, never from each other's internals.

pub mod cost;
pub mod counters;
pub mod explain;
pub mod node;
pub mod params;
pub mod private;
pub mod quals;
