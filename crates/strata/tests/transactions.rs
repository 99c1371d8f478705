//! Optimistic transactions against a model.
//!
//! The model test interleaves up to three transactions and plain writes on one thread, with
//! flushes and compactions among them, and knows exactly which commits must fail: a commit
//! conflicts if and only if a key it wrote or read for update was written by a commit (or a
//! plain write) that happened after the transaction began. Every read inside a transaction,
//! point or cursor (both directions, with bounds), must show the transaction's own writes
//! over the state at its beginning. A committed transaction's writes all appear; a failed
//! one's none.
//!
//! `STRATA_MODEL_SEED=<n>` runs one seed; `STRATA_MODEL_SEEDS=<n>` runs seeds 0 to n-1 (6 by
//! default). A failure names the seed and the operation.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use strata::internals::Rng;
use strata::TransactionBase;
use strata::{
    CfOptions, Db, ErrorKind, OptimisticTransaction, Options, ReadOptions, UInt64Add, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// A transaction's writes to one family: `None` deletes.
type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;
type Tracked = BTreeSet<(usize, Vec<u8>)>;

fn open(dir: &Path) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.write_buffer_size = 4096;
    options.level0_file_num_compaction_trigger = 2;
    options.target_file_size_base = 16 << 10;
    options.max_bytes_for_level_base = 32 << 10;
    options.merge_operator = Some(Arc::new(UInt64Add));
    let mut other = CfOptions::default();
    other.write_buffer_size = 1 << 20;
    Db::open_cf(dir, options, [("other", other)]).unwrap()
}

fn key(rng: &mut Rng) -> Vec<u8> {
    format!("k{:02}", rng.below(24)).into_bytes()
}

fn u64_add(base: Option<&[u8]>, operand: &[u8]) -> Vec<u8> {
    let n = |b: Option<&[u8]>| {
        b.and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, u64::from_le_bytes)
    };
    (n(base).wrapping_add(n(Some(operand))))
        .to_le_bytes()
        .to_vec()
}

/// A transaction of the model: the state when it began, its own writes, the keys it
/// tracks, and the number of commits that had happened when it began.
struct ModelTxn<'db> {
    txn: OptimisticTransaction<'db>,
    /// Per family (0 default, 1 other): the committed state when it began.
    begin: [Model; 2],
    /// Its writes, per family.
    writes: [Writes; 2],
    tracked: Tracked,
    began_at: usize,
    save_points: Vec<(Writes, Writes, Tracked)>,
}

impl ModelTxn<'_> {
    fn view(&self, f: usize) -> Model {
        let mut m = self.begin[f].clone();
        for (k, v) in &self.writes[f] {
            match v {
                Some(v) => m.insert(k.clone(), v.clone()),
                None => m.remove(k),
            };
        }
        m
    }
}

