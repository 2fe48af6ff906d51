//! What EXPLAIN says of GPUDirect SQL for an Arrow_Fdw table whose columns
//! the GPU service reads itself (GpuJoin / GpuPreAgg): whether cuFile
//! reads the files (`GPU Preference: GPU0 (...) with GPUDirect SQL`), and
//! with ANALYZE how many bytes each storage path moved (`Storage Read`).
//! The reads themselves are the runtime's (fileread.rs); the policy comes
//! from `pg_strom.gpudirect` and `pg_strom.gpudirect_threshold`.

use pgstrom_runtime::Engine;

use super::reader::ArrowReader;
use crate::pg::explain::size_text;

/// Whether the engine reads `reader`'s files with cuFile: as the service
/// said when the files were handed over (a query that ran), or as the
/// settings and the service's cuFile mode let expect (EXPLAIN alone).
pub fn gpudirect_used(reader: &ArrowReader, eng: &dyn Engine) -> bool {
    if reader.reads_files() {
        return reader.gpudirect_files().0 > 0;
    }
    eng.gpudirect().is_some_and(|mode| crate::guc::read_policy().direct.allows(mode))
}

/// `Storage Read` of EXPLAIN ANALYZE: the column buffers' bytes by path,
/// and why cuFile refused a file when it did.
pub fn storage_read_text(reader: &ArrowReader, cufile: u64, pinned: u64, cached: u64) -> String {
    let mut text = format!(
        "cuFile: {}, pinned buffers: {}, GPU column cache: {}",
        size_text(cufile),
        size_text(pinned),
        size_text(cached)
    );
    if let (_, Some(why)) = reader.gpudirect_files() {
        text.push_str(&format!(" (cuFile refused the file: {why})"));
    }
    text
}
