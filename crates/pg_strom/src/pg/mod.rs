//! Helpers over PostgreSQL's C API that every module uses and that know
//! nothing of pg_strom's nodes: Lists, memory contexts, EXPLAIN
//! properties, and the planner's parallel-cost rules.  The lowest layer
//! of the extension: it imports only `errors`.

pub mod cost;
pub mod explain;
pub mod list;
pub mod memctx;
