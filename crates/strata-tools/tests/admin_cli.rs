//! `strata sst dump|verify` and `strata manifest dump` on a database built by `strata bench`.

mod common;
use std::path::Path;

use common::{bench, bench_db, strata};

#[test]
fn dump_and_verify_tables_and_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_flag = format!("--db={}", db.display());
    let (ok, _, err) = strata(&[
        "bench",
        &db_flag,
        "--num=3000",
        "--benchmarks=fillseq,flush",
        "--write_buffer_size=100000",
        "--bloom_bits=10",
        "--disable_auto_compactions=1",
    ]);
    assert!(ok, "{err}");
    let mut tables: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    tables.sort();
    assert!(tables.len() >= 2);

    let (ok, out, err) = strata(&["manifest", "dump", db.to_str().unwrap()]);
    assert!(ok, "{err}");
    for t in &tables {
        let number = t.file_stem().unwrap().to_str().unwrap();
        assert!(out.contains(&format!("add L0 {number}:[")), "{out}");
    }
    assert!(
        out.contains(&format!("L0: {} files", tables.len())),
        "{out}"
    );

    let (ok, out, err) = strata(&["stats", db.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("(0 entries) + 0 imm | L0 {} files", tables.len())),
        "{out}"
    );
    assert!(out.contains("** Strata stats **"), "{out}");
    let (ok, _, err) = strata(&["stats", dir.path().join("missing").to_str().unwrap()]);
    assert!(!ok && err.contains("no database"), "{err}");

    let first = tables[0].to_str().unwrap();
    let (ok, out, _) = strata(&["sst", "verify", first]);
    assert!(ok && out.contains("OK"), "{out}");
    let (ok, out, _) = strata(&["sst", "dump", "--keys-only", first]);
    assert!(ok);
    assert!(
        out.contains("#1,PUT"),
        "the first key written has sequence 1:\n{out}"
    );
    assert!(out.contains("compression snappy"), "{out}");

    let mut bytes = std::fs::read(&tables[0]).unwrap();
    bytes[10] ^= 0x01;
    std::fs::write(&tables[0], &bytes).unwrap();
    let (ok, _, err) = strata(&["sst", "verify", first]);
    assert!(!ok);
    assert!(
        err.contains("corruption") && err.contains(first) && err.contains("offset 0"),
        "{err}"
    );
}

/// Runs `strata ARGS` on `dir` (the last argument).
fn on(args: &[&str], dir: &Path) -> (bool, String, String) {
    let mut all = args.to_vec();
    all.push(dir.to_str().unwrap());
    strata(&all)
}

