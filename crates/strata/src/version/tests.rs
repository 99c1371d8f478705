use super::*;
use crate::error::Result;
use crate::filename::CURRENT;
use crate::fs::{FileSystem, IoStats, PosixFs};
use crate::key::{append_internal_key, ValueKind};
use crate::version::edit::testdata;

fn file(number: u64, a: &str, b: &str, seq: u64) -> FileMeta {
    let ik = |k: &str| {
        let mut v = Vec::new();
        append_internal_key(&mut v, k.as_bytes(), seq, ValueKind::Put as u8);
        v
    };
    FileMeta {
        number,
        size: 100,
        smallest: ik(a),
        largest: ik(b),
        smallest_seq: seq,
        largest_seq: seq,
        entries: 1,
        deletions: 0,
        blob_refs: Vec::new(),
        reader: Default::default(),
    }
}

/// A file whose largest key is a range deletion's end sentinel `m#MAX,RANGEDEL` holds
/// nothing of `m`: the next file of its level may start at `m`, and a lookup of `m`
/// reads that next file (a lookup stopping at the first would miss `m`'s value).
#[test]
fn a_largest_key_at_the_end_sentinel_excludes_that_key() {
    let tombstone = crate::range_del::Tombstone::new(b"c", b"m", 9);
    let mut left = file(1, "a", "b", 9);
    left.largest = tombstone.largest_key();
    let right = file(2, "m", "z", 5);
    let mut v = Version::default();
    v.levels[1] = vec![Arc::new(left), Arc::new(right)];
    assert_eq!(v.check(), Ok(()));
    let numbers = |k: &[u8]| {
        v.files_for_key(k)
            .map(|(_, f)| f.number)
            .collect::<Vec<_>>()
    };
    assert_eq!(numbers(b"m"), [2]);
    assert_eq!(numbers(b"l"), [1]);
    // A real entry of `m` as the largest key does overlap a file starting at `m`.
    let mut v = Version::default();
    v.levels[1] = vec![
        Arc::new(file(1, "a", "m", 9)),
        Arc::new(file(2, "m", "z", 5)),
    ];
    assert!(v.check().is_err());
}

