//! Compression dictionaries: a zstd dictionary made per table from samples of its own data
//! blocks (RocksDB's `max_dict_bytes` and `zstd_max_train_bytes`), and the compressor that
//! uses it.
//!
//! Why: a 4 KiB data block is too short for zstd to find much repetition in; a dictionary
//! made from the table's first blocks gives every block the strings the table shares
//! (common key prefixes, value schemas) before its first byte.
//!
//! Byte layout (on disk; do not change): the meta block named `strata.compression_dict` in
//! the meta-index holds the dictionary as zstd takes it, with no header of its own, framed
//! as every block is (trailer of the table's checksum type), never compressed:
//!
//! ```text
//! dictionary block := zstd dictionary                  (trained: starts with zstd's magic
//!                                                       0xEC30A437 and its entropy tables)
//!                   | raw content                      (untrained: sampled block bytes)
//! ```
//!
//! Raw content begins with a data block's first byte, the shared-prefix length of its first
//! entry, which is always 0: it can never be taken for zstd's dictionary magic.
//!
//! Invariants: in a table with a dictionary every zstd-compressed data block is compressed
//! with it, and no other block is (the index, filter, properties and meta-index blocks are
//! read without it: zstd starts a frame compressed with a trained dictionary from the
//! dictionary's repeat offsets, so the dictionary must be given exactly to the frames made
//! with it). The table's format version is 6 (`format.rs`), so that an older build refuses
//! it instead of decompressing its data blocks without the dictionary.
//!
//! The builder holds the table's first data blocks, uncompressed, until they add up to the
//! sample budget (`zstd_max_train_bytes`, or `max_dict_bytes` when that is 0) or the table
//! ends, then makes the dictionary from them and writes them (`builder.rs`): as RocksDB's
//! buffered state, with the index and filter entries of the held blocks added as they are
//! written, so that they are those of a table written without holding.

use zstd::zstd_safe::{CDict, DDict};

use crate::table::compression::{
    check_decompressed_len, split_raw_len, with_zstd_context, Compression, CompressionOptions,
    Compressor,
};

/// The meta-index name of the dictionary block. On disk.
pub const META_NAME: &[u8] = b"strata.compression_dict";

/// The smallest dictionary worth storing: zstd ignores raw content shorter than 8 bytes.
const MIN_DICTIONARY: usize = 8;

/// Makes a table's dictionary from `samples` (the data blocks the builder held, in order):
/// trained by zstd to at most `max_dict_bytes` when `zstd_max_train_bytes` is set, else the
/// samples' first `max_dict_bytes` bytes as they are. `None` when there is too little to
/// make one (a table of a few entries) or training fails; the table is then compressed
/// without a dictionary.
pub fn make_dictionary(samples: &[Vec<u8>], opts: &CompressionOptions) -> Option<Vec<u8>> {
    let max_dict = opts.max_dict_bytes as usize;
    let budget = opts.dictionary_sample_bytes();
    // The samples are whole blocks while they fit the budget, the last one cut to fit.
    let mut taken: Vec<&[u8]> = Vec::new();
    let mut bytes = 0;
    for s in samples {
        if bytes >= budget {
            break;
        }
        let part = &s[..s.len().min(budget - bytes)];
        bytes += part.len();
        taken.push(part);
    }
    let dictionary = match opts.zstd_max_train_bytes {
        0 => {
            let mut raw = taken.concat();
            raw.truncate(max_dict);
            raw
        }
        _ => zstd::dict::from_samples(&taken, max_dict).ok()?,
    };
    (dictionary.len() >= MIN_DICTIONARY).then_some(dictionary)
}

/// A dictionary prepared for compression at one level, with its bytes (stored in the table).
pub struct CompressionDictionary {
    bytes: Vec<u8>,
    prepared: CDict<'static>,
}

impl CompressionDictionary {
    /// Prepares `bytes` for compression at `level`; `None` if zstd refuses them.
    pub fn new(bytes: Vec<u8>, level: i32) -> Option<CompressionDictionary> {
        let prepared = CDict::try_create(&bytes, level)?;
        Some(CompressionDictionary { bytes, prepared })
    }

    /// The dictionary's bytes, as the dictionary block stores them.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A table's dictionary prepared for decompression: read once when the table is opened and
/// kept with it.
pub struct DecompressionDictionary {
    prepared: DDict<'static>,
    len: usize,
}

impl std::fmt::Debug for DecompressionDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecompressionDictionary")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl DecompressionDictionary {
    /// Decodes a dictionary block's contents; the error says what is wrong (an empty block,
    /// or bytes that start as a trained dictionary but whose tables zstd cannot load).
    pub fn decode(bytes: &[u8]) -> std::result::Result<DecompressionDictionary, String> {
        if bytes.len() < MIN_DICTIONARY {
            return Err(format!(
                "compression dictionary of {} bytes (at least {MIN_DICTIONARY})",
                bytes.len()
            ));
        }
        let prepared = DDict::try_create(bytes)
            .ok_or("zstd cannot load the compression dictionary (damaged tables)")?;
        Ok(DecompressionDictionary {
            prepared,
            len: bytes.len(),
        })
    }

    /// Bytes of the dictionary.
    pub fn size(&self) -> usize {
        self.len
    }

