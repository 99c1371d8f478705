//! The command-line side: `strata server`, `strata cluster up|down|bench` and `strata client`.
//! The `strata` binary wires these `Args` structs in as subcommands and calls the `run_`
//! functions; `cluster up` starts its nodes by running the same binary with `server`.
//!
//! `cluster up --dir DIR` lays out:
//!
//! ```text
//! DIR/nI/          node I's directory (see `node`)
//! DIR/nI.log       its standard output and error
//! DIR/cluster.json the cluster's name and nodes (id, address)
//! DIR/pids         the process ids `cluster down` stops (removed by it)
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::{Method, StatusCode};
use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext};
use crate::http_client::{HttpClient, Reply};
use crate::network::HttpNetwork;
use crate::node::{Node, NodeDir, NodeIdentity};
use crate::server::{self, AppState, Limits, Status};

/// `strata server`: run one node.
#[derive(clap::Args, Debug, Clone)]
pub struct ServerArgs {
    /// This node's id: unique in the cluster, above 0.
    #[arg(long)]
    pub id: u64,
    /// Address to listen on and to give the other nodes, host:port.
    #[arg(long)]
    pub addr: String,
    /// The node's directory (created if missing; refused if it belongs to another cluster
    /// or node).
    #[arg(long)]
    pub dir: PathBuf,
    /// The cluster's name, recorded in the directory.
    #[arg(long, default_value = "strata")]
    pub cluster: String,
    /// Longest value accepted, in bytes (longer: 413).
    #[arg(long, default_value_t = 1 << 20)]
    pub max_value_bytes: usize,
    /// Longest key accepted, in bytes (longer: 413).
    #[arg(long, default_value_t = 16 << 10)]
    pub max_key_bytes: usize,
    /// Build a snapshot (and purge the log behind it) every this many entries.
    #[arg(long, default_value_t = 10_000)]
    pub snapshot_every: u64,
    /// Leader heartbeat interval in milliseconds (elections time out after 3-6 of them).
    #[arg(long, default_value_t = 100)]
    pub heartbeat_ms: u64,
}

fn raft_config(args: &ServerArgs) -> Result<openraft::Config, Error> {
    let config = openraft::Config {
        cluster_name: args.cluster.clone(),
        heartbeat_interval: args.heartbeat_ms,
        election_timeout_min: args.heartbeat_ms * 3,
        election_timeout_max: args.heartbeat_ms * 6,
        snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(args.snapshot_every),
        max_in_snapshot_log_to_keep: 1000,
        snapshot_max_chunk_size: 1 << 20,
        ..Default::default()
    };
    config
        .validate()
        .map_err(|e| Error::Invalid(format!("raft settings: {e}")))
}

/// Runs a node until SIGTERM or SIGINT, then stops it cleanly.
pub fn run_server(args: &ServerArgs) -> Result<(), Error> {
    if args.id == 0 {
        return Err(Error::Invalid("--id must be above 0".into()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context(|| "start the async runtime".into())?;
    runtime.block_on(serve(args.clone()))
}

async fn serve(args: ServerArgs) -> Result<(), Error> {
    let config = Arc::new(raft_config(&args)?);
    let dir = NodeDir::open(
        &args.dir,
        NodeIdentity {
            cluster: args.cluster.clone(),
            node: args.id,
        },
    )?;
    let listener = tokio::net::TcpListener::bind(&args.addr)
        .await
        .context(|| format!("listen on {}", args.addr))?;
    let node = Node::start(&dir, config, HttpNetwork::default()).await?;
    let limits = Limits {
        max_key: args.max_key_bytes,
        max_value: args.max_value_bytes,
    };
    let app = server::router(AppState::new(
        node.clone(),
        args.id,
        args.addr.clone(),
        limits,
    ));
    eprintln!(
        "strata server: node {} of cluster {:?} on {} ({})",
        args.id,
        args.cluster,
        args.addr,
        args.dir.display()
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(stop_signal())
        .await
        .context(|| format!("serve on {}", args.addr))?;
    eprintln!("strata server: node {} stopping", args.id);
    node.raft
        .shutdown()
        .await
        .map_err(|e| Error::Invalid(format!("raft shutdown: {e}")))?;
    Ok(())
}

async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// `strata cluster`: a local cluster on loopback ports.
#[derive(clap::Args, Debug)]
pub struct ClusterArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ClusterCommand,
}

/// `strata cluster` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum ClusterCommand {
    /// Start (or restart from DIR) and initialise a cluster of `--nodes` servers.
    Up(UpArgs),
    /// Stop the servers that `up` started in DIR (SIGTERM, then SIGKILL after 10 s).
    Down(DownArgs),
    /// Time one client loop of puts, gets or both against a Strata or an etcd cluster.
    Bench(crate::bench::BenchArgs),
}

/// `strata cluster up`.
#[derive(clap::Args, Debug)]
pub struct UpArgs {
    /// Number of nodes.
    #[arg(long, default_value_t = 3)]
    pub nodes: u64,
    /// Directory of the cluster.
    #[arg(long)]
    pub dir: PathBuf,
    /// Port of node 1; node I listens on base-port + I - 1, on 127.0.0.1.
    #[arg(long, default_value_t = 7001)]
    pub base_port: u16,
    /// The cluster's name.
    #[arg(long, default_value = "strata")]
    pub cluster: String,
}

/// `strata cluster down`.
#[derive(clap::Args, Debug)]
pub struct DownArgs {
    /// Directory of the cluster.
    #[arg(long)]
    pub dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct ClusterFile {
    cluster: String,
    nodes: BTreeMap<u64, String>,
}

/// Runs `strata cluster up|down`.
pub fn run_cluster(args: &ClusterArgs) -> Result<(), Error> {
    match &args.command {
        ClusterCommand::Up(up) => cluster_up(up),
        ClusterCommand::Down(down) => cluster_down(&down.dir),
        ClusterCommand::Bench(bench) => crate::bench::run_bench(bench),
    }
}

fn read_pids(dir: &Path) -> Result<Vec<i32>, Error> {
    let path = dir.join("pids");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::Io(format!("read {}", path.display()), e)),
    }
}

fn alive(pid: i32) -> bool {
    // A zombie (exited, not yet reaped) has no cmdline; a live server has one naming it.
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| c.split(|&b| b == 0).any(|arg| arg == b"server"))
        .unwrap_or(false)
}

