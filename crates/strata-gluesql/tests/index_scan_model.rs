//! Index scans against a model: every `WHERE` on an indexed column that GlueSQL turns into an
//! index scan (one bound, both bounds with the second as a filter, equality, `IS NULL`, empty
//! ranges below, inside and beyond the values) and every `ORDER BY` on it returns what a plain
//! filter over the rows held in memory returns (with GlueSQL's semantics for NULL in an
//! index, see `CASES`), in the index's order: by value with NULL after every value, then by
//! primary key (reversed for `DESC`).
//!
//! Hundreds of rows per value range, so a scan crosses the storage's growing row batches
//! (8, 16, ... 256), and the same cases run again inside a transaction whose own inserts,
//! updates and deletes are not committed yet (rows then come from the transaction's writes
//! and from the database together).

use std::cmp::Ordering;

use gluesql_core::prelude::{Glue, Payload, Value};
use strata_gluesql::StrataStorage;

/// A row of the model: `(id, v)`; `pad` is `pad_of(id)`.
type Row = (i64, Option<i64>);

fn pad_of(id: i64) -> String {
    format!("p{id}")
}

fn select(glue: &mut Glue<StrataStorage>, sql: &str) -> Vec<Vec<Value>> {
    match glue
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .pop()
    {
        Some(Payload::Select { rows, .. }) => rows,
        other => panic!("{sql}: {other:?}"),
    }
}

fn as_values(rows: &[Row]) -> Vec<Vec<Value>> {
    rows.iter()
        .map(|&(id, v)| {
            vec![
                Value::I64(id),
                v.map_or(Value::Null, Value::I64),
                Value::Str(pad_of(id)),
            ]
        })
        .collect()
}

/// The index's order: by value, NULL after every value, then by primary key.
fn index_order(a: &Row, b: &Row) -> Ordering {
    let value = match (a.1, b.1) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    value.then(a.0.cmp(&b.0))
}

/// Whether a model row's `v` satisfies a condition.
type Holds = fn(Option<i64>) -> bool;

/// The `WHERE` cases: the SQL condition; whether a model row's `v` satisfies it when GlueSQL
/// plans it as an index scan; and whether it does as a filter (with `ORDER BY v` the planner
/// walks the whole index for the order and filters every row).
///
/// An index scan has GlueSQL's index semantics: NULL is the greatest value and equal to
/// itself, so `> v` and `>= v` include the NULLs (its test suite's `index/null.sql` expects
/// that; the second bound of `v >= 7 AND v < 9` is a filter), and `IS NULL` / `IS NOT NULL`
/// are planned as `= NULL` / `< NULL` (a comparison with a NULL literal, `v >= NULL`, is
/// not planned on the index and matches nothing). A filter has SQL's: a comparison with NULL is never
/// true.
const CASES: &[(&str, Holds, Holds)] = &[
    ("v = 7", |v| v == Some(7), |v| v == Some(7)),
    (
        "v > 7",
        |v| v.is_none_or(|v| v > 7),
        |v| v.is_some_and(|v| v > 7),
    ),
    (
        "v >= 7",
        |v| v.is_none_or(|v| v >= 7),
        |v| v.is_some_and(|v| v >= 7),
    ),
    (
        "v < 7",
        |v| v.is_some_and(|v| v < 7),
        |v| v.is_some_and(|v| v < 7),
    ),
    (
        "v <= 7",
        |v| v.is_some_and(|v| v <= 7),
        |v| v.is_some_and(|v| v <= 7),
    ),
    (
        "v >= 7 AND v < 9",
        |v| v.is_some_and(|v| (7..9).contains(&v)),
        |v| v.is_some_and(|v| (7..9).contains(&v)),
    ),
    (
        "v > 7 AND v <= 9",
        |v| v.is_some_and(|v| v > 7 && v <= 9),
        |v| v.is_some_and(|v| v > 7 && v <= 9),
    ),
    ("v >= 0", |_| true, |v| v.is_some()),
    ("v > 49", |v| v.is_none(), |_| false),
    ("v >= 1000", |v| v.is_none(), |_| false),
    ("v < 0", |_| false, |_| false),
    ("v <= -1", |_| false, |_| false),
    ("v = 1000", |_| false, |_| false),
    ("v >= 9 AND v < 7", |_| false, |_| false),
    ("v > NULL", |_| false, |_| false),
    ("v >= NULL", |_| false, |_| false),
    ("v IS NULL", |v| v.is_none(), |v| v.is_none()),
    ("v IS NOT NULL", |v| v.is_some(), |v| v.is_some()),
];