fn run(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = open(dir.path());
    let mut rng = Rng::new(seed);
    let mut committed: [Model; 2] = [Model::new(), Model::new()];
    // Per commit, in order: the (family, key) pairs it wrote.
    let mut history: Vec<BTreeSet<(usize, Vec<u8>)>> = Vec::new();
    let mut conflicts = 0;
    let mut commits = 0;
    for step in 0..400 {
        let ctx = format!("seed {seed}, step {step}");
        let cfs = [db.default_cf(), db.cf("other").unwrap()];
        let mut txns: Vec<ModelTxn<'_>> = Vec::new();
        // One round: transactions begin, work and end; the database handle outlives them.
        for _ in 0..(8 + rng.below(24)) {
            let choice = rng.below(100);
            if txns.is_empty() || (choice < 10 && txns.len() < 3) {
                txns.push(ModelTxn {
                    txn: db.optimistic_transaction(&WriteOptions::default()),
                    begin: committed.clone(),
                    writes: [BTreeMap::new(), BTreeMap::new()],
                    tracked: BTreeSet::new(),
                    began_at: history.len(),
                    save_points: Vec::new(),
                });
                continue;
            }
            let t = rng.below(txns.len() as u64) as usize;
            let f = rng.below(2) as usize;
            let k = key(&mut rng);
            let cf = &cfs[f];
            let m = &mut txns[t];
            match choice {
                10..=24 => {
                    let got = m.txn.get_cf(cf, &k).unwrap();
                    assert_eq!(got, m.view(f).get(&k).cloned(), "{ctx}: get {k:?}");
                }
                25..=29 => {
                    // Several keys at once, some repeated, some the transaction wrote.
                    let mut keys = vec![k];
                    for _ in 0..rng.below(12) {
                        keys.push(key(&mut rng));
                    }
                    keys.push(keys[0].clone());
                    let got: Vec<Option<Vec<u8>>> = m
                        .txn
                        .multi_get_cf(cf, &keys)
                        .into_iter()
                        .collect::<Result<_, _>>()
                        .unwrap();
                    let view = m.view(f);
                    let want: Vec<Option<Vec<u8>>> =
                        keys.iter().map(|k| view.get(k).cloned()).collect();
                    assert_eq!(got, want, "{ctx}: multi_get {keys:?}");
                }
                30..=39 => {
                    let got = m.txn.get_for_update_cf(cf, &k).unwrap();
                    assert_eq!(got, m.view(f).get(&k).cloned(), "{ctx}: get_for_update");
                    m.tracked.insert((f, k));
                }
                40..=54 => {
                    let v = format!("v{step}-{}", rng.below(1000)).into_bytes();
                    m.txn.put_cf(cf, &k, &v).unwrap();
                    m.writes[f].insert(k.clone(), Some(v));
                    m.tracked.insert((f, k));
                }
                55..=59 => {
                    m.txn.delete_cf(cf, &k).unwrap();
                    m.writes[f].insert(k.clone(), None);
                    m.tracked.insert((f, k));
                }
                60..=64 if f == 0 => {
                    let operand = rng.below(100).to_le_bytes();
                    m.txn.merge(&k, operand).unwrap();
                    let now = m.view(0).get(&k).cloned();
                    m.writes[0].insert(k.clone(), Some(u64_add(now.as_deref(), &operand)));
                    m.tracked.insert((0, k));
                }
                60..=64 => {
                    let e = m.txn.merge_cf(cf, &k, b"x").unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{ctx}");
                }
                72 => {
                    // A read-modify-write through a cursor (a seek, then an update or a
                    // delete), then a few moves from there: a cursor without bounds makes
                    // its iterator only at the first move, after the write.
                    let mut view = m.view(f);
                    let forward = rng.one_in(2);
                    let mut change = None;
                    let mut walked = Vec::new();
                    let mut moves = 0;
                    let start;
                    {
                        let mut c = m.txn.cursor_cf(cf, &ReadOptions::default()).unwrap();
                        c.seek(&k);
                        let first = view.range(k.clone()..).next().map(|(k, _)| k.clone());
                        start = c.valid().then(|| c.key().to_vec());
                        assert_eq!(start, first, "{ctx}: cursor seek {k:?}");
                        if let Some(at) = &start {
                            match rng.below(3) {
                                0 => {
                                    let v = format!("rmw{step}").into_bytes();
                                    c.update(&v).unwrap();
                                    assert_eq!(c.value(), v.as_slice(), "{ctx}: after update");
                                    change = Some((at.clone(), Some(v)));
                                }
                                1 => {
                                    c.delete().unwrap();
                                    assert_eq!(c.value(), b"", "{ctx}: after delete");
                                    change = Some((at.clone(), None));
                                }
                                _ => {}
                            }
                        }
                        for _ in 0..rng.below(4) {
                            if !c.valid() {
                                break;
                            }
                            moves += 1;
                            if forward {
                                c.next();
                            } else {
                                c.prev();
                            }
                            if c.valid() {
                                walked.push((c.key().to_vec(), c.value().to_vec()));
                            }
                        }
                        c.status().unwrap();
                    }
                    if let Some((key, value)) = change {
                        match &value {
                            Some(v) => view.insert(key.clone(), v.clone()),
                            None => view.remove(&key),
                        };
                        m.writes[f].insert(key.clone(), value);
                        m.tracked.insert((f, key));
                    }
                    if let Some(start) = start {
                        let want: Vec<(Vec<u8>, Vec<u8>)> = match forward {
                            true => view
                                .range((Bound::Excluded(start), Bound::Unbounded))
                                .take(moves)
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                            false => view
                                .range(..start)
                                .rev()
                                .take(moves)
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        };
                        assert_eq!(walked, want, "{ctx}: moves after a cursor's write");
                    }
                }
                70..=71 => {
                    // An updatable cursor: walks the range, updating and deleting in place.
                    let want: Vec<Vec<u8>> = m.view(f).keys().cloned().collect();
                    let forward = rng.one_in(2);
                    let mut seen = Vec::new();
                    let mut changes = Vec::new();
                    {
                        let mut c = m.txn.cursor_cf(cf, &ReadOptions::default()).unwrap();
                        if forward {
                            c.seek_to_first();
                        } else {
                            c.seek_to_last();
                        }
                        while c.valid() {
                            let k = c.key().to_vec();
                            seen.push(k.clone());
                            match rng.below(6) {
                                0 | 1 => {
                                    let v = format!("cursor{step}").into_bytes();
                                    c.update(&v).unwrap();
                                    assert_eq!(c.value(), v.as_slice(), "{ctx}: after update");
                                    changes.push((k, Some(v)));
                                }
                                2 => {
                                    c.delete().unwrap();
                                    assert_eq!(c.key(), k.as_slice(), "{ctx}: after delete");
                                    changes.push((k, None));
                                }
                                _ => {}
                            }
                            if forward {
                                c.next();
                            } else {
                                c.prev();
                            }
                        }
                        c.status().unwrap();
                    }
                    if !forward {
                        seen.reverse();
                    }
                    assert_eq!(seen, want, "{ctx}: cursor walk");
                    for (k, v) in changes {
                        m.writes[f].insert(k.clone(), v);
                        m.tracked.insert((f, k));
                    }
                }
                65..=69 => {
                    let view = m.view(f);
                    let lower = rng.one_in(2).then(|| key(&mut rng));
                    let upper = rng.one_in(2).then(|| key(&mut rng));
                    let want: Vec<(Vec<u8>, Vec<u8>)> = view
                        .iter()
                        .filter(|(k, _)| lower.as_ref().is_none_or(|l| *k >= l))
                        .filter(|(k, _)| upper.as_ref().is_none_or(|u| *k < u))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let mut options = ReadOptions::default();
                    options.lower_bound = lower.clone();
                    options.upper_bound = upper.clone();
                    let mut it = m.txn.iter_cf(cf, &options).unwrap();
                    let mut got = Vec::new();
                    if rng.one_in(2) {
                        it.seek_to_first();
                        while it.valid() {
                            got.push((it.key().to_vec(), it.value().to_vec()));
                            it.next();
                        }
                    } else {
                        it.seek_to_last();
                        while it.valid() {
                            got.push((it.key().to_vec(), it.value().to_vec()));
                            it.prev();
                        }
                        got.reverse();
                    }
                    it.status().unwrap();
                    assert_eq!(got, want, "{ctx}: scan {lower:?}..{upper:?}");
                    // A seek, then a change of direction.
                    let target = key(&mut rng);
                    it.seek(&target);
                    let at = want.iter().position(|(k, _)| *k >= target);
                    match at {
                        Some(i) => {
                            assert!(it.valid(), "{ctx}: seek {target:?}");
                            assert_eq!(it.key(), want[i].0.as_slice(), "{ctx}: seek {target:?}");
                            it.prev();
                            match i.checked_sub(1) {
                                Some(j) => assert_eq!(it.key(), want[j].0.as_slice(), "{ctx}"),
                                None => assert!(!it.valid(), "{ctx}"),
                            }
                        }
                        None => assert!(!it.valid(), "{ctx}: seek {target:?} past the end"),
                    }
                }
                73..=75 => {
                    m.txn.set_save_point().unwrap();
                    m.save_points.push((
                        m.writes[0].clone(),
                        m.writes[1].clone(),
                        m.tracked.clone(),
                    ));
                }
                76..=77 => match m.save_points.pop() {
                    Some((w0, w1, tracked)) => {
                        m.txn.rollback_to_save_point().unwrap();
                        m.writes = [w0, w1];
                        m.tracked = tracked;
                    }
                    None => {
                        let e = m.txn.rollback_to_save_point().unwrap_err();
                        assert_eq!(e.kind(), ErrorKind::NotFound, "{ctx}");
                    }
                },
                78..=87 => {
                    let mut m = txns.swap_remove(t);
                    let conflict = history[m.began_at..]
                        .iter()
                        .any(|written| m.tracked.iter().any(|k| written.contains(k)));
                    let result = m.txn.commit();
                    if conflict {
                        let e = result.expect_err(&format!("{ctx}: commit must conflict"));
                        assert_eq!(e.kind(), ErrorKind::Busy, "{ctx}: {e}");
                        conflicts += 1;
                    } else {
                        result.unwrap_or_else(|e| panic!("{ctx}: commit failed: {e}"));
                        commits += 1;
                        let mut written = BTreeSet::new();
                        for (f, (state, writes)) in committed.iter_mut().zip(&m.writes).enumerate()
                        {
                            for (k, v) in writes {
                                match v {
                                    Some(v) => state.insert(k.clone(), v.clone()),
                                    None => state.remove(k),
                                };
                                written.insert((f, k.clone()));
                            }
                        }
                        // A commit with only reads for update writes nothing.
                        history.push(written);
                    }
                    let e = m.txn.put(b"after", b"x").unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{ctx}: {e}");
                }
                88..=90 => {
                    let mut m = txns.swap_remove(t);
                    m.txn.rollback().unwrap();
                    assert!(m.txn.get(b"k00").is_err(), "{ctx}: read after rollback");
                }
                91..=95 => {
                    // A plain write, outside every transaction.
                    let v = format!("plain{step}").into_bytes();
                    db.put_cf(cf, &k, &v).unwrap();
                    committed[f].insert(k.clone(), v);
                    history.push(BTreeSet::from([(f, k)]));
                }
                96..=97 => db.flush_cf(cf).unwrap(),
                _ => db.compact_range_cf(cf, None, None).unwrap(),
            }
        }
        for mut m in txns {
            m.txn.rollback().unwrap();
        }
        // Between rounds: the committed state is what the database holds.
        for (f, want) in committed.iter().enumerate() {
            let cf = if f == 0 {
                db.default_cf()
            } else {
                db.cf("other").unwrap()
            };
            let got: Model = db
                .range_cf::<&[u8], _>(&cf, ..)
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            assert_eq!(&got, want, "{ctx}: family {f} after the round");
        }
        if rng.one_in(10) {
            drop(db);
            db = open(dir.path());
        }
    }
    assert!(
        commits > 50 && conflicts > 5,
        "seed {seed}: {commits} commits, {conflicts} conflicts"
    );
}