/// The edit an `apply` input describes: lines `add Ln: FILE ...` and `delete Ln: N ...`.
fn parse_edit(input: &str) -> std::result::Result<VersionEdit, String> {
    let mut edit = VersionEdit::default();
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let bad = || format!("bad edit line {line:?}");
        match line.split_once(' ').ok_or_else(bad)? {
            ("add", rest) => {
                let (level, files) = testdata::parse_level(rest)?;
                edit.new_files.extend(files.into_iter().map(|f| (level, f)));
            }
            ("delete", rest) => {
                let (level, numbers) = rest.split_once(':').ok_or_else(bad)?;
                let level = level.trim().trim_start_matches('L');
                let level: usize = level.parse().map_err(|_| bad())?;
                for n in numbers.split_whitespace() {
                    edit.deleted_files
                        .push((level, n.parse().map_err(|_| bad())?));
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(edit)
}

/// The levels of `v`, and what `Version::check` finds wrong with it, if anything.
fn checked(v: &Version) -> String {
    let mut out = testdata::format_version(v);
    if let Err(why) = v.check() {
        out.push_str(&format!("check: {why}\n"));
    }
    out
}

/// Runs one case of `testdata/apply.txt` against the current version `v`.
fn run_case(
    case: &mut datadriven::TestCase,
    v: &mut Version,
) -> std::result::Result<String, String> {
    let out = match case.directive.as_str() {
        "define" => {
            *v = testdata::parse_version(&case.input)?;
            checked(v)
        }
        "apply" => {
            let edit = parse_edit(&case.input)?;
            assert_eq!(VersionEdit::decode(&edit.encode()).as_ref(), Ok(&edit));
            match v.apply(&edit) {
                Err(why) => format!("error: {why}\n"),
                Ok(next) => {
                    *v = next;
                    checked(v)
                }
            }
        }
        "find" => {
            let key: String = case.take_arg("key").map_err(|e| e.to_string())?;
            let found: Vec<String> = v
                .files_for_key(key.as_bytes())
                .map(|(_, f)| f.number.to_string())
                .collect();
            match found.is_empty() {
                true => "none\n".to_string(),
                false => format!("{}\n", found.join(" ")),
            }
        }
        other => return Err(format!("unknown directive {other}")),
    };
    Ok(out)
}

/// Version edits applied in sequence, from `testdata/apply.txt` (data-driven: directive,
/// input, `----`, expected output). `define` sets the version from `Ln: FILE ...` lines
/// (files in the notation of `edit::testdata`: `12:a-f:100`) and prints it as `apply` does;
/// `apply` applies an edit of
/// `add Ln: FILE ...` and `delete Ln: NUMBER ...` lines and prints the levels, or
/// `error: ...` (the version is then unchanged), and `check: ...` when the result breaks
/// the invariants `Version::check` tests; `find key=K` lists the files a read of K
/// consults, in order. Every edit must also survive an encode/decode round trip.
/// `REWRITE=1 cargo test -p strata --lib version::tests` rewrites the expected outputs.
#[test]
fn edits_apply_in_sequence() {
    let ran = testdata::run("src/version/testdata/apply.txt", run_case);
    assert!(ran >= 10);
}

fn bytewise(_: &FamilyState) -> Result<KeyOrder> {
    Ok(KeyOrder::Bytewise)
}

/// A version set created in a new temporary directory, with what reopening it needs.
fn new_version_set() -> (
    tempfile::TempDir,
    Arc<dyn FileSystem>,
    Arc<IoStats>,
    VersionSet,
) {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(PosixFs);
    let io = Arc::new(IoStats::default());
    let set = VersionSet::create(
        fs.clone(),
        dir.path(),
        1,
        io.clone(),
        &KeyOrder::Bytewise,
        None,
    )
    .unwrap();
    (dir, fs, io, set)
}

#[test]
fn manifest_survives_reopen_and_starts_fresh() {
    let (dir, fs, io, mut set) = new_version_set();
    let n = set.new_file_number();
    set.log_and_apply(VersionEdit {
        new_files: vec![(0, file(n, "a", "b", 5))],
        log_number: Some(4),
        last_sequence: Some(5),
        ..VersionEdit::default()
    })
    .unwrap();
    let first_manifest = set.manifest_number();
    drop(set);
    let set = VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise).unwrap();
    assert_eq!(set.min_log_number(), 4);
    assert_eq!(set.last_sequence(), 5);
    assert_eq!(set.current().live_files(), [n].into_iter().collect());
    assert!(set.manifest_number() > first_manifest);

    // A damaged CURRENT is a corruption error naming it.
    std::fs::write(dir.path().join(CURRENT), "MANIFEST-999999\n").unwrap();
    let err = VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise)
        .err()
        .unwrap();
    assert!(err.to_string().contains("does not exist"), "{err}");
    std::fs::write(dir.path().join(CURRENT), "garbage").unwrap();
    let err = VersionSet::recover(fs, dir.path(), io, bytewise)
        .err()
        .unwrap();
    assert!(err.to_string().contains("CURRENT"), "{err}");
}

/// Blob file `number` of `records` records of 100 bytes each.
fn blob(number: u64, records: u64) -> BlobFileMeta {
    let header_and_footer = (crate::blob::HEADER_LEN + crate::blob::FOOTER_LEN) as u64;
    BlobFileMeta {
        number,
        records,
        file_size: header_and_footer + 100 * records,
        value_bytes: 90 * records,
        ..BlobFileMeta::default()
    }
}

/// Table `number` in L1 on keys `a`-`b`, referring to `refs` records (100 bytes each) of
/// the blob files `(blob file, records)`.
fn referring(number: u64, refs: &[(u64, u64)]) -> FileMeta {
    FileMeta {
        blob_refs: refs
            .iter()
            .map(|&(blob, records)| BlobCount {
                number: blob,
                records,
                bytes: 100 * records,
            })
            .collect(),
        ..file(number, "a", "b", 1)
    }
}

/// A blob file's garbage is what no table refers to: new files start all garbage, the
/// tables added with them take their references, tables removed give them back, a move
/// changes nothing, and a file no table refers to leaves the version. Impossible edits
/// are refused; the version is rebuilt by its own snapshot edit, and the manifest carries
/// it across a reopen.
#[test]
fn blob_files_and_their_garbage_follow_the_tables() {
    // Each step: an edit, then the blob files as "number:garbage records/records" or the
    // error's start.
    let edit = |deleted: &[(usize, u64)], new: Vec<(usize, FileMeta)>, blobs: Vec<BlobFileMeta>| {
        VersionEdit {
            deleted_files: deleted.to_vec(),
            new_files: new,
            new_blob_files: blobs,
            ..VersionEdit::default()
        }
    };
    let steps: Vec<(VersionEdit, &str)> = vec![
        // A flush: a table and the two blob files it refers to.
        (
            edit(
                &[],
                vec![(0, referring(5, &[(6, 10), (7, 2)]))],
                vec![blob(6, 10), blob(7, 2)],
            ),
            "6:0/10 7:0/2",
        ),
        // A move to L1 changes no garbage.
        (
            edit(
                &[(0, 5)],
                vec![(1, referring(5, &[(6, 10), (7, 2)]))],
                vec![],
            ),
            "6:0/10 7:0/2",
        ),
        // A compaction keeps 6 of 10 and 1 of 2.
        (
            edit(
                &[(1, 5)],
                vec![(1, referring(8, &[(6, 6), (7, 1)]))],
                vec![],
            ),
            "6:4/10 7:1/2",
        ),
        // Another drops the last reference to 7, and moves 6's into a new file 9.
        (
            edit(
                &[(1, 8)],
                vec![(1, referring(10, &[(9, 6)]))],
                vec![blob(9, 6)],
            ),
            "9:0/6",
        ),
        (
            edit(&[], vec![(2, referring(11, &[(9, 1)]))], vec![]),
            "error: the tables refer to 7 records",
        ),
        (
            edit(&[], vec![(2, referring(11, &[(6, 1)]))], vec![]),
            "error: table 11 refers to blob file 6, which is not there",
        ),
        (
            edit(&[], vec![], vec![blob(9, 1)]),
            "error: edit adds blob file 9 twice",
        ),
        (
            edit(&[], vec![], vec![blob(10, 1)]),
            "error: edit adds blob file 10 twice",
        ),
        (
            VersionEdit {
                deleted_blob_files: vec![6],
                ..VersionEdit::default()
            },
            "error: edit deletes blob file 6, which is not there",
        ),
        // A blob file no table refers to does not stay.
        (edit(&[], vec![], vec![blob(12, 3)]), "9:0/6"),
        (
            edit(&[], vec![(2, referring(13, &[(12, 3)]))], vec![blob(12, 3)]),
            "9:0/6 12:0/3",
        ),
    ];
    let show = |v: &Version| {
        let files: Vec<String> = v
            .blob_files
            .values()
            .map(|b| format!("{}:{}/{}", b.number, b.garbage_records, b.records))
            .collect();
        files.join(" ")
    };
    let mut v = Version::default();
    for (i, (edit, want)) in steps.iter().enumerate() {
        match v.apply(edit) {
            Ok(next) => {
                assert_eq!(show(&next), *want, "step {i}");
                v = next;
            }
            Err(e) => assert!(
                want.strip_prefix("error: ")
                    .is_some_and(|w| e.starts_with(w)),
                "step {i}: {e}, want {want}"
            ),
        }
    }
    let rebuilt = Version::default().apply(&v.snapshot_edit()).unwrap();
    assert_eq!(rebuilt.blob_files, v.blob_files);
    assert_eq!(v.blob_files[&9].garbage_bytes, 0);

    // Through a manifest: written, reopened (which writes a fresh one from the state).
    let (dir, fs, io, mut set) = new_version_set();
    let n = set.new_file_number();
    let t = set.new_file_number();
    let flushed = edit(&[], vec![(0, referring(t, &[(n, 10)]))], vec![blob(n, 10)]);
    set.log_and_apply(flushed).unwrap();
    let t2 = set.new_file_number();
    set.log_and_apply(edit(&[(0, t)], vec![(1, referring(t2, &[(n, 7)]))], vec![]))
        .unwrap();
    drop(set);
    for _ in 0..2 {
        let mut set = VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise).unwrap();
        assert_eq!(show(&set.current()), format!("{n}:3/10"));
        assert_eq!(set.current().blob_files[&n].garbage_bytes, 300);
        assert!(set.new_file_number() > t2);
    }
}

