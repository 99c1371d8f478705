//! What a user sees when the bytes below SQL are wrong or a request is refused: each case an
//! error naming what is wrong (docs/reliability.md lists them).

use gluesql_core::data::Key;
use gluesql_core::prelude::{Error, Glue};
use strata::{Db, Options};
use strata_gluesql::StrataStorage;

fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options
}

fn message(e: Error) -> String {
    e.to_string()
}

/// The Strata key of row `key` of table `t` (the layout of the `keys` module).
fn row_key_of_t(key: &Key) -> Vec<u8> {
    [b"Rt\x00\x01".as_slice(), &key.to_cmp_be_bytes().unwrap()].concat()
}

#[test]
fn a_database_of_other_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(b"user-1", b"alice").unwrap();
    db.close().unwrap();
    let err = message(StrataStorage::open(dir.path()).unwrap_err());
    assert_eq!(
        err,
        "storage: [StrataStorage] the database holds keys but no SQL format marker: it was not made by this storage"
    );
}

#[test]
fn an_unknown_format_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    StrataStorage::open(dir.path()).unwrap().close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(b"F", 2u32.to_be_bytes()).unwrap();
    db.close().unwrap();
    let err = message(StrataStorage::open(dir.path()).unwrap_err());
    assert_eq!(
        err,
        "storage: [StrataStorage] unknown storage format version 2 (this build reads version 1)"
    );
}

/// Each case: what is written over row 1 of `t`, and the message a SELECT then gives.
#[test]
fn corrupt_rows_fail_the_query_naming_the_row() {
    let cases: [(&[u8], &str); 3] = [
        (
            b"\x09",
            "unknown row format version 9 (this build reads version 1)",
        ),
        (b"\x01\x05\x00", "truncated in an I64"),
        (b"\x01\x00\x01\x63", "unknown value tag 99"),
    ];
    for (bytes, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
        glue.execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');",
        )
        .unwrap();
        glue.storage
            .db()
            .put(row_key_of_t(&Key::I64(1)), bytes)
            .unwrap();
        let err = message(glue.execute("SELECT * FROM t").unwrap_err());
        assert_eq!(
            err,
            format!("storage: [StrataStorage] corrupt data: row 00010000000000000001 of table \"t\": {expected}"),
        );
        glue.storage.close().unwrap();
    }
}

#[test]
fn a_corrupt_schema_names_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
    glue.execute("CREATE TABLE t (id INTEGER)").unwrap();
    glue.storage.db().put(b"St", b"\x01{not json").unwrap();
    let err = message(glue.execute("SELECT * FROM t").unwrap_err());
    assert!(
        err.starts_with(
            "storage: [StrataStorage] corrupt data: schema \"St\": key must be a string"
        ),
        "{err}"
    );
    glue.storage.close().unwrap();
}

#[test]
fn an_index_entry_without_its_row_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
    glue.execute(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); CREATE INDEX t_v ON t (v);
         INSERT INTO t VALUES (1, 10);",
    )
    .unwrap();
    // The row goes, its index entry stays: what a broken invariant would look like.
    glue.storage
        .db()
        .delete(row_key_of_t(&Key::I64(1)))
        .unwrap();
    let err = message(glue.execute("SELECT * FROM t WHERE v = 10").unwrap_err());
    assert_eq!(
        err,
        "storage: [StrataStorage] corrupt data: an index entry of table \"t\" names row 00010000000000000001 of table \"t\", which does not exist"
    );
    glue.storage.close().unwrap();
}

#[test]
fn a_nested_begin_is_refused_and_the_transaction_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
    glue.execute("CREATE TABLE t (id INTEGER); BEGIN; INSERT INTO t VALUES (1);")
        .unwrap();
    let err = message(glue.execute("BEGIN").unwrap_err());
    assert_eq!(
        err,
        "storage: [StrataStorage] nested transaction is not supported"
    );
    glue.execute("INSERT INTO t VALUES (2); COMMIT;").unwrap();
    let out = glue.execute("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(
        out,
        vec![gluesql_core::prelude::Payload::Select {
            labels: vec!["COUNT(*)".to_owned()],
            rows: vec![vec![gluesql_core::prelude::Value::I64(2)]],
        }]
    );
    glue.storage.close().unwrap();
}