#[test]
fn optimistic_transactions_match_the_model() {
    let seeds: Vec<u64> = match std::env::var("STRATA_MODEL_SEED") {
        Ok(s) => vec![s.parse().unwrap()],
        Err(_) => {
            let n = std::env::var("STRATA_MODEL_SEEDS").map_or(6, |s| s.parse().unwrap());
            (0..n).collect()
        }
    };
    for seed in seeds {
        run(seed);
    }
}

fn single_family(dir: &Path) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.merge_operator = Some(Arc::new(UInt64Add));
    Db::open(dir, options).unwrap()
}

#[test]
fn a_conflict_found_in_a_table_says_so_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = single_family(dir.path());
    let mut t = db.optimistic_transaction(&WriteOptions::default());
    t.put(b"a", b"mine").unwrap();
    t.put(b"b", b"mine").unwrap();
    db.put(b"a", b"theirs").unwrap();
    db.flush().unwrap();
    let e = t.commit().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert_eq!(e.txn_failure(), Some(strata::TxnFailure::Conflict));
    let msg = e.to_string();
    assert!(
        msg.contains("key 'a'") && msg.contains("table file"),
        "{msg}"
    );
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"theirs"[..]));
    assert_eq!(db.get(b"b").unwrap(), None);
}

#[test]
fn a_range_deletion_after_the_snapshot_conflicts_with_a_key_it_covers() {
    let dir = tempfile::tempdir().unwrap();
    let db = single_family(dir.path());
    db.put(b"m", b"1").unwrap();
    let mut t = db.optimistic_transaction(&WriteOptions::default());
    assert_eq!(t.get_for_update(b"m").unwrap().as_deref(), Some(&b"1"[..]));
    db.delete_range(b"a", b"z").unwrap();
    let e = t.commit().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
}

