//! What SQL writes is there after a reopen: rows, indexes, functions, and nothing of a
//! transaction left open.

use gluesql_core::prelude::{Glue, Payload, Value};
use strata_gluesql::StrataStorage;

fn rows(glue: &mut Glue<StrataStorage>, sql: &str) -> Vec<Vec<Value>> {
    match glue.execute(sql).unwrap().pop() {
        Some(Payload::Select { rows, .. }) => rows,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn tables_indexes_and_functions_survive_a_reopen_and_an_open_transaction_does_not() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
        glue.execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);
             CREATE INDEX t_name ON t (name);
             INSERT INTO t VALUES (3, 'c'), (1, 'a'), (2, 'b');
             CREATE TABLE log (msg TEXT);
             INSERT INTO log VALUES ('first'), ('second');
             CREATE FUNCTION add_one(x INTEGER) RETURN x + 1;
             BEGIN;
             INSERT INTO t VALUES (4, 'd');
             DELETE FROM log;",
        )
        .unwrap();
        // Closed with the transaction open: it is rolled back.
        glue.storage.close().unwrap();
    }
    let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
    assert_eq!(
        rows(&mut glue, "SELECT id FROM t"),
        vec![
            vec![Value::I64(1)],
            vec![Value::I64(2)],
            vec![Value::I64(3)]
        ],
        "rows in primary key order, the uncommitted one absent"
    );
    assert_eq!(
        rows(
            &mut glue,
            "SELECT id FROM t WHERE name >= 'b' ORDER BY name DESC"
        ),
        vec![vec![Value::I64(3)], vec![Value::I64(2)]]
    );
    assert_eq!(
        rows(&mut glue, "SELECT msg FROM log"),
        vec![
            vec![Value::Str("first".into())],
            vec![Value::Str("second".into())]
        ],
        "insertion order for a table without a primary key"
    );
    assert_eq!(
        rows(&mut glue, "SELECT add_one(41) AS v"),
        vec![vec![Value::I64(42)]]
    );
    // New rows of a keyless table go after the old ones.
    glue.execute("INSERT INTO log VALUES ('third')").unwrap();
    assert_eq!(rows(&mut glue, "SELECT msg FROM log").len(), 3);
    assert_eq!(
        rows(&mut glue, "SELECT msg FROM log")[2],
        vec![Value::Str("third".into())]
    );
    glue.storage.close().unwrap();
}
