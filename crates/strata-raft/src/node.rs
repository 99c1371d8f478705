//! A node's directory, and starting openraft on it.
//!
//! ```text
//! DIR/node.json   {"cluster": NAME, "node": ID}: written once, when the directory is made
//! DIR/log/        the Raft log (see `log_store`)
//! DIR/sm/         the state machine (see `state_machine`)
//! ```
//!
//! The identity file is what stops a node from joining the wrong cluster with another's data,
//! or from taking the id of a different node: opening a directory with another cluster name
//! or node id is refused, naming both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use openraft::{Config, RaftNetworkFactory};
use serde::{Deserialize, Serialize};

use crate::codec::{decode, encode};
use crate::error::{Error, IoContext};
use crate::log_store::LogStore;
use crate::snapshot::write_atomic;
use crate::state_machine::{SharedKeyspace, StateMachine};
use crate::types::TypeConfig;

/// openraft's node handle for this crate's types.
pub type Raft = openraft::Raft<TypeConfig>;

/// What a node directory belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeIdentity {
    /// The cluster's name.
    pub cluster: String,
    /// The node's id in it.
    pub node: u64,
}

/// An opened node directory whose identity was checked.
#[derive(Clone, Debug)]
pub struct NodeDir {
    path: PathBuf,
    identity: NodeIdentity,
}

impl NodeDir {
    /// Opens `path` as node `identity.node` of cluster `identity.cluster`, creating it if it
    /// does not exist, refusing it if it belongs to another cluster or node.
    pub fn open(path: &Path, identity: NodeIdentity) -> Result<NodeDir, Error> {
        std::fs::create_dir_all(path).context(|| format!("create {}", path.display()))?;
        let file = path.join("node.json");
        match std::fs::read(&file) {
            Ok(bytes) => {
                let found: NodeIdentity = decode(&bytes)
                    .map_err(|e| Error::Corrupt(format!("{}: {e}", file.display())))?;
                if found.cluster != identity.cluster {
                    return Err(Error::Invalid(format!(
                        "{} belongs to cluster {:?}, not {:?}",
                        path.display(),
                        found.cluster,
                        identity.cluster
                    )));
                }
                if found.node != identity.node {
                    return Err(Error::Invalid(format!(
                        "{} is the directory of node {}, not node {}",
                        path.display(),
                        found.node,
                        identity.node
                    )));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let bytes = encode(&identity).map_err(|e| Error::Corrupt(e.to_string()))?;
                write_atomic(&file, &bytes)?;
            }
            Err(e) => return Err(Error::Io(format!("read {}", file.display()), e)),
        }
        Ok(NodeDir {
            path: path.to_path_buf(),
            identity,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whose directory it is.
    pub fn identity(&self) -> &NodeIdentity {
        &self.identity
    }

    /// Opens the log and the state machine.
    pub fn stores(&self) -> Result<(LogStore, StateMachine), Error> {
        let log = LogStore::open(&self.path.join("log"))?;
        let sm = StateMachine::open(&self.path.join("sm"))?;
        Ok((log, sm))
    }
}

/// A running node: openraft's handle, and read access to its stores.
#[derive(Clone)]
pub struct Node {
    /// openraft's handle.
    pub raft: Raft,
    /// The live keyspace, for local reads.
    pub keyspace: SharedKeyspace,
    /// The log, for statistics.
    pub log: LogStore,
}

impl Node {
    /// Starts openraft on the node directory `dir`, talking through `network`.
    pub async fn start<N: RaftNetworkFactory<TypeConfig>>(
        dir: &NodeDir,
        config: Arc<Config>,
        network: N,
    ) -> Result<Node, Error> {
        let (log, sm) = dir.stores()?;
        let keyspace = sm.keyspace();
        let raft = Raft::new(dir.identity.node, config, network, log.clone(), sm)
            .await
            .map_err(|e| Error::Invalid(format!("starting raft: {e}")))?;
        Ok(Node {
            raft,
            keyspace,
            log,
        })
    }
}