#[test]
fn plain_reads_are_not_checked_so_write_skew_remains() {
    let dir = tempfile::tempdir().unwrap();
    let db = single_family(dir.path());
    db.put(b"x", b"1").unwrap();
    db.put(b"y", b"1").unwrap();
    let mut t1 = db.optimistic_transaction(&WriteOptions::default());
    let mut t2 = db.optimistic_transaction(&WriteOptions::default());
    // Each reads the other's key without get_for_update and writes its own.
    assert!(t1.get(b"y").unwrap().is_some());
    assert!(t2.get(b"x").unwrap().is_some());
    t1.delete(b"x").unwrap();
    t2.delete(b"y").unwrap();
    t1.commit().unwrap();
    t2.commit().unwrap();
    // With get_for_update the second would have failed.
    db.put(b"x", b"1").unwrap();
    db.put(b"y", b"1").unwrap();
    let mut t1 = db.optimistic_transaction(&WriteOptions::default());
    let mut t2 = db.optimistic_transaction(&WriteOptions::default());
    t1.get_for_update(b"y").unwrap();
    t2.get_for_update(b"x").unwrap();
    t1.delete(b"x").unwrap();
    t2.delete(b"y").unwrap();
    t1.commit().unwrap();
    assert_eq!(t2.commit().unwrap_err().kind(), ErrorKind::Busy);
}

