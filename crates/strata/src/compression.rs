//! Block compression: the algorithms a table's blocks and WAL records may be stored with,
//! their options, and compressing and decompressing the contents of one block (or record).
//! The framing around them is the table's (`table/format.rs`: trailer, checksum, handles) or
//! the log's (`log.rs`: the compressed record types); a table's zstd dictionary is
//! `table/compression_dict.rs`'s, which builds on this module.
//!
//! Byte layout of a compressed block's contents (on disk; do not change):
//!
//! ```text
//! contents := varint32 raw length | compressed bytes   (snappy's raw format, lz4's block
//!                                                        format, or one zstd frame)
//! ```
//!
//! Invariants: a block is stored compressed only if that saves at least 1/8 of its size. A
//! reader checks the raw length a block claims before it allocates for it: never above
//! [`MAX_RAW_BLOCK`], never more than the algorithm can make of the compressed bytes given
//! (snappy at most 22 bytes per byte, lz4 at most 255), and for zstd equal to the size the
//! frame's header declares (every frame Strata writes declares one; a frame without is
//! refused, as nothing would bound what it makes). A damaged or crafted length is then an
//! error naming the mismatch, not an allocation of up to a gigabyte.
//!
//! Each thread keeps one zstd decompression context (`with_zstd_context`) for every zstd
//! block it reads, with a dictionary or without: a context costs an allocation of about
//! 100 KiB and its set-up, more than decompressing a 4 KiB block.

use std::cell::RefCell;

use zstd::zstd_safe::{CCtx, DCtx, SafeResult};

use crate::codec::{get_varint32, put_varint32, varint_len};

/// The largest raw block a reader accepts (a corrupt length must not allocate gigabytes).
pub(crate) const MAX_RAW_BLOCK: usize = 1 << 30;

/// The most raw bytes snappy makes of one compressed byte: a 3-byte copy element makes at
/// most 64.
const SNAPPY_MAX_RATIO: usize = 22;
/// The most raw bytes lz4 makes of one compressed byte: each extra match-length byte adds at
/// most 255.
const LZ4_MAX_RATIO: usize = 255;

/// Per-block compression. The numbers are on disk (RocksDB's numbering).
///
/// The example of [`Options`](crate::Options) sets it per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
#[non_exhaustive]
pub enum Compression {
    /// Stored as is.
    #[default]
    None = 0,
    /// Snappy (raw format).
    Snappy = 1,
    /// LZ4 (block format).
    Lz4 = 4,
    /// Zstandard (level 3 for tables unless `CompressionOptions::level` says otherwise; level
    /// -1 for WAL records).
    Zstd = 7,
}