fn check(glue: &mut Glue<StrataStorage>, model: &[Row], when: &str) {
    let mut ordered = model.to_vec();
    ordered.sort_by(index_order);
    for (condition, by_index, by_filter) in CASES {
        let sql = format!("SELECT id, v, pad FROM t WHERE {condition}");
        let expected: Vec<Row> = ordered.iter().copied().filter(|r| by_index(r.1)).collect();
        same(select(glue, &sql), as_values(&expected), when, &sql);
        let sql = format!("SELECT id, v, pad FROM t WHERE {condition} ORDER BY v DESC");
        let expected: Vec<Row> = ordered
            .iter()
            .rev()
            .copied()
            .filter(|r| by_filter(r.1))
            .collect();
        same(select(glue, &sql), as_values(&expected), when, &sql);
    }
    let all = as_values(&ordered);
    let sql = "SELECT id, v, pad FROM t ORDER BY v";
    same(select(glue, sql), all.clone(), when, sql);
    let mut reversed = all;
    reversed.reverse();
    let sql = "SELECT id, v, pad FROM t ORDER BY v DESC";
    same(select(glue, sql), reversed, when, sql);
}

/// Asserts that `got` is `expected`, naming the first row where they part.
fn same(got: Vec<Vec<Value>>, expected: Vec<Vec<Value>>, when: &str, sql: &str) {
    if let Some(i) = (0..got.len().max(expected.len())).find(|&i| got.get(i) != expected.get(i)) {
        panic!(
            "{when}: {sql}: {} rows, {} expected; row {i} is {:?}, expected {:?}",
            got.len(),
            expected.len(),
            got.get(i),
            expected.get(i)
        );
    }
}

/// A fixed-seed generator: the same rows on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn insert(glue: &mut Glue<StrataStorage>, rows: &[Row]) {
    let values: Vec<String> = rows
        .iter()
        .map(|&(id, v)| {
            let v = v.map_or("NULL".to_owned(), |v| v.to_string());
            format!("({id}, {v}, '{}')", pad_of(id))
        })
        .collect();
    glue.execute(format!("INSERT INTO t VALUES {}", values.join(", ")))
        .unwrap();
}

#[test]
fn index_scans_return_what_a_filter_over_the_rows_returns_in_index_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut glue = Glue::new(StrataStorage::open(dir.path()).unwrap());
    glue.execute(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NULL, pad TEXT);
         CREATE INDEX t_v ON t (v);",
    )
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Values 0..50, one row in ten NULL, ids not in value order.
    let mut model: Vec<Row> = (0..1200)
        .map(|id| {
            let v = (rng.below(10) != 0).then(|| rng.below(50) as i64);
            (id, v)
        })
        .collect();
    insert(&mut glue, &model);
    check(&mut glue, &model, "committed");

    // Inside a transaction: its own inserts, value changes (to NULL, from NULL, to another
    // value) and deletes, none committed yet.
    glue.execute("BEGIN").unwrap();
    let added: Vec<Row> = (1200..1500)
        .map(|id| (id, (id % 3 != 0).then(|| rng.below(50) as i64)))
        .collect();
    insert(&mut glue, &added);
    model.extend(&added);
    for id in (0..1500).step_by(7) {
        let v = match rng.below(3) {
            0 => None,
            _ => Some(rng.below(50) as i64),
        };
        let sql_v = v.map_or("NULL".to_owned(), |v| v.to_string());
        glue.execute(format!("UPDATE t SET v = {sql_v} WHERE id = {id}"))
            .unwrap();
        model[id as usize].1 = v;
    }
    glue.execute("DELETE FROM t WHERE id % 11 = 0").unwrap();
    model.retain(|&(id, _)| id % 11 != 0);
    check(&mut glue, &model, "in a transaction");
    glue.execute("COMMIT").unwrap();
    check(&mut glue, &model, "after the commit");
    glue.storage.close().unwrap();
}