#[test]
fn a_dropped_family_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = single_family(dir.path());
    let cf = db.create_cf("gone", CfOptions::default()).unwrap();
    let mut t = db.optimistic_transaction(&WriteOptions::default());
    t.put_cf(&cf, b"k", b"v").unwrap();
    db.drop_cf(&cf).unwrap();
    let e = t.put_cf(&cf, b"k2", b"v").unwrap_err();
    assert!(e.to_string().contains("'gone'"), "{e}");
    let e = t.commit().unwrap_err();
    assert!(e.to_string().contains("gone"), "{e}");
    assert_eq!(db.get(b"k").unwrap(), None);
}

#[test]
fn concurrent_transfers_keep_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let db = single_family(dir.path());
    const ACCOUNTS: u64 = 4;
    for a in 0..ACCOUNTS {
        db.put(format!("acct{a}").as_bytes(), 100u64.to_le_bytes())
            .unwrap();
    }
    let balance = |v: Option<Vec<u8>>| u64::from_le_bytes(v.unwrap().try_into().unwrap());
    let done = std::sync::atomic::AtomicU64::new(0);
    let retries = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let (db, done, retries) = (&db, &done, &retries);
            s.spawn(move || {
                let mut rng = Rng::new(thread);
                for _ in 0..300 {
                    let from = format!("acct{}", rng.below(ACCOUNTS)).into_bytes();
                    let to = format!("acct{}", rng.below(ACCOUNTS)).into_bytes();
                    if from == to {
                        continue;
                    }
                    loop {
                        let mut t = db.optimistic_transaction(&WriteOptions::default());
                        let a = balance(t.get_for_update(&from).unwrap());
                        let b = balance(t.get_for_update(&to).unwrap());
                        // Gives the other threads a chance to commit in between.
                        std::thread::yield_now();
                        let amount = a.min(rng.below(10));
                        t.put(&from, (a - amount).to_le_bytes()).unwrap();
                        t.put(&to, (b + amount).to_le_bytes()).unwrap();
                        match t.commit() {
                            Ok(()) => break,
                            Err(e) => {
                                assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
                                retries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    }
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    let total: u64 = (0..ACCOUNTS)
        .map(|a| balance(db.get(format!("acct{a}").as_bytes()).unwrap()))
        .sum();
    assert_eq!(total, ACCOUNTS * 100);
    assert!(done.into_inner() > 0);
    eprintln!("{} commits retried after a conflict", retries.into_inner());
}

#[test]
fn a_commit_into_a_ttl_family_is_stamped_like_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.ttl = Some(std::time::Duration::from_secs(3600));
    let db = Db::open(dir.path(), options).unwrap();
    let mut t = db.optimistic_transaction(&WriteOptions::default());
    t.put(b"k", b"value").unwrap();
    assert_eq!(t.get(b"k").unwrap().as_deref(), Some(&b"value"[..]));
    t.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"value"[..]));
    let t = db.optimistic_transaction(&WriteOptions::default());
    let mut it = t.iter(&ReadOptions::default()).unwrap();
    it.seek_to_first();
    assert_eq!((it.key(), it.value()), (&b"k"[..], &b"value"[..]));
}

#[test]
fn a_transaction_iterates_in_its_family_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.comparator = Arc::new(strata::ReverseBytewiseComparator);
    let db = Db::open(dir.path(), options).unwrap();
    for k in [&b"a"[..], b"c", b"e"] {
        db.put(k, b"db").unwrap();
    }
    let mut t = db.optimistic_transaction(&WriteOptions::default());
    t.put(b"d", b"txn").unwrap();
    t.put(b"b", b"txn").unwrap();
    t.delete(b"c").unwrap();
    let mut it = t.iter(&ReadOptions::default()).unwrap();
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    let keys: Vec<&[u8]> = forward.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(keys, [&b"e"[..], b"d", b"b", b"a"]);
    it.seek(b"c"); // in reverse order, the first key at or after "c" is "b"
    assert_eq!(it.key(), b"b");
    it.prev();
    assert_eq!(it.key(), b"d");
}

