//! Tables under every compression, with and without a dictionary, under each checksum type:
//! each written, read back key by key and in order, and opened again by a reader whose
//! options name another checksum; and damaged, byte by byte and in the blocks that matter.

use std::path::Path;
use std::sync::Arc;

use crate::iterator::InternalIterator;
use crate::table::compression::{self, Compression, CompressionOptions};
use crate::table::compression_dict::BlockCompressor;
use crate::table::format::{
    self, ChecksumType, Footer, FOOTER_LEN, TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT,
};
use crate::table::reader::TableReadOptions;
use crate::table::tests::MemFile;
use crate::table::{IndexType, Table, TableOptions};
use crate::testing::harness::Entry;
use crate::testing::lsm::{open_table, write_table, Caching};
use crate::ErrorKind;

/// The dictionary a case asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dict {
    /// `max_dict_bytes` 0.
    Off,
    /// The first `max_dict_bytes` of the samples (`zstd_max_train_bytes` 0).
    Raw,
    /// Trained by zstd on `zstd_max_train_bytes` of samples.
    Trained,
}

/// Entries whose values share strings (what a dictionary is for), `n` of them.
fn entries(n: u32) -> Vec<Entry> {
    (0..n)
        .map(|i| {
            let key = format!("user:{:06}", i * 7).into_bytes();
            let value = format!(
                "{{\"id\":{i},\"name\":\"customer {}\",\"city\":\"{}\",\"balance\":{}}}",
                i % 97,
                ["Lisbon", "Oslo", "Quito", "Perth"][i as usize % 4],
                i * 31 % 1000
            );
            (key, value.into_bytes())
        })
        .collect()
}

fn options(
    compression: Compression,
    dict: Dict,
    checksum: ChecksumType,
    index: IndexType,
) -> TableOptions {
    let (max_dict_bytes, zstd_max_train_bytes) = match dict {
        Dict::Off => (0, 0),
        Dict::Raw => (2048, 0),
        Dict::Trained => (2048, 20_000),
    };
    TableOptions {
        block_size: 1024,
        compression,
        compression_opts: CompressionOptions {
            max_dict_bytes,
            zstd_max_train_bytes,
            ..CompressionOptions::default()
        },
        checksum,
        index_type: index,
        partition_filters: index == IndexType::TwoLevelIndexSearch,
        metadata_block_size: 256,
        ..TableOptions::default()
    }
}

/// Reads every entry back by point lookup and in order.
fn check_reads_back(table: &Arc<Table>, model: &[Entry], case: &str) {
    for (k, v) in model {
        let got = table.get(k, |key, value| (key.to_vec(), value.to_vec()));
        assert_eq!(got.unwrap(), Some((k.clone(), v.clone())), "{case}");
    }
    let mut it = table.iter();
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert!(it.status().is_ok(), "{case}");
    assert!(seen == model, "{case}: iteration differs");
    assert_eq!(table.verify().unwrap(), model.len() as u64, "{case}");
}

fn footer_of(path: &Path) -> Footer {
    let bytes = std::fs::read(path).unwrap();
    Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap()
}

/// compression x dictionary x checksum x index layout: every key reads back, through a
/// block cache and without, and again from a reader whose options name the other checksum
/// (the footer decides). A dictionary is made only for zstd; only a dictionary or xxh3
/// raises the format version.
#[test]
fn every_compression_dictionary_and_checksum_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let model = entries(3000);
    let small = entries(3);
    let mut case_number = 0;
    for compression in [
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        for dict in [Dict::Off, Dict::Raw, Dict::Trained] {
            for checksum in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
                for index in [IndexType::BinarySearch, IndexType::TwoLevelIndexSearch] {
                    for model in [&model, &small] {
                        case_number += 1;
                        let case = format!(
                            "case {case_number}: {compression:?}, dictionary {dict:?}, \
                             {checksum:?}, {index:?}, {} entries",
                            model.len()
                        );
                        let o = options(compression, dict, checksum, index);
                        let path = dir.path().join(format!("{case_number}.sst"));
                        write_table(&path, model, o.clone());
                        // Zstd cannot train on three entries; raw samples serve.
                        let expect_dict = compression == Compression::Zstd
                            && match dict {
                                Dict::Off => false,
                                Dict::Raw => true,
                                Dict::Trained => model.len() > 100,
                            };
                        for caching in [Caching::None, Caching::Data, Caching::All] {
                            let t = open_table(&path, o.clone(), caching).unwrap();
                            assert_eq!(t.checksum_type(), checksum, "{case}");
                            let dict_bytes = t.compression_dictionary_bytes();
                            assert_eq!(dict_bytes > 0, expect_dict, "{case}: {dict_bytes}");
                            assert!(dict_bytes <= 2048, "{case}");
                            check_reads_back(&t, model, &case);
                        }
                        let footer = footer_of(&path);
                        let v6 = expect_dict || checksum != ChecksumType::Crc32c;
                        assert_eq!(
                            footer.version == TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT,
                            v6,
                            "{case}"
                        );
                        // Reopened by a reader configured for the other checksum.
                        let other = TableOptions {
                            checksum: match checksum {
                                ChecksumType::Crc32c => ChecksumType::Xxh3,
                                _ => ChecksumType::Crc32c,
                            },
                            ..o
                        };
                        let t = open_table(&path, other, Caching::Data).unwrap();
                        check_reads_back(&t, model, &case);
                    }
                }
            }
        }
    }
}

