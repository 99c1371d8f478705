//! Linkbench: the social-graph workload of Facebook's LinkBench (Armstrong et al., SIGMOD
//! 2013) as MyRocks runs it, on four column families.
//!
//! Data model (all integers big-endian in keys, so that keys sort as the numbers do):
//!
//! | family | key | value |
//! | --- | --- | --- |
//! | `linkbench_node` | id (8) | type (4) · version (8) · time (4, seconds) · data |
//! | `linkbench_link` | id1 (8) · link_type (8) · id2 (8) | visibility (1) · version (4) · time (8, ms) · data |
//! | `linkbench_count` | id1 (8) · link_type (8) | count: 8 bytes little-endian (`uint64add`'s integers) |
//! | `linkbench_link_time` | id1 (8) · link_type (8) · time (8) · id2 (8) | version (4) · data |
//!
//! `linkbench_link_time` is MyRocks's `id1_type` index: it holds exactly the visible links,
//! newest last, and covers them (a link list reads no other family). A hidden link (deleted
//! as LinkBench deletes: `visibility` 0) stays in `linkbench_link` only. The count of
//! (id1, link_type) is the number of its visible links, kept by a `uint64add` merge in the
//! link's own write batch, or read and written in the link's transaction when the run has
//! transactions (`--transaction_db`, `--optimistic_transaction_db`).
//!
//! Invariants, checked by [`Verifier`]: every visible link has its index entry and no other
//! index entry exists; every count equals the number of visible links of its (id1, type).
//!
//! Load (`linkbench_load`): nodes 1..=N (`--linkbench_nodes`), then each node's links. A
//! node's outdegree follows a power law: the node of rank r (0 = most links) among N has
//! floor(((r + 0.5) / N)^(-1 / 1.25)) - 1 links (a discrete Pareto law of shape 1.25, the
//! Pareto parameter LinkBench's configuration gives for link reads; mean about 3.3, 58% of
//! nodes without links), at most [`MAX_LINKS_PER_NODE`], split evenly over the
//! [`LINK_TYPES`] link types. Ranks are spread over the ids by a fixed permutation. As in
//! LinkBench, the k-th link of (id1, type) goes to id2 = id1 + k, and its time is drawn from
//! the 2^32 ms (about 50 days) before the load.
//!
//! Requests (`linkbench`): the operation mix of LinkBench's `FBWorkload.properties`
//! ([`MIX`]); ids drawn from Zipf laws of its shapes (link reads 0.8, link writes 0.741,
//! node reads 0.625, node updates 0.606, node deletes uniform), each rank mapped to an id by
//! its own permutation; link reads and writes use the outdegree's permutation (so that the
//! nodes with many links are the hot ones) for 0.5% and 5% of their draws (LinkBench's
//! `read_uncorr_blend` 99.5 and `write_uncorr_blend` 95). id2s are drawn as LinkBench's
//! `ID2Chooser`: id1 + a number below ceil(links / p), p the chance that the link exists
//! (0.05 for add_link, 0.9 for update_link and delete_link, 0.5 for multiget_link). Data
//! sizes are log-normal with LinkBench's medians (links 8 bytes, nodes 128) and sigma 1.

use std::time::{SystemTime, UNIX_EPOCH};

use strata::internals::Rng;

/// The column families of the workload, index 0 first (the interface's "default").
pub const FAMILIES: [&str; 5] = [
    "default",
    "linkbench_node",
    "linkbench_link",
    "linkbench_count",
    "linkbench_link_time",
];
pub const NODE_CF: usize = 1;
pub const LINK_CF: usize = 2;
pub const COUNT_CF: usize = 3;
pub const LINK_TIME_CF: usize = 4;

/// LinkBench's first link type (`LinkStore.DEFAULT_LINK_TYPE`); the types are consecutive.
pub const DEFAULT_LINK_TYPE: u64 = 123_456_789;
/// Link types (FBWorkload's `link_type_count`).
pub const LINK_TYPES: u64 = 2;
/// The type of every node (`LinkStore.DEFAULT_NODE_TYPE`).
pub const NODE_TYPE: u32 = 2048;
/// Links a link list returns at most (`LinkStore.DEFAULT_LIMIT`).
pub const RANGE_LIMIT: usize = 10_000;
/// The most links one node gets at load.
pub const MAX_LINKS_PER_NODE: u64 = 100_000;
/// Pareto shape of the outdegree.
const OUTDEGREE_SHAPE: f64 = 1.25;
/// Largest link data (`LinkStore.MAX_LINK_DATA`) and node data (`NodeStore.MAX_NODE_DATA`).
pub const MAX_LINK_DATA: usize = 255;
pub const MAX_NODE_DATA: usize = 1 << 20;
/// Median data sizes (FBWorkload's `link_datasize`, `node_datasize`) and their log-normal
/// sigma (LinkBench's `LINK_DATASIZE_SIGMA`, `NODE_DATASIZE_SIGMA`).
pub const LINK_DATA_MEDIAN: f64 = 8.0;
pub const NODE_DATA_MEDIAN: f64 = 128.0;
const DATA_SIZE_SIGMA: f64 = 1.0;
/// Links per multiget: geometric with p 0.382 in 1..=128 (mean about 2.6).
const MULTIGET_P: f64 = 0.382;
const MULTIGET_MAX: u64 = 128;
/// Chance that a link list is a history query (FBWorkload's `getlinklist_history` 0.3,
/// a percentage), when a list that filled RANGE_LIMIT is remembered.
pub const HISTORY_QUERY_P: f64 = 0.003;
/// Lists remembered for history queries per thread (LinkBench's `listTailHistoryLimit`).
pub const HISTORY_LIMIT: usize = 2048;

