//! The HTTP API of three nodes on loopback ports, in this process: writes, reads of both
//! consistencies, redirects from followers, transactions, scans, and each kind of bad input.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use hyper::{Method, StatusCode};
use strata_raft::cli::Client;
use strata_raft::http_client::{HttpClient, Reply};
use strata_raft::network::HttpNetwork;
use strata_raft::server::{self, AppState, Limits, Status};
use strata_raft::{Node, NodeDir, NodeIdentity};

struct Server {
    addr: String,
    node: Node,
    task: tokio::task::JoinHandle<()>,
}

async fn start(root: &std::path::Path, id: u64) -> Server {
    let config = openraft::Config {
        heartbeat_interval: 50,
        election_timeout_min: 200,
        election_timeout_max: 400,
        ..Default::default()
    };
    let config = Arc::new(config.validate().unwrap());
    let dir = NodeDir::open(
        &root.join(format!("n{id}")),
        NodeIdentity {
            cluster: "test".into(),
            node: id,
        },
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let node = Node::start(&dir, config, HttpNetwork::default())
        .await
        .unwrap();
    let limits = Limits {
        max_key: 64,
        max_value: 1024,
    };
    let app = server::router(AppState::new(node.clone(), id, addr.clone(), limits));
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Server { addr, node, task }
}

async fn send(addr: &str, method: Method, path: &str, body: &[u8]) -> Reply {
    HttpClient::new()
        .send(
            method,
            &format!("http://{addr}{path}"),
            &[],
            body.to_vec(),
            Duration::from_secs(10),
        )
        .await
        .unwrap()
}

fn text(r: &Reply) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_servers_over_http() {
    tokio::time::timeout(Duration::from_secs(60), scenario())
        .await
        .expect("the scenario took too long");
}

async fn scenario() {
    let root = tempfile::tempdir().unwrap();
    let mut servers = Vec::new();
    for id in 1..=3 {
        servers.push(start(root.path(), id).await);
    }
    let nodes: BTreeMap<u64, String> = (1..=3)
        .map(|i| (i as u64, servers[i - 1].addr.clone()))
        .collect();
    let init = serde_json::to_vec(&serde_json::json!({ "nodes": nodes })).unwrap();
    let r = send(&servers[0].addr, Method::POST, "/cluster/init", &init).await;
    assert_eq!(r.status, StatusCode::OK, "{}", text(&r));
    let r = send(&servers[0].addr, Method::POST, "/cluster/init", &init).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "second init: {}", text(&r));

    // Wait for a leader.
    let leader = loop {
        let r = send(&servers[0].addr, Method::GET, "/cluster/status", b"").await;
        let s: Status = serde_json::from_slice(&r.body).unwrap();
        if let Some(l) = s.leader {
            break l;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let leader_addr = nodes[&leader].clone();
    let follower = *nodes.keys().find(|&&id| id != leader).unwrap();
    let follower_addr = nodes[&follower].clone();

    // Writes and reads on the leader.
    let r = send(&leader_addr, Method::PUT, "/kv/a%2Fb", b"one").await;
    assert_eq!(r.status, StatusCode::OK, "{}", text(&r));
    let r = send(&leader_addr, Method::GET, "/kv/a%2Fb", b"").await;
    assert_eq!((r.status, &r.body[..]), (StatusCode::OK, &b"one"[..]));
    assert_eq!(r.headers["x-strata-consistency"], "linearizable");
    let r = send(&leader_addr, Method::GET, "/kv/missing", b"").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // A follower redirects writes and linearizable reads, and serves local reads itself.
    let r = send(&follower_addr, Method::PUT, "/kv/x", b"1").await;
    assert_eq!(r.status, StatusCode::TEMPORARY_REDIRECT, "{}", text(&r));
    assert_eq!(r.headers["location"], format!("http://{leader_addr}/kv/x"));
    assert_eq!(r.headers["x-strata-leader"], leader.to_string());
    let r = send(&follower_addr, Method::GET, "/kv/a%2Fb", b"").await;
    assert_eq!(r.status, StatusCode::TEMPORARY_REDIRECT);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = send(
            &follower_addr,
            Method::GET,
            "/kv/a%2Fb?consistency=local",
            b"",
        )
        .await;
        assert_eq!(r.headers["x-strata-consistency"], "local");
        if r.status == StatusCode::OK {
            assert_eq!(&r.body[..], b"one");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the follower never applied the put"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The client finds the leader from a follower and retries under one request number.
    let mut client = Client::new(vec![follower_addr.clone()], Duration::from_secs(10));
    let r = client
        .call(Method::PUT, "/kv/c", b"3".to_vec(), true)
        .await
        .unwrap();
    assert_eq!(r.status, StatusCode::OK, "{}", text(&r));

    // Transactions: a compare-and-set that holds, one that does not, a batch.
    let cas = |expect: &str, new: &str| {
        serde_json::to_vec(&serde_json::json!({
            "compare": [{"key": "c", "value": expect}],
            "ops": [{"op": "put", "key": "c", "value": new}],
        }))
        .unwrap()
    };
    let r = send(&leader_addr, Method::POST, "/txn", &cas("3", "4")).await;
    let reply: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(reply["succeeded"], true, "{reply}");
    let r = send(&leader_addr, Method::POST, "/txn", &cas("3", "5")).await;
    let reply: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(reply["succeeded"], false, "{reply}");
    let absent = serde_json::to_vec(&serde_json::json!({
        "compare": [{"key": "new"}],
        "ops": [{"op": "put", "key": "new", "value": "v"}, {"op": "delete", "key": "x"}],
    }))
    .unwrap();
    let r = send(&leader_addr, Method::POST, "/txn", &absent).await;
    let reply: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(reply["succeeded"], true, "{reply}");

    // A retried write with the same client id and number applies once.
    let retry = |value: &'static str| {
        let addr = leader_addr.clone();
        async move {
            HttpClient::new()
                .send(
                    Method::PUT,
                    &format!("http://{addr}/kv/once"),
                    &[
                        ("x-strata-client", "77".into()),
                        ("x-strata-seq", "1".into()),
                    ],
                    value.as_bytes().to_vec(),
                    Duration::from_secs(10),
                )
                .await
                .unwrap()
        }
    };
    let first: serde_json::Value = serde_json::from_slice(&retry("first").await.body).unwrap();
    let second: serde_json::Value = serde_json::from_slice(&retry("second").await.body).unwrap();
    assert_eq!(
        (first["duplicate"].clone(), second["duplicate"].clone()),
        (false.into(), true.into())
    );
    let r = send(&leader_addr, Method::GET, "/kv/once", b"").await;
    assert_eq!(&r.body[..], b"first");

    // Concurrent writes (the leader groups them into shared entries) and reads (they share
    // read indexes): each write is answered on its own, a request sent twice at once applies
    // once, and a read started after a write's answer sees it.
    let mut tasks = Vec::new();
    for i in 0..48u64 {
        let addr = leader_addr.clone();
        tasks.push(tokio::spawn(async move {
            let put = |value: String| {
                let addr = addr.clone();
                async move {
                    let r = HttpClient::new()
                        .send(
                            Method::PUT,
                            &format!("http://{addr}/kv/g{i}"),
                            &[
                                ("x-strata-client", (1000 + i).to_string()),
                                ("x-strata-seq", "1".into()),
                            ],
                            value.into_bytes(),
                            Duration::from_secs(10),
                        )
                        .await
                        .unwrap();
                    assert_eq!(r.status, StatusCode::OK, "{}", text(&r));
                    let reply: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                    reply["duplicate"] == true
                }
            };
            let (a, b) = tokio::join!(put(format!("a{i}")), put(format!("b{i}")));
            assert!(a != b, "write {i}: exactly one of the two sends applies");
            let applied = if a { format!("b{i}") } else { format!("a{i}") };
            let r = send(&addr, Method::GET, &format!("/kv/g{i}"), b"").await;
            assert_eq!(r.status, StatusCode::OK, "{}", text(&r));
            assert_eq!(String::from_utf8_lossy(&r.body), applied);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }

    // A scan: JSON lines of base64.
    let r = send(&leader_addr, Method::GET, "/kv?start=a&end=d&limit=10", b"").await;
    assert_eq!(r.status, StatusCode::OK);
    let lines: Vec<&str> = std::str::from_utf8(&r.body).unwrap().lines().collect();
    assert_eq!(
        lines,
        vec![
            r#"{"key":"YS9i","value":"b25l"}"#,
            r#"{"key":"Yw==","value":"NA=="}"#
        ]
    );

    // Bad input: 400 and 413 with a message, nothing written.
    let long_key = format!("/kv/{}", "k".repeat(71));
    let cases: Vec<(Method, &str, Vec<u8>, StatusCode, &str)> = vec![
        (
            Method::PUT,
            "/kv/bad%zz",
            b"v".to_vec(),
            StatusCode::BAD_REQUEST,
            "bad percent escape",
        ),
        (
            Method::PUT,
            &long_key,
            b"v".to_vec(),
            StatusCode::PAYLOAD_TOO_LARGE,
            "key of 71 bytes; at most 64",
        ),
        (
            Method::PUT,
            "/kv/big",
            vec![0u8; 2000],
            StatusCode::PAYLOAD_TOO_LARGE,
            "value of 2000 bytes; at most 1024",
        ),
        (
            Method::POST,
            "/txn",
            b"{not json".to_vec(),
            StatusCode::BAD_REQUEST,
            "transaction JSON",
        ),
        (
            Method::POST,
            "/txn",
            br#"{"ops":[{"op":"delete_range","start":"z","end":"a"}]}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "delete_range start after its end",
        ),
        (
            Method::GET,
            "/kv/a?consistency=eventual",
            vec![],
            StatusCode::BAD_REQUEST,
            "consistency must be linearizable or local",
        ),
        (
            Method::GET,
            "/kv?limit=0",
            vec![],
            StatusCode::BAD_REQUEST,
            "limit must be between 1 and 100000",
        ),
        (
            Method::POST,
            "/cluster/membership",
            format!(r#"{{"voters":[{leader},8,9]}}"#).into_bytes(),
            StatusCode::CONFLICT,
            "only 1 of the 3 new voters are up to date, so the change would lose quorum",
        ),
        (
            Method::POST,
            "/cluster/membership",
            br#"{"voters":[1,2,3,8,9]}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "Learner 8 not found",
        ),
        (
            Method::POST,
            "/cluster/membership",
            br#"{"voters":[]}"#.to_vec(),
            StatusCode::BAD_REQUEST,
            "at least one voter",
        ),
    ];
    for (method, path, body, status, message) in cases {
        let r = send(&leader_addr, method.clone(), path, &body).await;
        assert_eq!(r.status, status, "{method} {path}: {}", text(&r));
        assert!(text(&r).contains(message), "{method} {path}: {}", text(&r));
    }
    let r = send(&leader_addr, Method::GET, "/kv/big", b"").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // Metrics in Prometheus text.
    let r = send(&leader_addr, Method::GET, "/metrics", b"").await;
    let m = text(&r);
    assert!(
        m.contains(&format!("strata_raft_is_leader{{node=\"{leader}\"}} 1")),
        "{m}"
    );
    assert!(m.contains("strata_engine_wal_syncs"), "{m}");

    for s in &servers {
        s.node.raft.shutdown().await.unwrap();
        s.task.abort();
    }
}

#[test]
fn a_directory_of_another_cluster_or_node_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let id = |cluster: &str, node| NodeIdentity {
        cluster: cluster.into(),
        node,
    };
    NodeDir::open(root.path(), id("blue", 1)).unwrap();
    let err = NodeDir::open(root.path(), id("green", 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} belongs to cluster \"blue\", not \"green\"",
            root.path().display()
        )
    );
    let err = NodeDir::open(root.path(), id("blue", 2)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is the directory of node 1, not node 2",
            root.path().display()
        )
    );
    NodeDir::open(root.path(), id("blue", 1)).unwrap();
}
