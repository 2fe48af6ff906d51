//! The file being written, and putting things back when the run fails.
//!
//! - A new file (`-o`, or a temporary one) is written beside its final
//!   name as `NAME.pg2arrow-PID` (`NAME.mysql2arrow-PID`) and renamed over NAME only when complete:
//!   a failed or killed run never leaves NAME half-written.
//! - `--append` takes the file's write lock (the one Arrow_Fdw's INSERT
//!   takes), saves the file's end in the undo file `NAME.pgstrom-undo`
//!   (durably, before the first byte is written), writes the new batches
//!   where the footer was and a new footer listing old and new batches.
//!   Success removes the undo file; failure (SQL error, lost connection,
//!   SIGINT, SIGTERM, SIGHUP, a panic) puts the old end back, so the file
//!   has exactly its old bytes.  After SIGKILL the undo file stays:
//!   Arrow_Fdw keeps reading the file through the saved footer, and
//!   `pg2arrow --recover=NAME` (or mysql2arrow's), the next `--append` or the next INSERT
//!   puts the old end back.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use arrow_array::RecordBatch;
use arrow_ipc::Block;
use arrow_schema::{Field, Schema};
use pgstrom_arrow::append::{self, Appender, Undo};
use pgstrom_arrow::file::ArrowFile;

/// Per stat column: the field's index and each batch's min/max text.
type Stats = Vec<(usize, Vec<Option<(String, String)>>)>;

pub struct Output {
    /// The final name.
    pub path: PathBuf,
    /// New file: the temporary name being written.  Append: None.
    tmp: Option<PathBuf>,
    /// Append: what puts the file back.
    undo: Option<Undo>,
    app: Appender,
    stats: Stats,
    schema_metadata: arrow_schema::Metadata,
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The output of the running job, for the signal handler's thread.
pub static CURRENT: Mutex<Option<Output>> = Mutex::new(None);

/// Set by the signal handler's thread before it takes the output.
pub static SIGNALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The job's output is gone from [`CURRENT`]: the signal handler's thread
/// took it, puts the file back and ends the process.  Wait for that
/// instead of returning: a process that exits first kills the thread
/// halfway (a SIGINT once left the undo file behind).
pub fn taken_by_signal() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

impl Output {
    /// A new file `path` for `schema`.
    pub fn create(path: &Path, schema: &Schema, stat_fields: &[usize]) -> Result<Output, String> {
        let tmp = PathBuf::from(format!("{}.{}-{}", s(path), crate::program(), std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let app = Appender::create(&s(&tmp), schema.clone()).map_err(|e| e.message)?;
        Ok(Output {
            path: path.to_path_buf(),
            tmp: Some(tmp),
            undo: None,
            app,
            stats: stat_fields.iter().map(|&f| (f, Vec::new())).collect(),
            schema_metadata: schema.metadata().clone(),
        })
    }

    /// Record batches of `schema` appended to the existing file `path`.
    pub fn append(path: &Path, schema: &Schema, stat_fields: &[usize]) -> Result<Output, String> {
        let p = s(path);
        let file = open_locked(path)?;
        recover_locked(&p)?;
        let f = ArrowFile::open(&p).map_err(|e| e.message)?;
        check_schema(&p, &f.schema, schema)?;
        let mut tail = vec![0u8; (f.size - f.footer_at) as usize];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut tail, f.footer_at)
            .map_err(|e| format!("could not read \"{p}\": {e}"))?;
        let undo = Undo { xid: 0, existed: true, at: f.footer_at, tail };
        undo.write(&p).map_err(|e| e.message)?;
        // the old batches' statistics, where the file has them
        let old = f.batches.len();
        let stats = stat_fields.iter().map(|&i| (i, f.stats(i).unwrap_or_else(|| vec![None; old]))).collect();
        let schema_metadata = f.schema.metadata().clone();
        let app = match Appender::continue_file(&f, file, true) {
            Ok(a) => a,
            Err(e) => {
                let _ = Undo::forget(&p);
                return Err(e.message);
            }
        };
        Ok(Output { path: path.to_path_buf(), tmp: None, undo: Some(undo), app, stats, schema_metadata })
    }

    /// Write one record batch (statistics taken by the caller).
    pub fn write(&mut self, batch: &RecordBatch, minmax: Vec<Option<(String, String)>>) -> Result<Block, String> {
        for ((_, per_batch), mm) in self.stats.iter_mut().zip(minmax) {
            per_batch.push(mm);
        }
        self.app.write_batch(batch).map_err(|e| e.message)
    }

    /// The footer (with the statistics), made durable, and the file in
    /// its place.
    pub fn finish(mut self) -> Result<(), String> {
        let old = self.app.schema().clone();
        let mut fields: Vec<Field> = old.fields().iter().map(|f| f.as_ref().clone()).collect();
        for (i, per_batch) in &self.stats {
            let join = |pick: fn(&(String, String)) -> &String| {
                per_batch.iter().map(|m| m.as_ref().map(pick).map_or("", |v| v.as_str())).collect::<Vec<_>>().join(",")
            };
            let mut md = fields[*i].metadata().clone();
            md.insert("min_values".to_string(), join(|m| &m.0));
            md.insert("max_values".to_string(), join(|m| &m.1));
            fields[*i] = fields[*i].clone().with_metadata(md);
        }
        self.app.set_schema(Schema::new_with_metadata(fields, std::mem::take(&mut self.schema_metadata)));
        self.app.finish().and_then(|_| self.app.sync()).map_err(|e| e.message)?;
        let p = s(&self.path);
        match self.tmp.take() {
            Some(tmp) => {
                std::fs::rename(&tmp, &self.path)
                    .map_err(|e| format!("could not rename \"{}\" to \"{p}\": {e}", s(&tmp)))?;
                if let Some(dir) = self.path.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d })
                {
                    let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
                }
            }
            None => {
                Undo::forget(&p).map_err(|e| e.message)?;
                self.undo = None;
            }
        }
        Ok(())
    }