pub const VISIBILITY_HIDDEN: u8 = 0;
pub const VISIBILITY_VISIBLE: u8 = 1;

/// The operations of the request phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    AddLink,
    DeleteLink,
    UpdateLink,
    CountLink,
    MultigetLink,
    GetLinkList,
    AddNode,
    UpdateNode,
    DeleteNode,
    GetNode,
}

impl Op {
    /// The name the report prints (LinkBench's, lower case).
    pub fn name(self) -> &'static str {
        match self {
            Op::AddLink => "add_link",
            Op::DeleteLink => "delete_link",
            Op::UpdateLink => "update_link",
            Op::CountLink => "count_link",
            Op::MultigetLink => "multiget_link",
            Op::GetLinkList => "get_link_list",
            Op::AddNode => "add_node",
            Op::UpdateNode => "update_node",
            Op::DeleteNode => "delete_node",
            Op::GetNode => "get_node",
        }
    }

    /// Whether the operation writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::AddLink
                | Op::DeleteLink
                | Op::UpdateLink
                | Op::AddNode
                | Op::UpdateNode
                | Op::DeleteNode
        )
    }
}

/// The operation mix in percent, in LinkBench's order, from its `config/FBWorkload.properties`
/// (addlink, deletelink, updatelink, countlink, getlink, getlinklist, addnode, updatenode,
/// deletenode, getnode).
pub const MIX: [(Op, f64); 10] = [
    (Op::AddLink, 8.988_660_1),
    (Op::DeleteLink, 2.990_766_4),
    (Op::UpdateLink, 8.012_212_5),
    (Op::CountLink, 4.886_356_7),
    (Op::MultigetLink, 0.526_114_2),
    (Op::GetLinkList, 50.711_914_5),
    (Op::AddNode, 2.573_278_9),
    (Op::UpdateNode, 7.366_437),
    (Op::DeleteNode, 1.011_591_4),
    (Op::GetNode, 12.932_668_3),
];

/// The operation of a uniform draw `u` in [0, 1), by [`MIX`]'s cumulative shares.
pub fn choose_op(u: f64) -> Op {
    let r = u * 100.0;
    let mut cumulative = 0.0;
    for (op, share) in MIX {
        cumulative += share;
        if r < cumulative {
            return op;
        }
    }
    MIX[MIX.len() - 1].0
}

/// A uniform number in [0, 1) with 53 random bits.
pub fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal number (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - uniform(rng); // (0, 1]: ln stays finite
    let u2 = uniform(rng);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A data size: log-normal with `median` and sigma 1, rounded, at most `max`.
pub fn data_size(rng: &mut Rng, median: f64, max: usize) -> usize {
    let x = (median.ln() + DATA_SIZE_SIGMA * normal(rng)).exp().round();
    (x.max(0.0) as usize).min(max)
}

/// Links per multiget: geometric in 1..=128 (LinkBench's `link_multiget_dist`).
pub fn multiget_size(rng: &mut Rng) -> u64 {
    let u = 1.0 - uniform(rng);
    let extra = (u.ln() / (1.0 - MULTIGET_P).ln()).floor();
    (1 + extra.max(0.0) as u64).min(MULTIGET_MAX)
}

/// Zipf's law on ranks 0..n: rank k has probability proportional to (k + 1)^-s, for any
/// s > 0, drawn in constant time by rejection-inversion (Hörmann and Derflinger, "Rejection-
/// inversion to generate variates from monotone discrete distributions", 1996).
#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    squeeze: f64,
}

