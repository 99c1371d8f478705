//! openraft's network over HTTP: each RPC is a `POST /raft/{append,vote,snapshot}` of the
//! request as JSON, answered with the JSON of openraft's `Result` for it.
//!
//! A node's address (openraft's `BasicNode::addr`) is its `host:port`. A connection error or
//! a timeout is `Unreachable` (openraft backs off and retries); an error the remote Raft
//! returned travels back as a `RemoteError`.

use std::time::Duration;

use hyper::Method;
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::RPCOption;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, RaftNetwork, RaftNetworkFactory};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::http_client::HttpClient;
use crate::types::TypeConfig;

/// Makes connections to the other nodes.
#[derive(Clone, Default)]
pub struct HttpNetwork {
    client: HttpClient,
}

/// The connection to one node.
pub struct HttpConnection {
    client: HttpClient,
    target: u64,
    addr: String,
}

impl RaftNetworkFactory<TypeConfig> for HttpNetwork {
    type Network = HttpConnection;

    async fn new_client(&mut self, target: u64, node: &BasicNode) -> HttpConnection {
        HttpConnection {
            client: self.client.clone(),
            target,
            addr: node.addr.clone(),
        }
    }
}

impl HttpConnection {
    async fn call<Req, Resp, E>(
        &self,
        path: &str,
        rpc: &Req,
        timeout: Duration,
    ) -> Result<Resp, RPCError<u64, BasicNode, E>>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
        E: std::error::Error + DeserializeOwned,
    {
        let body = serde_json::to_vec(rpc).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let url = format!("http://{}/raft/{path}", self.addr);
        let headers = [("content-type", "application/json".to_string())];
        let reply = self
            .client
            .send(Method::POST, &url, &headers, body, timeout)
            .await
            .map_err(|e| RPCError::Unreachable(Unreachable::new(&std::io::Error::other(e))))?;
        if !reply.status.is_success() {
            let text = String::from_utf8_lossy(&reply.body).into_owned();
            return Err(RPCError::Network(NetworkError::new(
                &std::io::Error::other(format!("{url}: {}: {text}", reply.status)),
            )));
        }
        let result: Result<Resp, E> = serde_json::from_slice(&reply.body)
            .map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        result.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for HttpConnection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        self.call("append", &rpc, option.hard_ttl()).await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<u64>,
        RPCError<u64, BasicNode, RaftError<u64, InstallSnapshotError>>,
    > {
        self.call("snapshot", &rpc, option.hard_ttl()).await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        self.call("vote", &rpc, option.hard_ttl()).await
    }
}
