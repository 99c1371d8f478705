//! The refusals both kinds of transaction share, each naming what is wrong.

use crate::column_family::ColumnFamily;
use crate::db::Db;
use crate::error::{Error, Result};

/// Where a transaction is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Active,
    /// Prepared for two-phase commit: only commit or rollback may follow.
    Prepared,
    Committed,
    /// Its commit failed (a conflict, an expiration, an IO error): nothing was written.
    Failed,
    RolledBack,
}

/// Fails unless the transaction is still running.
pub(crate) fn check_active(state: State) -> Result<()> {
    let what = match state {
        State::Active => return Ok(()),
        State::Prepared => {
            return Err(Error::InvalidArgument(
                "the transaction is prepared: only commit or rollback may follow".into(),
            ))
        }
        State::Committed => "committed",
        State::Failed => "ended by a failed commit",
        State::RolledBack => "rolled back",
    };
    Err(Error::InvalidArgument(format!(
        "the transaction was already {what}: begin a new one"
    )))
}

/// Fails if family `cf` was dropped.
pub(crate) fn check_family(cf: &ColumnFamily) -> Result<()> {
    if cf.is_dropped() {
        return Err(Error::InvalidArgument(format!(
            "column family '{}' was dropped: the transaction cannot use it",
            cf.name()
        )));
    }
    Ok(())
}

/// Fails if family `cf` has no merge operator: a merge into it could never be read.
pub(crate) fn check_merge(db: &Db, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
    if db.merge_operator_of(cf)?.is_none() {
        return Err(Error::InvalidArgument(format!(
            "merge of key '{}' refused: no merge operator is configured for column family \
             '{}' (set merge_operator in its options)",
            crate::util::printable(key),
            cf.name()
        )));
    }
    Ok(())
}
