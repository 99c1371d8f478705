//! GlueSQL's `Index` and `IndexMut`: secondary indexes as ordered index entries (`keys`), so
//! that `WHERE v > 3` or `ORDER BY v` on an indexed expression is one Strata range scan over
//! the entries followed by a row fetch per entry.
//!
//! Creating an index writes the schema and an entry for every existing row in one
//! transaction; dropping one deletes the schema's mention and every entry likewise.

use gluesql_core::ast::{IndexOperator, OrderByExpr};
use gluesql_core::chrono::Utc;
use gluesql_core::data::{SchemaIndex, SchemaIndexOrd, Value};
use gluesql_core::error::IndexError;
use gluesql_core::plan::plan_scalar_expr;
use gluesql_core::store::{Index, IndexMut, RowIter};
use strata::TransactionBase;

use crate::codec::decode_row;
use crate::error::{corrupt, engine, Result};
use crate::keys;
use crate::storage::StrataStorage;
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
        let prefix_len = keys::index_prefix(table_name, index_name).len();
        let table = table_name.to_owned();
        let entries = self.scan(lower, upper, asc != Some(false))?;
        let rows = entries.map(move |entry| {
            let (entry, _) = entry?;
            let tail = entry_row_tail(&entry, prefix_len).ok_or_else(|| {
                corrupt(format!(
                    "index entry {entry:02x?} of table {table:?} has no row key"
                ))
            })?;
            let row_key = keys::row(&table, tail);
            let bytes = self.get(&row_key)?.ok_or_else(|| {
                corrupt(format!(
                    "an index entry of table {table:?} names {}, which does not exist",
                    describe_row(&table, &row_key)
                ))
            })?;
            decode_row(&bytes, &|| describe_row(&table, &row_key))
        });
        Ok(Box::new(rows))
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