impl Compression {
    /// The compression stored as `byte`, if any.
    pub fn from_byte(byte: u8) -> Option<Compression> {
        match byte {
            0 => Some(Compression::None),
            1 => Some(Compression::Snappy),
            4 => Some(Compression::Lz4),
            7 => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// The name used by options, properties and db_bench (`none`, `snappy`, `lz4`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// The compression with this name.
    pub fn from_name(name: &str) -> Option<Compression> {
        [
            Compression::None,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

/// Options of block compression, as RocksDB's `CompressionOptions` (the part Strata has).
///
/// # Examples
///
/// ```
/// use strata::{Compression, Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.compression = Compression::Zstd;
/// options.compression_opts.level = 19; // smaller, slower to write
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"k", b"v")?;
/// db.flush()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompressionOptions {
    /// The compressor's level; [`CompressionOptions::DEFAULT_LEVEL`] (RocksDB's
    /// `kDefaultCompressionLevel`, 32767) for its default (zstd 3). Zstd takes its levels
    /// (negative ones are faster; up to 22); snappy and lz4 have no levels and ignore it.
    /// Readers need nothing of it: the format is the same at every level.
    pub level: i32,
    /// Bytes of the zstd dictionary each table's data blocks are compressed with (RocksDB's
    /// `max_dict_bytes`); 0, the default, compresses without one. Only zstd uses it. The
    /// table builder holds its first data blocks in memory until it has sampled
    /// `zstd_max_train_bytes` of them (`max_dict_bytes` when that is 0), makes the
    /// dictionary from the samples, then compresses and writes them and every later data
    /// block with it; the dictionary is stored once in the table (`compression_dict.rs`).
    pub max_dict_bytes: u32,
    /// Bytes of samples a zstd dictionary is trained on (RocksDB's `zstd_max_train_bytes`;
    /// RocksDB suggests 100 times `max_dict_bytes`); 0, the default, takes the first
    /// `max_dict_bytes` of the table's data blocks as the dictionary as they are, untrained.
    pub zstd_max_train_bytes: u32,
}

impl CompressionOptions {
    /// The options at the compressor's default level, without a dictionary (what `default`
    /// gives; a `const` for statics).
    pub const DEFAULT: CompressionOptions = CompressionOptions {
        level: Self::DEFAULT_LEVEL,
        max_dict_bytes: 0,
        zstd_max_train_bytes: 0,
    };

    /// Whether tables compressed with `kind` under these options get a dictionary.
    pub fn uses_dictionary(&self, kind: Compression) -> bool {
        kind == Compression::Zstd && self.max_dict_bytes > 0
    }

    /// Bytes of data blocks a table builder samples before it makes its dictionary.
    pub fn dictionary_sample_bytes(&self) -> usize {
        match self.zstd_max_train_bytes {
            0 => self.max_dict_bytes as usize,
            train => train as usize,
        }
    }

    /// The level that stands for "the compressor's default" (RocksDB's value).
    pub const DEFAULT_LEVEL: i32 = 32767;

    /// Checks the level against what `kind` accepts; the error names it.
    pub fn check(&self, kind: Compression) -> std::result::Result<(), String> {
        if self.level == Self::DEFAULT_LEVEL || kind != Compression::Zstd {
            return Ok(());
        }
        let range = zstd::compression_level_range();
        if range.contains(&self.level) {
            return Ok(());
        }
        Err(format!(
            "compression level {} is not a zstd level ({} to {}, or {} for the default)",
            self.level,
            range.start(),
            range.end(),
            Self::DEFAULT_LEVEL
        ))
    }

    /// The zstd level to compress at.
    pub(crate) fn zstd_level(&self) -> i32 {
        match self.level {
            Self::DEFAULT_LEVEL => ZSTD_DEFAULT_LEVEL,
            level => level,
        }
    }
}

impl Default for CompressionOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Zstd's level when none is given (its own default).
const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// Compresses `raw` with `kind` into `out` (cleared first) and returns the compression used:
/// `None` when the result would not save at least 1/8.
pub fn compress_block(kind: Compression, raw: &[u8], out: &mut Vec<u8>) -> Compression {
    compress_block_with(kind, &CompressionOptions::default(), raw, out)
}

/// Whether a block of `raw` bytes that compresses to `stored` bytes is worth storing
/// compressed: it must save at least an eighth, or the block is stored raw and its reads
/// skip the decompression.
pub fn worth_storing(stored: usize, raw: usize) -> bool {
    stored <= raw - raw / 8
}

/// [`compress_block`] with `opts` (the level).
pub fn compress_block_with(
    kind: Compression,
    opts: &CompressionOptions,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> Compression {
    out.clear();
    if kind == Compression::None || raw.is_empty() {
        return Compression::None;
    }
    put_varint32(out, raw.len() as u32);
    let header = out.len();
    let ok = match kind {
        Compression::None => false,
        Compression::Snappy => {
            out.resize(header + snap::raw::max_compress_len(raw.len()), 0);
            match snap::raw::Encoder::new().compress(raw, &mut out[header..]) {
                Ok(n) => {
                    out.truncate(header + n);
                    true
                }
                Err(_) => false,
            }
        }
        Compression::Lz4 => {
            out.resize(
                header + lz4_flex::block::get_maximum_output_size(raw.len()),
                0,
            );
            match lz4_flex::block::compress_into(raw, &mut out[header..]) {
                Ok(n) => {
                    out.truncate(header + n);
                    true
                }
                Err(_) => false,
            }
        }
        Compression::Zstd => match zstd::bulk::compress(raw, opts.zstd_level()) {
            Ok(c) => {
                out.extend_from_slice(&c);
                true
            }
            Err(_) => false,
        },
    };
    if ok && worth_storing(out.len(), raw.len()) {
        kind
    } else {
        out.clear();
        Compression::None
    }
}

/// Compresses one block or record after another in the format [`compress_block_with`]
/// makes (a zstd frame is kept when the frame alone saves an eighth), with contexts it
/// keeps: one zstd context (zstd's one-shot call makes one per call, whose
/// set-up costs more than compressing a 4 KiB block, or a WAL record, at any level) and one
/// snappy encoder (a new one allocates and zeroes a 32 KiB hash table each time), whose
/// output buffer keeps its length so that it is not zeroed for each block. A table builder
/// keeps one for its table, a WAL writer one for its records. An output buffer grown past
/// [`KEPT_BUFFER`] by a large record is not kept.
pub struct Compressor {
    opts: CompressionOptions,
    zstd: Option<CCtx<'static>>,
    /// zstd's output: zstd writes from the start of the buffer it is given.
    scratch: Vec<u8>,
    snappy: snap::raw::Encoder,
    /// Snappy's output, at the largest length a block needed so far (bytes past the last
    /// block's output are stale).
    snappy_out: Vec<u8>,
}

/// The largest output buffer a [`Compressor`] keeps for the next call.
const KEPT_BUFFER: usize = 1 << 20;

impl Compressor {
    /// A compressor under `opts` (zstd's level).
    pub fn new(opts: CompressionOptions) -> Compressor {
        Compressor {
            opts,
            zstd: None,
            scratch: Vec::new(),
            snappy: snap::raw::Encoder::new(),
            snappy_out: Vec::new(),
        }
    }

    /// Compresses `raw` into `out` (cleared first) with `kind`; returns the compression used,
    /// `None` when the result would not save at least 1/8. The same bytes as
    /// [`compress_block_with`] makes.
    pub fn compress(&mut self, kind: Compression, raw: &[u8], out: &mut Vec<u8>) -> Compression {
        if raw.is_empty() {
            return compress_block_with(kind, &self.opts, raw, out);
        }
        match kind {
            Compression::Snappy => self.compress_snappy(raw, out),
            Compression::Zstd => {
                let level = self.opts.zstd_level();
                self.compress_zstd_with(raw, out, |cctx, dst, raw| cctx.compress(dst, raw, level))
            }
            _ => compress_block_with(kind, &self.opts, raw, out),
        }
    }

    /// [`Compressor::compress`] with zstd, the frame made by `frame` (given the kept context,
    /// the buffer to write into from its start, and `raw`): a dictionary's caller passes its
    /// own.
    pub(crate) fn compress_zstd_with(
        &mut self,
        raw: &[u8],
        out: &mut Vec<u8>,
        frame: impl FnOnce(&mut CCtx<'static>, &mut Vec<u8>, &[u8]) -> SafeResult,
    ) -> Compression {
        if self.zstd.is_none() {
            self.zstd = CCtx::try_create();
        }
        let Some(cctx) = self.zstd.as_mut() else {
            return compress_block_with(Compression::Zstd, &self.opts, raw, out);
        };
        self.scratch.clear();
        self.scratch
            .reserve(zstd::zstd_safe::compress_bound(raw.len()));
        let result = frame(cctx, &mut self.scratch, raw);
        out.clear();
        let used = match result {
            Ok(_) if worth_storing(self.scratch.len(), raw.len()) => {
                put_varint32(out, raw.len() as u32);
                out.extend_from_slice(&self.scratch);
                Compression::Zstd
            }
            _ => Compression::None,
        };
        if self.scratch.capacity() > KEPT_BUFFER {
            self.scratch = Vec::new();
        }
        used
    }

    /// [`Compressor::compress`] with snappy.
    fn compress_snappy(&mut self, raw: &[u8], out: &mut Vec<u8>) -> Compression {
        out.clear();
        let max = snap::raw::max_compress_len(raw.len());
        if max == 0 {
            return Compression::None; // beyond what snappy takes
        }
        if self.snappy_out.len() < max {
            self.snappy_out.resize(max, 0);
        }
        let compressed = self.snappy.compress(raw, &mut self.snappy_out[..max]);
        let used = match compressed {
            Ok(n) if worth_storing(varint_len(raw.len() as u64) + n, raw.len()) => {
                put_varint32(out, raw.len() as u32);
                out.extend_from_slice(&self.snappy_out[..n]);
                Compression::Snappy
            }
            _ => Compression::None,
        };
        if self.snappy_out.len() > KEPT_BUFFER {
            self.snappy_out = Vec::new();
        }
        used
    }
}

/// Undoes [`compress_block`] (a block compressed without a dictionary); the error says what
/// is wrong.
pub fn decompress_block(
    kind: Compression,
    contents: &[u8],
) -> std::result::Result<Vec<u8>, String> {
    if kind == Compression::None {
        return Ok(contents.to_vec());
    }
    let (raw_len, src) = split_raw_len(kind, contents)?;
    let mut raw = vec![0u8; raw_len];
    let n = match kind {
        Compression::None => unreachable!("handled above"),
        Compression::Snappy => snap::raw::Decoder::new()
            .decompress(src, &mut raw)
            .map_err(|e| format!("snappy: {e}"))?,
        Compression::Lz4 => {
            lz4_flex::block::decompress_into(src, &mut raw).map_err(|e| format!("lz4: {e}"))?
        }
        Compression::Zstd => with_zstd_context(|dctx| {
            dctx.decompress(&mut raw[..], src)
                .map_err(|code| format!("zstd: {}", zstd::zstd_safe::get_error_name(code)))
        })?,
    };
    check_decompressed_len(kind, n, raw_len)?;
    Ok(raw)
}

/// Splits a compressed block's `contents` (of `kind`, not `None`) into the raw length it
/// claims and the compressed bytes, after checking the length against what `kind` can make
/// of those bytes (this module's invariants); the error names what is wrong.
pub(crate) fn split_raw_len(
    kind: Compression,
    contents: &[u8],
) -> std::result::Result<(usize, &[u8]), String> {
    let mut src = contents;
    let raw_len = get_varint32(&mut src).ok_or("bad raw length of a compressed block")? as usize;
    if raw_len > MAX_RAW_BLOCK {
        return Err(format!("compressed block claims {raw_len} raw bytes"));
    }
    let most = |ratio: usize| src.len().saturating_mul(ratio);
    match kind {
        Compression::None => {}
        Compression::Snappy if raw_len > most(SNAPPY_MAX_RATIO) => {
            return Err(too_many(kind, raw_len, src.len()));
        }
        Compression::Lz4 if raw_len > most(LZ4_MAX_RATIO) => {
            return Err(too_many(kind, raw_len, src.len()));
        }
        Compression::Snappy | Compression::Lz4 => {}
        Compression::Zstd => match zstd::zstd_safe::get_frame_content_size(src) {
            Ok(Some(declared)) if declared != raw_len as u64 => {
                return Err(format!(
                    "compressed block claims {raw_len} raw bytes, its zstd frame {declared}"
                ));
            }
            Ok(Some(_)) => {}
            // Without a declared size nothing bounds what the frame makes (zstd's runs repeat
            // a byte without limit): refused, as no writer of Strata's makes such a frame.
            Ok(None) => return Err("zstd: the frame declares no raw size".into()),
            Err(_) => return Err("zstd: the block holds no zstd frame".into()),
        },
    }
    Ok((raw_len, src))
}

/// The error of a raw length that `kind` cannot make of `compressed` bytes.
fn too_many(kind: Compression, raw_len: usize, compressed: usize) -> String {
    format!(
        "compressed block claims {raw_len} raw bytes, more than {} makes of {compressed}",
        kind.name()
    )
}

/// Checks that a block of `kind` decompressed to the `n` bytes it claimed (`raw_len`).
pub(crate) fn check_decompressed_len(
    kind: Compression,
    n: usize,
    raw_len: usize,
) -> std::result::Result<(), String> {
    if n != raw_len {
        return Err(format!(
            "{} block decompressed to {n} bytes, expected {raw_len}",
            kind.name()
        ));
    }
    Ok(())
}

/// Runs `f` with this thread's zstd decompression context (made at the thread's first zstd
/// block).
pub(crate) fn with_zstd_context<T>(
    f: impl FnOnce(&mut DCtx<'static>) -> std::result::Result<T, String>,
) -> std::result::Result<T, String> {
    ZSTD_CONTEXT.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(DCtx::try_create().ok_or("zstd: out of memory for a context")?);
        }
        f(slot.as_mut().ok_or("zstd: no context")?)
    })
}

thread_local! {
    /// Each thread's zstd decompression context.
    static ZSTD_CONTEXT: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_levels_round_trip_and_bad_levels_are_refused() {
        let text = b"a value that compresses well, ".repeat(200);
        for level in [-5, 1, 3, 19, CompressionOptions::DEFAULT_LEVEL] {
            let opts = CompressionOptions {
                level,
                ..CompressionOptions::default()
            };
            opts.check(Compression::Zstd).unwrap();
            let mut out = Vec::new();
            let kind = compress_block_with(Compression::Zstd, &opts, &text, &mut out);
            assert_eq!(kind, Compression::Zstd, "{level}");
            assert_eq!(decompress_block(kind, &out).unwrap(), text, "{level}");
        }
        for level in [23, 1000, -1_000_000] {
            let at = CompressionOptions {
                level,
                ..CompressionOptions::default()
            };
            let e = at.check(Compression::Zstd).unwrap_err();
            assert!(e.contains(&level.to_string()) && e.contains("zstd"), "{e}");
            // Levels mean nothing to the others.
            at.check(Compression::Lz4).unwrap();
        }
    }

    #[test]
    fn every_compression_round_trips_and_incompressible_data_stays_raw() {
        let text: Vec<u8> = b"strata compresses repetitive text well. ".repeat(100);
        let noise: Vec<u8> = {
            let mut r = crate::util::Rng::new(3);
            (0..4000).map(|_| r.next_u64() as u8).collect()
        };
        for kind in [Compression::Snappy, Compression::Lz4, Compression::Zstd] {
            let mut out = Vec::new();
            assert_eq!(compress_block(kind, &text, &mut out), kind);
            assert!(out.len() < text.len() / 4);
            assert_eq!(decompress_block(kind, &out).unwrap(), text);
            assert_eq!(compress_block(kind, &noise, &mut out), Compression::None);
            assert!(decompress_block(kind, b"\x05garbage").is_err());
            assert_eq!(Compression::from_name(kind.name()), Some(kind));
        }
    }

    /// Raw lengths that the compressed bytes cannot hold are refused before anything is
    /// allocated for them, each with a message naming the mismatch.
    #[test]
    fn impossible_raw_lengths_are_refused_naming_the_mismatch() {
        let text = b"strata compresses repetitive text well. ".repeat(100);
        let cases: [(Compression, u32, &str); 6] = [
            (Compression::Snappy, 1 << 20, "more than snappy makes"),
            (Compression::Lz4, 1 << 24, "more than lz4 makes"),
            (Compression::Zstd, 4001, "its zstd frame 4000"),
            (Compression::Zstd, 3999, "its zstd frame 4000"),
            (
                Compression::Snappy,
                (MAX_RAW_BLOCK + 1) as u32,
                "claims 1073741825",
            ),
            (
                Compression::Zstd,
                (MAX_RAW_BLOCK + 1) as u32,
                "claims 1073741825",
            ),
        ];
        for (kind, claimed, expected) in cases {
            let mut out = Vec::new();
            assert_eq!(compress_block(kind, &text, &mut out), kind);
            // The same compressed bytes behind a different raw length.
            let mut src = &out[..];
            get_varint32(&mut src).unwrap();
            let mut forged = Vec::new();
            put_varint32(&mut forged, claimed);
            forged.extend_from_slice(src);
            let e = decompress_block(kind, &forged).unwrap_err();
            assert!(e.contains(expected), "{kind:?} {claimed}: {e}");
        }
        let e = decompress_block(Compression::Zstd, b"\x05not a frame").unwrap_err();
        assert!(e.contains("no zstd frame"), "{e}");
        // A frame that declares no size (zstd's streaming encoder, told nothing of the
        // input, makes one): refused whatever length it claims, even the right one.
        let frame = zstd::stream::encode_all(&text[..], 1).unwrap();
        assert!(matches!(
            zstd::zstd_safe::get_frame_content_size(&frame),
            Ok(None)
        ));
        let mut forged = Vec::new();
        put_varint32(&mut forged, text.len() as u32);
        forged.extend_from_slice(&frame);
        let e = decompress_block(Compression::Zstd, &forged).unwrap_err();
        assert!(e.contains("declares no raw size"), "{e}");
    }

    /// One thread decompresses zstd blocks with and without a level of its own in turn
    /// through its one context: each comes back whole.
    #[test]
    fn one_context_serves_every_zstd_block_of_a_thread() {
        let blocks: Vec<Vec<u8>> = (0..20)
            .map(|i| {
                format!("block {i} of repetitive text, ")
                    .repeat(50 + i)
                    .into_bytes()
            })
            .collect();
        for (i, raw) in blocks.iter().enumerate() {
            let opts = CompressionOptions {
                level: [1, 3, 19][i % 3],
                ..CompressionOptions::default()
            };
            let mut out = Vec::new();
            assert_eq!(
                compress_block_with(Compression::Zstd, &opts, raw, &mut out),
                Compression::Zstd
            );
            assert_eq!(&decompress_block(Compression::Zstd, &out).unwrap(), raw);
        }
    }
}
