//! An in-process cluster for tests: nodes in temporary directories, talking through an
//! in-memory router that can cut links (a partition) and heal them.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::error::{InstallSnapshotError, RPCError, RaftError, RemoteError, Unreachable};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, Config, RaftNetwork, RaftNetworkFactory, SnapshotPolicy};
use strata_raft::{Node, NodeDir, NodeIdentity, Op, Raft, Request, Response, TypeConfig};
use tempfile::TempDir;

/// Every test step is bounded by this.
pub const STEP: Duration = Duration::from_secs(20);

#[derive(Default)]
struct RouterState {
    nodes: HashMap<u64, Raft>,
    cut: HashSet<(u64, u64)>,
}

/// Delivers RPCs between the nodes it knows, unless the link is cut.
#[derive(Clone, Default)]
pub struct Router(Arc<Mutex<RouterState>>);

impl Router {
    fn reach(&self, from: u64, to: u64) -> Result<Raft, Unreachable> {
        let state = self.0.lock().unwrap();
        let unreachable = |why: &str| Unreachable::new(&std::io::Error::other(why.to_string()));
        if state.cut.contains(&(from, to)) {
            return Err(unreachable("link cut"));
        }
        state
            .nodes
            .get(&to)
            .cloned()
            .ok_or_else(|| unreachable("node down"))
    }

    /// Cuts every link to and from `id`.
    pub fn isolate(&self, id: u64, all: &[u64]) {
        let mut state = self.0.lock().unwrap();
        for &other in all {
            state.cut.insert((id, other));
            state.cut.insert((other, id));
        }
    }

    /// Restores every link.
    pub fn heal(&self) {
        self.0.lock().unwrap().cut.clear();
    }
}

/// The network of one node.
pub struct Net {
    router: Router,
    from: u64,
}

/// A connection from one node to another.
pub struct Conn {
    router: Router,
    from: u64,
    to: u64,
}

impl RaftNetworkFactory<TypeConfig> for Net {
    type Network = Conn;

    async fn new_client(&mut self, target: u64, _node: &BasicNode) -> Conn {
        Conn {
            router: self.router.clone(),
            from: self.from,
            to: target,
        }
    }
}

impl RaftNetwork<TypeConfig> for Conn {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let raft = self.router.reach(self.from, self.to)?;
        raft.append_entries(rpc)
            .await
            .map_err(|e| RPCError::RemoteError(RemoteError::new(self.to, e)))
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<u64>,
        RPCError<u64, BasicNode, RaftError<u64, InstallSnapshotError>>,
    > {
        let raft = self.router.reach(self.from, self.to)?;
        raft.install_snapshot(rpc)
            .await
            .map_err(|e| RPCError::RemoteError(RemoteError::new(self.to, e)))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        _option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let raft = self.router.reach(self.from, self.to)?;
        raft.vote(rpc)
            .await
            .map_err(|e| RPCError::RemoteError(RemoteError::new(self.to, e)))
    }
}

/// Nodes in temporary directories on one router.
pub struct Cluster {
    pub root: TempDir,
    pub router: Router,
    pub nodes: BTreeMap<u64, Node>,
    pub config: Arc<Config>,
    next_seq: u64,
}

pub fn test_config(snapshot_every: u64) -> Arc<Config> {
    let config = Config {
        cluster_name: "test".into(),
        heartbeat_interval: 50,
        election_timeout_min: 200,
        election_timeout_max: 400,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(snapshot_every),
        max_in_snapshot_log_to_keep: 0,
        purge_batch_size: 1,
        // Small chunks, so that a snapshot travels in many.
        snapshot_max_chunk_size: 4096,
        ..Default::default()
    };
    Arc::new(config.validate().unwrap())
}

pub fn put(key: &str, value: &str) -> Request {
    Request::new(strata_raft::Command::Batch(vec![Op::Put {
        key: key.as_bytes().to_vec(),
        value: value.as_bytes().to_vec(),
    }]))
}

impl Cluster {
    /// Starts nodes `ids` and initialises them as one cluster.
    pub async fn new(ids: &[u64], config: Arc<Config>) -> Cluster {
        let mut cluster = Cluster {
            root: tempfile::tempdir().unwrap(),
            router: Router::default(),
            nodes: BTreeMap::new(),
            config,
            next_seq: 0,
        };
        for &id in ids {
            cluster.start(id).await;
        }
        let members: BTreeMap<u64, BasicNode> = ids
            .iter()
            .map(|&id| (id, BasicNode::new(format!("node-{id}"))))
            .collect();
        cluster.nodes[&ids[0]]
            .raft
            .initialize(members)
            .await
            .unwrap();
        cluster
    }

