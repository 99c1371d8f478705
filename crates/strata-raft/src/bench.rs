//! `strata cluster bench`: one HTTP client loop timed against a Strata cluster or an etcd
//! cluster, so that the two are compared through the same client.
//!
//! The loop is the same for both targets: `--clients` tasks on one tokio runtime share one
//! pooled keep-alive HTTP client ([`HttpClient`]), each picking keys uniformly at random and
//! sending one request at a time to the leader, found before the clock starts. Every URL and
//! body is prepared before the clock starts too, so what the loop does per operation is the
//! same for both targets: pick a prepared request, send it, read the whole reply, check its
//! status, note the latency. What differs is only what the servers are asked:
//!
//! | op | Strata | etcd (v3 JSON gateway) |
//! | --- | --- | --- |
//! | put | `PUT /kv/{key}` with the value as body, and `x-strata-client`/`x-strata-seq` (exactly-once sessions, as `strata client` sends) | `POST /v3/kv/put` `{"key": b64, "value": b64}` |
//! | get | `GET /kv/{key}` (linearizable: read index) | `POST /v3/kv/range` `{"key": b64}` (linearizable is etcd's default) |
//!
//! `mixed` is 90% gets and 10% puts; `fill` writes every key once (clients take the keys in
//! turn) so that gets find their keys. The output is one Markdown table row: ops/s, p50, p99
//! and p99.9 latency, and the bytes the server processes (`--pids`) wrote to storage per
//! operation (`write_bytes` of `/proc/PID/io`, summed over the run).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hyper::{Method, StatusCode};
use serde::Deserialize;

use crate::error::{Error, IoContext};
use crate::http_client::HttpClient;
use crate::server::{self, Status};

/// Which service is measured.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A Strata cluster (`strata server` nodes).
    Strata,
    /// An etcd cluster, through its v3 JSON gateway.
    Etcd,
}

/// What each operation is.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchOp {
    /// Puts of random keys.
    Put,
    /// Linearizable gets of random keys.
    Get,
    /// 90% gets, 10% puts.
    Mixed,
    /// Every key written once (not timed for a duration).
    Fill,
}

/// `strata cluster bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// The service at the endpoints.
    #[arg(long, value_enum)]
    pub target: Target,
    /// The cluster's client endpoints, host:port, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub endpoints: Vec<String>,
    /// Concurrent clients, each with one request outstanding.
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// What the clients do.
    #[arg(long, value_enum, default_value = "put")]
    pub op: BenchOp,
    /// Seconds timed (after the warm-up).
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Seconds run before timing starts.
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
    /// Number of distinct keys.
    #[arg(long, default_value_t = 10_000)]
    pub keys: usize,
    /// Key size in bytes.
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    pub value_size: usize,
    /// Server process ids whose storage writes are counted (`/proc/PID/io`).
    #[arg(long, value_delimiter = ',')]
    pub pids: Vec<u32>,
    /// The name of the row in the output (default: the target).
    #[arg(long)]
    pub label: Option<String>,
    /// Print the table's header before the row.
    #[arg(long)]
    pub header: bool,
}

/// One prepared request.
struct Prepared {
    method: Method,
    url: String,
    body: Vec<u8>,
}

/// The key of number `i`: `key` and zero-padded digits, `size` bytes.
fn key_of(i: usize, size: usize) -> Vec<u8> {
    let digits = size.saturating_sub(3).max(1);
    format!("key{i:0digits$}").into_bytes()
}

/// A printable value for key `i`, `size` bytes (differs between keys).
fn value_of(i: usize, size: usize) -> Vec<u8> {
    let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 26) as u8
        })
        .collect()
}