impl Zipf {
    /// The law on `n` (at least 1) ranks with exponent `s` (above 0).
    pub fn new(n: u64, s: f64) -> Zipf {
        let mut z = Zipf {
            n: n.max(1),
            s,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            squeeze: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n as f64 + 0.5);
        z.squeeze = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in 0..n.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + uniform(rng) * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5).floor() as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.squeeze || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k - 1;
            }
        }
    }

    /// x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// The integral of h from 1 to x (plus a constant): (x^(1-s) - 1) / (1 - s), or ln x at
    /// s = 1, computed without cancellation near s = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.s) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (ln1p_over_x(t) * x).exp()
    }
}

/// (e^x - 1) / x, 1 at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// ln(1 + x) / x, 1 at 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// A fixed permutation of 0..n: r -> (a r + b) mod n, a coprime to n.
#[derive(Clone, Copy, Debug)]
pub struct Permutation {
    n: u64,
    a: u64,
    a_inverse: u64,
    b: u64,
}

impl Permutation {
    /// The permutation of 0..n (n at least 1) chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let n = n.max(1);
        let mut rng = Rng::new(seed);
        // A multiplier near n times the golden ratio's fraction spreads neighbours far apart.
        let mut a = ((n as f64 * 0.618_033_988_749_895) as u64 + rng.below(n)) % n;
        a = a.max(1);
        while gcd(a, n) != 1 {
            a = a % n + 1;
        }
        let a_inverse = mod_inverse(a % n, n);
        Permutation {
            n,
            a: a % n,
            a_inverse,
            b: rng.below(n),
        }
    }

    pub fn apply(&self, r: u64) -> u64 {
        ((u128::from(self.a) * u128::from(r % self.n) + u128::from(self.b)) % u128::from(self.n))
            as u64
    }

    pub fn invert(&self, x: u64) -> u64 {
        let shifted = (x % self.n + self.n - self.b) % self.n;
        ((u128::from(self.a_inverse) * u128::from(shifted)) % u128::from(self.n)) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The inverse of `a` modulo `n` (a coprime to n; 0 when n is 1).
fn mod_inverse(a: u64, n: u64) -> u64 {
    if n == 1 {
        return 0;
    }
    let (mut old_r, mut r) = (i128::from(a), i128::from(n));
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let q = old_r / r;
        (old_r, r) = (r, old_r - q * r);
        (old_s, s) = (s, old_s - q * s);
    }
    old_s.rem_euclid(i128::from(n)) as u64
}

/// Links of the node of outdegree rank `rank` among `nodes` (see the module's doc).
pub fn outdegree(rank: u64, nodes: u64) -> u64 {
    let q = (rank as f64 + 0.5) / nodes.max(1) as f64;
    let x = q.powf(-1.0 / OUTDEGREE_SHAPE).floor();
    ((x as u64).saturating_sub(1)).min(MAX_LINKS_PER_NODE)
}

/// Seeds of the fixed permutations (any distinct numbers: they only need to stay the same
/// between the load and the requests).
const OUTDEGREE_SEED: u64 = 0x6c69_6e6b_0001;
const LINK_READS_SEED: u64 = 0x6c69_6e6b_0002;
const LINK_WRITES_SEED: u64 = 0x6c69_6e6b_0003;
const NODE_READS_SEED: u64 = 0x6c69_6e6b_0004;
const NODE_UPDATES_SEED: u64 = 0x6c69_6e6b_0005;

/// The loaded graph's shape: which node has how many links. Load and requests agree on it
/// as long as they agree on the number of nodes.
#[derive(Clone, Debug)]
pub struct Graph {
    nodes: u64,
    by_outdegree: Permutation,
}

impl Graph {
    pub fn new(nodes: u64) -> Graph {
        Graph {
            nodes: nodes.max(1),
            by_outdegree: Permutation::new(nodes, OUTDEGREE_SEED),
        }
    }

    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Links of node `id1` (1..=nodes), all types together, at load.
    pub fn total_links(&self, id1: u64) -> u64 {
        outdegree(self.by_outdegree.invert(id1 - 1), self.nodes)
    }

    /// Links of (id1, link_type) at load: the total split evenly, the first types taking
    /// one more when it does not divide.
    pub fn links(&self, id1: u64, link_type: u64) -> u64 {
        let total = self.total_links(id1);
        let type_number = link_type - DEFAULT_LINK_TYPE;
        total / LINK_TYPES + u64::from(type_number < total % LINK_TYPES)
    }

    /// The node of outdegree rank `rank` (0: the most links).
    fn node_of_rank(&self, rank: u64) -> u64 {
        1 + self.by_outdegree.apply(rank)
    }

    /// An id2 for an operation on (id1, link_type) that finds an existing link with about
    /// probability `p_exists` (LinkBench's `ID2Chooser.chooseForOp`).
    pub fn choose_id2(&self, rng: &mut Rng, id1: u64, link_type: u64, p_exists: f64) -> u64 {
        id1 + rng.below(self.id2_range(id1, link_type, p_exists))
    }

