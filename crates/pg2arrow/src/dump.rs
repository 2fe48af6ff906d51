//! `--dump FILE`: the footer (schema, fields' and schema's custom
//! metadata, dictionary and record batch blocks) and each record batch's
//! message (row count, field nodes, buffers), in the layout the original
//! tool prints.  The file is opened and checked by Arrow_Fdw's reader.

use std::fmt::Write;
use std::os::unix::fs::FileExt;

use arrow_ipc::Block;
use arrow_schema::{DataType, Field};
use pgstrom_arrow::file::ArrowFile;

fn metadata<'a>(md: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    let mut kv: Vec<_> = md.collect();
    kv.sort();
    let items: Vec<String> = kv.into_iter().map(|(k, v)| format!("{{KeyValue: key=\"{k}\" value=\"{v}\"}}")).collect();
    format!("[{}]", items.join(", "))
}

fn children(dt: &DataType) -> Vec<&Field> {
    match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            vec![f.as_ref()]
        }
        DataType::Struct(fs) => fs.iter().map(|f| f.as_ref()).collect(),
        _ => Vec::new(),
    }
}

fn field(f: &Field) -> String {
    let kids: Vec<String> = children(f.data_type()).into_iter().map(field).collect();
    let ty = match f.data_type() {
        DataType::List(_) => "List".to_string(),
        DataType::LargeList(_) => "LargeList".to_string(),
        DataType::Struct(_) => "Struct".to_string(),
        dt => dt.to_string(),
    };
    format!(
        "{{Field: name=\"{}\", nullable={}, type={{{ty}}}, children=[{}], custom_metadata={}}}",
        f.name(),
        f.is_nullable(),
        kids.join(", "),
        metadata(f.metadata().iter())
    )
}

fn block(b: &Block) -> String {
    format!("{{Block: offset={}, metaDataLength={} bodyLength={}}}", b.offset(), b.metaDataLength(), b.bodyLength())
}

/// The text `--dump` prints.
pub fn dump(path: &str) -> Result<String, String> {
    let f = ArrowFile::open(path).map_err(|e| e.message)?;
    let (version, dictionaries, blocks, footer_md) = f.parts();
    let version = version.variant_name().unwrap_or("unknown");
    let mut out = String::new();
    let fields: Vec<String> = f.schema.fields().iter().map(|x| field(x)).collect();
    let _ = writeln!(
        out,
        "[Footer]\n{{Footer: version={version}, schema={{Schema: endianness=little, fields=[{}], custom_metadata={}}}, \
         dictionaries=[{}], recordBatches=[{}], custom_metadata={}}}",
        fields.join(", "),
        metadata(f.schema.metadata().iter()),
        dictionaries.iter().map(block).collect::<Vec<_>>().join(", "),
        blocks.iter().map(block).collect::<Vec<_>>().join(", "),
        metadata(footer_md.iter())
    );
    let file = std::fs::File::open(path).map_err(|e| format!("could not open \"{path}\": {e}"))?;
    for (i, b) in blocks.iter().enumerate() {
        let _ = writeln!(out, "[Record Batch {i}]\n{}", block(b));
        let mut meta = vec![0u8; b.metaDataLength().max(0) as usize];
        file.read_exact_at(&mut meta, b.offset() as u64).map_err(|e| format!("could not read \"{path}\": {e}"))?;
        // continuation marker, length, flatbuffer (checked when the file was opened)
        let start = if meta.starts_with(&[0xff; 4]) { 8 } else { 4 };
        let msg = arrow_ipc::root_as_message(&meta[start..])
            .map_err(|e| format!("record batch {i} of \"{path}\" has a damaged header: {e}"))?;
        let rb = msg.header_as_record_batch().ok_or_else(|| format!("block {i} is not a record batch"))?;
        let nodes: Vec<String> = rb
            .nodes()
            .map(|v| {
                v.iter()
                    .map(|n| format!("{{FieldNode: length={}, null_count={}}}", n.length(), n.null_count()))
                    .collect()
            })
            .unwrap_or_default();
        let buffers: Vec<String> = rb
            .buffers()
            .map(|v| v.iter().map(|x| format!("{{Buffer: offset={}, length={}}}", x.offset(), x.length())).collect())
            .unwrap_or_default();
        let compression = rb
            .compression()
            .map(|c| format!(", compression={}", c.codec().variant_name().unwrap_or("unknown")))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{{Message: version={}, body={{RecordBatch: length={}, nodes=[{}], buffers=[{}]{compression}}}, bodyLength={}}}",
            msg.version().variant_name().unwrap_or("unknown"),
            rb.length(),
            nodes.join(", "),
            buffers.join(", "),
            msg.bodyLength()
        );
    }
    Ok(out)
}
