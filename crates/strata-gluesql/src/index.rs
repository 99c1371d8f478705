//! GlueSQL's `Index` and `IndexMut`: secondary indexes as ordered index entries (`keys`), so
//! that `WHERE v > 3` or `ORDER BY v` on an indexed expression is one Strata range scan over
//! the entries, with the rows behind them fetched by primary key in batches.
//!
//! Creating an index writes the schema and an entry for every existing row in one
//! transaction; dropping one deletes the schema's mention and every entry likewise.

use std::collections::VecDeque;

use gluesql_core::ast::{IndexOperator, OrderByExpr};
use gluesql_core::chrono::Utc;
use gluesql_core::data::{Key, SchemaIndex, SchemaIndexOrd, Value};
use gluesql_core::error::IndexError;
use gluesql_core::plan::plan_scalar_expr;
use gluesql_core::store::{Index, IndexMut, RowIter};
use strata::TransactionBase;

use crate::codec::decode_row;
use crate::error::{corrupt, engine, Result};
use crate::keys;
use crate::storage::{Scan, StrataStorage};
use crate::table::{describe_row, Table};

/// The key range `[lower, upper)` of the entries of one index that satisfy `op value`.
///
/// NULL's entries sort after every value's (`keys`), and GlueSQL's index semantics take NULL
/// as the greatest value: `> v` and `>= v` run on to the end of the index, NULLs included
/// (its test suite's `index/null.sql` expects them).
fn entry_range(
    table: &str,
    index: &str,
    cmp: Option<(&IndexOperator, Value)>,
) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
    let whole = keys::index_prefix(table, index);
    let whole_end = keys::prefix_end(&whole);
    let Some((op, value)) = cmp else {
        return Ok((whole, whole_end));
    };
    let equal = keys::index_value_prefix(table, index, &value.to_cmp_be_bytes()?);
    // An escaped value ends with 0x00 0x01, so the end of its entries always exists.
    let equal_end = keys::prefix_end(&equal);
    Ok(match op {
        IndexOperator::Eq => (equal, equal_end),
        IndexOperator::Gt => (equal_end.unwrap_or_default(), whole_end),
        IndexOperator::GtEq => (equal, whole_end),
        IndexOperator::Lt => (whole, Some(equal)),
        IndexOperator::LtEq => (whole, equal_end),
    })
}

/// The row key bytes at the end of an index entry: what follows the escaped value, which
/// ends at the first 0x00 0x01 (an escaped 0x00 is 0x00 0xFF).
fn entry_row_tail(entry: &[u8], prefix_len: usize) -> Option<&[u8]> {
    let mut i = prefix_len;
    while i + 1 < entry.len() {
        match (entry[i], entry[i + 1]) {
            (0, 1) => return Some(&entry[i + 2..]),
            (0, 0xff) => i += 2,
            (0, _) => return None,
            _ => i += 1,
        }
    }
    None
}

impl Index for StrataStorage {
    fn scan_indexed_data<'a>(
        &'a self,
        table_name: &str,
        index_name: &str,
        asc: Option<bool>,
        cmp_value: Option<(&IndexOperator, Value)>,
    ) -> Result<RowIter<'a>> {
        let (lower, upper) = entry_range(table_name, index_name, cmp_value)?;
        let entries = self.scan(lower, upper, asc != Some(false))?;
        Ok(Box::new(IndexedRows {
            storage: self,
            entries,
            table: table_name.to_owned(),
            row_prefix: keys::row_prefix(table_name),
            entry_prefix_len: keys::index_prefix(table_name, index_name).len(),
            row_keys: Vec::new(),
            row_key_ends: Vec::new(),
            fetched: VecDeque::new(),
            batch: FIRST_BATCH,
        }))
    }
}

/// The first batch of rows an index scan fetches; each next batch doubles, up to
/// [`MAX_BATCH`]. A query that stops after a row or two (`LIMIT 1`) fetches little, and a
/// long one reads its rows in batches of `MAX_BATCH` point lookups at a time.
const FIRST_BATCH: usize = 8;
const MAX_BATCH: usize = 256;

/// The rows behind an index scan's entries, in the entries' order, fetched by primary key
/// in batches ([`StrataStorage::multi_get`]): GlueSQL's planner often hands the storage one
/// bound of a range (`k >= ? AND k < ?` arrives as `k >= ?`) and filters the rest, so a scan
/// can run over many entries, and one lookup per row would pay a whole read's overhead each.
///
/// A batch's row keys are built in one reused buffer straight from the cursor's bytes (the
/// table's row prefix, then the entry's row key tail), so an entry costs no allocation until
/// its row is read.
struct IndexedRows<'a> {
    storage: &'a StrataStorage,
    entries: Scan,
    table: String,
    /// `keys::row_prefix` of the table, computed once.
    row_prefix: Vec<u8>,
    /// The length of `keys::index_prefix` of the index: where an entry's value starts.
    entry_prefix_len: usize,
    /// The current batch's row keys, one after another; `row_key_ends[i]` is where the
    /// `i`th ends.
    row_keys: Vec<u8>,
    row_key_ends: Vec<usize>,
    fetched: VecDeque<Result<(Key, Vec<Value>)>>,
    batch: usize,
}

