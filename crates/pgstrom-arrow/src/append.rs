//! Appending record batches to an Arrow file, and the undo record that
//! makes it transactional.  No PostgreSQL here.
//!
//! An append overwrites the file's footer: new record batches start where
//! the footer started, and a new footer (listing the old batches and the
//! new ones) ends the file.  Before the first byte is overwritten, the old
//! end of the file (footer, its length, the signature) is saved in an undo
//! file beside it (`FILE.pgstrom-undo`, fsynced with its directory), with
//! the writing transaction's id.  Readers of other transactions read the
//! file through the saved footer (the old batches are where they were);
//! commit removes the undo file; abort, or the next writer after a crash,
//! puts the old end back.
//!
//! Writers of one file exclude each other with an exclusive `flock` on
//! the file ([`lock`]), taken before the undo file is looked at: a writer
//! that holds the lock and finds an undo file knows its writer is gone.
//! Arrow_Fdw's INSERT and `pg2arrow --append` both take it.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::writer::{DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_ipc::{Block, MetadataVersion};
use arrow_schema::{Metadata, Schema};

use crate::file::{ArrowError, ArrowErrorKind, ArrowFile, MAGIC, footer_bytes};

const UNDO_MAGIC: &[u8; 8] = b"PGSUNDO1";

fn err(path: &str, what: &str, e: impl std::fmt::Display) -> ArrowError {
    ArrowError { message: format!("could not {what} arrow file \"{path}\": {e}"), kind: ArrowErrorKind::Io }
}

/// Take the write lock of `path` (opened as `file`): an exclusive
/// `flock`, not waited for; it is held until `file` is closed.
pub fn lock(file: &File, path: &str) -> Result<(), ArrowError> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Err(ArrowError {
            message: format!("arrow file \"{path}\" is being written by another process"),
            kind: ArrowErrorKind::Io,
        });
    }
    Err(err(path, "lock", e))
}

/// The undo file of `path`.
pub fn undo_path(path: &str) -> String {
    format!("{path}.pgstrom-undo")
}

/// What an undo file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undo {
    /// The writing transaction.
    pub xid: u32,
    /// The file existed before (else abort removes it).
    pub existed: bool,
    /// Where the saved end of the file starts.
    pub at: u64,
    /// The saved end: footer, its length and the signature.
    pub tail: Vec<u8>,
}

fn sync_dir(path: &str) {
    if let Some(dir) = Path::new(path)
        .parent()
        .and_then(|d| File::open(if d.as_os_str().is_empty() { Path::new(".") } else { d }).ok())
    {
        let _ = dir.sync_all();
    }
}

impl Undo {
    /// Read the undo file of `path`, if there is one.
    pub fn read(path: &str) -> Result<Option<Undo>, ArrowError> {
        let u = undo_path(path);
        let b = match std::fs::read(&u) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(err(&u, "read the undo file of", e)),
        };
        let bad = || ArrowError { message: format!("undo file \"{u}\" is damaged"), kind: ArrowErrorKind::Corrupt };
        if b.len() < 29 || &b[..8] != UNDO_MAGIC {
            return Err(bad());
        }
        let xid = u32::from_le_bytes(b[8..12].try_into().unwrap());
        let existed = b[12] != 0;
        let at = u64::from_le_bytes(b[13..21].try_into().unwrap());
        let len = u64::from_le_bytes(b[21..29].try_into().unwrap()) as usize;
        if b.len() != 29 + len {
            return Err(bad());
        }
        Ok(Some(Undo { xid, existed, at, tail: b[29..].to_vec() }))
    }

    /// Save it (durably) before the file is touched.
    pub fn write(&self, path: &str) -> Result<(), ArrowError> {
        let u = undo_path(path);
        let mut b = Vec::with_capacity(29 + self.tail.len());
        b.extend_from_slice(UNDO_MAGIC);
        b.extend_from_slice(&self.xid.to_le_bytes());
        b.push(self.existed as u8);
        b.extend_from_slice(&self.at.to_le_bytes());
        b.extend_from_slice(&(self.tail.len() as u64).to_le_bytes());
        b.extend_from_slice(&self.tail);
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&u)
            .map_err(|e| err(&u, "create the undo file of", e))?;
        f.write_all(&b).and_then(|_| f.sync_all()).map_err(|e| err(&u, "write the undo file of", e))?;
        sync_dir(&u);
        Ok(())
    }

    /// Put the file back as it was, then drop the undo file.
    pub fn restore(&self, path: &str) -> Result<(), ArrowError> {
        if self.existed {
            let f = OpenOptions::new().write(true).open(path).map_err(|e| err(path, "restore", e))?;
            f.set_len(self.at)
                .and_then(|_| f.write_all_at(&self.tail, self.at))
                .and_then(|_| f.sync_all())
                .map_err(|e| err(path, "restore", e))?;
        } else {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(err(path, "remove", e)),
            }
        }
        Self::forget(path)
    }

    /// Drop the undo file (the appends are final).
    pub fn forget(path: &str) -> Result<(), ArrowError> {
        let u = undo_path(path);
        match std::fs::remove_file(&u) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(&u, "remove the undo file of", e)),
        }
        sync_dir(&u);
        Ok(())
    }
}

