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
            prefix_len: keys::index_prefix(table_name, index_name).len(),
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
struct IndexedRows<'a> {
    storage: &'a StrataStorage,
    entries: Scan,
    table: String,
    prefix_len: usize,
    fetched: VecDeque<Result<(Key, Vec<Value>)>>,
    batch: usize,
}

impl IndexedRows<'_> {
    /// Reads the next batch of index entries and fetches their rows into `fetched`.
    fn fetch(&mut self) {
        let mut row_keys = Vec::with_capacity(self.batch);
        for entry in self.entries.by_ref().take(self.batch) {
            let row_key = entry.and_then(|(entry, _)| {
                let tail = entry_row_tail(&entry, self.prefix_len).ok_or_else(|| {
                    corrupt(format!(
                        "index entry {entry:02x?} of table {:?} has no row key",
                        self.table
                    ))
                })?;
                Ok(keys::row(&self.table, tail))
            });
            match row_key {
                Ok(row_key) => row_keys.push(row_key),
                Err(e) => {
                    // The rows before the bad entry come first, then its error.
                    self.fetch_rows(&row_keys);
                    self.fetched.push_back(Err(e));
                    return;
                }
            }
        }
        self.fetch_rows(&row_keys);
        self.batch = (self.batch * 2).min(MAX_BATCH);
    }

    fn fetch_rows(&mut self, row_keys: &[Vec<u8>]) {
        let table = &self.table;
        let values = self.storage.multi_get(row_keys);
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