#[test]
fn an_atomic_group_is_read_whole_or_not_at_all() {
    let (dir, fs, io, mut set) = new_version_set();
    let (a, b) = (set.new_file_number(), set.new_file_number());
    let group = |n: u64, k: &str| VersionEdit {
        new_files: vec![(0, file(n, k, k, n))],
        last_sequence: Some(n),
        ..VersionEdit::default()
    };
    let versions = set
        .log_and_apply_group(vec![group(a, "a"), group(b, "b")])
        .unwrap();
    assert_eq!(versions.len(), 2);
    assert_eq!(set.current().live_files(), [a, b].into_iter().collect());
    let (_, manifest) = current_manifest(fs.as_ref(), dir.path()).unwrap();
    drop(set);
    let edits = read_edits(fs.as_ref(), &manifest).unwrap();
    let groups: Vec<Option<u32>> = edits.iter().map(|(_, e)| e.atomic_group).collect();
    assert_eq!(&groups[groups.len() - 2..], [Some(1), Some(0)]);

    // The manifest cut after the group's first edit (its sync never returned): neither is
    // read.
    let (last_at, _) = edits[edits.len() - 1];
    let bytes = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, &bytes[..last_at as usize]).unwrap();
    let edits = read_edits(fs.as_ref(), &manifest).unwrap();
    assert!(
        edits.iter().all(|(_, e)| e.atomic_group.is_none()),
        "{edits:?}"
    );
    let set = VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise).unwrap();
    assert!(set.current().live_files().is_empty());

    // An edit outside the group before its last one is corruption.
    let mut first = group(a, "a");
    first.atomic_group = Some(1);
    first.comparator = Some("leveldb.BytewiseComparator".into());
    let encoded = [first.encode(), group(b, "b").encode()];
    let path = dir.path().join("MANIFEST-777777");
    let mut log = crate::log::LogWriter::new(fs.create_writable(&path).unwrap());
    for e in &encoded {
        log.add_record(e).unwrap();
    }
    log.sync().unwrap();
    let err = read_edits(fs.as_ref(), &path).unwrap_err();
    assert!(err.to_string().contains("atomic group"), "{err}");
}
