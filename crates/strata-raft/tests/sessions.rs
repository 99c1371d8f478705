//! Client sessions: exactly-once retries within the expiry, expiry by log index that every
//! replica makes alike whatever runs it applies the log in, and groups of requests applied
//! each as if alone.

use openraft::storage::RaftStateMachine;
use openraft::{CommittedLeaderId, EntryPayload, LogId};
use strata_raft::types::ClientSeq;
use strata_raft::{Command, Compare, Op, Request, Response, StateMachine, TypeConfig};

type Entry = openraft::Entry<TypeConfig>;

fn entry(index: u64, payload: EntryPayload<TypeConfig>) -> Entry {
    Entry {
        log_id: LogId::new(CommittedLeaderId::new(1, 0), index),
        payload,
    }
}

fn put(key: &str, value: &str) -> Command {
    Command::Batch(vec![Op::Put {
        key: key.into(),
        value: value.into(),
    }])
}

fn from(client: u64, seq: u64, command: Command) -> Request {
    Request {
        client: Some(ClientSeq { client, seq }),
        command,
    }
}

fn get(sm: &StateMachine, key: &str) -> Option<String> {
    sm.keyspace()
        .get()
        .get(key.as_bytes())
        .unwrap()
        .map(|v| String::from_utf8(v).unwrap())
}

fn session_clients(sm: &StateMachine) -> Vec<(u64, u64)> {
    sm.keyspace()
        .get()
        .sessions()
        .unwrap()
        .into_iter()
        .map(|(client, s)| (client, s.last_index))
        .collect()
}

const OK: Response = Response {
    succeeded: true,
    duplicate: false,
    each: Vec::new(),
};

#[tokio::test]
async fn a_retry_is_applied_once_within_the_expiry_and_again_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachine::open(dir.path())
        .unwrap()
        .with_session_expiry(5);
    let r = sm
        .apply(vec![
            entry(1, EntryPayload::Normal(from(7, 1, put("k", "first")))),
            entry(2, EntryPayload::Normal(from(8, 1, put("other", "x")))),
            // A retry of request 1 of client 7: answered from its session.
            entry(3, EntryPayload::Normal(from(7, 1, put("k", "retry")))),
        ])
        .await
        .unwrap();
    assert_eq!(r[0], OK);
    assert!(r[2].duplicate && r[2].succeeded);
    assert_eq!(get(&sm, "k").as_deref(), Some("first"));
    assert_eq!(session_clients(&sm), vec![(7, 1), (8, 2)]);

    // Index 6: client 7's session (last used at 1) is within 5 entries still.
    let r = sm
        .apply(vec![
            entry(4, EntryPayload::Blank),
            entry(5, EntryPayload::Blank),
            entry(6, EntryPayload::Normal(from(7, 1, put("k", "retry")))),
        ])
        .await
        .unwrap();
    assert!(r[2].duplicate);
    assert_eq!(get(&sm, "k").as_deref(), Some("first"));
    // After index 6: only sessions used at or after index 1 are kept.
    assert_eq!(session_clients(&sm), vec![(7, 1), (8, 2)]);

    // Index 8: client 8's session (2 + 5 < 8) has expired and is gone once applied.
    sm.apply(vec![
        entry(7, EntryPayload::Blank),
        entry(8, EntryPayload::Blank),
    ])
    .await
    .unwrap();
    assert_eq!(session_clients(&sm), vec![]);

    // Client 7's session expired: its retry is now a first request, applied.
    let r = sm
        .apply(vec![entry(
            9,
            EntryPayload::Normal(from(7, 1, put("k", "late"))),
        )])
        .await
        .unwrap();
    assert_eq!(r[0], OK);
    assert_eq!(get(&sm, "k").as_deref(), Some("late"));
    assert_eq!(session_clients(&sm), vec![(7, 9)]);

    // Sessions survive a reopen as stored.
    drop(sm);
    let sm = StateMachine::open(dir.path())
        .unwrap()
        .with_session_expiry(5);
    assert_eq!(session_clients(&sm), vec![(7, 9)]);
}

