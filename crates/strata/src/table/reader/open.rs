//! Opening a table: the footer, the meta-index, the properties, the index (the top-level one
//! of a partitioned index), the filter (the top-level filter index of a partitioned filter)
//! and the range deletions, each read and checked.

use super::*;

impl Table {
    /// Opens a table: reads and checks the footer, meta-index, properties, index (the
    /// top-level one of a partitioned index), filter (the top-level filter index of a
    /// partitioned filter) and range deletions.
    pub fn open(
        file: Box<dyn RandomAccessFile>,
        path: &Path,
        read: &TableReadOptions,
    ) -> Result<Table> {
        let TableReadOptions {
            table: options,
            block_cache: cache,
            cache_id,
            cache_index_and_filter,
            pin_top_level_index_and_filter,
            stats,
        } = read.clone();
        let footer = read_footer(file.as_ref(), path)?;
        let plain = BlockDecoding {
            checksum: footer.checksum,
            ..BlockDecoding::default()
        };
        let block = |h: BlockHandle| -> Result<Arc<Block>> {
            let data = read_block_with(file.as_ref(), path, h, plain)?;
            Block::new(data)
                .map(Arc::new)
                .map_err(|why| Error::corruption(path, h.offset, why))
        };
        let meta = read_meta_index(file.as_ref(), path, &footer)?;
        let props_handle = meta.properties;
        let properties = read_properties_block(file.as_ref(), path, props_handle, plain)?;
        let dictionary = read_dictionary(file.as_ref(), path, &footer, meta.compression_dict)?;
        let partitioned_index = properties.index_partitions > 0;
        if partitioned_index && footer.version < TABLE_FORMAT_VERSION_PARTITIONED {
            return Err(Error::corruption(
                path,
                props_handle.offset,
                format!(
                    "the properties say {} index partitions, but the table format version is {}",
                    properties.index_partitions, footer.version
                ),
            ));
        }
        let index_comparator = match (properties.index_key_is_user_key, &options.comparator) {
            (0, cmp) => cmp.clone(),
            (_, BlockOrder::Internal(order))
                if !partitioned_index && footer.version >= TABLE_FORMAT_VERSION_USER_KEY_INDEX =>
            {
                BlockOrder::Plain(order.clone())
            }
            _ => {
                return Err(Error::corruption(
                    path,
                    props_handle.offset,
                    format!(
                        "the properties say the index holds user keys, which a table of format \
                         version {} with {} index partitions and {} keys cannot",
                        footer.version,
                        properties.index_partitions,
                        match options.comparator {
                            BlockOrder::Internal(_) => "internal",
                            BlockOrder::Plain(_) => "whole",
                        }
                    ),
                ))
            }
        };
        let index = block(footer.index)?;
        let filter = match (meta.filter, meta.partitioned_filter) {
            (Some(h), _) => Some(LoadedFilter::Whole(
                h,
                Arc::new(
                    Filter::new(read_block_with(file.as_ref(), path, h, plain)?)
                        .map_err(|why| Error::corruption(path, h.offset, why))?,
                ),
            )),
            (None, Some(h)) => Some(LoadedFilter::Partitioned(h, block(h)?)),
            (None, None) => None,
        };
        // A table records its key order's name; one without it predates user orders and is
        // bytewise. Reading it in another order would find nothing where it should.
        let written_in = match properties.comparator.as_str() {
            "" => crate::comparator::BYTEWISE_NAME,
            name => name,
        };
        if written_in != options.comparator.order().name() {
            return Err(Error::corruption(
                path,
                props_handle.offset,
                format!(
                    "the table orders keys by comparator {written_in:?}, its reader by {:?}",
                    options.comparator.order().name()
                ),
            ));
        }
        let range_tombstones = Arc::new(read_range_tombstones(
            file.as_ref(),
            path,
            meta.range_del,
            &properties,
            footer.metaindex.offset,
            options.comparator.order(),
            plain,
        )?);
        // Where each block read at open lives: pinned with the table, or in the cache. The
        // top-level blocks of partitioned tables stay pinned with
        // `pin_top_level_index_and_filter`.
        let cache = cache.filter(|_| cache_index_and_filter);
        let in_cache = |top_level: bool| match &cache {
            Some(c) if !(top_level && pin_top_level_index_and_filter) => Some(c.clone()),
            _ => None,
        };
        let index_part = match in_cache(partitioned_index) {
            Some(c) => {
                let size = index.size();
                let key = (cache_id, footer.index.offset);
                c.insert(key, CachedBlock::Block(index), size);
                Part::Cached(footer.index)
            }
            None => Part::Pinned(index),
        };
        let filter = filter.map(|loaded| match loaded {
            LoadedFilter::Whole(h, f) => TableFilter::Whole(match in_cache(false) {
                Some(c) => {
                    let size = f.size();
                    c.insert((cache_id, h.offset), CachedBlock::Filter(f), size);
                    Part::Cached(h)
                }
                None => Part::Pinned(f),
            }),
            LoadedFilter::Partitioned(h, top) => {
                let part = match in_cache(true) {
                    Some(c) => {
                        let size = top.size();
                        c.insert((cache_id, h.offset), CachedBlock::Block(top), size);
                        Part::Cached(h)
                    }
                    None => Part::Pinned(top),
                };
                TableFilter::Partitioned(part, h.offset)
            }
        });
        let mapped = mapped::MappedTable::of(file.as_ref());
        Ok(Table {
            mapped,
            file,
            path: path.to_path_buf(),
            cache_id,
            options,
            index: index_part,
            index_at: footer.index.offset,
            partitioned_index,
            index_comparator,
            filter,
            properties,
            range_tombstones,
            cache: read.block_cache.clone(),
            stats,
            checksum: footer.checksum,
            dictionary,
        })
    }