/// A dictionary makes the data blocks of a table of similar values smaller (the reason to
/// have one): sizes, not speed, which are the same on every run.
#[test]
fn a_dictionary_shrinks_the_data_blocks_of_similar_values() {
    let dir = tempfile::tempdir().unwrap();
    let model = entries(3000);
    let data_bytes = |dict| {
        let path = dir.path().join(format!("{dict:?}.sst"));
        let o = options(
            Compression::Zstd,
            dict,
            ChecksumType::Crc32c,
            IndexType::BinarySearch,
        );
        write_table(&path, &model, o.clone());
        open_table(&path, o, Caching::None)
            .unwrap()
            .properties()
            .data_bytes
    };
    let plain = data_bytes(Dict::Off);
    let raw = data_bytes(Dict::Raw);
    let trained = data_bytes(Dict::Trained);
    assert!(raw < plain && trained < plain, "{plain} {raw} {trained}");
}

/// Any flipped byte of a table with a dictionary and xxh3 checksums is reported as
/// corruption naming the file by open or verify; never wrong data or a panic.
#[test]
fn every_flipped_byte_of_a_dictionary_table_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let model = entries(400);
    for checksum in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
        let o = TableOptions {
            block_size: 512,
            ..options(
                Compression::Zstd,
                Dict::Raw,
                checksum,
                IndexType::BinarySearch,
            )
        };
        let path = dir.path().join("t.sst");
        write_table(&path, &model, o.clone());
        let good = std::fs::read(&path).unwrap();
        for i in 0..good.len() {
            let mut bytes = good.clone();
            bytes[i] ^= 1 << (i % 8);
            let result = Table::open(
                Box::new(MemFile(bytes)),
                Path::new("bad.sst"),
                &TableReadOptions::uncached(o.clone()),
            )
            .and_then(|t| Arc::new(t).verify());
            let err = result.expect_err(&format!("flip at {i} went unnoticed"));
            assert_eq!(err.kind(), ErrorKind::Corruption, "flip at {i}: {err}");
            assert!(err.to_string().contains("bad.sst"), "{err}");
        }
    }
}

/// The handle of the dictionary block, from the meta-index of the table at `path`.
fn dictionary_handle(path: &Path) -> format::BlockHandle {
    use crate::table::block::{Block, BlockIter, BlockOrder};
    let bytes = std::fs::read(path).unwrap();
    let footer = footer_of(path);
    let h = footer.metaindex;
    let meta = bytes[h.offset as usize..(h.offset + h.size) as usize].to_vec();
    let mut it = BlockIter::new(Arc::new(Block::new(meta).unwrap()), BlockOrder::BYTEWISE);
    it.seek(crate::table::compression_dict::META_NAME);
    assert_eq!(it.key(), crate::table::compression_dict::META_NAME);
    format::BlockHandle::decode_from(&mut it.value()).unwrap()
}

