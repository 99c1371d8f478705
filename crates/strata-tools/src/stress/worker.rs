//! The worker threads of `strata stress`: each does random operations on the keys it owns
//! (and reads of any key), checking what it reads against the oracle as it goes.

use super::*;
use power_cut::Trace;

/// Runs the worker threads for `--duration` seconds (or until a check fails).
pub(super) fn run_workers(
    a: &StressArgs,
    db: &Store,
    oracle: &Oracle,
    seed: u64,
    trace: Option<&Trace>,
) -> Result<u64, BoxError> {
    let mix = Mix::parse(&a.ops)?;
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let failure = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.threads)
            .map(|t| {
                let (stop, ops) = (&stop, &ops);
                s.spawn(move || {
                    strata::fs::fault::FaultFs::read_faults_here(a.read_fault_one_in > 0);
                    let mut w = Worker::new(a, db, oracle, t, seed.wrapping_add(t), mix);
                    w.trace = trace;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        if let Err(e) = w.step() {
                            if power_cut::power_is_off() {
                                power_cut::wait_for_the_end();
                            }
                            stop.store(true, Ordering::Relaxed);
                            return Some(format!("thread {t}: {e}"));
                        }
                        // Saved every 100 (one write to the expected state's header): a
                        // killed child's count is off by less than that.
                        if ops.fetch_add(1, Ordering::Relaxed) % 100 == 99 {
                            if let Err(e) = oracle.add_ops(100) {
                                return Some(e);
                            }
                        }
                    }
                    None
                })
            })
            .collect();
        first_failure(handles)
    });
    if let Some(f) = failure {
        return Err(format!("verification failed: {f}").into());
    }
    Ok(ops.load(Ordering::Relaxed))
}

/// The writes of one batch, as the oracle sees them.
#[derive(Default)]
pub(super) struct Writes {
    pub(super) batch: WriteBatch,
    /// The value id each key written holds after the batch (0: absent).
    finals: std::collections::BTreeMap<u64, u32>,
    /// Each write in batch order (key, id), for the count of puts since a delete.
    order: Vec<(u64, u32)>,
}

impl Writes {
    /// Key `k` holds `id` after the writes so far.
    fn record(&mut self, k: u64, id: u32) {
        self.finals.insert(k, id);
        self.order.push((k, id));
    }
}

/// The error of a write that failed for an injected fault and could not be retried after
/// `resume`: the child ends, and the parent checks the database as after a kill.
pub(super) const NEEDS_REOPEN: &str = "the database needs a reopen";

/// One worker thread: random operations on its own keys (and reads of any key).
pub(super) struct Worker<'a> {
    /// The trace of a child that will cut its power.
    pub(super) trace: Option<&'a Trace>,
    pub(super) thread: u64,
    pub(super) a: &'a StressArgs,
    pub(super) db: &'a Store,
    pub(super) oracle: &'a Oracle,
    /// The keys this thread owns.
    pub(super) own: std::ops::Range<u64>,
    pub(super) rng: Rng,
    mix: Mix,
    /// Puts since the last delete of each owned key (single-delete needs at most one).
    pub(super) puts_since_delete: std::collections::HashMap<u64, u32>,
    pub(super) write_options: WriteOptions,
}

impl<'a> Worker<'a> {
    pub(super) fn new(
        a: &'a StressArgs,
        db: &'a Store,
        oracle: &'a Oracle,
        thread: u64,
        seed: u64,
        mix: Mix,
    ) -> Self {
        Worker {
            trace: None,
            thread,
            a,
            db,
            oracle,
            own: Blocks::of(a).of_thread(thread),
            rng: Rng::new(seed),
            mix,
            puts_since_delete: Default::default(),
            write_options: a.options.write_options(a.disable_wal),
        }
    }