/// A log of requests from a few clients, retries among them, with blank entries between.
fn log(len: u64) -> Vec<Entry> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut seqs = [0u64; 4];
    (1..=len)
        .map(|index| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let client = (x % 5) as usize;
            if client == 4 {
                return entry(index, EntryPayload::Blank);
            }
            // One time in three a retry of the client's last request, else a new one.
            if !x.is_multiple_of(3) || seqs[client] == 0 {
                seqs[client] += 1;
            }
            let command = if x.is_multiple_of(7) {
                Command::CompareAndSet {
                    compare: vec![Compare {
                        key: b"c".to_vec(),
                        value: None,
                    }],
                    ops: vec![Op::Put {
                        key: b"c".to_vec(),
                        value: index.to_string().into_bytes(),
                    }],
                }
            } else {
                put(&format!("k{client}"), &index.to_string())
            };
            entry(
                index,
                EntryPayload::Normal(from(client as u64 + 1, seqs[client], command)),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_replica_expires_the_same_sessions_at_the_same_index() {
    let entries = log(120);
    let dir = tempfile::tempdir().unwrap();
    let open = |name: &str| {
        StateMachine::open(&dir.path().join(name))
            .unwrap()
            .with_session_expiry(6)
    };
    // One replica applies the log one entry at a time, the other in runs of 1 to 9.
    let mut single = open("single");
    let mut runs = open("runs");
    let mut single_responses = Vec::new();
    let mut runs_responses = Vec::new();
    let mut next = 0;
    let mut x: u64 = 12345;
    let mut checked = 0;
    let mut expired_on_the_way = false;
    while next < entries.len() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = ((x >> 33) % 9 + 1) as usize;
        let end = (next + len).min(entries.len());
        runs_responses.extend(runs.apply(entries[next..end].to_vec()).await.unwrap());
        for e in &entries[next..end] {
            single_responses.extend(single.apply(vec![e.clone()]).await.unwrap());
        }
        // At the same applied index, the same sessions are stored.
        assert_eq!(
            session_clients(&single),
            session_clients(&runs),
            "at index {end}"
        );
        let stored = session_clients(&runs);
        assert!(stored.iter().all(|(_, last)| last + 6 >= end as u64));
        // A client seen before whose session is gone: one expired.
        let seen: std::collections::BTreeSet<u64> = entries[..end]
            .iter()
            .filter_map(|e| match &e.payload {
                EntryPayload::Normal(r) => r.client.map(|c| c.client),
                _ => None,
            })
            .collect();
        expired_on_the_way |= stored.len() < seen.len();
        checked += 1;
        next = end;
    }
    assert!(checked > 10);
    assert_eq!(single_responses, runs_responses);
    assert_eq!(
        single.keyspace().get().digest().unwrap(),
        runs.keyspace().get().digest().unwrap()
    );
    // Some retries were answered from sessions, and some sessions expired on the way.
    assert!(runs_responses.iter().any(|r| r.duplicate));
    assert!(expired_on_the_way);
}

#[tokio::test]
async fn a_group_applies_each_request_as_if_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachine::open(dir.path()).unwrap();
    let group = Request::new(Command::Group(vec![
        from(1, 1, put("a", "1")),
        // The same request again in the same group: a duplicate.
        from(1, 1, put("a", "2")),
        // A compare-and-set sees the put before it in the group.
        from(
            2,
            1,
            Command::CompareAndSet {
                compare: vec![Compare {
                    key: b"a".to_vec(),
                    value: Some(b"1".to_vec()),
                }],
                ops: vec![Op::Put {
                    key: b"b".to_vec(),
                    value: b"seen".to_vec(),
                }],
            },
        ),
        // Refused by the engine's checks: answered, nothing written, the rest goes on.
        Request::new(Command::Batch(vec![Op::DeleteRange {
            start: b"z".to_vec(),
            end: b"a".to_vec(),
        }])),
        // A group inside a group is refused.
        Request::new(Command::Group(vec![Request::new(put("n", "x"))])),
        Request::new(put("c", "3")),
    ]));
    let r = sm
        .apply(vec![entry(1, EntryPayload::Normal(group))])
        .await
        .unwrap();
    let each: Vec<(bool, bool)> = r[0]
        .each
        .iter()
        .map(|r| (r.succeeded, r.duplicate))
        .collect();
    assert_eq!(
        each,
        vec![
            (true, false),
            (true, true),
            (true, false),
            (false, false),
            (false, false),
            (true, false)
        ]
    );
    assert_eq!(get(&sm, "a").as_deref(), Some("1"));
    assert_eq!(get(&sm, "b").as_deref(), Some("seen"));
    assert_eq!(get(&sm, "c").as_deref(), Some("3"));
    assert_eq!(get(&sm, "n"), None);
    assert_eq!(session_clients(&sm), vec![(1, 1), (2, 1)]);

    // A group claiming a client identity is refused whole.
    let claimed = from(3, 1, Command::Group(vec![Request::new(put("d", "4"))]));
    let r = sm
        .apply(vec![entry(2, EntryPayload::Normal(claimed))])
        .await
        .unwrap();
    assert!(!r[0].succeeded && r[0].each.is_empty());
    assert_eq!(get(&sm, "d"), None);
}