    /// Undo everything: the temporary file removed, or the appended file
    /// put back.  Returns what happened, for the message.
    pub fn abort(mut self) -> String {
        let p = s(&self.path);
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(&tmp);
            return format!("\"{p}\" was not written");
        }
        match self.undo.take() {
            Some(u) => match u.restore(&p) {
                Ok(()) => format!("\"{p}\" was restored to its {} bytes before the append", u.at + u.tail.len() as u64),
                Err(e) => format!("{}; the undo file stays: run {} --recover={p}", e.message, crate::program()),
            },
            None => String::new(),
        }
    }

    pub fn nbatches(&self) -> usize {
        self.app.nbatches()
    }
}

/// `path` opened for writing, with its write lock (held until closed).
fn open_locked(path: &Path) -> Result<std::fs::File, String> {
    let p = s(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("could not open \"{p}\": {e}"))?;
    append::lock(&file, &p).map_err(|e| e.message)?;
    Ok(file)
}

/// Put back a file whose append was killed (its undo file is there and
/// we hold the lock, so its writer is gone).
fn recover_locked(p: &str) -> Result<bool, String> {
    match Undo::read(p).map_err(|e| e.message)? {
        None => Ok(false),
        Some(u) if !u.existed => Err(format!(
            "\"{p}\" has an undo file saying that a transaction is creating it; insert into its foreign table \
             (or remove \"{}\" and the file) first",
            append::undo_path(p)
        )),
        Some(u) => u.restore(p).map(|_| true).map_err(|e| e.message),
    }
}

/// `--recover=FILE`.
pub fn recover(path: &Path) -> Result<String, String> {
    let p = s(path);
    let _file = open_locked(path)?;
    Ok(if recover_locked(&p)? {
        format!("\"{p}\" restored: the interrupted append's record batches are gone")
    } else {
        format!("\"{p}\" has no interrupted append to undo")
    })
}

fn check_schema(p: &str, file: &Schema, ours: &Schema) -> Result<(), String> {
    if file.fields().len() != ours.fields().len() {
        return Err(format!(
            "\"{p}\" has {} columns, the query returns {}: --append needs the same columns",
            file.fields().len(),
            ours.fields().len()
        ));
    }
    for (i, (f, o)) in file.fields().iter().zip(ours.fields()).enumerate() {
        if f.name() != o.name() || f.data_type() != o.data_type() {
            return Err(format!(
                "column {} of \"{p}\" is \"{}\" {}, the query's is \"{}\" {}: --append needs the same columns",
                i + 1,
                f.name(),
                f.data_type(),
                o.name(),
                o.data_type()
            ));
        }
    }
    Ok(())
}
