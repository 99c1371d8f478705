//! GlueSQL's `AlterTable`: each change is one transaction that rewrites what it must and
//! keeps the index entries in step (GlueSQL's default methods rewrite rows through
//! `insert_data` after the schema has changed, which would compute the old rows' entries
//! with the new schema).
//!
//! - RENAME TABLE moves the schema, metadata, row id sequence, rows and index entries.
//! - RENAME COLUMN rewrites only the schema (rows are positional; index expressions naming
//!   the column directly are renamed with it, their values unchanged).
//! - ADD and DROP COLUMN rewrite every row and its index entries.

use gluesql_core::ast::{ColumnDef, Expr};
use gluesql_core::data::{Key, Schema, Value};
use gluesql_core::executor::evaluate_stateless;
use gluesql_core::plan::plan_scalar_expr;
use gluesql_core::store::{AlterTable, AlterTableError};
use strata::TransactionBase;

use crate::codec::decode_row;
use crate::error::{engine, Result};
use crate::keys;
use crate::storage::StrataStorage;
use crate::table::{describe_row, Table};

/// A stored row: its Strata key, its GlueSQL key and its values.
type StoredRow = (Vec<u8>, Key, Vec<Value>);

impl StrataStorage {
    fn existing_schema(&self, table: &str) -> Result<Schema> {
        Ok(self
            .schema(table)?
            .ok_or_else(|| AlterTableError::TableNotFound(table.to_owned()))?)
    }

    /// The rows of `table`: Strata key, GlueSQL key and values.
    fn rows_of(&self, table: &str) -> Result<Vec<StoredRow>> {
        self.scan_prefix(&keys::row_prefix(table))?
            .map(|entry| {
                let (row_key, value) = entry?;
                let (key, row) = decode_row(&value, &|| describe_row(table, &row_key))?;
                Ok((row_key, key, row))
            })
            .collect()
    }

    /// Rewrites every row of `old`'s table with `change`, under schema `new`, in one
    /// transaction.
    fn rewrite_rows(
        &mut self,
        old: &Schema,
        new: &Schema,
        change: impl Fn(&mut Vec<Value>),
    ) -> Result<()> {
        let rows = self.rows_of(&old.table_name)?;
        let (old_table, new_table) = (Table::new(old), Table::new(new));
        self.write(|txn| {
            for (row_key, key, mut row) in rows {
                old_table.remove(txn, &row_key)?;
                change(&mut row);
                new_table.write_new(txn, &row_key, &key, &row)?;
            }
            StrataStorage::put_schema(txn, new)
        })
    }
}

fn column_defs_mut<'s>(schema: &'s mut Schema, table: &str) -> Result<&'s mut Vec<ColumnDef>> {
    Ok(schema
        .column_defs
        .as_mut()
        .ok_or_else(|| AlterTableError::SchemalessTableFound(table.to_owned()))?)
}

impl AlterTable for StrataStorage {
    fn rename_schema(&mut self, table_name: &str, new_table_name: &str) -> Result<()> {
        let old = self.existing_schema(table_name)?;
        let mut new = old.clone();
        new_table_name.clone_into(&mut new.table_name);
        let rows = self.rows_of(table_name)?;
        let meta = self.get(&keys::meta(table_name))?;
        let sequence = self.get(&keys::sequence(table_name))?;
        let mut doomed: Vec<Vec<u8>> = vec![
            keys::schema(table_name),
            keys::meta(table_name),
            keys::sequence(table_name),
        ];
        for entry in self.scan_prefix(&keys::table_index_prefix(table_name))? {
            doomed.push(entry?.0);
        }
        let new_table = Table::new(&new);
        self.write(|txn| {
            for key in doomed {
                txn.delete(key).map_err(engine)?;
            }
            if let Some(meta) = meta {
                txn.put(keys::meta(new_table_name), meta).map_err(engine)?;
            }
            if let Some(sequence) = sequence {
                txn.put(keys::sequence(new_table_name), sequence)
                    .map_err(engine)?;
            }
            for (row_key, key, row) in rows {
                txn.delete(&row_key).map_err(engine)?;
                let new_key = new_table.row_key(&key)?;
                new_table.write_new(txn, &new_key, &key, &row)?;
            }
            StrataStorage::put_schema(txn, &new)
        })
    }

    fn rename_column(
        &mut self,
        table_name: &str,
        old_column_name: &str,
        new_column_name: &str,
    ) -> Result<()> {
        let mut schema = self.existing_schema(table_name)?;
        let defs = column_defs_mut(&mut schema, table_name)?;
        if defs.iter().any(|d| d.name == new_column_name) {
            return Err(AlterTableError::AlreadyExistingColumn(new_column_name.to_owned()).into());
        }
        let def = defs
            .iter_mut()
            .find(|d| d.name == old_column_name)
            .ok_or(AlterTableError::RenamingColumnNotFound)?;
        new_column_name.clone_into(&mut def.name);
        for index in &mut schema.indexes {
            if matches!(&index.expr, Expr::Identifier(name) if name == old_column_name) {
                index.expr = Expr::Identifier(new_column_name.to_owned());
            }
        }
        self.write(|txn| StrataStorage::put_schema(txn, &schema))
    }

    fn add_column(&mut self, table_name: &str, column_def: &ColumnDef) -> Result<()> {
        let old = self.existing_schema(table_name)?;
        let default: Value = match (&column_def.default, column_def.nullable) {
            (Some(default), _) => {
                evaluate_stateless(None, &plan_scalar_expr(default.clone()))?.try_into()?
            }
            (None, true) => Value::Null,
            (None, false) => {
                return Err(AlterTableError::DefaultValueRequired(column_def.clone()).into())
            }
        };
        let mut new = old.clone();
        let defs = column_defs_mut(&mut new, table_name)?;
        if defs.iter().any(|d| d.name == column_def.name) {
            return Err(AlterTableError::AlreadyExistingColumn(column_def.name.clone()).into());
        }
        defs.push(column_def.clone());
        self.rewrite_rows(&old, &new, |row| row.push(default.clone()))
    }

    fn drop_column(&mut self, table_name: &str, column_name: &str, if_exists: bool) -> Result<()> {
        let old = self.existing_schema(table_name)?;
        let mut new = old.clone();
        let defs = column_defs_mut(&mut new, table_name)?;
        let Some(i) = defs.iter().position(|d| d.name == column_name) else {
            if if_exists {
                return Ok(());
            }
            return Err(AlterTableError::DroppingColumnNotFound(column_name.to_owned()).into());
        };
        defs.remove(i);
        self.rewrite_rows(&old, &new, |row| {
            if i < row.len() {
                row.remove(i);
            }
        })
    }
}