/// The requests for every key: puts and gets.
fn prepare(target: Target, leader: &str, args: &BenchArgs) -> (Vec<Prepared>, Vec<Prepared>) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut puts = Vec::with_capacity(args.keys);
    let mut gets = Vec::with_capacity(args.keys);
    for i in 0..args.keys {
        let key = key_of(i, args.key_size);
        let value = value_of(i, args.value_size);
        match target {
            Target::Strata => {
                let url = format!("http://{leader}/kv/{}", server::percent_encode(&key));
                puts.push(Prepared {
                    method: Method::PUT,
                    url: url.clone(),
                    body: value,
                });
                gets.push(Prepared {
                    method: Method::GET,
                    url,
                    body: Vec::new(),
                });
            }
            Target::Etcd => {
                let k = b64.encode(&key);
                puts.push(Prepared {
                    method: Method::POST,
                    url: format!("http://{leader}/v3/kv/put"),
                    body: format!(r#"{{"key":"{k}","value":"{}"}}"#, b64.encode(&value))
                        .into_bytes(),
                });
                gets.push(Prepared {
                    method: Method::POST,
                    url: format!("http://{leader}/v3/kv/range"),
                    body: format!(r#"{{"key":"{k}"}}"#).into_bytes(),
                });
            }
        }
    }
    (puts, gets)
}

#[derive(Deserialize)]
struct EtcdHeader {
    member_id: String,
}

#[derive(Deserialize)]
struct EtcdStatus {
    header: EtcdHeader,
    leader: String,
}

/// The endpoint of the leader.
async fn find_leader(http: &HttpClient, args: &BenchArgs) -> Result<String, Error> {
    let timeout = Duration::from_secs(2);
    match args.target {
        Target::Strata => {
            for e in &args.endpoints {
                let url = format!("http://{e}/cluster/status");
                let Ok(reply) = http.send(Method::GET, &url, &[], Vec::new(), timeout).await else {
                    continue;
                };
                if let Ok(status) = serde_json::from_slice::<Status>(&reply.body) {
                    if let Some(addr) = status.leader_addr {
                        return Ok(addr);
                    }
                }
            }
            Err(Error::Invalid("no Strata endpoint knows a leader".into()))
        }
        Target::Etcd => {
            for e in &args.endpoints {
                let url = format!("http://{e}/v3/maintenance/status");
                let Ok(reply) = http
                    .send(Method::POST, &url, &[], b"{}".to_vec(), timeout)
                    .await
                else {
                    continue;
                };
                if let Ok(status) = serde_json::from_slice::<EtcdStatus>(&reply.body) {
                    if status.header.member_id == status.leader {
                        return Ok(e.clone());
                    }
                }
            }
            Err(Error::Invalid(
                "no etcd endpoint answered /v3/maintenance/status as the leader".into(),
            ))
        }
    }
}

/// Bytes the processes have written to storage so far.
fn written_bytes(pids: &[u32]) -> Result<u64, Error> {
    let mut total = 0;
    for pid in pids {
        let path = format!("/proc/{pid}/io");
        let text = std::fs::read_to_string(&path).context(|| format!("read {path}"))?;
        let bytes = text
            .lines()
            .find_map(|l| l.strip_prefix("write_bytes:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| Error::Invalid(format!("{path} has no write_bytes")))?;
        total += bytes;
    }
    Ok(total)
}

/// What one client measured.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// A small xorshift generator (each client its own, seeded apart).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The outcome of a run.
#[derive(Debug)]
pub struct BenchResult {
    /// Operations answered successfully in the timed window.
    pub ops: u64,
    /// Failed operations in the timed window.
    pub errors: u64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Latency percentiles in milliseconds: p50, p99, p99.9.
    pub latency_ms: [f64; 3],
    /// Storage bytes written per operation by `--pids`, if any were given.
    pub bytes_per_op: Option<f64>,
    /// The first error seen, if any.
    pub first_error: Option<String>,
}

/// The nearest-rank percentile, `per_mille` thousandths, of latencies in microseconds, in
/// milliseconds.
fn percentile(sorted: &[u32], per_mille: usize) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (per_mille * sorted.len()).div_ceil(1000);
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

/// Runs the benchmark and returns what it measured.
pub async fn bench(args: &BenchArgs) -> Result<BenchResult, Error> {
    if args.clients == 0 || args.keys == 0 {
        return Err(Error::Invalid(
            "--clients and --keys must be above 0".into(),
        ));
    }
    if args.key_size < 4 {
        return Err(Error::Invalid("--key-size must be at least 4".into()));
    }
    // A process that cannot be read is refused before anything is sent.
    written_bytes(&args.pids)?;
    let http = HttpClient::new();
    let leader = find_leader(&http, args).await?;
    let (puts, gets) = prepare(args.target, &leader, args);
    let requests = Arc::new((puts, gets));
    let timing = Arc::new(AtomicBool::new(args.op == BenchOp::Fill));
    let stop = Arc::new(AtomicBool::new(false));
    let next_fill = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for client in 0..args.clients {
        let http = http.clone();
        let requests = requests.clone();
        let (timing, stop, next_fill) = (timing.clone(), stop.clone(), next_fill.clone());
        let (op, target, keys) = (args.op, args.target, args.keys as u64);
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ ((client as u64 + 1) << 20));
            let session = rng.next();
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let (index, write) = match op {
                    BenchOp::Fill => {
                        let i = next_fill.fetch_add(1, Ordering::Relaxed);
                        if i >= keys {
                            break;
                        }
                        (i as usize, true)
                    }
                    BenchOp::Put => ((rng.next() % keys) as usize, true),
                    BenchOp::Get => ((rng.next() % keys) as usize, false),
                    BenchOp::Mixed => ((rng.next() % keys) as usize, rng.next().is_multiple_of(10)),
                };
                let request = if write {
                    &requests.0[index]
                } else {
                    &requests.1[index]
                };
                let mut headers = Vec::new();
                if write && target == Target::Strata {
                    seq += 1;
                    headers.push(("x-strata-client", session.to_string()));
                    headers.push(("x-strata-seq", seq.to_string()));
                }
                let started = Instant::now();
                let reply = http
                    .send(
                        request.method.clone(),
                        &request.url,
                        &headers,
                        request.body.clone(),
                        Duration::from_secs(10),
                    )
                    .await;
                let took = started.elapsed();
                if !timing.load(Ordering::Relaxed) {
                    continue;
                }
                let failure = match reply {
                    Ok(r) if r.status == StatusCode::OK => None,
                    // A get of a key not written yet (no fill): still a served read.
                    Ok(r) if r.status == StatusCode::NOT_FOUND && !write => None,
                    Ok(r) => Some(format!(
                        "{}: {}",
                        r.status,
                        String::from_utf8_lossy(&r.body).trim()
                    )),
                    Err(e) => Some(e),
                };
                match failure {
                    None => tally
                        .latencies_us
                        .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX)),
                    Some(e) => {
                        tally.errors += 1;
                        tally.first_error.get_or_insert(e);
                    }
                }
            }
            tally
        }));
    }
    let mut written_before = 0;
    let started = if args.op == BenchOp::Fill {
        if !args.pids.is_empty() {
            written_before = written_bytes(&args.pids)?;
        }
        Instant::now()
    } else {
        tokio::time::sleep(Duration::from_secs(args.warmup)).await;
        if !args.pids.is_empty() {
            written_before = written_bytes(&args.pids)?;
        }
        timing.store(true, Ordering::Relaxed);
        let started = Instant::now();
        tokio::time::sleep(Duration::from_secs(args.duration)).await;
        stop.store(true, Ordering::Relaxed);
        started
    };
    let mut all = Vec::new();
    let mut errors = 0;
    let mut first_error = None;
    for task in tasks {
        let tally = task
            .await
            .map_err(|e| Error::Invalid(format!("client task: {e}")))?;
        all.extend(tally.latencies_us);
        errors += tally.errors;
        first_error = first_error.or(tally.first_error);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let bytes_per_op = if args.pids.is_empty() || all.is_empty() {
        None
    } else {
        let written = written_bytes(&args.pids)?.saturating_sub(written_before);
        Some(written as f64 / all.len() as f64)
    };
    all.sort_unstable();
    Ok(BenchResult {
        ops: all.len() as u64,
        errors,
        ops_per_sec: all.len() as f64 / elapsed,
        latency_ms: [
            percentile(&all, 500),
            percentile(&all, 990),
            percentile(&all, 999),
        ],
        bytes_per_op,
        first_error,
    })
}

