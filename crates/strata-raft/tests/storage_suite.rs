//! openraft's own storage suite, run against the Strata log and state machine.

use openraft::testing::{StoreBuilder, Suite};
use openraft::StorageError;
use strata_raft::{LogStore, StateMachine, TypeConfig};
use tempfile::TempDir;

struct Builder;

impl StoreBuilder<TypeConfig, LogStore, StateMachine, TempDir> for Builder {
    async fn build(&self) -> Result<(TempDir, LogStore, StateMachine), StorageError<u64>> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let log = LogStore::open(&dir.path().join("log")).expect("open log");
        let sm = StateMachine::open(&dir.path().join("sm")).expect("open state machine");
        Ok((dir, log, sm))
    }
}

#[test]
fn openraft_storage_suite() {
    Suite::test_all(Builder).expect("openraft storage suite");
}
