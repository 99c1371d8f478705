//! Reopening the log and the state machine after each kind of change finds exactly what was
//! acknowledged: append, truncate, purge, apply, snapshot install, and an install cut short.

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{CommittedLeaderId, EntryPayload, LogId, RaftSnapshotBuilder, Vote};
use strata_raft::types::ClientSeq;
use strata_raft::{Command, Compare, LogStore, Op, Request, StateMachine, TypeConfig};
use tokio::io::AsyncWriteExt;

type Entry = openraft::Entry<TypeConfig>;

fn log_id(term: u64, index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(term, 0), index)
}

fn entry(term: u64, index: u64, request: Request) -> Entry {
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Normal(request),
    }
}

fn put(key: &str, value: &str) -> Request {
    Request::new(Command::Batch(vec![Op::Put {
        key: key.into(),
        value: value.into(),
    }]))
}

fn indexes(log: &LogStore) -> Vec<u64> {
    log.entries(..)
        .unwrap()
        .iter()
        .map(|e| e.log_id.index)
        .collect()
}

#[tokio::test]
async fn the_log_reopens_as_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    {
        let mut log = LogStore::open(&path).unwrap();
        log.save_vote(&Vote::new(3, 1)).await.unwrap();
        log.blocking_append((1..=10).map(|i| entry(1, i, put("k", &i.to_string()))))
            .await
            .unwrap();
    }
    let mut log = LogStore::open(&path).unwrap();
    assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(3, 1)));
    let state = log.get_log_state().await.unwrap();
    assert_eq!(
        (state.last_purged_log_id, state.last_log_id),
        (None, Some(log_id(1, 10)))
    );
    assert_eq!(indexes(&log), (1..=10).collect::<Vec<_>>());

    log.truncate(log_id(1, 7)).await.unwrap();
    drop(log);
    let mut log = LogStore::open(&path).unwrap();
    assert_eq!(
        log.get_log_state().await.unwrap().last_log_id,
        Some(log_id(1, 6))
    );
    assert_eq!(indexes(&log), (1..=6).collect::<Vec<_>>());

    log.purge(log_id(1, 3)).await.unwrap();
    drop(log);
    let mut log = LogStore::open(&path).unwrap();
    let state = log.get_log_state().await.unwrap();
    assert_eq!(
        (state.last_purged_log_id, state.last_log_id),
        (Some(log_id(1, 3)), Some(log_id(1, 6)))
    );
    assert_eq!(indexes(&log), vec![4, 5, 6]);

    // Entries of a new term after the truncation point replace the old ones.
    log.blocking_append((7..=8).map(|i| entry(2, i, put("k", "new"))))
        .await
        .unwrap();
    log.purge(log_id(2, 8)).await.unwrap();
    drop(log);
    let mut log = LogStore::open(&path).unwrap();
    let state = log.get_log_state().await.unwrap();
    // Everything purged: the log's last id is the purged one.
    assert_eq!(
        (state.last_purged_log_id, state.last_log_id),
        (Some(log_id(2, 8)), Some(log_id(2, 8)))
    );
    assert!(indexes(&log).is_empty());
    assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(3, 1)));
}

fn cas(key: &str, expect: Option<&str>, new: &str) -> Request {
    Request::new(Command::CompareAndSet {
        compare: vec![Compare {
            key: key.into(),
            value: expect.map(Into::into),
        }],
        ops: vec![Op::Put {
            key: key.into(),
            value: new.into(),
        }],
    })
}

fn get(sm: &StateMachine, key: &str) -> Option<String> {
    sm.keyspace()
        .get()
        .get(key.as_bytes())
        .unwrap()
        .map(|v| String::from_utf8(v).unwrap())
}

#[tokio::test]
async fn applies_are_one_batch_with_sessions_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sm");
    let mut sm = StateMachine::open(&path).unwrap();
    let client = |seq| Some(ClientSeq { client: 9, seq });
    let mut retried = put("r", "first");
    retried.client = client(1);
    let mut retry = put("r", "second");
    retry.client = client(1);
    let bad = Request::new(Command::Batch(vec![
        Op::Put {
            key: "x".into(),
            value: "must not appear".into(),
        },
        Op::DeleteRange {
            start: "z".into(),
            end: "a".into(),
        },
    ]));
    let entries = vec![
        entry(1, 1, put("a", "1")),
        // Sees the put before it in the same run.
        entry(1, 2, cas("a", Some("1"), "2")),
        entry(1, 3, cas("a", Some("1"), "3")),
        entry(1, 4, cas("b", None, "new")),
        entry(1, 5, retried),
        entry(1, 6, retry),
        entry(1, 7, bad),
        entry(
            1,
            8,
            Request::new(Command::Batch(vec![Op::DeleteRange {
                start: "b".into(),
                end: "c".into(),
            }])),
        ),
        entry(1, 9, cas("b", None, "again")),
    ];
    let responses = sm.apply(entries).await.unwrap();
    let outcome: Vec<(bool, bool)> = responses
        .iter()
        .map(|r| (r.succeeded, r.duplicate))
        .collect();
    assert_eq!(
        outcome,
        vec![
            (true, false),
            (true, false),
            (false, false),
            (true, false),
            (true, false),
            (true, true),
            (false, false),
            (true, false),
            (true, false),
        ]
    );
    drop(sm);
    let mut sm = StateMachine::open(&path).unwrap();
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1, 9)));
    assert_eq!(get(&sm, "a").as_deref(), Some("2"));
    assert_eq!(get(&sm, "b").as_deref(), Some("again"));
    assert_eq!(get(&sm, "r").as_deref(), Some("first"));
    assert_eq!(get(&sm, "x"), None);
    // The session outlives the reopen: the retry is still recognised.
    let mut retry = put("r", "third");
    retry.client = client(1);
    let r = sm.apply(vec![entry(1, 10, retry)]).await.unwrap();
    assert!(r[0].duplicate);
    assert_eq!(get(&sm, "r").as_deref(), Some("first"));
}