    /// Undoes the compression of a data block's `contents` (the raw length, then a zstd
    /// frame made with this dictionary), with the thread's zstd context; the error says what
    /// is wrong.
    pub fn decompress_block(&self, contents: &[u8]) -> std::result::Result<Vec<u8>, String> {
        let (raw_len, src) = split_raw_len(Compression::Zstd, contents)?;
        let mut raw = vec![0u8; raw_len];
        let n = with_zstd_context(|dctx| {
            dctx.decompress_using_ddict(&mut raw[..], src, &self.prepared)
                .map_err(|code| format!("zstd: {}", zstd::zstd_safe::get_error_name(code)))
        })?;
        check_decompressed_len(Compression::Zstd, n, raw_len)?;
        Ok(raw)
    }
}

/// Compresses a table's blocks with one [`Compressor`] for the whole table, and the
/// table's dictionary once it has one.
pub struct BlockCompressor {
    kind: Compression,
    /// The contexts every block but a dictionary's data block is compressed with.
    compressor: Compressor,
    dictionary: Option<CompressionDictionary>,
}

impl BlockCompressor {
    /// A compressor of `kind` blocks under `opts`, without a dictionary yet.
    pub fn new(kind: Compression, opts: CompressionOptions) -> BlockCompressor {
        BlockCompressor {
            kind,
            compressor: Compressor::new(opts),
            dictionary: None,
        }
    }

    /// Compresses data blocks with `dictionary` from now on.
    pub fn set_dictionary(&mut self, dictionary: CompressionDictionary) {
        self.dictionary = Some(dictionary);
    }

    /// The dictionary data blocks are compressed with, if any.
    pub fn dictionary(&self) -> Option<&CompressionDictionary> {
        self.dictionary.as_ref()
    }

    /// Compresses `raw` into `out` (cleared first) with `kind` (the table's compression, or
    /// none), with the dictionary when `data_block`; returns the compression used, `None`
    /// when the result would not save at least 1/8 (as [`crate::compression::compress_block`]).
    pub fn compress(
        &mut self,
        kind: Compression,
        raw: &[u8],
        out: &mut Vec<u8>,
        data_block: bool,
    ) -> Compression {
        let dictionary = self
            .dictionary
            .as_ref()
            .filter(|_| data_block && kind == Compression::Zstd && !raw.is_empty());
        match dictionary {
            Some(d) => {
                debug_assert_eq!(kind, self.kind);
                self.compressor
                    .compress_zstd_with(raw, out, |cctx, dst, raw| {
                        cctx.compress_using_cdict(dst, raw, &d.prepared)
                    })
            }
            None => self.compressor.compress(kind, raw, out),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod dictionary_tests {
    use super::*;
    use crate::compression;

    fn opts(max_dict_bytes: u32, zstd_max_train_bytes: u32) -> CompressionOptions {
        CompressionOptions {
            max_dict_bytes,
            zstd_max_train_bytes,
            ..CompressionOptions::default()
        }
    }

    fn blocks() -> Vec<Vec<u8>> {
        (0..200)
            .map(|i| {
                let mut b = vec![0u8];
                for j in 0..40 {
                    b.extend_from_slice(
                        format!(
                            "user{:08}:{{\"name\":\"n{j}\",\"score\":{}}};",
                            i * 40 + j,
                            j * 7
                        )
                        .as_bytes(),
                    );
                }
                b
            })
            .collect()
    }

    /// Raw dictionaries are the samples' first bytes; trained ones are zstd's, at most
    /// `max_dict_bytes`; too little to sample gives none.
    #[test]
    fn dictionaries_are_sampled_or_trained_within_their_budget() {
        let samples = blocks();
        let raw = make_dictionary(&samples, &opts(1000, 0)).unwrap();
        assert_eq!(raw, samples.concat()[..1000]);
        let trained = make_dictionary(&samples, &opts(4096, 100_000)).unwrap();
        assert!(trained.len() <= 4096 && trained[..4] == [0x37, 0xa4, 0x30, 0xec]);
        assert_eq!(make_dictionary(&[vec![0, 1, 2]], &opts(1000, 0)), None);
        assert_eq!(make_dictionary(&[], &opts(1000, 1000)), None);
    }

    /// A block compressed with a dictionary reads back only with it; damaged dictionary
    /// bytes are refused or fail to decompress, never giving other data silently.
    #[test]
    fn blocks_round_trip_with_their_dictionary() {
        let samples = blocks();
        for o in [opts(2048, 0), opts(2048, 60_000)] {
            let bytes = make_dictionary(&samples, &o).unwrap();
            let mut c = BlockCompressor::new(Compression::Zstd, o);
            c.set_dictionary(CompressionDictionary::new(bytes.clone(), 3).unwrap());
            let d = DecompressionDictionary::decode(&bytes).unwrap();
            assert_eq!(d.size(), bytes.len());
            let mut out = Vec::new();
            let block = &samples[150];
            assert_eq!(
                c.compress(Compression::Zstd, block, &mut out, true),
                Compression::Zstd
            );
            let back = d.decompress_block(&out);
            assert_eq!(back.as_ref(), Ok(block));
            // Without it (what an older build would do): an error, not other bytes.
            let plain = compression::decompress_block(Compression::Zstd, &out);
            assert!(plain.is_err() || plain.as_ref() == Ok(block), "{plain:?}");
            // Non-data blocks are compressed without it.
            c.compress(Compression::Zstd, block, &mut out, false);
            assert_eq!(
                compression::decompress_block(Compression::Zstd, &out).as_ref(),
                Ok(block)
            );
        }
        assert!(DecompressionDictionary::decode(b"short").is_err());
        let mut bad_trained = vec![0x37, 0xa4, 0x30, 0xec];
        bad_trained.extend_from_slice(&[0xff; 60]);
        assert!(DecompressionDictionary::decode(&bad_trained).is_err());
    }
}