#[test]
fn a_database_without_tables_says_where_its_writes_are() {
    for (steps, note) in [
        (
            "--benchmarks=fillseq",
            "no tables yet: 1000 writes are in the WAL (000002.log, ",
        ),
        (
            "--benchmarks=stats",
            "no tables yet, and no writes in the WAL: the database is empty",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (ok, _, err) = bench(&db, &[steps, "--num=1000"]);
        assert!(ok, "{err}");
        let (ok, out, err) = on(&["manifest", "dump"], &db);
        assert!(ok && out.contains(note), "{steps}: {out}{err}");
        let (ok, _, err) = on(&["sst", "dump"], &db);
        assert!(!ok && err.contains(note), "{steps}: {err}");
        // A glob the shell did not expand.
        let (ok, _, err) = on(&["sst", "verify"], &db.join("*.sst"));
        assert!(
            !ok && err.contains("no such file") && err.contains(note),
            "{err}"
        );
        // Last: opening the database recovers the WAL and may flush it.
        let (ok, out, err) = on(&["stats"], &db);
        assert!(ok && out.contains(note), "{steps}: {out}{err}");
    }
}

#[test]
fn flush_writes_the_wal_to_a_table_that_sst_dump_then_finds() {
    let (_dir, db) = bench_db(&["--benchmarks=fillseq", "--num=1000"]);
    let (ok, out, err) = on(&["flush"], &db);
    assert!(ok && out.contains("L0 1 files"), "{out}{err}");
    let (ok, out, _) = on(&["manifest", "dump"], &db);
    assert!(
        ok && out.contains("L0: 1 files") && !out.contains("no tables"),
        "{out}"
    );
    let (ok, out, err) = on(&["sst", "dump", "--keys-only"], &db);
    assert!(ok, "{err}");
    assert_eq!(out.lines().filter(|l| l.contains(",PUT")).count(), 1000);
}

#[test]
fn sst_dump_limits_entries_and_shows_keys_and_times_as_people_read_them() {
    let (_dir, db) = bench_db(&["--benchmarks=fillseq,flush", "--num=3000"]);
    let table = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    for (limit, entries, more) in [
        (Some("5"), 5, Some("... 2995 more entries (--limit 5)")),
        (Some("0"), 0, Some("... 3000 more entries (--limit 0)")),
        (Some("3000"), 3000, None),
        (None, 3000, None),
    ] {
        let mut args = vec!["sst", "dump"];
        if let Some(n) = limit {
            args.extend(["--limit", n]);
        }
        let (ok, out, err) = on(&args, &table);
        assert!(ok, "{err}");
        assert_eq!(out.lines().filter(|l| l.contains(" => ")).count(), entries);
        assert_eq!(
            out.lines().find(|l| l.starts_with("...")),
            more,
            "{limit:?}"
        );
    }

    // One key notation: the first key sst dump prints is the table's smallest key as
    // manifest dump prints it.
    let (_, dump, _) = on(&["sst", "dump", "--limit", "1"], &table);
    let first_key = dump.lines().find_map(|l| l.split_once(" => ")).unwrap().0;
    assert!(
        first_key.starts_with("\\x00") && first_key.ends_with("#1,PUT"),
        "{first_key}"
    );
    let (_, manifest, _) = on(&["manifest", "dump"], &db);
    assert!(
        manifest.contains(&format!(":[{first_key}-")),
        "{first_key}\n{manifest}"
    );

    // The creation time as an RFC 3339 UTC date-time.
    let created = dump
        .split_once(" created ")
        .unwrap()
        .1
        .lines()
        .next()
        .unwrap();
    let shape: String = created
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    assert_eq!(shape, "9999-99-99T99:99:99Z", "{created}");
    assert!(created >= "2024", "{created}");
}

#[test]
fn stats_answers_beside_a_writer_and_changes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = strata::Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    let writer = strata::Db::open(dir.path(), options).unwrap();
    for i in 0..2000u32 {
        writer.put(format!("k{i:05}").as_bytes(), [7; 100]).unwrap();
    }
    writer.flush().unwrap();
    // The writer's own compactions would change files while stats runs.
    writer.wait_for_compactions().unwrap();
    writer.put(b"in-the-wal", b"x").unwrap();
    writer.sync_wal().unwrap();
    let files = || -> Vec<(String, Vec<u8>)> {
        let mut all: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with("LOG"))
            .map(|n| (n.clone(), std::fs::read(dir.path().join(&n)).unwrap()))
            .collect();
        all.sort();
        all
    };
    let before = files();
    let (ok, out, err) = strata(&["stats", dir.path().to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("tree: mem"), "{out}");
    assert!(out.contains("** Strata stats **"), "{out}");
    assert_eq!(
        files(),
        before,
        "strata stats changed a file of the live database"
    );
    writer.close().unwrap();
}

#[test]
fn sst_dump_prints_the_range_tombstones_and_their_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = strata::Options::default();
    options.create_if_missing = true;
    let db = strata::Db::open(dir.path(), options).unwrap();
    db.put(b"k", b"v").unwrap();
    db.delete_range(b"a", b"m").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let (ok, out, err) = on(&["sst", "dump"], dir.path());
    assert!(ok, "{err}");
    assert!(out.contains("range-deletions 1"), "{out}");
    let tombstones: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "range tombstones:")
        .skip(1)
        .collect();
    assert_eq!(tombstones, ["a-m#2"], "{out}");
}

