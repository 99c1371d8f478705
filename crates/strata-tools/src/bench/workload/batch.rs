//! Writes of the linkbench and insert-benchmark steps without transactions: the operation
//! body that a transaction would run ([`TxnOps`]) runs on a [`BatchOps`], whose reads go to
//! the database and whose writes are gathered into one atomic batch, while the workload's
//! own [`RowLocks`] keep two writers of one row apart (as a database's row locks would):
//! a read and the write that depends on it are then one step, and counts stay exact.

use std::sync::{Mutex, MutexGuard};

use super::super::engine::{Engine, EngineResult, TxnBody, TxnError, TxnMode, TxnOps, WriteOp};
use super::Recorder;

/// One write of a batch, owning its bytes.
enum Write {
    Put(usize, Vec<u8>, Vec<u8>),
    Delete(usize, Vec<u8>),
    Merge(usize, Vec<u8>, Vec<u8>),
}

/// An operation body's view outside a transaction: reads of the database (not of the
/// batch: the bodies read before they write), writes gathered for [`BatchOps::commit`].
pub struct BatchOps<'a> {
    db: &'a dyn Engine,
    writes: Vec<Write>,
}

impl<'a> BatchOps<'a> {
    pub fn new(db: &'a dyn Engine) -> BatchOps<'a> {
        BatchOps {
            db,
            writes: Vec::new(),
        }
    }

    /// Writes the gathered writes as one batch, and starts a new one.
    pub fn commit(&mut self, sync: bool) -> EngineResult<()> {
        if self.writes.is_empty() {
            return Ok(());
        }
        let ops: Vec<WriteOp<'_>> = self
            .writes
            .iter()
            .map(|w| match w {
                Write::Put(cf, key, value) => WriteOp::Put {
                    cf: *cf,
                    key,
                    value,
                },
                Write::Delete(cf, key) => WriteOp::Delete { cf: *cf, key },
                Write::Merge(cf, key, operand) => WriteOp::Merge {
                    cf: *cf,
                    key,
                    operand,
                },
            })
            .collect();
        self.db.write_ops(&ops, sync)?;
        self.writes.clear();
        Ok(())
    }
}

impl TxnOps for BatchOps<'_> {
    fn get(
        &mut self,
        cf: usize,
        key: &[u8],
        _for_update: bool,
    ) -> Result<Option<Vec<u8>>, TxnError> {
        Ok(self.db.get_value(cf, key)?)
    }

    fn write(&mut self, op: WriteOp<'_>) -> Result<(), TxnError> {
        self.writes.push(match op {
            WriteOp::Put { cf, key, value } => Write::Put(cf, key.to_vec(), value.to_vec()),
            WriteOp::Delete { cf, key } => Write::Delete(cf, key.to_vec()),
            WriteOp::Merge { cf, key, operand } => Write::Merge(cf, key.to_vec(), operand.to_vec()),
        });
        Ok(())
    }

    fn scan(
        &mut self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), TxnError> {
        Ok(self.db.scan_range(cf, lower, upper, reverse, visit)?)
    }
}

/// Stripes of locks over row numbers (a node, a link list): writers of rows of one stripe
/// wait for each other.
pub struct RowLocks {
    stripes: Vec<Mutex<()>>,
}

/// Stripes of [`RowLocks`]: a power of two, enough that unrelated rows rarely share one.
const STRIPES: usize = 1024;

impl RowLocks {
    pub fn new() -> RowLocks {
        RowLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }

    /// Holds row `row`'s lock until the guard is dropped.
    pub fn lock(&self, row: u64) -> MutexGuard<'_, ()> {
        // Fibonacci hashing: the top bits of the product spread neighbouring rows.
        let stripe =
            (row.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - STRIPES.trailing_zeros())) as usize;
        // A panicking writer poisons nothing it could have left half-done: the batch it
        // gathered was never written.
        self.stripes[stripe]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// How a step's writes reach the engine: each operation as one transaction of the run's
/// mode (retried until it commits), or, without one, as one batch under its row's lock.
pub struct Writes<'a> {
    pub db: &'a dyn Engine,
    pub mode: Option<TxnMode>,
    pub sync: bool,
    pub locks: &'a RowLocks,
}

impl Writes<'_> {
    /// Runs `body` as one transaction or one batch; `row` names what it reads and then
    /// writes (`None`: nothing another writer could change between the two).
    pub fn run(
        &self,
        rec: &mut Recorder<'_>,
        row: Option<u64>,
        body: TxnBody<'_>,
    ) -> EngineResult<()> {
        match self.mode {
            Some(mode) => rec.transaction(self.db, mode, self.sync, body),
            None => {
                let _held = row.map(|r| self.locks.lock(r));
                let mut batch = BatchOps::new(self.db);
                match body(&mut batch) {
                    Ok(()) => batch.commit(self.sync),
                    Err(TxnError::Failed(e)) => Err(e),
                    Err(TxnError::Retry(why)) => Err(format!(
                        "an operation outside transactions asked to be run again ({why:?})"
                    )
                    .into()),
                }
            }
        }
    }
}