    /// `n` distinct id2s, as LinkBench's `chooseMultipleForOp`: all of a range smaller
    /// than n, else draws that retry (a bounded number of times) an id2 already chosen.
    pub fn choose_id2s(
        &self,
        rng: &mut Rng,
        id1: u64,
        link_type: u64,
        n: u64,
        p_exists: f64,
    ) -> Vec<u64> {
        let range = self.id2_range(id1, link_type, p_exists);
        if range <= n {
            return (0..n).map(|i| id1 + i).collect();
        }
        let mut id2s: Vec<u64> = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let mut id2 = id1 + rng.below(range);
            for _ in 0..100 {
                if !id2s.contains(&id2) {
                    break;
                }
                id2 = id1 + rng.below(range);
            }
            id2s.push(id2);
        }
        id2s
    }

    fn id2_range(&self, id1: u64, link_type: u64, p_exists: f64) -> u64 {
        let links = if (1..=self.nodes).contains(&id1) {
            self.links(id1, link_type)
        } else {
            0
        };
        ((links as f64 / p_exists).ceil() as u64).max(1)
    }
}

/// The chances that an operation's id2 names an existing link (LinkBench's `ID2Chooser`).
pub const P_ADD_EXISTS: f64 = 0.05;
pub const P_UPDATE_EXISTS: f64 = 0.9;
pub const P_DELETE_EXISTS: f64 = 0.9;
pub const P_GET_EXISTS: f64 = 0.5;

/// How the request phase draws ids (see the module's doc).
#[derive(Clone, Debug)]
pub struct IdChooser {
    graph: Graph,
    link_reads: Zipf,
    link_writes: Zipf,
    node_reads: Zipf,
    node_updates: Zipf,
    link_reads_uncorrelated: Permutation,
    link_writes_uncorrelated: Permutation,
    node_reads_order: Permutation,
    node_updates_order: Permutation,
}

/// Whose ids a draw is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    LinkReads,
    LinkWrites,
    NodeReads,
    NodeUpdates,
    NodeDeletes,
}

impl IdChooser {
    pub fn new(graph: Graph) -> IdChooser {
        let n = graph.nodes;
        IdChooser {
            link_reads: Zipf::new(n, 0.8),
            link_writes: Zipf::new(n, 0.741),
            node_reads: Zipf::new(n, 0.625),
            node_updates: Zipf::new(n, 0.606),
            link_reads_uncorrelated: Permutation::new(n, LINK_READS_SEED),
            link_writes_uncorrelated: Permutation::new(n, LINK_WRITES_SEED),
            node_reads_order: Permutation::new(n, NODE_READS_SEED),
            node_updates_order: Permutation::new(n, NODE_UPDATES_SEED),
            graph,
        }
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// An id in 1..=nodes for `access`.
    pub fn choose(&self, rng: &mut Rng, access: Access) -> u64 {
        let (zipf, uncorrelated, blend) = match access {
            Access::LinkReads => (&self.link_reads, &self.link_reads_uncorrelated, 0.995),
            Access::LinkWrites => (&self.link_writes, &self.link_writes_uncorrelated, 0.95),
            Access::NodeReads => (&self.node_reads, &self.node_reads_order, 1.0),
            Access::NodeUpdates => (&self.node_updates, &self.node_updates_order, 1.0),
            Access::NodeDeletes => return 1 + rng.below(self.graph.nodes),
        };
        let rank = zipf.sample(rng);
        if blend >= 1.0 || uniform(rng) < blend {
            1 + uncorrelated.apply(rank)
        } else {
            self.graph.node_of_rank(rank)
        }
    }

    /// A link type, each equally likely.
    pub fn link_type(&self, rng: &mut Rng) -> u64 {
        DEFAULT_LINK_TYPE + rng.below(LINK_TYPES)
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A loaded link's time: LinkBench's `chooseInitialTimestamp`, now - 2^31 + a random
/// 32-bit signed number of milliseconds.
pub fn initial_link_time(rng: &mut Rng, now_ms: u64) -> u64 {
    let offset = rng.next_u64() as u32 as i32;
    (now_ms as i64 - (1i64 << 31) + i64::from(offset)).max(0) as u64
}

// Keys and values.

pub fn node_key(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

pub fn link_key(id1: u64, link_type: u64, id2: u64) -> [u8; 24] {
    let mut k = [0u8; 24];
    k[..8].copy_from_slice(&id1.to_be_bytes());
    k[8..16].copy_from_slice(&link_type.to_be_bytes());
    k[16..].copy_from_slice(&id2.to_be_bytes());
    k
}

pub fn count_key(id1: u64, link_type: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&id1.to_be_bytes());
    k[8..].copy_from_slice(&link_type.to_be_bytes());
    k
}

pub fn link_time_key(id1: u64, link_type: u64, time: u64, id2: u64) -> [u8; 32] {
    let mut k = [0u8; 32];
    k[..16].copy_from_slice(&count_key(id1, link_type));
    k[16..24].copy_from_slice(&time.to_be_bytes());
    k[24..].copy_from_slice(&id2.to_be_bytes());
    k
}

/// Reads big-endian u64 number `i` of `bytes` (which must hold it).
fn be_u64(bytes: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
    u64::from_be_bytes(b)
}

/// (id1, link_type, id2) of a link key, or None for a key of another length.
pub fn parse_link_key(key: &[u8]) -> Option<(u64, u64, u64)> {
    (key.len() == 24).then(|| (be_u64(key, 0), be_u64(key, 1), be_u64(key, 2)))
}

/// (id1, link_type) of a count key.
pub fn parse_count_key(key: &[u8]) -> Option<(u64, u64)> {
    (key.len() == 16).then(|| (be_u64(key, 0), be_u64(key, 1)))
}

/// (id1, link_type, time, id2) of an index key.
pub fn parse_link_time_key(key: &[u8]) -> Option<(u64, u64, u64, u64)> {
    (key.len() == 32).then(|| {
        (
            be_u64(key, 0),
            be_u64(key, 1),
            be_u64(key, 2),
            be_u64(key, 3),
        )
    })
}

/// A node's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: u32,
    pub version: u64,
    pub time: u32,
    pub data: Vec<u8>,
}

impl Node {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16 + self.data.len());
        v.extend_from_slice(&self.kind.to_be_bytes());
        v.extend_from_slice(&self.version.to_be_bytes());
        v.extend_from_slice(&self.time.to_be_bytes());
        v.extend_from_slice(&self.data);
        v
    }

