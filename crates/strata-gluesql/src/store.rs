//! GlueSQL's `Store` and `StoreMut`: schemas, row fetches and scans, inserts, appends and
//! deletes. Table scans are range scans over the table's rows (`keys`), in key order.

use std::collections::BTreeMap;

use gluesql_core::chrono::Utc;
use gluesql_core::data::{Key, Schema, Value};
use gluesql_core::store::{RowIter, Store, StoreMut};
use strata::TransactionBase;

use crate::catalog::{decode_schema, encode_schema};
use crate::codec::{decode_row, encode_single};
use crate::error::{corrupt, engine, refused, Result};
use crate::keys;
use crate::storage::StrataStorage;
use crate::table::{describe_row, Table};

impl StrataStorage {
    /// The schema of `table`, if it exists, as the open transaction sees it.
    pub(crate) fn schema(&self, table: &str) -> Result<Option<Schema>> {
        let key = keys::schema(table);
        self.get(&key)?
            .map(|bytes| decode_schema(&bytes, &key))
            .transpose()
    }

    /// The schema of `table`, or an error naming the missing table.
    pub(crate) fn table(&self, table: &str) -> Result<Table> {
        self.schema(table)?
            .map(|s| Table::new(&s))
            .ok_or_else(|| refused(format!("table {table:?} not found")))
    }

    /// Writes `schema`, and the table's metadata when it has none yet (an ALTER TABLE keeps
    /// the creation time).
    pub(crate) fn put_schema(
        txn: &mut strata::OptimisticTransaction<'_>,
        schema: &Schema,
    ) -> Result<()> {
        txn.put(keys::schema(&schema.table_name), encode_schema(schema)?)
            .map_err(engine)?;
        let meta = keys::meta(&schema.table_name);
        if txn.get(&meta).map_err(engine)?.is_none() {
            let created = Value::Map(BTreeMap::from([(
                "CREATED".to_owned(),
                Value::Timestamp(Utc::now().naive_utc()),
            )]));
            txn.put(meta, encode_single(&created)).map_err(engine)?;
        }
        Ok(())
    }

    /// Deletes everything of table `name`: schema, metadata, row id sequence, rows and index
    /// entries.
    pub(crate) fn drop_table_keys(&mut self, name: &str) -> Result<()> {
        let mut doomed: Vec<Vec<u8>> =
            vec![keys::schema(name), keys::meta(name), keys::sequence(name)];
        for prefix in [keys::row_prefix(name), keys::table_index_prefix(name)] {
            for entry in self.scan_prefix(&prefix)? {
                doomed.push(entry?.0);
            }
        }
        self.write(|txn| {
            for key in doomed {
                txn.delete(key).map_err(engine)?;
            }
            Ok(())
        })
    }
}

impl Store for StrataStorage {
    fn fetch_schema(&self, table_name: &str) -> Result<Option<Schema>> {
        self.schema(table_name)
    }

    fn fetch_all_schemas(&self) -> Result<Vec<Schema>> {
        self.scan_prefix(&keys::schema_prefix())?
            .map(|entry| {
                let (key, value) = entry?;
                decode_schema(&value, &key)
            })
            .collect()
    }

    fn fetch_data(&self, table_name: &str, key: &Key) -> Result<Option<Vec<Value>>> {
        let row_key = keys::row(table_name, &key.to_cmp_be_bytes()?);
        match self.get(&row_key)? {
            None => Ok(None),
            Some(bytes) => {
                let (_, row) = decode_row(&bytes, &|| describe_row(table_name, &row_key))?;
                Ok(Some(row))
            }
        }
    }

    /// Each row is decoded straight from the cursor's bytes (an UPDATE or DELETE with a
    /// `WHERE` runs as a scan of the whole table, so this is their per-row cost).
    fn scan_data<'a>(&'a self, table_name: &str) -> Result<RowIter<'a>> {
        let table = table_name.to_owned();
        let mut rows = self.scan_prefix(&keys::row_prefix(table_name))?;
        Ok(Box::new(std::iter::from_fn(move || {
            rows.next_with(|key, value| decode_row(value, &|| describe_row(&table, key)))
                .map(|row| row.and_then(|row| row))
        })))
    }
}

impl StoreMut for StrataStorage {
    fn insert_schema(&mut self, schema: &Schema) -> Result<()> {
        self.write(|txn| StrataStorage::put_schema(txn, schema))
    }

    fn delete_schema(&mut self, table_name: &str) -> Result<()> {
        self.drop_table_keys(table_name)
    }

    /// Rows without a key get `U64` keys from the table's sequence, in order, so that a
    /// table without a primary key scans in insertion order.
    fn append_data(&mut self, table_name: &str, rows: Vec<Vec<Value>>) -> Result<()> {
        let table = self.table(table_name)?;
        self.write(|txn| {
            let seq_key = keys::sequence(table_name);
            let mut next = match txn.get(&seq_key).map_err(engine)? {
                None => 0,
                Some(v) => <[u8; 8]>::try_from(v.as_slice())
                    .map(u64::from_be_bytes)
                    .map_err(|_| {
                        corrupt(format!(
                            "row id sequence of table {table_name:?}: {} bytes, expected 8",
                            v.len()
                        ))
                    })?,
            };
            for row in rows {
                let key = Key::U64(next);
                next += 1;
                let row_key = table.row_key(&key)?;
                table.write_new(txn, &row_key, &key, &row)?;
            }
            txn.put(seq_key, next.to_be_bytes()).map_err(engine)
        })
    }

    fn insert_data(&mut self, table_name: &str, rows: Vec<(Key, Vec<Value>)>) -> Result<()> {
        let table = self.table(table_name)?;
        self.write(|txn| {
            for (key, row) in rows {
                table.put(txn, &key, &row)?;
            }
            Ok(())
        })
    }

    fn delete_data(&mut self, table_name: &str, keys: Vec<Key>) -> Result<()> {
        let table = self.table(table_name)?;
        self.write(|txn| {
            for key in keys {
                let row_key = table.row_key(&key)?;
                table.remove(txn, &row_key)?;
            }
            Ok(())
        })
    }
}
