//! Writes a table: entries in key order in, a checksummed file out (layout in [`super`]).
//!
//! Output is gathered in a 1 MiB buffer and appended in large writes (flushes and
//! compactions are sequential IO); `finish` syncs the file.

use crate::error::Result;
use crate::fs::WritableFile;
use crate::table::block::BlockBuilder;
use crate::table::filter::FilterBuilder;
use crate::table::format::{block_trailer, compress_block, BlockHandle, Compression, Footer};
use crate::table::properties::TableProperties;
use crate::table::TableOptions;

const WRITE_BUFFER: usize = 1 << 20;

/// Builds one table file.
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    options: TableOptions,
    out: Vec<u8>,
    offset: u64,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter: Option<FilterBuilder>,
    props: TableProperties,
    compressed: Vec<u8>,
    handle_buf: Vec<u8>,
}

impl TableBuilder {
    /// A builder writing to `file` (empty, freshly created).
    pub fn new(file: Box<dyn WritableFile>, options: TableOptions) -> TableBuilder {
        TableBuilder {
            file,
            data_block: BlockBuilder::new(options.restart_interval),
            index_block: BlockBuilder::new(1),
            filter: (options.bloom_bits_per_key > 0)
                .then(|| FilterBuilder::new(options.bloom_bits_per_key)),
            props: TableProperties {
                smallest_seq: u64::MAX,
                compression: options.compression.name().to_string(),
                ..TableProperties::default()
            },
            options,
            out: Vec::with_capacity(WRITE_BUFFER),
            offset: 0,
            compressed: Vec::new(),
            handle_buf: Vec::new(),
        }
    }

    /// Adds an entry; keys must be added in increasing order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        debug_assert!(
            self.props.entries == 0
                || (self.options.comparator)(self.data_block.last_key(), key).is_lt()
                || self.data_block.is_empty(),
            "keys out of order"
        );
        if let Some(f) = &mut self.filter {
            f.add((self.options.filter_key)(key));
        }
        let (seq, deletion) = (self.options.key_info)(key);
        let p = &mut self.props;
        p.entries += 1;
        p.deletions += u64::from(deletion);
        p.raw_key_bytes += key.len() as u64;
        p.raw_value_bytes += value.len() as u64;
        p.smallest_seq = p.smallest_seq.min(seq);
        p.largest_seq = p.largest_seq.max(seq);
        self.data_block.add(key, value);
        if self.data_block.estimated_size() >= self.options.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Bytes the file will have if finished now (roughly).
    pub fn file_size(&self) -> u64 {
        self.offset + self.out.len() as u64 + self.data_block.estimated_size() as u64
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let last_key = self.data_block.last_key().to_vec();
        let contents = self.data_block.finish().to_vec();
        let handle = self.write_block(&contents, self.options.compression)?;
        self.props.data_blocks += 1;
        self.props.data_bytes += handle.size;
        self.data_block.reset();
        self.handle_buf.clear();
        handle.encode_to(&mut self.handle_buf);
        self.index_block.add(&last_key, &self.handle_buf);
        Ok(())
    }

    /// Writes a block with its trailer and returns its handle.
    fn write_block(&mut self, raw: &[u8], compression: Compression) -> Result<BlockHandle> {
        let kind = compress_block(compression, raw, &mut self.compressed);
        let contents: &[u8] = if kind == Compression::None {
            raw
        } else {
            &self.compressed
        };
        let handle = BlockHandle {
            offset: self.offset + self.out.len() as u64,
            size: contents.len() as u64,
        };
        let trailer = block_trailer(contents, kind);
        self.out.extend_from_slice(contents);
        self.out.extend_from_slice(&trailer);
        if self.out.len() >= WRITE_BUFFER {
            self.flush_output()?;
        }
        Ok(handle)
    }

    fn flush_output(&mut self) -> Result<()> {
        if !self.out.is_empty() {
            self.file.append(&self.out)?;
            self.offset += self.out.len() as u64;
            self.out.clear();
        }
        Ok(())
    }

    /// Writes the filter, properties, meta-index and index blocks and the footer, and syncs
    /// the file. Returns the file's size and the table's properties.
    pub fn finish(mut self) -> Result<(u64, TableProperties)> {
        self.flush_data_block()?;
        if self.props.entries == 0 {
            self.props.smallest_seq = 0;
        }
        self.props.creation_time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut meta = BlockBuilder::new(1);
        let mut handle_bytes = Vec::new();
        // Meta-index entries must be added in name order: filter, then properties.
        if let Some(f) = self.filter.take() {
            let data = f.finish();
            self.props.filter_bytes = data.len() as u64;
            let h = self.write_block(&data, Compression::None)?;
            h.encode_to(&mut handle_bytes);
            meta.add(b"strata.filter", &handle_bytes);
        }
        let index_contents = self.index_block.finish().to_vec();
        self.props.index_bytes = index_contents.len() as u64;
        let props = self.props.clone();
        let h = self.write_block(&props.encode(), Compression::None)?;
        handle_bytes.clear();
        h.encode_to(&mut handle_bytes);
        meta.add(b"strata.properties", &handle_bytes);
        let metaindex = self.write_block(meta.finish(), Compression::None)?;
        let index = self.write_block(&index_contents, Compression::None)?;
        self.out
            .extend_from_slice(&Footer { metaindex, index }.encode());
        self.flush_output()?;
        self.file.sync()?;
        Ok((self.offset, props))
    }
}