    pub fn decode(v: &[u8]) -> Option<Node> {
        if v.len() < 16 {
            return None;
        }
        Some(Node {
            kind: u32::from_be_bytes(v[..4].try_into().ok()?),
            version: u64::from_be_bytes(v[4..12].try_into().ok()?),
            time: u32::from_be_bytes(v[12..16].try_into().ok()?),
            data: v[16..].to_vec(),
        })
    }
}

/// A link's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub visibility: u8,
    pub version: u32,
    pub time: u64,
    pub data: Vec<u8>,
}

impl Link {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(13 + self.data.len());
        v.push(self.visibility);
        v.extend_from_slice(&self.version.to_be_bytes());
        v.extend_from_slice(&self.time.to_be_bytes());
        v.extend_from_slice(&self.data);
        v
    }

    pub fn decode(v: &[u8]) -> Option<Link> {
        if v.len() < 13 {
            return None;
        }
        Some(Link {
            visibility: v[0],
            version: u32::from_be_bytes(v[1..5].try_into().ok()?),
            time: u64::from_be_bytes(v[5..13].try_into().ok()?),
            data: v[13..].to_vec(),
        })
    }

    /// The value of the link's index entry: version and data.
    pub fn index_value(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(4 + self.data.len());
        v.extend_from_slice(&self.version.to_be_bytes());
        v.extend_from_slice(&self.data);
        v
    }
}

/// A count's value (`uint64add`'s 8-byte little-endian integer); also a merge operand.
pub fn count_value(n: u64) -> [u8; 8] {
    n.to_le_bytes()
}

/// A stored count: 8 bytes little-endian, else None.
pub fn parse_count(v: &[u8]) -> Option<u64> {
    v.try_into().ok().map(u64::from_le_bytes)
}

/// Checks the invariants of the module's doc over a whole database: feed it every entry of
/// the link, count and index families (in any order), then [`Verifier::finish`].
#[derive(Default)]
pub struct Verifier {
    /// Visible links per (id1, type).
    visible: std::collections::HashMap<(u64, u64), u64>,
    /// Index entries expected (from visible links) and found, as (id1, type, time, id2) with
    /// the index value.
    expected_index: std::collections::HashMap<[u8; 32], Vec<u8>>,
    found_index: Vec<([u8; 32], Vec<u8>)>,
    counts: Vec<((u64, u64), u64)>,
    links: u64,
    problems: Vec<String>,
}

/// What a verified database holds.
#[derive(Debug, PartialEq, Eq)]
pub struct Verified {
    pub links: u64,
    pub visible_links: u64,
    /// Count entries (a (id1, type) whose links were all deleted may keep one, at 0).
    pub counts: u64,
}

impl Verifier {
    fn problem(&mut self, what: String) {
        if self.problems.len() < 10 {
            self.problems.push(what);
        }
    }