#[test]
fn sst_dump_shows_a_blob_entry_as_the_reference_blob_dump_prints() {
    use strata::fs::{FileSystem, PosixFs};
    use strata::internals::range_del::TableBuilder;
    use strata::internals::{append_internal_key, BlobFileWriter, TableOptions, ValueKind};
    let (put, blob) = (ValueKind::Put as u8, ValueKind::BlobIndex as u8);
    let dir = tempfile::tempdir().unwrap();
    let blob_path = dir.path().join("000012.blob");
    let mut blobs =
        BlobFileWriter::create(&PosixFs, &blob_path, 12, 0, strata::Compression::None).unwrap();
    blobs.add(b"avocado", &[b'a'; 100]).unwrap();
    let reference = blobs.add(b"banana", &[b'b'; 200]).unwrap();
    blobs.finish().unwrap();
    let path = dir.path().join("000007.sst");
    let mut builder = TableBuilder::new(
        PosixFs.create_writable(&path).unwrap(),
        TableOptions::for_internal_keys(),
    );
    for (user_key, seq, kind, value) in [
        (&b"apple"[..], 3, put, b"red".to_vec()),
        (b"banana", 5, blob, reference.encode()),
        // Not a whole reference: shown raw, marked.
        (b"cherry", 4, blob, b"\xff".to_vec()),
    ] {
        let mut key = Vec::new();
        append_internal_key(&mut key, user_key, seq, kind);
        builder.add(&key, &value).unwrap();
    }
    builder.finish().unwrap();
    let (ok, out, err) = on(&["sst", "dump"], &path);
    assert!(ok, "{err}");
    let entries: Vec<&str> = out.lines().filter(|l| l.contains(" => ")).collect();
    assert_eq!(entries.len(), 3, "{out}");
    assert_eq!(entries[0], "apple#3,PUT => red");
    let shown = format!(" => {reference}");
    assert_eq!(entries[1], format!("banana#5,BLOB{shown}"));
    assert_eq!(entries[2], "cherry#4,BLOB => bad blob reference \\xff");
    assert!(shown.starts_with(" => blob 000012 at "), "{shown}");
    // The blob file's dump has a line for the same reference, with the key.
    let (ok, blob_dump, err) = strata(&["blob", "dump", blob_path.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        blob_dump.contains(&format!("\n{reference}: key banana, value 200 bytes: ")),
        "{blob_dump}"
    );
    // --hex changes the keys, not the reference.
    let (ok, out, err) = on(&["sst", "dump", "--hex"], &path);
    assert!(ok, "{err}");
    assert!(out.contains(&format!("{shown}\n")), "{out}");
    assert!(out.contains(" => bad blob reference 0xff\n"), "{out}");
}

#[test]
fn stats_count_the_blob_files_and_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = strata::Options::default();
    options.create_if_missing = true;
    options.enable_blob_files = true;
    options.min_blob_size = 50;
    let db = strata::Db::open(dir.path(), options).unwrap();
    for i in 0..100u32 {
        db.put(format!("key{i:03}"), vec![b'v'; 100 + i as usize])
            .unwrap();
    }
    db.put(b"small", b"kept in the table").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let blobs: Vec<u64> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "blob"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .collect();
    assert!(!blobs.is_empty());
    let (ok, out, err) = on(&["stats", "--json"], dir.path());
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let family = &json["families"][0]["blob_files"];
    assert_eq!(family["files"], blobs.len() as u64, "{out}");
    assert_eq!(family["bytes"], blobs.iter().sum::<u64>(), "{out}");
    assert_eq!(family["garbage_bytes"], 0, "{out}");
    assert!(json["blob_reads"]["values"].is_u64(), "{out}");
    let (ok, text, err) = on(&["stats"], dir.path());
    assert!(ok, "{err}");
    assert!(
        text.contains(&format!("blob files: {} files, ", blobs.len())),
        "{text}"
    );
}