    /// Starts (or restarts from its directory) node `id`.
    pub async fn start(&mut self, id: u64) {
        let dir = NodeDir::open(
            &self.root.path().join(format!("n{id}")),
            NodeIdentity {
                cluster: "test".into(),
                node: id,
            },
        )
        .unwrap();
        // A killed node's tasks may still be dropping its databases for a moment.
        let mut tries = 0;
        let node = loop {
            let net = Net {
                router: self.router.clone(),
                from: id,
            };
            match Node::start(&dir, self.config.clone(), net).await {
                Ok(node) => break node,
                Err(e) if tries < 50 => {
                    tries += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("restart node {id}: {e}"),
            }
        };
        self.router
            .0
            .lock()
            .unwrap()
            .nodes
            .insert(id, node.raft.clone());
        self.nodes.insert(id, node);
    }

    /// Stops node `id` as a crash would leave it: nothing is flushed beyond what the stores
    /// made durable themselves.
    pub async fn kill(&mut self, id: u64) {
        self.router.0.lock().unwrap().nodes.remove(&id);
        let node = self.nodes.remove(&id).unwrap();
        node.raft.shutdown().await.unwrap();
        drop(node);
    }

    /// Waits until the running nodes agree on a leader among them, and returns it.
    pub async fn leader(&self) -> u64 {
        let deadline = tokio::time::Instant::now() + STEP;
        loop {
            let leaders: BTreeSet<Option<u64>> = self
                .nodes
                .values()
                .map(|n| n.raft.metrics().borrow().current_leader)
                .collect();
            if let Some(Some(l)) = leaders.iter().next() {
                let is_leader = self.nodes.get(l).is_some_and(|n| {
                    n.raft.metrics().borrow().state == openraft::ServerState::Leader
                });
                if leaders.len() == 1 && is_leader {
                    return *l;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no leader: {leaders:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Proposes `request` through the leader, following leader changes, and returns the log
    /// index it was applied at and its response.
    pub async fn write(&self, request: Request) -> (u64, Response) {
        let deadline = tokio::time::Instant::now() + STEP;
        loop {
            let leader = self.leader().await;
            match self.nodes[&leader].raft.client_write(request.clone()).await {
                Ok(r) => return (r.log_id.index, r.data),
                Err(e) => {
                    assert!(tokio::time::Instant::now() < deadline, "write failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    /// Writes `count` keys `prefix-i`.
    pub async fn write_keys(&mut self, prefix: &str, count: usize) -> u64 {
        let mut last = 0;
        for i in 0..count {
            self.next_seq += 1;
            let (index, response) = self
                .write(put(
                    &format!("{prefix}-{i:04}"),
                    &format!("v{}", self.next_seq),
                ))
                .await;
            assert!(response.succeeded);
            last = index;
        }
        last
    }

    /// Waits until every running node has applied `index`.
    pub async fn wait_applied(&self, index: u64) {
        for (id, node) in &self.nodes {
            node.raft
                .wait(Some(STEP))
                .applied_index_at_least(Some(index), format!("node {id} applies {index}"))
                .await
                .unwrap_or_else(|e| panic!("node {id} did not apply {index}: {e}"));
        }
    }

    /// Each running node's digest of its keyspace.
    pub fn digests(&self) -> BTreeMap<u64, (u64, u64)> {
        self.nodes
            .iter()
            .map(|(&id, n)| (id, n.keyspace.get().digest().unwrap()))
            .collect()
    }

    /// Asserts every running node holds the same keyspace, of `keys` keys.
    pub fn assert_same(&self, keys: u64) {
        let digests = self.digests();
        let distinct: BTreeSet<_> = digests.values().collect();
        assert_eq!(distinct.len(), 1, "replicas differ: {digests:?}");
        let (_, count) = digests.values().next().unwrap();
        assert_eq!(*count, keys, "{digests:?}");
    }
}

/// Runs `f` with a hard timeout.
pub async fn bounded<F: std::future::Future<Output = ()>>(limit: Duration, f: F) {
    tokio::time::timeout(limit, f)
        .await
        .expect("the scenario took too long");
}