    /// Reads only the properties of the table in `file` (footer, meta-index and properties
    /// block, each checked): what a tool needs to learn the table's comparator before it
    /// opens the table in that order.
    pub fn read_properties(file: &dyn RandomAccessFile, path: &Path) -> Result<TableProperties> {
        let footer = read_footer(file, path)?;
        let meta = read_meta_index(file, path, &footer)?;
        let plain = BlockDecoding {
            checksum: footer.checksum,
            ..BlockDecoding::default()
        };
        read_properties_block(file, path, meta.properties, plain)
    }
}

/// The blocks a table's meta-index names.
struct MetaIndex {
    filter: Option<BlockHandle>,
    /// The top-level filter index of a partitioned filter.
    partitioned_filter: Option<BlockHandle>,
    properties: BlockHandle,
    range_del: Option<BlockHandle>,
    /// The compression dictionary of the data blocks (`compression_dict.rs`).
    compression_dict: Option<BlockHandle>,
}

/// Reads and decodes the footer of the table in `file`.
fn read_footer(file: &dyn RandomAccessFile, path: &Path) -> Result<Footer> {
    let size = file.size();
    if size < FOOTER_LEN as u64 {
        return Err(Error::corruption(
            path,
            0,
            format!("file of {size} bytes is too short to be a table"),
        ));
    }
    let footer_at = size - FOOTER_LEN as u64;
    let mut footer = [0u8; FOOTER_LEN];
    file.read_exact_at(footer_at, &mut footer)?;
    Footer::decode(&footer).map_err(|why| Error::corruption(path, footer_at, why))
}

/// Reads the meta-index the footer points to; a table without a properties block is corrupt.
fn read_meta_index(file: &dyn RandomAccessFile, path: &Path, footer: &Footer) -> Result<MetaIndex> {
    let at = footer.metaindex.offset;
    let plain = BlockDecoding {
        checksum: footer.checksum,
        ..BlockDecoding::default()
    };
    let data = read_block_with(file, path, footer.metaindex, plain)?;
    let meta = Block::new(data).map_err(|why| Error::corruption(path, at, why))?;
    let (mut filter, mut properties, mut range_del) = (None, None, None);
    let (mut partitioned_filter, mut compression_dict) = (None, None);
    let mut it = BlockIter::new(Arc::new(meta), BlockOrder::BYTEWISE);
    it.seek_to_first();
    while it.valid() {
        let mut v = it.value();
        let h = BlockHandle::decode_from(&mut v)
            .ok_or_else(|| Error::corruption(path, at, "bad handle in meta-index"))?;
        match it.key() {
            b"strata.filter" => filter = Some(h),
            partitioned::FILTER_META_NAME => partitioned_filter = Some(h),
            b"strata.properties" => properties = Some(h),
            range_del::META_NAME => range_del = Some(h),
            compression_dict::META_NAME => compression_dict = Some(h),
            _ => {}
        }
        it.next();
    }
    if let Some(why) = it.corrupt() {
        return Err(Error::corruption(path, at, why));
    }
    let properties =
        properties.ok_or_else(|| Error::corruption(path, at, "no properties block"))?;
    if filter.is_some() && partitioned_filter.is_some() {
        return Err(Error::corruption(
            path,
            at,
            "the meta-index names both a filter and a partitioned filter",
        ));
    }
    Ok(MetaIndex {
        filter,
        partitioned_filter,
        properties,
        range_del,
        compression_dict,
    })
}