#[tokio::test]
async fn an_installed_snapshot_survives_reopen_and_a_cut_install_leaves_the_old_state() {
    let dir = tempfile::tempdir().unwrap();
    let mut leader = StateMachine::open(&dir.path().join("leader")).unwrap();
    let entries: Vec<Entry> = (1..=200)
        .map(|i| entry(2, i, put(&format!("key{i:04}"), &"v".repeat(100))))
        .collect();
    leader.apply(entries).await.unwrap();
    let snapshot = leader
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    assert_eq!(snapshot.meta.last_log_id, Some(log_id(2, 200)));

    // The follower has older state of its own, replaced whole by the install.
    let path = dir.path().join("follower");
    let mut follower = StateMachine::open(&path).unwrap();
    follower
        .apply(vec![entry(1, 1, put("stale", "x"))])
        .await
        .unwrap();
    let mut incoming = follower.begin_receiving_snapshot().await.unwrap();
    // Chunks, as openraft writes them.
    let bytes = tokio::fs::read(
        dir.path()
            .join("leader/snapshots")
            .join(format!("{}.snap", snapshot.meta.snapshot_id)),
    )
    .await
    .unwrap();
    for chunk in bytes.chunks(1000) {
        incoming.write_all(chunk).await.unwrap();
    }
    incoming.flush().await.unwrap();
    follower
        .install_snapshot(&snapshot.meta, incoming)
        .await
        .unwrap();
    drop(follower);

    let mut follower = StateMachine::open(&path).unwrap();
    assert_eq!(
        follower.applied_state().await.unwrap().0,
        Some(log_id(2, 200))
    );
    assert_eq!(get(&follower, "stale"), None);
    assert_eq!(
        follower.keyspace().get().digest().unwrap(),
        leader.keyspace().get().digest().unwrap()
    );
    let current = follower.get_current_snapshot().await.unwrap().unwrap();
    assert_eq!(current.meta, snapshot.meta);
    drop(follower);

    // An install cut short before CURRENT was replaced: a new generation, whole or half
    // unpacked, and a half-received archive. Opening keeps the old state and removes them.
    let current_name = std::fs::read_to_string(path.join("CURRENT")).unwrap();
    let n: u64 = current_name
        .trim()
        .strip_prefix("db-")
        .unwrap()
        .parse()
        .unwrap();
    for junk in [format!("db-{}", n + 1), format!("db-{}.tmp", n + 1)] {
        std::fs::create_dir_all(path.join(&junk)).unwrap();
        std::fs::write(path.join(&junk).join("000009.sst"), b"half").unwrap();
    }
    std::fs::write(path.join("snapshots/incoming-1.tmp"), b"half").unwrap();
    let mut follower = StateMachine::open(&path).unwrap();
    assert_eq!(
        follower.applied_state().await.unwrap().0,
        Some(log_id(2, 200))
    );
    assert!(!path.join(format!("db-{}", n + 1)).exists());
    assert!(!path.join(format!("db-{}.tmp", n + 1)).exists());
    assert!(!path.join("snapshots/incoming-1.tmp").exists());
    assert_eq!(follower.keyspace().get().digest().unwrap().1, 200);
}

/// Bounded reads of recent entries (kept decoded in memory) give what the database gives
/// after a reopen, across appends, a truncation, a new term and a purge.
#[tokio::test]
async fn recent_entries_read_as_the_database_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let ids = |entries: Vec<Entry>| -> Vec<(u64, u64)> {
        entries
            .iter()
            .map(|e| (e.log_id.leader_id.term, e.log_id.index))
            .collect()
    };
    let mut log = LogStore::open(&path).unwrap();
    log.blocking_append((1..=10).map(|i| entry(1, i, put("k", &i.to_string()))))
        .await
        .unwrap();
    log.truncate(log_id(1, 7)).await.unwrap();
    log.blocking_append((7..=9).map(|i| entry(2, i, put("k", "new"))))
        .await
        .unwrap();
    log.purge(log_id(1, 2)).await.unwrap();
    let ranges: Vec<(u64, u64)> = vec![(3, 10), (5, 8), (6, 7), (9, 10), (3, 3), (8, 12)];
    let before: Vec<_> = ranges
        .iter()
        .map(|&(a, b)| ids(log.entries(a..b).unwrap()))
        .collect();
    assert_eq!(
        before[0],
        vec![(1, 3), (1, 4), (1, 5), (1, 6), (2, 7), (2, 8), (2, 9)]
    );
    drop(log);
    let log = LogStore::open(&path).unwrap();
    let after: Vec<_> = ranges
        .iter()
        .map(|&(a, b)| ids(log.entries(a..b).unwrap()))
        .collect();
    assert_eq!(before, after);
}