/// Damage in a data block fails the read of that block, and damage in the dictionary
/// fails the open, each naming the table and where (the dictionary by name). Damage the
/// checksum cannot see (rewritten to match) is the decoder's: no panic.
#[test]
fn a_damaged_data_block_or_dictionary_is_an_error_naming_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let model = entries(2000);
    let o = options(
        Compression::Zstd,
        Dict::Trained,
        ChecksumType::Xxh3,
        IndexType::BinarySearch,
    );
    let path = dir.path().join("000042.sst");
    write_table(&path, &model, o.clone());
    let good = std::fs::read(&path).unwrap();
    let table = open_table(&path, o.clone(), Caching::None).unwrap();
    let first_data = table.data_block_handles().unwrap()[3];
    let dict = dictionary_handle(&path);
    drop(table);
    let damage = |at: u64, block: Option<format::BlockHandle>| {
        let mut bytes = good.clone();
        bytes[at as usize] ^= 0x10;
        if let Some(h) = block {
            let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
            let kind = bytes[end];
            let sum = ChecksumType::Xxh3.block_checksum(&bytes[start..end], kind);
            bytes[end + 1..end + 5].copy_from_slice(&sum.to_le_bytes());
        }
        std::fs::write(&path, &bytes).unwrap();
    };
    let read_all = || -> crate::Result<u64> {
        let t = open_table(&path, o.clone(), Caching::None)?;
        t.verify()
    };
    // A data block, caught by its checksum.
    damage(first_data.offset + 8, None);
    let err = read_all().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    let msg = err.to_string();
    assert!(msg.contains("000042.sst") && msg.contains("xxh3"), "{msg}");
    // The dictionary, caught by its checksum at open.
    damage(dict.offset + 40, None);
    let msg = read_all().unwrap_err().to_string();
    assert!(
        msg.contains("000042.sst") && msg.contains("compression dictionary block"),
        "{msg}"
    );
    // The dictionary with its checksum rewritten: a raw-content dictionary would decode
    // to other data; a trained one (this one) has tables zstd checks, or decodes blocks
    // wrongly. Either way: no panic, and an error whenever the damage is seen.
    damage(dict.offset + 2, Some(dict));
    if let Err(e) = read_all() {
        assert!(e.to_string().contains("000042.sst"), "{e}");
    }
}

/// Writes the seed inputs of the `compression_dict` fuzz target (only with
/// `STRATA_WRITE_SEEDS` set): a raw and a trained dictionary, each with a data block
/// compressed with it, in the target's layout.
#[test]
fn write_compression_dict_fuzz_seeds() {
    use crate::table::compression_dict::{make_dictionary, BlockCompressor, CompressionDictionary};
    if std::env::var_os("STRATA_WRITE_SEEDS").is_none() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/compression_dict");
    std::fs::create_dir_all(&dir).unwrap();
    let samples: Vec<Vec<u8>> = entries(400)
        .chunks(4)
        .map(|c| {
            c.iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()].concat())
                .collect()
        })
        .collect();
    for (name, train) in [("seed-raw", 0), ("seed-trained", 30_000)] {
        let o = CompressionOptions {
            max_dict_bytes: 512,
            zstd_max_train_bytes: train,
            ..CompressionOptions::default()
        };
        let dict = make_dictionary(&samples, &o).unwrap();
        let mut c = BlockCompressor::new(Compression::Zstd, o);
        c.set_dictionary(CompressionDictionary::new(dict.clone(), 3).unwrap());
        let mut block = Vec::new();
        c.compress(Compression::Zstd, &samples[15], &mut block, true);
        let mut input = (dict.len() as u16).to_le_bytes().to_vec();
        input.extend_from_slice(&dict);
        input.extend_from_slice(&block);
        std::fs::write(dir.join(name), input).unwrap();
    }
}

/// The table's snappy encoder (kept from block to block, its output buffer never shrunk)
/// makes the bytes a fresh one makes, for blocks of every size in any order, and they read
/// back; a block snappy cannot shrink by 1/8 is stored as is.
#[test]
fn a_kept_snappy_encoder_makes_the_bytes_of_a_fresh_one() {
    let mut seed = 7u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 56) as u8
            })
            .collect()
    };
    let text = |n: usize| -> Vec<u8> {
        b"key000123 value of a row "
            .iter()
            .cycle()
            .take(n)
            .copied()
            .collect()
    };
    let blocks: Vec<(&str, Vec<u8>)> = vec![
        ("text 4 KiB", text(4096)),
        ("text 100 KiB (several snappy blocks)", text(100 << 10)),
        ("noise 4 KiB after a larger block", noise(4096)),
        ("text 1 byte", text(1)),
        ("text 20 bytes", text(20)),
        ("half noise", [noise(2048), text(2048)].concat()),
        ("text 4 KiB again", text(4096)),
    ];
    let mut kept = BlockCompressor::new(Compression::Snappy, CompressionOptions::default());
    for (case, raw) in &blocks {
        let (mut ours, mut fresh) = (Vec::new(), Vec::new());
        let kind = kept.compress(Compression::Snappy, raw, &mut ours, true);
        let fresh_kind = compression::compress_block(Compression::Snappy, raw, &mut fresh);
        assert_eq!((kind, &ours), (fresh_kind, &fresh), "{case}");
        if kind == Compression::Snappy {
            let back = compression::decompress_block(kind, &ours).unwrap();
            assert_eq!(&back[..], &raw[..], "{case}");
        }
    }
}