fn signal(pid: i32, sig: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

fn cluster_up(args: &UpArgs) -> Result<(), Error> {
    if args.nodes == 0 || args.nodes > 9 {
        return Err(Error::Invalid("--nodes must be between 1 and 9".into()));
    }
    if read_pids(&args.dir)?.into_iter().any(alive) {
        return Err(Error::Invalid(format!(
            "a cluster is already up in {} (run `strata cluster down --dir {}` first)",
            args.dir.display(),
            args.dir.display()
        )));
    }
    std::fs::create_dir_all(&args.dir).context(|| format!("create {}", args.dir.display()))?;
    let nodes: BTreeMap<u64, String> = (1..=args.nodes)
        .map(|i| {
            (
                i,
                format!("127.0.0.1:{}", u64::from(args.base_port) + i - 1),
            )
        })
        .collect();
    let file = ClusterFile {
        cluster: args.cluster.clone(),
        nodes: nodes.clone(),
    };
    let json = serde_json::to_vec_pretty(&file).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::snapshot::write_atomic(&args.dir.join("cluster.json"), &json)?;
    let exe = std::env::current_exe().context(|| "find the strata executable".into())?;
    let mut pids = Vec::new();
    for (id, addr) in &nodes {
        let log_path = args.dir.join(format!("n{id}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .context(|| format!("open {}", log_path.display()))?;
        let err = log
            .try_clone()
            .context(|| format!("open {}", log_path.display()))?;
        let child = {
            use std::os::unix::process::CommandExt;
            std::process::Command::new(&exe)
                .arg("server")
                .args([
                    "--id",
                    &id.to_string(),
                    "--addr",
                    addr,
                    "--cluster",
                    &args.cluster,
                ])
                .arg("--dir")
                .arg(args.dir.join(format!("n{id}")))
                .stdin(std::process::Stdio::null())
                .stdout(log)
                .stderr(err)
                // Its own process group: a Ctrl-C in the shell that ran `up` leaves it alone.
                .process_group(0)
                .spawn()
                .context(|| format!("start node {id}"))?
        };
        pids.push(child.id().to_string());
    }
    crate::snapshot::write_atomic(&args.dir.join("pids"), pids.join("\n").as_bytes())?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context(|| "start the async runtime".into())?;
    runtime.block_on(async {
        let client = HttpClient::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        for (id, addr) in &nodes {
            loop {
                let url = format!("http://{addr}/cluster/status");
                if client
                    .send(Method::GET, &url, &[], Vec::new(), Duration::from_secs(1))
                    .await
                    .is_ok()
                {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(Error::Invalid(format!(
                        "node {id} did not come up on {addr}; see {}",
                        args.dir.join(format!("n{id}.log")).display()
                    )));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let body = serde_json::to_vec(&serde_json::json!({ "nodes": nodes }))
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let first = &nodes[&1];
        let url = format!("http://{first}/cluster/init");
        let reply = client
            .send(
                Method::POST,
                &url,
                &[("content-type", "application/json".into())],
                body,
                Duration::from_secs(10),
            )
            .await
            .map_err(Error::Invalid)?;
        // 409: initialised before (a restart from DIR); the nodes rejoin from their logs.
        if !reply.status.is_success() && reply.status != StatusCode::CONFLICT {
            return Err(Error::Invalid(format!(
                "init: {}",
                String::from_utf8_lossy(&reply.body)
            )));
        }
        loop {
            let url = format!("http://{first}/cluster/status");
            if let Ok(r) = client
                .send(Method::GET, &url, &[], Vec::new(), Duration::from_secs(1))
                .await
            {
                if let Ok(s) = serde_json::from_slice::<Status>(&r.body) {
                    if s.leader.is_some() {
                        break;
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(Error::Invalid("no leader elected within 20 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    })?;
    let endpoints: Vec<&str> = nodes.values().map(String::as_str).collect();
    println!("cluster {:?} up in {}", args.cluster, args.dir.display());
    for (id, addr) in &nodes {
        println!("node {id}: http://{addr}");
    }
    println!("endpoints: {}", endpoints.join(","));
    Ok(())
}

fn cluster_down(dir: &Path) -> Result<(), Error> {
    let pids = read_pids(dir)?;
    if pids.is_empty() {
        println!("no cluster running in {}", dir.display());
        return Ok(());
    }
    for &pid in &pids {
        if alive(pid) {
            signal(pid, rustix::process::Signal::TERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut killed = 0;
    for &pid in &pids {
        if alive(pid) {
            signal(pid, rustix::process::Signal::KILL);
            killed += 1;
        }
    }
    let path = dir.join("pids");
    std::fs::remove_file(&path).context(|| format!("remove {}", path.display()))?;
    if killed > 0 {
        println!(
            "stopped {} nodes ({killed} did not stop on SIGTERM and were killed)",
            pids.len()
        );
    } else {
        println!("stopped {} nodes", pids.len());
    }
    Ok(())
}

/// `strata client`: talk to a cluster, finding its leader.
#[derive(clap::Args, Debug)]
pub struct ClientArgs {
    /// Nodes to try, host:port, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub endpoints: Vec<String>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 10)]
    pub timeout_secs: u64,
    /// What to do.
    #[command(subcommand)]
    pub op: ClientOp,
}

/// `strata client` operations.
#[derive(clap::Subcommand, Debug)]
pub enum ClientOp {
    /// Print a key's value (linearizable unless --local).
    Get {
        /// The key.
        key: String,
        /// Read the contacted node's own state, possibly stale.
        #[arg(long)]
        local: bool,
    },
    /// Set a key.
    Put {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Remove a key.
    Delete {
        /// The key.
        key: String,
    },
    /// Print pairs in [start, end) as JSON lines of base64.
    Scan {
        /// First key.
        #[arg(long, default_value = "")]
        start: String,
        /// First key not printed.
        #[arg(long)]
        end: Option<String>,
        /// At most this many pairs.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Run a transaction given as JSON: {"compare": [{"key", "value"}], "ops": [{"op": "put", ...}]}.
    Txn {
        /// The transaction.
        json: String,
    },
    /// Print each endpoint's status.
    Status,
}

/// A client that finds the leader and retries with the same request number.
pub struct Client {
    http: HttpClient,
    endpoints: Vec<String>,
    current: usize,
    id: u64,
    seq: u64,
    timeout: Duration,
}

impl Client {
    /// A client of the cluster reachable at `endpoints`.
    pub fn new(endpoints: Vec<String>, timeout: Duration) -> Client {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Client {
            http: HttpClient::new(),
            endpoints,
            current: 0,
            id: now ^ (u64::from(std::process::id()) << 32),
            seq: 0,
            timeout,
        }
    }

    /// Sends `method path` (a write if `write`: it carries this client's id and a new request
    /// number, reused by every retry). Follows redirects to the leader, moves to the next
    /// endpoint when one does not answer, and reports every failure if none succeeds.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Vec<u8>,
        write: bool,
    ) -> Result<Reply, Error> {
        let mut headers = Vec::new();
        if write {
            self.seq += 1;
            headers.push(("x-strata-client", self.id.to_string()));
            headers.push(("x-strata-seq", self.seq.to_string()));
        }
        let deadline = Instant::now() + self.timeout;
        let mut target: Option<String> = None;
        let mut failures = Vec::new();
        while Instant::now() < deadline {
            let base = target
                .take()
                .unwrap_or_else(|| format!("http://{}", self.endpoints[self.current]));
            let url = format!("{base}{path}");
            match self
                .http
                .send(
                    method.clone(),
                    &url,
                    &headers,
                    body.clone(),
                    Duration::from_secs(5),
                )
                .await
            {
                Ok(r) if r.status == StatusCode::TEMPORARY_REDIRECT => {
                    let location = r
                        .headers
                        .get("location")
                        .and_then(|l| l.to_str().ok())
                        .unwrap_or("");
                    match location.strip_suffix(path) {
                        Some(leader) if !leader.is_empty() => {
                            if let Some(i) = self
                                .endpoints
                                .iter()
                                .position(|e| leader.ends_with(e.as_str()))
                            {
                                self.current = i;
                            }
                            target = Some(leader.to_string());
                        }
                        _ => failures.push(format!("{url}: redirect without a usable location")),
                    }
                }
                Ok(r) if r.status == StatusCode::SERVICE_UNAVAILABLE => {
                    failures.push(format!(
                        "{url}: {}",
                        String::from_utf8_lossy(&r.body).trim()
                    ));
                    self.current = (self.current + 1) % self.endpoints.len();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(r) => return Ok(r),
                Err(e) => {
                    failures.push(e);
                    self.current = (self.current + 1) % self.endpoints.len();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        failures.dedup();
        let tail: Vec<_> = failures.iter().rev().take(5).rev().cloned().collect();
        Err(Error::Invalid(format!(
            "gave up after {:?}{}: {}",
            self.timeout,
            if write {
                " (the write may or may not have been applied)"
            } else {
                ""
            },
            tail.join("; ")
        )))
    }
}

fn check(reply: Reply) -> Result<Reply, Error> {
    if reply.status.is_success() {
        Ok(reply)
    } else {
        Err(Error::Invalid(format!(
            "{}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body).trim()
        )))
    }
}

/// Runs `strata client`.
pub fn run_client(args: &ClientArgs) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context(|| "start the async runtime".into())?;
    runtime.block_on(async {
        let mut client = Client::new(
            args.endpoints.clone(),
            Duration::from_secs(args.timeout_secs),
        );
        let key_path = |k: &str| format!("/kv/{}", server::percent_encode(k.as_bytes()));
        let out = match &args.op {
            ClientOp::Get { key, local } => {
                let path = if *local {
                    format!("{}?consistency=local", key_path(key))
                } else {
                    key_path(key)
                };
                let r = client.call(Method::GET, &path, Vec::new(), false).await?;
                if r.status == StatusCode::NOT_FOUND {
                    return Err(Error::Invalid(format!("{key}: not found")));
                }
                let mut v = check(r)?.body.to_vec();
                v.push(b'\n');
                v
            }
            ClientOp::Put { key, value } => check(
                client
                    .call(Method::PUT, &key_path(key), value.as_bytes().to_vec(), true)
                    .await?,
            )?
            .body
            .to_vec(),
            ClientOp::Delete { key } => check(
                client
                    .call(Method::DELETE, &key_path(key), Vec::new(), true)
                    .await?,
            )?
            .body
            .to_vec(),
            ClientOp::Scan { start, end, limit } => {
                let mut path = format!(
                    "/kv?start={}&limit={limit}",
                    server::percent_encode(start.as_bytes())
                );
                if let Some(e) = end {
                    path.push_str(&format!("&end={}", server::percent_encode(e.as_bytes())));
                }
                check(client.call(Method::GET, &path, Vec::new(), false).await?)?
                    .body
                    .to_vec()
            }
            ClientOp::Txn { json } => check(
                client
                    .call(Method::POST, "/txn", json.as_bytes().to_vec(), true)
                    .await?,
            )?
            .body
            .to_vec(),
            ClientOp::Status => {
                let mut out = Vec::new();
                for e in &args.endpoints {
                    let url = format!("http://{e}/cluster/status");
                    match client
                        .http
                        .send(Method::GET, &url, &[], Vec::new(), Duration::from_secs(2))
                        .await
                    {
                        Ok(r) => out.extend_from_slice(&r.body),
                        Err(err) => out.extend_from_slice(
                            format!("{{\"endpoint\":{e:?},\"error\":{err:?}}}").as_bytes(),
                        ),
                    }
                    out.push(b'\n');
                }
                out
            }
        };
        use std::io::Write;
        std::io::stdout()
            .write_all(&out)
            .context(|| "write to standard output".into())
    })
}
