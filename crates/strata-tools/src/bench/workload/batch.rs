//! Writes of the linkbench and insert-benchmark steps without transactions: the operation
//! body that a transaction would run ([`TxnOps`]) runs on a [`BatchOps`], whose reads go to
//! the database and whose writes are gathered into one atomic batch, while the workload's
//! own [`RowLocks`] keep two writers of one row apart (as a database's row locks would):
//! a read and the write that depends on it are then one step, and counts stay exact.

use std::sync::{Mutex, MutexGuard};

use super::super::engine::{Engine, EngineResult, TxnBody, TxnError, TxnMode, TxnOps, WriteOp};
use super::Recorder;

/// What one write of a batch does.
#[derive(Clone, Copy)]
enum Kind {
    Put,
    Delete,
    Merge,
}

/// One write of a batch: its key and value (empty for a delete) are `key_len` and
/// `value_len` bytes of the batch's buffer from `start`.
struct Write {
    kind: Kind,
    cf: usize,
    start: usize,
    key_len: usize,
    value_len: usize,
}

/// An operation body's view outside a transaction: reads of the database (not of the
/// batch: the bodies read before they write), writes gathered for [`BatchOps::commit`].
/// The writes' bytes go to one buffer, which a thread reuses from batch to batch: a load
/// of small rows otherwise spends as much time allocating and freeing two copies of each
/// key and value as the engine spends writing them.
pub struct BatchOps<'a> {
    db: &'a dyn Engine,
    writes: Vec<Write>,
    bytes: Vec<u8>,
}

thread_local! {
    /// The buffers of the thread's last batch, emptied, for its next one.
    static SPARE: std::cell::Cell<Option<(Vec<Write>, Vec<u8>)>> =
        const { std::cell::Cell::new(None) };
}

impl<'a> BatchOps<'a> {
    pub fn new(db: &'a dyn Engine) -> BatchOps<'a> {
        let (writes, bytes) = SPARE.take().unwrap_or_default();
        BatchOps { db, writes, bytes }
    }

    /// Writes the gathered writes as one batch, and starts a new one.
    pub fn commit(&mut self, sync: bool) -> EngineResult<()> {
        if self.writes.is_empty() {
            return Ok(());
        }
        let bytes = &self.bytes;
        let ops: Vec<WriteOp<'_>> = self
            .writes
            .iter()
            .map(|w| {
                let key = &bytes[w.start..w.start + w.key_len];
                let value = &bytes[w.start + w.key_len..w.start + w.key_len + w.value_len];
                match w.kind {
                    Kind::Put => WriteOp::Put {
                        cf: w.cf,
                        key,
                        value,
                    },
                    Kind::Delete => WriteOp::Delete { cf: w.cf, key },
                    Kind::Merge => WriteOp::Merge {
                        cf: w.cf,
                        key,
                        operand: value,
                    },
                }
            })
            .collect();
        self.db.write_ops(&ops, sync)?;
        self.writes.clear();
        self.bytes.clear();
        Ok(())
    }

    fn push(&mut self, kind: Kind, cf: usize, key: &[u8], value: &[u8]) {
        self.writes.push(Write {
            kind,
            cf,
            start: self.bytes.len(),
            key_len: key.len(),
            value_len: value.len(),
        });
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
    }
}

impl Drop for BatchOps<'_> {
    fn drop(&mut self) {
        let (mut writes, mut bytes) = (
            std::mem::take(&mut self.writes),
            std::mem::take(&mut self.bytes),
        );
        writes.clear();
        bytes.clear();
        SPARE.set(Some((writes, bytes)));
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
        match op {
            WriteOp::Put { cf, key, value } => self.push(Kind::Put, cf, key, value),
            WriteOp::Delete { cf, key } => self.push(Kind::Delete, cf, key, b""),
            WriteOp::Merge { cf, key, operand } => self.push(Kind::Merge, cf, key, operand),
        }
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
