//! Transactions on RocksDB, of either kind (pessimistic or optimistic): the db_bench steps'
//! transactions ([`RocksDbEngine::run_txn`]), a workload's transaction body run through
//! [`BodyTxn`] ([`RocksDbEngine::run_body`]), and which of RocksDB's errors are retries.

use rocksdb::{ErrorKind, Transaction};

use super::{visit_range, with_read_options, BlockFlags, RocksDbEngine};
use crate::bench::engine::{
    counter_of, Attempt, EngineResult, Retry, TxnBody, TxnError, TxnOp, TxnOps, TxnRead, Visitor,
    WriteOp,
};

impl RocksDbEngine {
    /// A workload's transaction: `body` in `txn`, then the commit; `Ok(Err(why))` for a
    /// retry (the transaction rolled back).
    pub(super) fn run_body<D>(
        &self,
        txn: Transaction<'_, D>,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>> {
        let stopped = body(&mut BodyTxn {
            engine: self,
            txn: &txn,
        })
        .err();
        match stopped {
            None => match txn.commit() {
                Ok(()) => Ok(Ok(())),
                Err(e) => match retry_of(&e) {
                    Some(why) => Ok(Err(why)),
                    None => Err(e.into()),
                },
            },
            Some(stopped) => {
                txn.rollback()?;
                match stopped {
                    TxnError::Retry(why) => Ok(Err(why)),
                    TxnError::Failed(e) => Err(e),
                }
            }
        }
    }

    /// Runs `op` in `txn` and commits it (rolls it back for a read-only one).
    pub(super) fn run_txn<D>(
        &self,
        txn: Transaction<'_, D>,
        op: TxnOp<'_>,
    ) -> EngineResult<Attempt> {
        let mut read = TxnRead::default();
        let result: EngineResult<()> = (|| {
            match op {
                TxnOp::Put(entries) => {
                    for (key, value) in entries {
                        txn.put_cf(self.txn_family(key)?, key, value)?;
                    }
                }
                TxnOp::Delete(key) => txn.delete_cf(self.txn_family(key)?, key)?,
                TxnOp::Get(key) => {
                    let cf = self.txn_family(key)?;
                    let v = with_read_options(BlockFlags::DEFAULT, |o| {
                        txn.get_pinned_cf_opt(cf, key, o)
                    })?;
                    if let Some(v) = v {
                        read.found = true;
                        read.bytes = (key.len() + v.len()) as u64;
                    }
                }
                TxnOp::Seek(key, nexts) => {
                    let mut it =
                        txn.raw_iterator_cf_opt(self.txn_family(key)?, self.seek_options());
                    it.seek(key);
                    read.found = it.key() == Some(key);
                    for _ in 0..nexts {
                        let (Some(k), Some(v)) = (it.key(), it.value()) else {
                            break;
                        };
                        read.bytes += (k.len() + v.len()) as u64;
                        it.next();
                    }
                    it.status()?;
                }
                TxnOp::Update(key, value) => {
                    let cf = self.txn_family(key)?;
                    if let Some(v) = with_read_options(BlockFlags::DEFAULT, |o| {
                        txn.get_pinned_for_update_cf_opt(cf, key, true, o)
                    })? {
                        read.found = true;
                        read.bytes = (key.len() + v.len()) as u64;
                    }
                    txn.put_cf(cf, key, value)?;
                }
                TxnOp::AddToEach(keys, increment) => {
                    for key in keys {
                        let cf = self.txn_family(key)?;
                        let old = with_read_options(BlockFlags::DEFAULT, |o| {
                            txn.get_pinned_for_update_cf_opt(cf, key, true, o)
                        })?;
                        read.found |= old.is_some();
                        let counter = counter_of(key, old.as_deref())?;
                        txn.put_cf(cf, key, counter.wrapping_add(increment).to_be_bytes())?;
                    }
                }
                TxnOp::CursorUpdate(key, value) => {
                    // No updatable cursor: the iterator finds the entry, then the key is
                    // read for update (locked, or tracked for the commit's check) and put.
                    let cf = self.txn_family(key)?;
                    let mut it = txn.raw_iterator_cf_opt(cf, self.scan_options());
                    it.seek(key);
                    let landed = it.key().map(<[u8]>::to_vec);
                    it.status()?;
                    drop(it);
                    if let Some(k) = landed {
                        let v = with_read_options(BlockFlags::DEFAULT, |o| {
                            txn.get_pinned_for_update_cf_opt(cf, &k, true, o)
                        })?;
                        read.found = true;
                        read.bytes = (k.len() + v.map_or(0, |v| v.len())) as u64;
                        txn.put_cf(cf, &k, value)?;
                    }
                }
            }
            Ok(())
        })();
        let result = result.and_then(|()| {
            if op.read_only() {
                txn.rollback()?;
            } else {
                txn.commit()?;
            }
            Ok(())
        });
        match result {
            Ok(()) => Ok(Ok(read)),
            Err(e) => match e.downcast_ref::<rocksdb::Error>().and_then(retry_of) {
                Some(why) => Ok(Err(why)),
                None => Err(e),
            },
        }
    }
}

/// A failed call inside a transaction: a retry when RocksDB's error is one.
fn txn_error(e: rocksdb::Error) -> TxnError {
    match retry_of(&e) {
        Some(why) => TxnError::Retry(why),
        None => TxnError::Failed(e.into()),
    }
}

/// A workload's transaction on RocksDB: the [`TxnOps`] of a transaction of either kind.
struct BodyTxn<'e, 't, 'db, D> {
    engine: &'e RocksDbEngine,
    txn: &'t Transaction<'db, D>,
}

impl<D> TxnOps for BodyTxn<'_, '_, '_, D> {
    fn get(
        &mut self,
        cf: usize,
        key: &[u8],
        for_update: bool,
    ) -> Result<Option<Vec<u8>>, TxnError> {
        let family = self.engine.family_at(cf)?;
        let value = with_read_options(BlockFlags::DEFAULT, |o| {
            if for_update {
                self.txn.get_pinned_for_update_cf_opt(family, key, true, o)
            } else {
                self.txn.get_pinned_cf_opt(family, key, o)
            }
            .map(|v| v.map(|v| v.to_vec()))
        });
        value.map_err(txn_error)
    }

    fn write(&mut self, op: WriteOp<'_>) -> Result<(), TxnError> {
        let family = self.engine.family_at(op.cf())?;
        match op {
            WriteOp::Put { key, value, .. } => self.txn.put_cf(family, key, value),
            WriteOp::Delete { key, .. } => self.txn.delete_cf(family, key),
            WriteOp::Merge { key, operand, .. } => self.txn.merge_cf(family, key, operand),
        }
        .map_err(txn_error)
    }

    fn scan(
        &mut self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> Result<(), TxnError> {
        let family = self.engine.family_at(cf)?;
        let it = self
            .txn
            .raw_iterator_cf_opt(family, self.engine.bounds(lower, upper));
        visit_range(it, reverse, visit).map_err(txn_error)
    }
}

/// Which retry a failed transaction call is: a lock wait that timed out, a deadlock
/// (RocksDB's `Busy` naming it), an optimistic conflict (`Busy`, or `TryAgain` when the
/// memtables no longer hold the history the check needs); `None` for a real failure.
fn retry_of(e: &rocksdb::Error) -> Option<Retry> {
    match e.kind() {
        ErrorKind::TimedOut => Some(Retry::Timeout),
        ErrorKind::Busy if e.as_ref().contains("Deadlock") => Some(Retry::Deadlock),
        ErrorKind::Busy | ErrorKind::TryAgain => Some(Retry::Conflict),
        _ => None,
    }
}
