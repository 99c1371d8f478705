//! Bad input gets a clear error naming what is wrong, and damages nothing.

use std::fs;

use strata::write_batch::{MAX_KEY_LEN, MAX_VALUE_LEN};
use strata::{Db, ErrorKind, Options, WriteBatch, WriteOptions};

fn create() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

#[test]
fn missing_directory_without_create_if_missing_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope");
    let err = Db::open(&path, Options::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("nope"), "{err}");
    assert!(err.to_string().contains("create_if_missing"), "{err}");
    assert!(
        !path.exists(),
        "a failed open must not create the directory"
    );
}

#[test]
fn a_directory_that_is_not_a_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("photo.jpg"), b"not a database").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("not a Strata database"), "{err}");
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        names.len(),
        1,
        "nothing may be added to a foreign directory"
    );
}

#[test]
fn a_newer_format_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), create()).unwrap().close().unwrap();
    fs::write(dir.path().join("IDENTITY"), "strata format=99 id=0\n").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("format version 99"), "{err}");
}

#[test]
fn a_corrupt_identity_file_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), create()).unwrap().close().unwrap();
    fs::write(dir.path().join("IDENTITY"), [0xff, 0x00, 0x13]).unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("IDENTITY"), "{err}");
}

#[test]
fn a_locked_database_is_busy_until_closed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    db.put(b"k", b"v").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(err.to_string().contains("LOCK"), "{err}");
    db.close().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn error_if_exists_refuses_an_existing_database() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), create()).unwrap().close().unwrap();
    let err = Db::open(
        dir.path(),
        Options {
            error_if_exists: true,
            ..create()
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("error_if_exists"), "{err}");
}

#[test]
fn invalid_options_name_the_option() {
    let dir = tempfile::tempdir().unwrap();
    for (opts, name) in [
        (
            Options {
                write_buffer_size: 10,
                ..create()
            },
            "write_buffer_size",
        ),
        (
            Options {
                max_write_buffer_number: 0,
                ..create()
            },
            "max_write_buffer_number",
        ),
        (
            Options {
                max_write_group_bytes: 0,
                ..create()
            },
            "max_write_group_bytes",
        ),
    ] {
        let err = Db::open(dir.path(), opts).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn oversized_keys_and_values_are_refused_and_the_batch_is_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    let big_key = vec![b'k'; MAX_KEY_LEN + 1];
    let err = db.put(&big_key, b"v").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("key of"), "{err}");

    let big_value = vec![0u8; MAX_VALUE_LEN + 1];
    let mut batch = WriteBatch::new();
    batch.put(b"fine", b"v");
    batch.put(b"too-big", &big_value);
    let err = db.write(batch, &WriteOptions::default()).unwrap_err();
    assert!(err.to_string().contains("value of"), "{err}");
    assert_eq!(
        db.get(b"fine").unwrap(),
        None,
        "half a batch must not apply"
    );

    // The largest allowed key and an empty key work.
    let max_key = vec![b'm'; MAX_KEY_LEN];
    db.put(&max_key, b"ok").unwrap();
    db.put(b"", b"empty key").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    assert_eq!(db.get(&max_key).unwrap().as_deref(), Some(&b"ok"[..]));
    assert_eq!(db.get(b"").unwrap().as_deref(), Some(&b"empty key"[..]));
}