impl IndexedRows<'_> {
    /// Reads the next batch of index entries and fetches their rows into `fetched`.
    fn fetch(&mut self) {
        self.row_keys.clear();
        self.row_key_ends.clear();
        let mut failure = None;
        while self.row_key_ends.len() < self.batch {
            let (row_keys, prefix_len) = (&mut self.row_keys, self.entry_prefix_len);
            let row_prefix = &self.row_prefix;
            let table = &self.table;
            let step = self.entries.next_with(|entry, _| {
                let tail = entry_row_tail(entry, prefix_len).ok_or_else(|| {
                    corrupt(format!(
                        "index entry {entry:02x?} of table {table:?} has no row key"
                    ))
                })?;
                row_keys.extend_from_slice(row_prefix);
                row_keys.extend_from_slice(tail);
                Ok(row_keys.len())
            });
            match step.map(|s| s.and_then(|end| end)) {
                None => break,
                Some(Ok(end)) => self.row_key_ends.push(end),
                Some(Err(e)) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        self.fetch_rows();
        // The rows before a bad entry come first, then its error.
        if let Some(e) = failure {
            self.fetched.push_back(Err(e));
        }
        self.batch = (self.batch * 2).min(MAX_BATCH);
    }

    /// Reads the rows of the batch's row keys, in order, into `fetched`.
    fn fetch_rows(&mut self) {
        if self.row_key_ends.is_empty() {
            return;
        }
        let mut start = 0;
        let row_keys: Vec<&[u8]> = self
            .row_key_ends
            .iter()
            .map(|&end| {
                let key = &self.row_keys[start..end];
                start = end;
                key
            })
            .collect();
        let table = &self.table;
        let values = self.storage.multi_get(&row_keys);
        for (row_key, value) in row_keys.iter().zip(values) {
            let row = value.and_then(|bytes| {
                let bytes = bytes.ok_or_else(|| {
                    corrupt(format!(
                        "an index entry of table {table:?} names {}, which does not exist",
                        describe_row(table, row_key)
                    ))
                })?;
                decode_row(&bytes, &|| describe_row(table, row_key))
            });
            self.fetched.push_back(row);
        }
    }
}

impl Iterator for IndexedRows<'_> {
    type Item = Result<(Key, Vec<Value>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.fetched.is_empty() {
            self.fetch();
        }
        self.fetched.pop_front()
    }
}

impl IndexMut for StrataStorage {
    fn create_index(
        &mut self,
        table_name: &str,
        index_name: &str,
        column: &OrderByExpr,
    ) -> Result<()> {
        let mut schema = self
            .schema(table_name)?
            .ok_or_else(|| IndexError::TableNotFound(table_name.to_owned()))?;
        if schema.indexes.iter().any(|i| i.name == index_name) {
            return Err(IndexError::IndexNameAlreadyExists(index_name.to_owned()).into());
        }
        schema.indexes.push(SchemaIndex {
            name: index_name.to_owned(),
            expr: column.expr.clone(),
            order: SchemaIndexOrd::Both,
            created: Utc::now().naive_utc(),
        });
        let table = Table::new(&schema);
        let expr = plan_scalar_expr(column.expr.clone());
        let rows: Vec<(Vec<u8>, Vec<Value>)> = self
            .scan_prefix(&keys::row_prefix(table_name))?
            .map(|entry| {
                let (key, value) = entry?;
                let (_, row) = decode_row(&value, &|| describe_row(table_name, &key))?;
                Ok((key, row))
            })
            .collect::<Result<_>>()?;
        self.write(|txn| {
            for (row_key, row) in &rows {
                let entry = table.entry_of(index_name, &expr, row_key, row)?;
                txn.put(entry, []).map_err(engine)?;
            }
            StrataStorage::put_schema(txn, &schema)
        })
    }

    fn drop_index(&mut self, table_name: &str, index_name: &str) -> Result<()> {
        let mut schema = self
            .schema(table_name)?
            .ok_or_else(|| IndexError::TableNotFound(table_name.to_owned()))?;
        let before = schema.indexes.len();
        schema.indexes.retain(|i| i.name != index_name);
        if schema.indexes.len() == before {
            return Err(IndexError::IndexNameDoesNotExist(index_name.to_owned()).into());
        }
        let entries: Vec<Vec<u8>> = self
            .scan_prefix(&keys::index_prefix(table_name, index_name))?
            .map(|e| e.map(|(k, _)| k))
            .collect::<Result<_>>()?;
        self.write(|txn| {
            for entry in entries {
                txn.delete(entry).map_err(engine)?;
            }
            StrataStorage::put_schema(txn, &schema)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_key_follows_the_escaped_value() {
        let prefix = keys::index_prefix("t", "i");
        let cases: [(&[u8], &[u8]); 3] =
            [(b"abc", b"\x00\x01k"), (b"a\x00b", b""), (b"", b"\x00\x00")];
        for (value, tail) in cases {
            let entry = keys::index_entry("t", "i", value, tail);
            assert_eq!(
                entry_row_tail(&entry, prefix.len()),
                Some(tail),
                "{value:?}"
            );
        }
        assert_eq!(
            entry_row_tail(&[prefix.clone(), b"abc".to_vec()].concat(), prefix.len()),
            None
        );
    }
}
