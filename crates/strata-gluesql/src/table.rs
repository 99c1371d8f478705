//! Rows and their index entries, written together: the one place that keeps the invariant of
//! `keys` (each row has exactly one entry per index of its table, and no entry lacks its row).
//!
//! A [`Table`] is a table's schema made ready for writing: its column names and its index
//! expressions planned once. Every function here takes the transaction the write belongs to,
//! so a row and its entries always commit, or vanish, together.

use gluesql_core::data::{Key, Schema, Value};
use gluesql_core::executor::{evaluate_stateless, RowContext};
use gluesql_core::plan::{plan_scalar_expr, ExprPlan};
use strata::OptimisticTransaction;
use strata::TransactionBase;

use crate::codec::{decode_row, encode_row};
use crate::error::{engine, Result};
use crate::keys;

/// A table's schema, ready to write rows.
pub(crate) struct Table {
    pub(crate) name: String,
    columns: Option<Vec<String>>,
    indexes: Vec<(String, ExprPlan)>,
}

impl Table {
    pub(crate) fn new(schema: &Schema) -> Table {
        Table {
            name: schema.table_name.clone(),
            columns: schema
                .column_defs
                .as_ref()
                .map(|defs| defs.iter().map(|d| d.name.clone()).collect()),
            indexes: schema
                .indexes
                .iter()
                .map(|i| (i.name.clone(), plan_scalar_expr(i.expr.clone())))
                .collect(),
        }
    }

    /// The Strata key of the row with GlueSQL key `key`.
    pub(crate) fn row_key(&self, key: &Key) -> Result<Vec<u8>> {
        Ok(keys::row(&self.name, &key.to_cmp_be_bytes()?))
    }

    /// The row key bytes of the Strata key `row_key` of this table (what index entries end
    /// with).
    fn tail<'k>(&self, row_key: &'k [u8]) -> &'k [u8] {
        row_key
            .get(keys::row_prefix(&self.name).len()..)
            .unwrap_or_default()
    }

    /// The value bytes of index `expr` for `row`.
    pub(crate) fn index_value(&self, expr: &ExprPlan, row: &[Value]) -> Result<Vec<u8>> {
        let (names, values): (Vec<String>, Vec<Value>);
        let context = match (&self.columns, row) {
            (Some(columns), _) => RowContext::RefVecData {
                columns,
                values: row,
            },
            // A schemaless row is one map: its keys are the columns.
            (None, [Value::Map(map)]) => {
                names = map.keys().cloned().collect();
                values = map.values().cloned().collect();
                RowContext::RefVecData {
                    columns: &names,
                    values: &values,
                }
            }
            (None, _) => RowContext::RefVecData {
                columns: &[],
                values: row,
            },
        };
        let value: Value = evaluate_stateless(Some(context), expr)?.try_into()?;
        value.to_cmp_be_bytes()
    }

    /// The index entries of the row at Strata key `row_key` holding `row`.
    fn index_entries(&self, row_key: &[u8], row: &[Value]) -> Result<Vec<Vec<u8>>> {
        let tail = self.tail(row_key);
        self.indexes
            .iter()
            .map(|(name, expr)| {
                let value = self.index_value(expr, row)?;
                Ok(keys::index_entry(&self.name, name, &value, tail))
            })
            .collect()
    }

    /// The index entries of one index for the row at `row_key`.
    pub(crate) fn entry_of(
        &self,
        index: &str,
        expr: &ExprPlan,
        row_key: &[u8],
        row: &[Value],
    ) -> Result<Vec<u8>> {
        let tail = self.tail(row_key);
        let value = self.index_value(expr, row)?;
        Ok(keys::index_entry(&self.name, index, &value, tail))
    }

    /// Reads the row at `row_key` through `txn`.
    pub(crate) fn read(
        &self,
        txn: &OptimisticTransaction<'_>,
        row_key: &[u8],
    ) -> Result<Option<(Key, Vec<Value>)>> {
        match txn.get(row_key).map_err(engine)? {
            None => Ok(None),
            Some(bytes) => decode_row(&bytes, &|| describe_row(&self.name, row_key)).map(Some),
        }
    }

    /// Deletes the row at `row_key`, if any, with its index entries (computed with this
    /// table's indexes, so a caller changing the schema passes the old one here).
    pub(crate) fn remove(&self, txn: &mut OptimisticTransaction<'_>, row_key: &[u8]) -> Result<()> {
        if self.indexes.is_empty() {
            // No entries to find: the old row need not be read.
            return txn.delete(row_key).map_err(engine);
        }
        if let Some((_, old)) = self.read(txn, row_key)? {
            for entry in self.index_entries(row_key, &old)? {
                txn.delete(entry).map_err(engine)?;
            }
            txn.delete(row_key).map_err(engine)?;
        }
        Ok(())
    }

    /// Writes the row `(key, row)` and its index entries, where no row is (the caller knows).
    pub(crate) fn write_new(
        &self,
        txn: &mut OptimisticTransaction<'_>,
        row_key: &[u8],
        key: &Key,
        row: &[Value],
    ) -> Result<()> {
        for entry in self.index_entries(row_key, row)? {
            txn.put(entry, []).map_err(engine)?;
        }
        txn.put(row_key, encode_row(key, row)).map_err(engine)
    }

    /// Inserts or replaces the row `(key, row)`, keeping the index entries in step.
    pub(crate) fn put(
        &self,
        txn: &mut OptimisticTransaction<'_>,
        key: &Key,
        row: &[Value],
    ) -> Result<()> {
        let row_key = self.row_key(key)?;
        if !self.indexes.is_empty() {
            // The old row's entries go; without indexes the put alone replaces the row.
            self.remove(txn, &row_key)?;
        }
        self.write_new(txn, &row_key, key, row)
    }
}

/// How errors name a row: its table and its key bytes in hex.
pub(crate) fn describe_row(table: &str, row_key: &[u8]) -> String {
    let tail = row_key
        .get(keys::row_prefix(table).len()..)
        .unwrap_or(row_key);
    let hex: String = tail.iter().map(|b| format!("{b:02x}")).collect();
    format!("row {hex} of table {table:?}")
}