    pub fn link(&mut self, key: &[u8], value: &[u8]) {
        self.links += 1;
        let (Some((id1, link_type, id2)), Some(link)) = (parse_link_key(key), Link::decode(value))
        else {
            self.problem(format!("a link entry that does not parse: key {key:02x?}"));
            return;
        };
        if link.visibility == VISIBILITY_VISIBLE {
            *self.visible.entry((id1, link_type)).or_default() += 1;
            self.expected_index.insert(
                link_time_key(id1, link_type, link.time, id2),
                link.index_value(),
            );
        }
    }

    pub fn count(&mut self, key: &[u8], value: &[u8]) {
        match (parse_count_key(key), parse_count(value)) {
            (Some(group), Some(n)) => self.counts.push((group, n)),
            _ => self.problem(format!("a count entry that does not parse: key {key:02x?}")),
        }
    }

    pub fn index(&mut self, key: &[u8], value: &[u8]) {
        match <[u8; 32]>::try_from(key) {
            Ok(k) => self.found_index.push((k, value.to_vec())),
            Err(_) => self.problem(format!(
                "an index entry that does not parse: key {key:02x?}"
            )),
        }
    }

    /// The totals, or every broken invariant found (the first ten).
    pub fn finish(mut self) -> Result<Verified, String> {
        let visible_links: u64 = self.visible.values().sum();
        let counts = self.counts.len() as u64;
        for ((id1, link_type), n) in std::mem::take(&mut self.counts) {
            let links = self.visible.remove(&(id1, link_type)).unwrap_or(0);
            if n != links {
                self.problem(format!(
                    "count of ({id1}, {link_type}) is {n}, but it has {links} visible links"
                ));
            }
        }
        let uncounted: Vec<(u64, u64)> = self.visible.keys().copied().take(10).collect();
        for (id1, link_type) in uncounted {
            self.problem(format!(
                "({id1}, {link_type}) has visible links and no count"
            ));
        }
        for (key, value) in std::mem::take(&mut self.found_index) {
            let (id1, link_type, time, id2) = parse_link_time_key(&key).unwrap_or_default();
            match self.expected_index.remove(&key) {
                None => self.problem(format!(
                    "index entry ({id1}, {link_type}, time {time}, {id2}) has no visible link"
                )),
                Some(v) if v != value => self.problem(format!(
                    "index entry ({id1}, {link_type}, time {time}, {id2}) differs from its link"
                )),
                Some(_) => {}
            }
        }
        let missing: Vec<[u8; 32]> = self.expected_index.keys().copied().take(10).collect();
        for key in missing {
            let (id1, link_type, time, id2) = parse_link_time_key(&key).unwrap_or_default();
            self.problem(format!(
                "visible link ({id1}, {link_type}, {id2}) at time {time} has no index entry"
            ));
        }
        if self.problems.is_empty() {
            Ok(Verified {
                links: self.links,
                visible_links,
                counts,
            })
        } else {
            Err(self.problems.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_linkbench_s_and_sums_to_100() {
        let total: f64 = MIX.iter().map(|m| m.1).sum();
        assert!((total - 100.0).abs() < 1e-6, "{total}");
        // Draws at the edges land in the first and the last operation.
        assert_eq!(choose_op(0.0), Op::AddLink);
        assert_eq!(choose_op(0.999_999_999), Op::GetNode);
        // Over many draws each operation gets its share.
        let mut rng = Rng::new(7);
        let draws = 200_000;
        let mut seen = std::collections::HashMap::new();
        for _ in 0..draws {
            *seen.entry(choose_op(uniform(&mut rng))).or_insert(0u64) += 1;
        }
        for (op, share) in MIX {
            let got = 100.0 * seen[&op] as f64 / draws as f64;
            assert!((got - share).abs() < 0.3, "{}: {got} vs {share}", op.name());
        }
    }

    /// The sampler against the exact probabilities of Zipf's law, for exponents below, at
    /// and above 1 (a chi-square test at a generous threshold, and rank 0's frequency).
    #[test]
    fn zipf_draws_follow_zipf_s_law() {
        for (n, s) in [(50u64, 0.8), (50, 1.0), (20, 1.5), (1000, 0.606)] {
            let z = Zipf::new(n, s);
            let mut rng = Rng::new(s.to_bits());
            let draws = 200_000u64;
            let mut counts = vec![0u64; n as usize];
            for _ in 0..draws {
                let k = z.sample(&mut rng);
                assert!(k < n);
                counts[k as usize] += 1;
            }
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
            let expected = |k: usize| draws as f64 * ((k + 1) as f64).powf(-s) / norm;
            let p0 = counts[0] as f64 / expected(0);
            assert!(
                (0.97..1.03).contains(&p0),
                "n {n} s {s}: rank 0 at {p0} of its share"
            );
            if n <= 50 {
                let chi2: f64 = (0..n as usize)
                    .map(|k| (counts[k] as f64 - expected(k)).powi(2) / expected(k))
                    .sum();
                // 49 degrees of freedom: the 99.9% quantile is about 86.
                assert!(chi2 < 90.0, "n {n} s {s}: chi-square {chi2}");
            }
        }
        // One rank: always 0.
        let mut rng = Rng::new(1);
        assert!((0..100).all(|_| Zipf::new(1, 0.8).sample(&mut rng) == 0));
    }

    #[test]
    fn permutations_are_bijections_and_invert() {
        for n in [1u64, 2, 3, 10, 97, 1000, 1024] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let x = p.apply(r);
                assert!(x < n);
                assert!(!seen[x as usize], "n {n}: {x} twice");
                seen[x as usize] = true;
                assert_eq!(p.invert(x), r);
            }
        }
        // Large n: no overflow.
        let p = Permutation::new(u64::MAX / 3, 5);
        for r in [0, 1, u64::MAX / 3 - 1] {
            assert_eq!(p.invert(p.apply(r)), r);
        }
    }

    #[test]
    fn outdegrees_follow_a_power_law() {
        let n = 100_000;
        let degrees: Vec<u64> = (0..n).map(|r| outdegree(r, n)).collect();
        assert!(
            degrees.windows(2).all(|w| w[0] >= w[1]),
            "rank 0 has the most"
        );
        let mean = degrees.iter().sum::<u64>() as f64 / n as f64;
        assert!((3.0..3.7).contains(&mean), "mean {mean}");
        let none = degrees.iter().filter(|&&d| d == 0).count() as f64 / n as f64;
        assert!((0.57..0.59).contains(&none), "{none} without links");
        // The tail: P(d >= k) = (k + 1)^-1.25.
        for k in [1u64, 10, 100] {
            let tail = degrees.iter().filter(|&&d| d >= k).count() as f64 / n as f64;
            let law = ((k + 1) as f64).powf(-OUTDEGREE_SHAPE);
            assert!((tail / law - 1.0).abs() < 0.05, "k {k}: {tail} vs {law}");
        }
        assert_eq!(outdegree(0, 100_000_000), MAX_LINKS_PER_NODE);
    }

    #[test]
    fn a_node_s_links_split_over_the_types() {
        let g = Graph::new(10_000);
        let mut total = 0;
        for id1 in 1..=10_000 {
            let t = g.total_links(id1);
            let a = g.links(id1, DEFAULT_LINK_TYPE);
            let b = g.links(id1, DEFAULT_LINK_TYPE + 1);
            assert_eq!(a + b, t);
            assert!(a >= b && a - b <= 1);
            total += t;
        }
        let hub = g.node_of_rank(0);
        assert_eq!(g.total_links(hub), outdegree(0, 10_000));
        assert!(total > 30_000, "{total}");
    }

    #[test]
    fn id2s_exist_about_as_often_as_asked() {
        let g = Graph::new(10_000);
        let mut rng = Rng::new(3);
        for p in [P_ADD_EXISTS, P_GET_EXISTS, P_UPDATE_EXISTS] {
            let (mut hits, mut tries) = (0u64, 0u64);
            for id1 in 1..=10_000 {
                let t = DEFAULT_LINK_TYPE;
                if g.links(id1, t) < 5 {
                    continue;
                }
                tries += 1;
                let id2 = g.choose_id2(&mut rng, id1, t, p);
                hits += u64::from(id2 - id1 < g.links(id1, t));
            }
            let got = hits as f64 / tries as f64;
            assert!((got - p).abs() < 0.05, "p {p}: {got} of {tries}");
        }
        // Multigets: distinct id2s; all of a small range.
        let id2s = g.choose_id2s(&mut rng, 5, DEFAULT_LINK_TYPE, 40, 0.5);
        let distinct: std::collections::HashSet<_> = id2s.iter().collect();
        assert_eq!(distinct.len(), 40);
        let hub = g.node_of_rank(0);
        let many = g.choose_id2s(&mut rng, hub, DEFAULT_LINK_TYPE, 8, 0.5);
        let distinct: std::collections::HashSet<_> = many.iter().collect();
        assert_eq!(distinct.len(), 8);
    }

    #[test]
    fn ids_are_skewed_and_in_range() {
        let chooser = IdChooser::new(Graph::new(10_000));
        let mut rng = Rng::new(11);
        for access in [
            Access::LinkReads,
            Access::LinkWrites,
            Access::NodeReads,
            Access::NodeUpdates,
            Access::NodeDeletes,
        ] {
            let mut counts = std::collections::HashMap::new();
            for _ in 0..50_000 {
                let id = chooser.choose(&mut rng, access);
                assert!((1..=10_000).contains(&id), "{access:?}: {id}");
                *counts.entry(id).or_insert(0u64) += 1;
            }
            let top = counts.values().copied().max().unwrap_or(0);
            if access == Access::NodeDeletes {
                assert!(top < 30, "uniform: top id drawn {top} times");
            } else {
                assert!(top > 100, "{access:?}: top id drawn only {top} times");
            }
        }
    }

    #[test]
    fn data_sizes_and_multigets_have_linkbench_s_medians_and_means() {
        let mut rng = Rng::new(5);
        let mut sizes: Vec<usize> = (0..20_001)
            .map(|_| data_size(&mut rng, NODE_DATA_MEDIAN, MAX_NODE_DATA))
            .collect();
        sizes.sort_unstable();
        let median = sizes[10_000];
        assert!((118..=138).contains(&median), "{median}");
        assert!((0..20_000).all(|_| data_size(&mut rng, LINK_DATA_MEDIAN, MAX_LINK_DATA) <= 255));
        let mean = (0..20_000).map(|_| multiget_size(&mut rng)).sum::<u64>() as f64 / 20_000.0;
        assert!((2.45..2.75).contains(&mean), "{mean}");
    }

    #[test]
    fn keys_sort_as_their_numbers_and_values_round_trip() {
        assert!(link_key(1, 2, 300) < link_key(1, 3, 0));
        assert!(link_key(1, u64::MAX, 0) < link_key(2, 0, 0));
        assert!(link_time_key(7, 1, 255, 9) < link_time_key(7, 1, 256, 0));
        assert_eq!(parse_link_key(&link_key(1, 2, 3)), Some((1, 2, 3)));
        assert_eq!(parse_count_key(&count_key(4, 5)), Some((4, 5)));
        assert_eq!(
            parse_link_time_key(&link_time_key(1, 2, 3, 4)),
            Some((1, 2, 3, 4))
        );
        assert_eq!(parse_link_key(b"short"), None);
        let node = Node {
            kind: NODE_TYPE,
            version: 2,
            time: 1_700_000_000,
            data: b"payload".to_vec(),
        };
        assert_eq!(Node::decode(&node.encode()), Some(node));
        let link = Link {
            visibility: VISIBILITY_VISIBLE,
            version: 0,
            time: 1_700_000_000_000,
            data: vec![],
        };
        assert_eq!(Link::decode(&link.encode()), Some(link));
        assert_eq!(Node::decode(&[0; 15]), None);
        assert_eq!(parse_count(&count_value(42)), Some(42));
        // A decrement is the wrapping add of u64::MAX, as uint64add adds.
        assert_eq!(41u64.wrapping_add(u64::MAX), 40);
    }

    #[test]
    fn the_verifier_finds_each_broken_invariant() {
        let visible = |time: u64| Link {
            visibility: VISIBILITY_VISIBLE,
            version: 0,
            time,
            data: b"d".to_vec(),
        };
        let hidden = Link {
            visibility: VISIBILITY_HIDDEN,
            ..visible(5)
        };
        let t = DEFAULT_LINK_TYPE;
        let good = |v: &mut Verifier| {
            v.link(&link_key(1, t, 1), &visible(10).encode());
            v.link(&link_key(1, t, 2), &visible(20).encode());
            v.link(&link_key(1, t, 3), &hidden.encode());
            v.count(&count_key(1, t), &count_value(2));
            v.index(&link_time_key(1, t, 10, 1), &visible(10).index_value());
            v.index(&link_time_key(1, t, 20, 2), &visible(20).index_value());
        };
        let mut v = Verifier::default();
        good(&mut v);
        assert_eq!(
            v.finish(),
            Ok(Verified {
                links: 3,
                visible_links: 2,
                counts: 1
            })
        );
        type Breakage = fn(&mut Verifier);
        let cases: [(Breakage, &str); 5] = [
            (
                |v| v.count(&count_key(1, DEFAULT_LINK_TYPE), &count_value(3)),
                "count of (1, 123456789) is 3",
            ),
            (
                |v| v.count(&count_key(9, DEFAULT_LINK_TYPE), &count_value(1)),
                "count of (9, 123456789) is 1, but it has 0",
            ),
            (
                |v| v.index(&link_time_key(1, DEFAULT_LINK_TYPE, 5, 3), b"\0\0\0\0d"),
                "has no visible link",
            ),
            (
                |v| {
                    let link = Link {
                        visibility: VISIBILITY_VISIBLE,
                        version: 0,
                        time: 30,
                        data: vec![],
                    };
                    v.link(&link_key(2, DEFAULT_LINK_TYPE, 1), &link.encode());
                },
                "has no index entry",
            ),
            (|v| v.link(b"bad", b""), "does not parse"),
        ];
        for (breakage, message) in cases {
            let mut v = Verifier::default();
            good(&mut v);
            breakage(&mut v);
            let e = v.finish().unwrap_err();
            assert!(e.contains(message), "{e}");
        }
    }
}