/// The header of the table [`run_bench`] prints rows of.
pub const HEADER: &str = "| target | op | clients | ops/s | p50 ms | p99 ms | p99.9 ms | bytes written/op | errors |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |";

/// Runs `strata cluster bench` and prints its row.
pub fn run_bench(args: &BenchArgs) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context(|| "start the async runtime".into())?;
    let result = runtime.block_on(bench(args))?;
    if args.header {
        println!("{HEADER}");
    }
    let label = args.label.clone().unwrap_or_else(|| {
        match args.target {
            Target::Strata => "strata",
            Target::Etcd => "etcd",
        }
        .to_string()
    });
    let op = format!("{:?}", args.op).to_lowercase();
    let bytes = result
        .bytes_per_op
        .map_or("-".to_string(), |b| format!("{b:.0}"));
    println!(
        "| {label} | {op} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {bytes} | {} |",
        args.clients,
        result.ops_per_sec,
        result.latency_ms[0],
        result.latency_ms[1],
        result.latency_ms[2],
        result.errors
    );
    if let Some(e) = result.first_error {
        eprintln!("first error: {e}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_have_their_sizes_and_differ() {
        assert_eq!(key_of(7, 16), b"key0000000000007".to_vec());
        assert_eq!(key_of(123, 16).len(), 16);
        assert_eq!(value_of(1, 100).len(), 100);
        assert_ne!(value_of(1, 100), value_of(2, 100));
        assert!(value_of(3, 100).iter().all(u8::is_ascii_lowercase));
    }

    #[test]
    fn bad_arguments_and_no_leader_are_refused_by_name() {
        let args = |clients: usize, key_size: usize| BenchArgs {
            target: Target::Strata,
            // Nothing listens on port 1 of loopback.
            endpoints: vec!["127.0.0.1:1".into()],
            clients,
            op: BenchOp::Put,
            duration: 1,
            warmup: 0,
            keys: 10,
            key_size,
            value_size: 10,
            pids: Vec::new(),
            label: None,
            header: false,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let error = |a: BenchArgs| runtime.block_on(bench(&a)).unwrap_err().to_string();
        assert!(error(args(0, 16)).contains("--clients and --keys must be above 0"));
        assert!(error(args(1, 2)).contains("--key-size must be at least 4"));
        assert!(error(args(1, 16)).contains("no Strata endpoint knows a leader"));
        let mut gone = args(1, 16);
        gone.pids = vec![u32::MAX];
        assert!(error(gone).contains("/proc/4294967295/io"));
        let mut etcd = args(1, 16);
        etcd.target = Target::Etcd;
        assert!(error(etcd).contains("no etcd endpoint answered"));
    }

    #[test]
    fn percentiles_are_ranks() {
        let sorted: Vec<u32> = (1..=1000).map(|i| i * 1000).collect();
        assert_eq!(percentile(&sorted, 500), 500.0);
        assert_eq!(percentile(&sorted, 990), 990.0);
        assert_eq!(percentile(&sorted, 999), 999.0);
        assert_eq!(percentile(&sorted[..10], 999), 10.0);
        assert_eq!(percentile(&[], 500), 0.0);
    }
}