/// Reads and prepares the compression dictionary at `handle`, if the table has one; its
/// errors name the block. Only a table of format version 6 may have one.
fn read_dictionary(
    file: &dyn RandomAccessFile,
    path: &Path,
    footer: &Footer,
    handle: Option<BlockHandle>,
) -> Result<Option<Arc<DecompressionDictionary>>> {
    let Some(h) = handle else {
        return Ok(None);
    };
    let in_block = |reason: String| format!("compression dictionary block: {reason}");
    if footer.version < TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT {
        return Err(Error::corruption(
            path,
            footer.metaindex.offset,
            format!(
                "the meta-index names a compression dictionary, which a table of format \
                 version {} cannot have",
                footer.version
            ),
        ));
    }
    let plain = BlockDecoding {
        checksum: footer.checksum,
        ..BlockDecoding::default()
    };
    let data = read_block_with(file, path, h, plain).map_err(|e| match e {
        Error::Corruption {
            file,
            offset,
            reason,
        } => Error::Corruption {
            file,
            offset,
            reason: in_block(reason),
        },
        other => other,
    })?;
    DecompressionDictionary::decode(&data)
        .map(|d| Some(Arc::new(d)))
        .map_err(|why| Error::corruption(path, h.offset, in_block(why)))
}

/// Reads and decodes the properties block at `h`.
fn read_properties_block(
    file: &dyn RandomAccessFile,
    path: &Path,
    h: BlockHandle,
    plain: BlockDecoding<'_>,
) -> Result<TableProperties> {
    TableProperties::decode(read_block_with(file, path, h, plain)?)
        .map_err(|why| Error::corruption(path, h.offset, why))
}

/// Reads, checks and fragments the range-deletion block at `handle`, if the table has one.
/// Its errors name the block; `metaindex_at` is where the meta-index that lacks a block is.
fn read_range_tombstones(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: Option<BlockHandle>,
    properties: &TableProperties,
    metaindex_at: u64,
    order: &crate::comparator::KeyOrder,
    plain: BlockDecoding<'_>,
) -> Result<FragmentedList> {
    let in_block = |reason: String| format!("range-deletion block: {reason}");
    let Some(h) = handle else {
        if properties.range_deletions > 0 {
            return Err(Error::corruption(
                path,
                metaindex_at,
                format!(
                    "the properties say {} range deletions, but the meta-index names no \
                     range-deletion block",
                    properties.range_deletions
                ),
            ));
        }
        return Ok(FragmentedList::default());
    };
    let data = read_block_with(file, path, h, plain).map_err(|e| match e {
        Error::Corruption {
            file,
            offset,
            reason,
        } => Error::Corruption {
            file,
            offset,
            reason: in_block(reason),
        },
        other => other,
    })?;
    let (list, count) = range_del::decode_fragmented(data, order)
        .map_err(|why| Error::corruption(path, h.offset, in_block(why)))?;
    if count != properties.range_deletions {
        return Err(Error::corruption(
            path,
            h.offset,
            in_block(format!(
                "{count} range deletions found, the properties say {}",
                properties.range_deletions
            )),
        ));
    }
    Ok(list)
}

/// A filter block as read at open, before it is pinned or cached.
enum LoadedFilter {
    Whole(BlockHandle, Arc<Filter>),
    /// The top-level filter index.
    Partitioned(BlockHandle, Arc<Block>),
}
