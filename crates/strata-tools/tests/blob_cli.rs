//! `strata blob dump|verify` on blob files written by the engine's writer, whole, damaged and
//! cut short.

mod common;
use std::path::{Path, PathBuf};

use common::strata;
use strata::fs::PosixFs;
use strata::internals::{BlobFileWriter, BlobIndex};
use strata::Compression;

/// The values of [`write_blob_file`], by key.
fn pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![
        (b"apple".to_vec(), b"red".to_vec()),
        (b"key\x00bin".to_vec(), vec![b'z'; 300]),
        (b"empty".to_vec(), Vec::new()),
        (b"pear".to_vec(), b"yellow, then brown".to_vec()),
    ]
}

/// Writes [`pairs`] to blob file `number` of column family 3 in `dir`; its path and the
/// references.
fn write_blob_file(dir: &Path, number: u64, compression: Compression) -> (PathBuf, Vec<BlobIndex>) {
    let path = dir.join(format!("{number:06}.blob"));
    let mut writer = BlobFileWriter::create(&PosixFs, &path, number, 3, compression).unwrap();
    let refs = pairs()
        .iter()
        .map(|(k, v)| writer.add(k, v).unwrap())
        .collect();
    writer.finish().unwrap();
    (path, refs)
}

#[test]
fn dump_shows_the_header_each_record_as_its_reference_and_the_footer() {
    let dir = tempfile::tempdir().unwrap();
    let (path, refs) = write_blob_file(dir.path(), 12, Compression::Snappy);
    let file = path.to_str().unwrap();
    let (ok, out, err) = strata(&["blob", "dump", file]);
    assert!(ok, "{err}");
    let size = std::fs::metadata(&path).unwrap().len();
    let lines: Vec<&str> = out.lines().collect();
    let z32 = "z".repeat(32);
    let want = [
        format!("blob file: {file} (number 12)"),
        "header: column family 3, compression snappy".to_string(),
        format!("{}: key apple, value 3 bytes: red", refs[0]),
        format!(
            "{}: key key\\x00bin, value 300 bytes: {z32}... (268 more bytes)",
            refs[1]
        ),
        format!("{}: key empty, value 0 bytes: ", refs[2]),
        format!("{}: key pear, value 18 bytes: yellow, then brown", refs[3]),
        format!("footer: 4 records, 321 bytes of values (before compression), file {size} bytes"),
    ];
    assert_eq!(lines, want);
    // The first record starts after the 24-byte header; the long run of one byte was
    // stored compressed.
    assert!(out.contains("blob 000012 at 24 ("), "{out}");
    assert!(refs[1].size < 100, "{}", refs[1]);

    let (ok, out, err) = strata(&["blob", "dump", "--values", "--hex", file]);
    assert!(ok, "{err}");
    let whole = format!("0x{}", "7a".repeat(300));
    assert!(
        out.contains(&format!(
            "{}: key 0x6b65790062696e, value 300 bytes: {whole}\n",
            refs[1]
        )),
        "{out}"
    );

    let (ok, out, err) = strata(&["blob", "verify", file]);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        format!("{file}: OK, 4 records, 321 bytes of values, every record checksummed\n")
    );
}

#[test]
fn a_directory_is_every_blob_file_in_it_in_number_order() {
    let dir = tempfile::tempdir().unwrap();
    write_blob_file(dir.path(), 9, Compression::None);
    write_blob_file(dir.path(), 7, Compression::Zstd);
    std::fs::write(dir.path().join("000008.sst"), b"not a blob file").unwrap();
    let db = dir.path().to_str().unwrap();
    let (ok, out, err) = strata(&["blob", "dump", db]);
    assert!(ok, "{err}");
    let headers: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("blob file:") || l.starts_with("header:"))
        .collect();
    assert_eq!(
        headers,
        [
            format!(
                "blob file: {} (number 7)",
                dir.path().join("000007.blob").display()
            ),
            "header: column family 3, compression zstd".to_string(),
            format!(
                "blob file: {} (number 9)",
                dir.path().join("000009.blob").display()
            ),
            "header: column family 3, compression none".to_string(),
        ]
    );
    let (ok, out, err) = strata(&["blob", "verify", db]);
    assert!(ok && out.lines().count() == 2, "{out}{err}");

    // A directory without blob files says so; a file of another name is read as number 0.
    let empty = tempfile::tempdir().unwrap();
    let (ok, _, err) = strata(&["blob", "dump", empty.path().to_str().unwrap()]);
    assert!(!ok && err.contains("no blob files (NNNNNN.blob)"), "{err}");
    let renamed = dir.path().join("copy.blob");
    std::fs::copy(dir.path().join("000007.blob"), &renamed).unwrap();
    let (ok, out, err) = strata(&["blob", "dump", renamed.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        out.contains("(number unknown: the name is not NNNNNN.blob; shown as 0)")
            && out.contains("blob 000000 at 24 ("),
        "{out}"
    );
}

#[test]
fn a_damaged_record_is_an_error_naming_the_file_and_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, refs) = write_blob_file(dir.path(), 5, Compression::None);
    let file = path.to_str().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // The last byte of the third record's key ("empty"), under its checksum.
    let at = (refs[2].offset + refs[2].size - 1) as usize;
    bytes[at] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let offset = refs[2].offset;
    for command in ["dump", "verify"] {
        let (ok, out, err) = strata(&["blob", command, file]);
        assert!(!ok, "{command}: {out}");
        assert!(
            err.contains(&format!("corruption in {file} at offset {offset}"))
                && err.contains("record checksum mismatch"),
            "{command}: {err}"
        );
        if command == "dump" {
            // The records before the damage are shown, the footer is not.
            assert!(
                out.contains("key apple") && out.contains("key key\\x00bin"),
                "{out}"
            );
            assert!(
                !out.contains("key empty") && !out.contains("footer:"),
                "{out}"
            );
        }
    }
}

#[test]
fn a_truncated_or_foreign_file_is_an_error_naming_the_file_and_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, refs) = write_blob_file(dir.path(), 5, Compression::None);
    let file = path.to_str().unwrap();
    let good = std::fs::read(&path).unwrap();
    let cut_in_a_record = (refs[3].offset + 10) as usize;
    let cases: [(&str, Vec<u8>, String); 4] = [
        (
            "cut inside a record",
            good[..cut_in_a_record].to_vec(),
            format!(
                "corruption in {file} at offset {}: blob file has no footer",
                cut_in_a_record - 28
            ),
        ),
        (
            "cut inside the footer",
            good[..good.len() - 3].to_vec(),
            format!(
                "corruption in {file} at offset {}: blob file has no footer",
                good.len() - 3 - 28
            ),
        ),
        (
            "too short for a header and a footer",
            good[..20].to_vec(),
            format!("corruption in {file} at offset 0: 20 bytes is too short for a blob file"),
        ),
        (
            "a table",
            {
                let mut t = good.clone();
                t[..8].copy_from_slice(b"notablob");
                t
            },
            format!("corruption in {file} at offset 0: not a blob file (bad magic)"),
        ),
    ];
    for (what, bytes, want) in cases {
        std::fs::write(&path, &bytes).unwrap();
        for command in ["dump", "verify"] {
            let (ok, out, err) = strata(&["blob", command, file]);
            assert!(!ok, "{what}, {command}: {out}");
            assert!(err.contains(&want), "{what}, {command}: {err}");
        }
    }
    let missing = dir.path().join("000099.blob");
    let (ok, _, err) = strata(&["blob", "dump", missing.to_str().unwrap()]);
    assert!(!ok && err.contains("000099.blob"), "{err}");
}
