//! GlueSQL's `Metadata` (the CREATED time of each table, for `GLUE_OBJECTS`), its custom
//! functions (`CREATE FUNCTION`), and its `Planner`, which here also plans index scans.
//!
//! Functions are stored in the catalog and cached in memory, because GlueSQL's
//! `fetch_function` returns references; the cache is reloaded when a transaction rolls
//! back. Function names are case-insensitive, as in GlueSQL's own storages: they are kept
//! under their upper-case name.

use std::collections::{BTreeMap, HashMap};

use gluesql_core::data::{CustomFunction as Function, Value};
use gluesql_core::plan::StatementPlan;
use gluesql_core::planner::{
    fetch_schema_map, plan_aggregate, plan_hash_join, plan_index, plan_primary_key,
    plan_schemaless, validate,
};
use gluesql_core::store::{CustomFunction, CustomFunctionMut, MetaIter, Metadata, Planner};
use strata::TransactionBase;

use crate::catalog::{decode_function, encode_function};
use crate::codec::decode_single;
use crate::error::{corrupt, engine, Result};
use crate::keys;
use crate::storage::StrataStorage;

impl StrataStorage {
    /// Reloads the function cache from the database (through the open transaction, if any).
    pub(crate) fn load_functions(&mut self) -> Result<()> {
        let mut functions = HashMap::new();
        for entry in self.scan_prefix(&keys::function_prefix())? {
            let (key, value) = entry?;
            let function = decode_function(&value, &key)?;
            functions.insert(function.func_name.to_uppercase(), function);
        }
        self.functions = functions;
        Ok(())
    }
}

impl Metadata for StrataStorage {
    fn scan_table_meta(&self) -> Result<MetaIter> {
        let prefix = keys::meta_prefix();
        let entries = self
            .scan_prefix(&prefix)?
            .map(|entry| {
                let (key, value) = entry?;
                let name = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
                let what = || format!("metadata of table {name:?}");
                match decode_single(&value, &what)? {
                    Value::Map(map) => Ok((name, map.into_iter().collect::<BTreeMap<_, _>>())),
                    other => Err(corrupt(format!(
                        "{}: a map expected, found {other:?}",
                        what()
                    ))),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Box::new(entries.into_iter().map(Ok)))
    }
}

impl CustomFunction for StrataStorage {
    fn fetch_function<'a>(&'a self, func_name: &str) -> Result<Option<&'a Function>> {
        Ok(self.functions.get(&func_name.to_uppercase()))
    }

    fn fetch_all_functions(&self) -> Result<Vec<&Function>> {
        let mut all: Vec<&Function> = self.functions.values().collect();
        all.sort_by(|a, b| a.func_name.cmp(&b.func_name));
        Ok(all)
    }
}

impl CustomFunctionMut for StrataStorage {
    fn insert_function(&mut self, func: Function) -> Result<()> {
        let bytes = encode_function(&func)?;
        let name = func.func_name.to_uppercase();
        self.write(|txn| txn.put(keys::function(&name), bytes).map_err(engine))?;
        self.functions.insert(name, func);
        Ok(())
    }

    fn delete_function(&mut self, func_name: &str) -> Result<()> {
        let name = func_name.to_uppercase();
        self.write(|txn| txn.delete(keys::function(&name)).map_err(engine))?;
        self.functions.remove(&name);
        Ok(())
    }
}

impl Planner for StrataStorage {
    fn plan(&self, statement: StatementPlan) -> Result<StatementPlan> {
        let schema_map = fetch_schema_map(self, &statement)?;
        validate(&schema_map, &statement)?;
        let statement = plan_schemaless(&schema_map, statement)?;
        let statement = plan_primary_key(&schema_map, statement);
        let statement = plan_index(&schema_map, statement);
        let statement = plan_hash_join(&schema_map, statement);
        Ok(plan_aggregate(statement))
    }
}