/// `sst dump` of a table with a partitioned index and filters shows the partition counts
/// and top-level sizes; `sst verify` reads every partition; a table with one index block
/// shows no such lines. Either shows the log number its flush recorded.
#[test]
fn sst_dump_shows_the_partitions_of_a_partitioned_table() {
    let dir = tempfile::tempdir().unwrap();
    for partitioned in [true, false] {
        let db_dir = dir.path().join(format!("db-{partitioned}"));
        let mut options = strata::Options::default();
        options.create_if_missing = true;
        options.block_size = 256;
        if partitioned {
            options.index_type = strata::IndexType::TwoLevelIndexSearch;
            options.partition_filters = true;
            options.metadata_block_size = 256;
        }
        let db = strata::Db::open(&db_dir, options).unwrap();
        for i in 0..3000u32 {
            db.put(format!("key{i:06}"), format!("value{i}")).unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let (ok, out, err) = on(&["sst", "dump", "--limit", "1"], &db_dir);
        assert!(ok, "{err}");
        let line = |prefix: &str| {
            out.lines()
                .find(|l| l.starts_with(prefix))
                .map(str::to_owned)
        };
        match partitioned {
            true => {
                for prefix in ["index: two-level, ", "filter: partitioned, "] {
                    let l = line(prefix).unwrap_or_else(|| panic!("no {prefix:?} in {out}"));
                    let count: u64 = l[prefix.len()..]
                        .split(' ')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap();
                    assert!(count > 5, "{l}");
                    assert!(l.contains("top level") && l.ends_with(" B"), "{l}");
                }
            }
            // One index block, of user keys (no key has two versions to span blocks).
            false => assert!(
                line("index:").as_deref() == Some("index: user keys") && line("filter:").is_none(),
                "{out}"
            ),
        }
        // A flushed table records its family's log number: the WAL after the one it emptied.
        let log = line("log number: ").unwrap_or_else(|| panic!("no log number in {out}"));
        assert!(
            log["log number: ".len()..].parse::<u64>().unwrap() > 1,
            "{log}"
        );
        let (ok, out, err) = on(&["sst", "verify"], &db_dir);
        assert!(ok && out.contains("OK"), "{out}{err}");
    }
}

/// `sst dump` of a table written with the data-block hash index says how many of its data
/// blocks carry one (all of these small blocks); a table without says nothing of it.
#[test]
fn sst_dump_shows_how_many_data_blocks_carry_a_hash_index() {
    let dir = tempfile::tempdir().unwrap();
    for hashed in [true, false] {
        let db_dir = dir.path().join(format!("db-{hashed}"));
        let mut options = strata::Options::default();
        options.create_if_missing = true;
        options.block_size = 256;
        if hashed {
            options.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
        }
        let db = strata::Db::open(&db_dir, options).unwrap();
        for i in 0..1000u32 {
            db.put(format!("key{i:06}"), format!("value{i}")).unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let (ok, out, err) = on(&["sst", "dump", "--limit", "1"], &db_dir);
        assert!(ok, "{err}");
        let line = out.lines().find(|l| l.starts_with("data-block-index:"));
        match hashed {
            true => {
                let line = line.unwrap_or_else(|| panic!("no data-block-index line in {out}"));
                let words: Vec<&str> = line.split(' ').collect();
                assert_eq!(words[1], "binary_and_hash,", "{line}");
                assert_eq!(words[2], words[4], "every block carries one: {line}");
                assert!(words[2].parse::<u64>().unwrap() > 10, "{line}");
            }
            false => assert!(line.is_none(), "{out}"),
        }
        let (ok, out, err) = on(&["sst", "verify"], &db_dir);
        assert!(ok && out.contains("OK"), "{out}{err}");
    }
}

/// `sst dump` says how a table's blocks are checksummed and how large its compression
/// dictionary is, whatever the options of the dump (they are the table's own).
#[test]
fn sst_dump_shows_the_checksum_type_and_the_dictionary() {
    let dir = tempfile::tempdir().unwrap();
    for dictionary in [true, false] {
        let db_dir = dir.path().join(format!("db-{dictionary}"));
        let mut options = strata::Options::default();
        options.create_if_missing = true;
        options.compression = strata::Compression::Zstd;
        if dictionary {
            options.compression_opts.max_dict_bytes = 2048;
            options.checksum = strata::ChecksumType::Xxh3;
        }
        let db = strata::Db::open(&db_dir, options).unwrap();
        for i in 0..3000u32 {
            db.put(
                format!("key{i:06}"),
                format!("{{\"value\":{i},\"of\":\"key{i}\"}}"),
            )
            .unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let (ok, out, err) = on(&["sst", "dump", "--limit", "1"], &db_dir);
        assert!(ok, "{err}");
        match dictionary {
            true => assert!(
                out.contains("\nchecksum: xxh3\n")
                    && out.contains("\ncompression-dictionary: 2048 B\n"),
                "{out}"
            ),
            false => assert!(
                out.contains("\nchecksum: crc32c\n")
                    && out.contains("\ncompression-dictionary: none\n"),
                "{out}"
            ),
        }
        let (ok, out, err) = on(&["sst", "verify"], &db_dir);
        assert!(ok && out.contains("OK"), "{out}{err}");
    }
}
