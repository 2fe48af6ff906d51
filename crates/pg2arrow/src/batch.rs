//! The record batch being filled, cut at the segment size and written
//! with its statistics, and the running totals `--progress` shows.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema, SchemaRef};
use pgstrom_arrow::column::{Column, Native};
use pgstrom_arrow::pgtype::{Plan, has_stats};

use crate::cli::Target;
use crate::output::{CURRENT, Output, taken_by_signal};
use crate::stats::min_max;

/// The running totals shown by --progress.
pub struct Progress {
    on: bool,
    tty: bool,
    start: Instant,
    last: Instant,
    pub rows: u64,
    batches: usize,
    bytes: u64,
}

impl Progress {
    pub fn new(on: bool) -> Progress {
        let now = Instant::now();
        Progress { on, tty: std::io::stderr().is_terminal(), start: now, last: now, rows: 0, batches: 0, bytes: 0 }
    }

    fn tick(&mut self, pending: usize) {
        if !self.on || !self.tty || self.last.elapsed() < Duration::from_millis(500) {
            return;
        }
        self.last = Instant::now();
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        eprint!(
            "\rrows: {}, batches: {}, bytes: {:.1} MB (+{:.1} MB pending), {:.0} rows/s   ",
            self.rows,
            self.batches,
            self.bytes as f64 / 1e6,
            pending as f64 / 1e6,
            self.rows as f64 / secs
        );
    }
}

/// The indexes of the `--stat` columns among `fields`, checked.
pub fn stat_fields(names: &[String], fields: &[Field], plans: &[Plan]) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for name in names {
        let i = fields
            .iter()
            .position(|f| f.name() == name)
            .ok_or_else(|| format!("--stat: the result has no column \"{name}\""))?;
        if !has_stats(&plans[i]) {
            return Err(format!(
                "--stat: column \"{name}\" is {}: statistics are written for integer, floating point, numeric, date, \
                 time and timestamp columns",
                fields[i].data_type()
            ));
        }
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

/// The output for `target` (None: a new file under $TMPDIR), made the
/// signal handler's [`CURRENT`]; returns its final name.
pub fn open_output(target: Option<&Target>, schema: &Schema, stat_fields: &[usize]) -> Result<PathBuf, String> {
    let out = match target {
        Some(Target::Append(p)) => Output::append(p, schema, stat_fields)?,
        Some(Target::Output(p)) => Output::create(p, schema, stat_fields)?,
        None => {
            let dir = std::env::var("TMPDIR").ok().filter(|d| !d.is_empty()).unwrap_or_else(|| "/tmp".into());
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            let p = PathBuf::from(format!("{dir}/{}-{}-{nanos:08x}.arrow", crate::program(), std::process::id()));
            Output::create(&p, schema, stat_fields)?
        }
    };
    let path = out.path.clone();
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
    Ok(path)
}

/// The record batch being filled.
pub struct Batcher {
    schema: SchemaRef,
    plans: Vec<Plan>,
    columns: Vec<Column>,
    rows: usize,
    bytes: usize,
    /// Bytes appended in all (for a fetch size).
    pub appended: usize,
    segment: usize,
    stat_fields: Vec<usize>,
    pub progress: Progress,
}

impl Batcher {
    /// Batches of `schema` (one plan per field), cut at `segment` bytes,
    /// with statistics of `stat_fields`, written to [`CURRENT`].
    pub fn new(schema: SchemaRef, plans: Vec<Plan>, segment: usize, stat_fields: Vec<usize>, progress: bool) -> Self {
        Batcher {
            schema,
            columns: plans.iter().map(Column::new).collect(),
            plans,
            rows: 0,
            bytes: 0,
            appended: 0,
            segment,
            stat_fields,
            progress: Progress::new(progress),
        }
    }

    fn added(&mut self, i: usize, r: Result<usize, String>) -> Result<(), String> {
        let n = r.map_err(|e| {
            format!("column \"{}\" of row {}: {e}", self.schema.field(i).name(), self.progress.rows + 1)
        })?;
        self.bytes += n;
        self.appended += n;
        Ok(())
    }

    /// Column `i`'s value of the current row in PostgreSQL's binary send
    /// format (None: NULL).
    pub fn append(&mut self, i: usize, v: Option<&[u8]>) -> Result<(), String> {
        let r = self.columns[i].append(v);
        self.added(i, r)
    }

    /// Column `i`'s value of the current row as a Rust value.
    pub fn append_native(&mut self, i: usize, v: Native<'_>) -> Result<(), String> {
        let r = self.columns[i].append_native(v);
        self.added(i, r)
    }

    /// One row appended: cut a record batch at the segment size.
    pub fn row_done(&mut self) -> Result<(), String> {
        self.rows += 1;
        self.progress.rows += 1;
        if self.bytes >= self.segment {
            self.flush()?;
        }
        if self.progress.rows.is_multiple_of(65_536) {
            self.progress.tick(self.bytes);
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        let arrays = self.columns.iter_mut().map(Column::finish).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| e.to_string())?;
        let minmax = self.stat_fields.iter().map(|&i| min_max(&self.plans[i], batch.column(i).as_ref())).collect();
        let rows = self.rows;
        let block = {
            let mut cur = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
            let Some(out) = cur.as_mut() else { taken_by_signal() };
            out.write(&batch, minmax)?
        };
        let p = &mut self.progress;
        if p.on {
            if p.tty {
                eprint!("\r");
            }
            eprintln!(
                "RecordBatch[{}]: offset={} length={} (meta={}, body={}) nitems={rows}",
                p.batches,
                block.offset(),
                block.metaDataLength() as i64 + block.bodyLength(),
                block.metaDataLength(),
                block.bodyLength()
            );
        }
        p.batches += 1;
        p.bytes += block.metaDataLength() as u64 + block.bodyLength() as u64;
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }

    /// The last batch written and the file finished (footer, statistics,
    /// durable, in its place); `--progress` prints the totals.
    pub fn finish(mut self) -> Result<(), String> {
        if self.rows > 0 {
            self.flush()?;
        }
        let Some(out) = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).take() else { taken_by_signal() };
        let nbatches = out.nbatches();
        out.finish()?;
        let p = &self.progress;
        if p.on {
            let secs = p.start.elapsed().as_secs_f64();
            eprintln!(
                "{}{}: {} rows in {} new record batches ({} in the file), {:.1} MB in {:.2} s ({:.1} MB/s)",
                if p.tty { "\r" } else { "" },
                crate::program(),
                p.rows,
                p.batches,
                nbatches,
                p.bytes as f64 / 1e6,
                secs,
                p.bytes as f64 / 1e6 / secs.max(1e-6)
            );
        }
        Ok(())
    }
}

/// A schema of `fields` whose metadata records the command (`sql_command`).
pub fn schema(fields: Vec<Field>, command: &str) -> SchemaRef {
    let mut md = arrow_schema::Metadata::new();
    md.insert("sql_command".to_string(), command.to_string());
    Arc::new(Schema::new_with_metadata(fields, md))
}
