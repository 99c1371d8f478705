//! The compression a database chooses for each table it writes, read back from the
//! tables' properties: `compression_per_level` by output level (flushes take the first),
//! `bottommost_compression` (with its own options: a dictionary) for the bottommost level,
//! and the block checksum; every table reads back whatever the options say when it is
//! opened again.

use std::collections::BTreeMap;

use strata::{ChecksumType, Compression, CompressionOptions, Db, Options};

fn options(dir: &std::path::Path) -> Options {
    let mut o = Options::default();
    o.create_if_missing = true;
    o.disable_auto_compactions = true;
    o.num_levels = 4;
    o.compression_per_level = vec![Compression::None, Compression::Snappy, Compression::Lz4];
    o.bottommost_compression = Some(Compression::Zstd);
    let mut bottom = CompressionOptions::default();
    bottom.max_dict_bytes = 4096;
    o.bottommost_compression_opts = Some(bottom);
    o.checksum = ChecksumType::Xxh3;
    let _ = dir;
    o
}

fn value(i: u32, round: u32) -> String {
    format!("{{\"id\":{i},\"round\":{round},\"text\":\"a value that compresses\"}}")
}

/// (level, compression name) of every live table.
fn compressions(db: &Db) -> Vec<(usize, String)> {
    let cf = db.default_cf();
    let props: BTreeMap<String, strata::TableProperties> =
        db.properties_of_all_tables(&cf).unwrap();
    let mut out: Vec<(usize, String)> = db
        .live_files_metadata()
        .into_iter()
        .map(|f| {
            let p = props
                .iter()
                .find(|(name, _)| name.ends_with(&f.name) || f.name.ends_with(name.as_str()))
                .unwrap_or_else(|| panic!("no properties for {}: {:?}", f.name, props.keys()));
            (f.level, p.1.compression.clone())
        })
        .collect();
    out.sort();
    out
}

fn write_round(db: &Db, round: u32) {
    for i in 0..2000 {
        db.put(format!("key{i:05}"), value(i, round)).unwrap();
    }
    db.flush().unwrap();
}

fn names(db: &Db, level: usize) -> Vec<String> {
    db.live_files_metadata()
        .into_iter()
        .filter(|f| f.level == level)
        .map(|f| f.name)
        .collect()
}

#[test]
fn each_level_gets_its_compression_and_the_bottommost_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(dir.path())).unwrap();
    let cf = db.default_cf();
    // The bottommost level (3): bottommost_compression, with a dictionary. Two tables, so
    // that they are merged (one alone would be moved down as it is).
    write_round(&db, 0);
    write_round(&db, 0);
    db.compact_range(None, None).unwrap();
    let bottom = compressions(&db);
    assert!(
        !bottom.is_empty() && bottom.iter().all(|(l, c)| *l == 3 && c == "zstd"),
        "{bottom:?}"
    );
    // Flushes: level 0, compression_per_level[0].
    write_round(&db, 1);
    write_round(&db, 2);
    let above = |db: &Db| -> Vec<(usize, String)> {
        compressions(db)
            .into_iter()
            .filter(|(l, _)| *l < 3)
            .collect()
    };
    assert_eq!(
        above(&db),
        vec![(0, "none".to_string()), (0, "none".to_string())]
    );
    // Level 1 takes [1] and level 2 [2]: older data below them is not bottommost. Two
    // overlapping tables are merged, not moved.
    db.compact_files(&cf, &names(&db, 0), 1).unwrap();
    let l1 = above(&db);
    assert!(
        !l1.is_empty() && l1.iter().all(|(l, c)| *l == 1 && c == "snappy"),
        "{l1:?}"
    );
    write_round(&db, 3);
    let inputs = [names(&db, 0), names(&db, 1)].concat();
    db.compact_files(&cf, &inputs, 2).unwrap();
    let l2 = above(&db);
    assert!(
        !l2.is_empty() && l2.iter().all(|(l, c)| *l == 2 && c == "lz4"),
        "{l2:?}"
    );
    // All of it into the bottommost level again.
    db.compact_range(None, None).unwrap();
    let bottom = compressions(&db);
    assert!(
        !bottom.is_empty() && bottom.iter().all(|(l, c)| *l == 3 && c == "zstd"),
        "{bottom:?}"
    );
    for i in (0..2000).step_by(97) {
        assert_eq!(
            db.get(format!("key{i:05}")).unwrap(),
            Some(value(i, 3).into_bytes())
        );
    }
    drop(db);
    // Opened again with other choices (crc32c, no per-level list): the tables written
    // under the old ones read back, each by its own footer and dictionary.
    let mut o = Options::default();
    o.checksum = ChecksumType::Crc32c;
    let db = Db::open(dir.path(), o).unwrap();
    for i in 0..2000 {
        assert_eq!(
            db.get(format!("key{i:05}")).unwrap(),
            Some(value(i, 3).into_bytes())
        );
    }
}

/// Where `compression_per_level` is shorter than the levels, the deeper levels take its
/// last entry; without `bottommost_compression` the bottommost level follows the list too.
#[test]
fn levels_past_the_list_take_its_last_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    o.compression_per_level = vec![Compression::Lz4, Compression::Zstd];
    o.bottommost_compression = None;
    o.checksum = ChecksumType::Crc32c;
    let db = Db::open(dir.path(), o).unwrap();
    write_round(&db, 0);
    assert_eq!(compressions(&db), vec![(0, "lz4".to_string())]);
    write_round(&db, 1);
    db.compact_range(None, None).unwrap();
    let bottom = compressions(&db);
    assert!(
        bottom.iter().all(|(l, c)| *l == 3 && c == "zstd"),
        "{bottom:?}"
    );
}

/// A level or bottommost option a compressor cannot take is refused at open, naming it.
#[test]
fn bad_levels_in_the_choices_are_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    let mut bad = CompressionOptions::default();
    bad.level = 99;
    o.bottommost_compression_opts = Some(bad);
    let e = Db::open(dir.path(), o).err().unwrap().to_string();
    assert!(
        e.contains("bottommost_compression_opts") && e.contains("99"),
        "{e}"
    );
    let mut o = options(dir.path());
    o.compression_opts.level = 50;
    o.compression_per_level = vec![Compression::Zstd];
    let e = Db::open(dir.path(), o).err().unwrap().to_string();
    assert!(e.contains("compression_opts") && e.contains("50"), "{e}");
}