/// A cursor made without bounds makes its iterator only when a call needs one; it is still
/// refused when it is made where an iterator would be: on an ended transaction of either
/// kind, or over a dropped family.
#[test]
fn a_cursor_is_refused_when_made_where_an_iterator_would_be() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let gone = db.create_cf("gone", CfOptions::default()).unwrap();
    db.drop_cf(&gone).unwrap();
    let cf = db.default_cf();
    for bounds in [ReadOptions::default(), {
        let mut o = ReadOptions::default();
        o.lower_bound = Some(b"a".to_vec());
        o
    }] {
        let mut txn = db.optimistic_transaction(&WriteOptions::default());
        let e = txn
            .cursor_cf(&gone, &bounds)
            .err()
            .expect("a dropped family");
        assert!(e.to_string().contains("dropped"), "{e}");
        txn.commit().unwrap();
        let e = txn
            .cursor_cf(&cf, &bounds)
            .err()
            .expect("a committed transaction");
        assert!(e.to_string().contains("committed"), "{e}");
    }
    db.close().unwrap();
    let other = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    let tdb = strata::TransactionDb::open(other.path(), options).unwrap();
    let mut txn = tdb.transaction(&WriteOptions::default(), &Default::default());
    txn.rollback().unwrap();
    let e = txn
        .cursor_cf(&tdb.db().default_cf(), &ReadOptions::default())
        .err()
        .expect("a rolled-back transaction");
    assert!(e.to_string().contains("rolled back"), "{e}");
}