    /// Hands `batch` to the database, `finals` being what it leaves in each key; traced,
    /// and retried after `resume` if an injected fault failed it.
    pub(super) fn write(
        &mut self,
        batch: WriteBatch,
        finals: Vec<(u64, u32)>,
        what: &str,
    ) -> Result<(), String> {
        let barrier = self.write_options.sync && !self.write_options.disable_wal;
        let retry = self.a.write_fault_one_in + self.a.metadata_write_fault_one_in > 0;
        let retry_batch = retry.then(|| self.idempotent(&finals));
        let traced = self
            .trace
            .map(|t| (t, t.begin(self.thread, finals, barrier)));
        let mut result = self.db.write(batch, &self.write_options);
        if let (Err(_), Some(again)) = (&result, retry_batch) {
            result = self.retry(again);
        }
        match result {
            Ok(()) => {
                if let Some((t, i)) = traced {
                    t.ack(self.thread, i);
                }
                Ok(())
            }
            Err(e) => Err(format!("{what}: {e}")),
        }
    }

    /// A batch that leaves `finals` in place whatever of the failed one was applied: puts and
    /// deletes (a failed write may still be in the WAL, so a merge must not be repeated).
    pub(super) fn idempotent(&self, finals: &[(u64, u32)]) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for &(k, id) in finals {
            match id {
                0 => self.db.batch_delete(&mut batch, k, &key(k), false),
                id => self
                    .db
                    .batch_put(&mut batch, k, &key(k), &value(k, id, self.a)),
            }
        }
        batch
    }

    /// After a write failed for an injected fault: `resume`, and the write again, until it
    /// goes through (a few seconds at most; then the database needs a reopen).
    pub(super) fn retry(&mut self, batch: WriteBatch) -> strata::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut last = None;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            if let Err(e) = self.db.resume() {
                last = Some(e);
                continue;
            }
            match self.db.write(batch.clone(), &self.write_options) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(strata::Error::Unavailable(format!(
            "{NEEDS_REOPEN}: writes still fail after resume: {}",
            last.map_or_else(String::new, |e| e.to_string())
        )))
    }

    /// An error of a read: tolerated when read faults are injected and it is one (the read
    /// must fail or be right, never be wrong); otherwise the run fails.
    pub(super) fn read_error(&self, e: strata::Error, what: &str) -> Result<(), String> {
        if self.a.read_fault_one_in > 0 && e.to_string().contains("injected read error") {
            return Ok(());
        }
        Err(format!("{what}: {e}"))
    }

    /// A random key this thread owns.
    pub(super) fn own_key(&mut self) -> u64 {
        self.own.start + self.rng.below(self.own.end - self.own.start)
    }

    /// A random counter this thread owns, or another owned key when it has none.
    fn own_counter(&mut self) -> u64 {
        let k = self.own_key();
        let counter = k - k % 4 + 3;
        if self.owns(counter) {
            counter
        } else {
            k
        }
    }

    /// The id a merge of `operand` into `k` leaves: the counter's sum (the operand alone
    /// onto an absent key).
    fn merged_id(&self, k: u64, operand: u32) -> u32 {
        self.oracle.state(k).committed + operand
    }

    /// Adds 1 to 16 to counter `k`; on any other key, a put.
    fn merge(&mut self, k: u64) -> Result<(), String> {
        // Past u32 ids the sum would not name a value id: start the counter again.
        if !is_counter(k, self.a) || self.oracle.state(k).committed > u32::MAX - 16 {
            return self.put(k);
        }
        let operand = 1 + self.rng.below(16) as u32;
        let id = self.merged_id(k, operand);
        self.oracle.begin(k, id)?;
        let mut batch = WriteBatch::new();
        self.db
            .batch_merge(&mut batch, k, &key(k), &u64::from(operand).to_le_bytes());
        self.write(batch, vec![(k, id)], &format!("merge {k}"))?;
        self.oracle.commit(k, id)?;
        *self.puts_since_delete.entry(k).or_insert(u32::MAX / 2) += 1;
        Ok(())
    }

    pub(super) fn owns(&self, k: u64) -> bool {
        self.own.contains(&k)
    }

    /// The next id to write to `k` (never its current one, never 0).
    pub(super) fn next_id(&self, k: u64) -> u32 {
        self.oracle.state(k).committed.wrapping_add(1).max(1)
    }

    pub(super) fn step(&mut self) -> Result<(), String> {
        let mut pick = self.rng.below(self.mix.total());
        let m = self.mix;
        for (weight, op) in [
            (m.put, 0),
            (m.merge, 7),
            (m.delete, 1),
            (m.single_delete, 2),
            (m.delete_range, 8),
            (m.batch, 3),
            (m.get, 4),
            (m.iter, 5),
            (m.snapshot, 6),
            (m.multi_get, 9),
            (m.flush, 10),
            (m.compact, 11),
            (m.sync_wal, 12),
            (m.checkpoint, 13),
            (m.column_family, 14),
            (m.ingest, 15),
        ] {
            if pick < weight {
                return match op {
                    0 => {
                        let k = self.own_key();
                        self.put(k)
                    }
                    1 => {
                        let k = self.own_key();
                        self.delete(k, false)
                    }
                    2 => {
                        let k = self.own_key();
                        let single =
                            self.puts_since_delete.get(&k).copied().unwrap_or(u32::MAX) <= 1;
                        self.delete(k, single)
                    }
                    3 => self.batch(),
                    4 => self.get(),
                    5 => self.iterate(),
                    7 => {
                        let k = self.own_counter();
                        self.merge(k)
                    }
                    8 => self.delete_range(),
                    9 => self.multi_get(),
                    10 => self.flush(),
                    11 => self.compact(),
                    12 => self.sync_wal(),
                    13 => self.checkpoint(),
                    14 => self.column_family(),
                    15 => self.ingest(),
                    _ => self.snapshot_read(),
                };
            }
            pick -= weight;
        }
        Ok(())
    }

    pub(super) fn put(&mut self, k: u64) -> Result<(), String> {
        let id = self.next_id(k);
        self.oracle.begin(k, id)?;
        let mut batch = WriteBatch::new();
        self.db
            .batch_put(&mut batch, k, &key(k), &value(k, id, self.a));
        self.write(batch, vec![(k, id)], &format!("put {k}"))?;
        self.oracle.commit(k, id)?;
        *self.puts_since_delete.entry(k).or_insert(u32::MAX / 2) += 1;
        Ok(())
    }

    pub(super) fn delete(&mut self, k: u64, single: bool) -> Result<(), String> {
        self.oracle.begin(k, 0)?;
        let mut batch = WriteBatch::new();
        self.db.batch_delete(&mut batch, k, &key(k), single);
        self.write(batch, vec![(k, 0)], &format!("delete {k}"))?;
        self.oracle.commit(k, 0)?;
        self.puts_since_delete.insert(k, 0);
        Ok(())
    }

    /// A batch of 1 to 5 writes to owned keys (puts, deletes, merges into counters), one in
    /// four times with a range deletion before or after them.
    pub(super) fn batch(&mut self) -> Result<(), String> {
        let mut keys: Vec<u64> = (0..2 + self.rng.below(4)).map(|_| self.own_key()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut w = Writes::default();
        let range_first = self.rng.one_in(4).then(|| self.rng.one_in(2));
        if range_first == Some(true) {
            self.add_range_deletion(&mut w);
        }
        for &k in &keys {
            // The value the key holds at this point of the batch.
            let current = w
                .finals
                .get(&k)
                .copied()
                .unwrap_or_else(|| self.oracle.state(k).committed);
            let id = if self.rng.one_in(4) {
                0
            } else {
                current.wrapping_add(1).max(1)
            };
            if id != 0 && is_counter(k, self.a) && current <= u32::MAX - 16 && self.rng.one_in(2) {
                let operand = 1 + self.rng.below(16) as u32;
                self.db
                    .batch_merge(&mut w.batch, k, &key(k), &u64::from(operand).to_le_bytes());
                w.record(k, current + operand);
                continue;
            }
            if id == 0 {
                self.db.batch_delete(&mut w.batch, k, &key(k), false);
            } else {
                self.db
                    .batch_put(&mut w.batch, k, &key(k), &value(k, id, self.a));
            }
            w.record(k, id);
        }
        if range_first == Some(false) {
            self.add_range_deletion(&mut w);
        }
        self.apply(w, "batch")
    }

    /// A range deletion alone, then a get of one of the keys it deleted.
    fn delete_range(&mut self) -> Result<(), String> {
        let mut w = Writes::default();
        let deleted = self.add_range_deletion(&mut w);
        self.apply(w, "delete_range")?;
        if deleted.is_empty() {
            return Ok(());
        }
        let k = deleted[self.rng.below(deleted.len() as u64) as usize];
        match self.db.get(k, &key(k), None) {
            Ok(got) => self.check(k, got.as_deref(), "get after delete_range"),
            Err(e) => self.read_error(e, &format!("get {k}")),
        }
    }

    /// Adds to `w` a range deletion from an owned key over 1 to 32 keys, inside this
    /// thread's block, in the family of its begin key or a random one. Returns the keys it
    /// deletes: those of the family in the range.
    fn add_range_deletion(&mut self, w: &mut Writes) -> Vec<u64> {
        let begin = self.own_key();
        let end = (begin + 1 + self.rng.below(32)).min(self.own.end);
        let family = if self.rng.one_in(2) {
            self.db.family_of(begin)
        } else {
            self.rng.below(self.db.family_count()) as usize
        };
        self.db
            .batch_delete_range(&mut w.batch, family, &key(begin), &key(end));
        let deleted: Vec<u64> = (begin..end)
            .filter(|&k| self.db.family_of(k) == family)
            .collect();
        for &k in &deleted {
            w.record(k, 0);
        }
        deleted
    }

    /// Writes `w` through the oracle: the keys whose value changes pending before, every key
    /// committed after.
    fn apply(&mut self, w: Writes, what: &str) -> Result<(), String> {
        for (&k, &id) in &w.finals {
            if id != self.oracle.state(k).committed {
                self.oracle.begin(k, id)?;
            }
        }
        let finals: Vec<(u64, u32)> = w.finals.iter().map(|(&k, &id)| (k, id)).collect();
        self.write(w.batch, finals, what)?;
        for (&k, &id) in &w.finals {
            self.oracle.commit(k, id)?;
        }
        for (k, id) in w.order {
            if id == 0 {
                self.puts_since_delete.insert(k, 0);
            } else {
                *self.puts_since_delete.entry(k).or_insert(u32::MAX / 2) += 1;
            }
        }
        Ok(())
    }

    /// Checks what the database returned for `k` (`got` as a value id).
    pub(super) fn check(&self, k: u64, got: Option<&[u8]>, what: &str) -> Result<(), String> {
        let id = match got {
            None => 0,
            Some(v) => value_id(k, v, self.a)
                .ok_or_else(|| format!("{what}: key {k} holds a value that is no value of it"))?,
        };
        if self.owns(k) {
            let expected = self.oracle.state(k).committed;
            if id != expected {
                return Err(format!(
                    "{what}: key {k} has value id {id}, expected {expected}"
                ));
            }
        }
        Ok(())
    }

    fn get(&mut self) -> Result<(), String> {
        let k = if self.rng.one_in(2) {
            self.own_key()
        } else {
            self.rng.below(self.a.keys)
        };
        match self.db.get(k, &key(k), None) {
            Ok(got) => self.check(k, got.as_deref(), "get"),
            Err(e) => self.read_error(e, &format!("get {k}")),
        }
    }

    /// Up to 8 keys of one family in one `multi_get`, each checked as a get.
    fn multi_get(&mut self) -> Result<(), String> {
        let family = self.rng.below(self.db.family_count()) as usize;
        let n = self.db.family_count();
        let ks: Vec<u64> = (0..1 + self.rng.below(8))
            .filter_map(|_| {
                let k = self.own_key();
                let k = k - k % n + family as u64;
                (k < self.a.keys).then_some(k)
            })
            .collect();
        for (k, got) in ks.iter().zip(self.db.multi_get(family, &ks)) {
            match got {
                Ok(got) => self.check(*k, got.as_deref(), "multi_get")?,
                Err(e) => self.read_error(e, &format!("multi_get {k}"))?,
            }
        }
        Ok(())
    }

    /// A flush of every family: a barrier in the trace (what was acknowledged before it is
    /// durable once it returns).
    fn flush(&mut self) -> Result<(), String> {
        let traced = self
            .trace
            .map(|t| (t, t.begin(self.thread, Vec::new(), true)));
        let done = self.background_job(|db| db.flush());
        done.map_err(|e| format!("flush: {e}"))?;
        if let Some((t, i)) = traced {
            t.ack(self.thread, i);
        }
        Ok(())
    }

    /// `sync_wal`: a barrier when writes go to the WAL. With write faults injected, one that
    /// fails (its WAL's or a blob file's sync) is resumed and stays unacknowledged, so it
    /// makes nothing durable in the expected state: the database owes nothing for it.
    fn sync_wal(&mut self) -> Result<(), String> {
        if self.write_options.disable_wal {
            return Ok(());
        }
        let traced = self
            .trace
            .map(|t| (t, t.begin(self.thread, Vec::new(), true)));
        match self.db.sync_wal() {
            Ok(()) => {}
            Err(_) if self.a.write_fault_one_in + self.a.metadata_write_fault_one_in > 0 => {
                let _ = self.db.resume();
                return Ok(());
            }
            Err(e) => return Err(format!("sync_wal: {e}")),
        }
        if let Some((t, i)) = traced {
            t.ack(self.thread, i);
        }
        Ok(())
    }

    /// A manual compaction of up to 200 keys of one family.
    fn compact(&mut self) -> Result<(), String> {
        let family = self.rng.below(self.db.family_count()) as usize;
        let begin = self.rng.below(self.a.keys);
        let end = (begin + self.rng.below(200)).min(self.a.keys - 1);
        self.background_job(|db| db.compact_range(family, &key(begin), &key(end)))
            .map_err(|e| format!("compact_range: {e}"))
    }

    /// Runs `job` with no read fault injected in this thread's reads (reads that are a
    /// write's or a check's own, not the checked reads that tolerate injected faults).
    pub(super) fn without_read_faults<T>(&self, job: impl FnOnce() -> T) -> T {
        let reads = self.a.read_fault_one_in > 0;
        strata::fs::fault::FaultFs::read_faults_here(false);
        let done = job();
        strata::fs::fault::FaultFs::read_faults_here(reads);
        done
    }

    /// A flush or compaction run on this thread: its reads are the job's, not checked reads,
    /// so no read fault is injected in them; with write faults, one that fails is resumed
    /// and counts as done (the database retries the job).
    pub(super) fn background_job(
        &self,
        job: impl FnOnce(&Store) -> strata::Result<()>,
    ) -> strata::Result<()> {
        let reads = self.a.read_fault_one_in > 0;
        strata::fs::fault::FaultFs::read_faults_here(false);
        let done = job(self.db);
        strata::fs::fault::FaultFs::read_faults_here(reads);
        match done {
            Err(_) if self.a.write_fault_one_in + self.a.metadata_write_fault_one_in > 0 => {
                let _ = self.db.resume();
                Ok(())
            }
            done => done,
        }
    }

    /// Reads an owned key through a snapshot taken before it was overwritten.
    fn snapshot_read(&mut self) -> Result<(), String> {
        let k = self.own_key();
        let before = self.oracle.state(k).committed;
        let snapshot = self.db.snapshot();
        self.put(k)?;
        let got = match self.db.get(k, &key(k), Some(&snapshot)) {
            Ok(got) => got,
            Err(e) => return self.read_error(e, &format!("snapshot get {k}")),
        };
        let id = got.as_deref().map_or(Some(0), |v| value_id(k, v, self.a));
        if id != Some(before) {
            return Err(format!(
                "snapshot read of key {k}: value id {id:?}, expected {before}"
            ));
        }
        Ok(())
    }
}
