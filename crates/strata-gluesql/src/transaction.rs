//! GlueSQL's `Transaction` on Strata's optimistic transactions (see `storage` for the
//! isolation). `begin(true)` is GlueSQL asking, before each statement, whether the storage
//! wants to wrap it: outside an explicit transaction it does (so a statement that fails half
//! way leaves nothing), inside one the statement joins it.

use gluesql_core::store::Transaction;

use crate::error::{refused, Result};
use crate::storage::StrataStorage;

impl Transaction for StrataStorage {
    fn begin(&mut self, autocommit: bool) -> Result<bool> {
        if self.in_transaction() {
            if autocommit {
                return Ok(false);
            }
            return Err(refused("nested transaction is not supported"));
        }
        self.start();
        self.autocommit = autocommit;
        Ok(autocommit)
    }

    fn rollback(&mut self) -> Result<()> {
        self.rollback_active()
    }

    fn commit(&mut self) -> Result<()> {
        self.commit_active()
    }
}