/// An Arrow file being appended to.
pub struct Appender {
    path: String,
    file: File,
    /// Where the next message goes.
    at: u64,
    schema: Schema,
    version: MetadataVersion,
    dictionaries: Vec<Block>,
    blocks: Vec<Block>,
    metadata: Metadata,
    /// Where the file's first record batch (or its footer) began: the
    /// schema message ends there.
    head_end: u64,
}

impl Appender {
    /// A new file holding `schema` and no record batch yet (the caller
    /// saved an undo record saying the file did not exist).
    pub fn create(path: &str, schema: Schema) -> Result<Appender, ArrowError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| err(path, "create", e))?;
        lock(&file, path)?;
        let options = IpcWriteOptions::default();
        let mut tracker = DictionaryTracker::new(false);
        let encoded =
            IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(&schema, &mut tracker, &options);
        let mut head = Vec::new();
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&[0, 0]);
        arrow_ipc::writer::write_message(&mut head, encoded, &options).map_err(|e| err(path, "write", e))?;
        file.write_all(&head).map_err(|e| err(path, "write", e))?;
        Ok(Appender {
            path: path.to_string(),
            file,
            at: head.len() as u64,
            schema,
            version: MetadataVersion::V5,
            dictionaries: Vec::new(),
            blocks: Vec::new(),
            metadata: Metadata::new(),
            head_end: head.len() as u64,
        })
    }

    /// Continue `f` (opened without a view; `file` is it, opened for
    /// writing and [`lock`]ed): new batches go where its footer starts.
    /// `keep_batches = false` drops its batches from the new footer (a
    /// truncation: their bytes stay, unlisted).
    pub fn continue_file(f: &ArrowFile, file: File, keep_batches: bool) -> Result<Appender, ArrowError> {
        let (version, dictionaries, blocks, metadata) = f.parts();
        // the schema's per-batch statistics describe the old batches only
        let fields: Vec<_> = f
            .schema
            .fields()
            .iter()
            .map(|fl| {
                let mut md = fl.metadata().clone();
                md.remove("min_values");
                md.remove("max_values");
                fl.as_ref().clone().with_metadata(md)
            })
            .collect();
        let schema = Schema::new_with_metadata(fields, f.schema.metadata().clone());
        let head_end = blocks
            .iter()
            .chain(&dictionaries)
            .map(|b| b.offset() as u64)
            .chain([f.footer_at])
            .min()
            .unwrap_or(f.footer_at);
        Ok(Appender {
            path: f.path.clone(),
            file,
            at: f.footer_at.next_multiple_of(8),
            schema,
            version,
            dictionaries,
            blocks: if keep_batches { blocks } else { Vec::new() },
            metadata,
            head_end,
        })
    }

    /// List no batch in the next footer (a truncation).
    pub fn drop_batches(&mut self) {
        self.blocks.clear();
    }

    /// The schema batches must have.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Replace the schema the footer will carry: the same fields, other
    /// custom metadata (statistics, the query).
    pub fn set_schema(&mut self, schema: Schema) {
        self.schema = schema;
    }

    /// Write one record batch; returns its block (offset and lengths).
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<Block, ArrowError> {
        let options = IpcWriteOptions::try_new(8, false, self.version).map_err(|e| err(&self.path, "write", e))?;
        let mut tracker = DictionaryTracker::new(false);
        let (dicts, encoded) = IpcDataGenerator::default()
            .encode(batch, &mut tracker, &options, &mut Default::default())
            .map_err(|e| err(&self.path, "encode a record batch for", e))?;
        if !dicts.is_empty() {
            return Err(err(&self.path, "write", "dictionary-encoded columns cannot be appended"));
        }
        let mut buf = Vec::new();
        let (meta, body) =
            arrow_ipc::writer::write_message(&mut buf, encoded, &options).map_err(|e| err(&self.path, "write", e))?;
        self.file
            .seek(SeekFrom::Start(self.at))
            .and_then(|_| self.file.write_all(&buf))
            .map_err(|e| err(&self.path, "write", e))?;
        let block = Block::new(self.at as i64, meta as i32, body as i64);
        self.blocks.push(block);
        self.at += buf.len() as u64;
        Ok(block)
    }

    /// Write the footer after the last batch and cut the file there (not
    /// yet durable: [`Self::sync`]).
    pub fn finish(&mut self) -> Result<(), ArrowError> {
        let footer = footer_bytes(self.version, &self.schema, &self.dictionaries, &self.blocks, &self.metadata);
        self.file
            .write_all_at(&footer, self.at)
            .and_then(|_| self.file.set_len(self.at + footer.len() as u64))
            .map_err(|e| err(&self.path, "write the footer of", e))
    }

    /// True when the file lists no record batch (nor dictionary) but keeps
    /// the bytes of old ones: a committed truncation that [`Self::shrink`]
    /// can cut.
    pub fn can_shrink(&self) -> bool {
        self.blocks.is_empty() && self.dictionaries.is_empty() && self.head_end.next_multiple_of(8) < self.at
    }

    /// Cut the unlisted batches' bytes off a file that lists none (after
    /// its truncation committed): the footer is written again right after
    /// the schema message, made durable, then the file is cut after it.
    /// At every step the file is a valid Arrow file listing no batch (its
    /// last footer, old or new, says so), so a crash in between loses
    /// nothing but the space.
    pub fn shrink(&mut self) -> Result<u64, ArrowError> {
        if !self.can_shrink() {
            return Ok(0);
        }
        let footer = footer_bytes(self.version, &self.schema, &self.dictionaries, &self.blocks, &self.metadata);
        let at = self.head_end.next_multiple_of(8);
        let end = at + footer.len() as u64;
        let old = self.file.metadata().map_err(|e| err(&self.path, "examine", e))?.len();
        if end >= old {
            return Ok(0);
        }
        self.file
            .write_all_at(&footer, at)
            .and_then(|_| self.file.sync_data())
            .and_then(|_| self.file.set_len(end))
            .and_then(|_| self.file.sync_all())
            .map_err(|e| err(&self.path, "shrink", e))?;
        self.at = at;
        Ok(old - end)
    }

    /// Make the file durable.
    pub fn sync(&self) -> Result<(), ArrowError> {
        self.file.sync_all().map_err(|e| err(&self.path, "sync", e))
    }

    /// Batches the file will list.
    pub fn nbatches(&self) -> usize {
        self.blocks.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn batch(v: Vec<i32>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(v))]).unwrap()
    }

    #[test]
    fn append_lock_and_undo() {
        let dir = std::env::temp_dir().join(format!("pgstrom-arrow-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.arrow").to_string_lossy().into_owned();
        let _ = std::fs::remove_file(&path);
        let mut app = Appender::create(&path, batch(vec![]).schema().as_ref().clone()).unwrap();
        app.write_batch(&batch(vec![1, 2, 3])).unwrap();
        app.finish().unwrap();
        drop(app);
        let before = std::fs::read(&path).unwrap();

        // an append: locked, undo saved, a batch written, then undone
        let f = ArrowFile::open(&path).unwrap();
        let h = OpenOptions::new().read(true).write(true).open(&path).unwrap();
        lock(&h, &path).unwrap();
        let other = File::open(&path).unwrap();
        let e = lock(&other, &path).unwrap_err();
        assert!(e.message.contains("being written by another process"), "{}", e.message);
        let undo = Undo { xid: 0, existed: true, at: f.footer_at, tail: before[f.footer_at as usize..].to_vec() };
        undo.write(&path).unwrap();
        let mut app = Appender::continue_file(&f, h, true).unwrap();
        app.write_batch(&batch(vec![4, 5])).unwrap();
        app.finish().unwrap();
        assert_eq!(ArrowFile::open(&path).unwrap().rows(), 5);
        // readers of another transaction see the old footer meanwhile
        let u = Undo::read(&path).unwrap().unwrap();
        assert_eq!(ArrowFile::open_view(&path, Some((u.at, &u.tail))).unwrap().rows(), 3);
        u.restore(&path).unwrap();
        drop(app);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert!(Undo::read(&path).unwrap().is_none());
        lock(&other, &path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
