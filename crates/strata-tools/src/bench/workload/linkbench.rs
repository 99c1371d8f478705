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

use super::linkbench_gen::uniform;

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
/// Largest link data (`LinkStore.MAX_LINK_DATA`) and node data (`NodeStore.MAX_NODE_DATA`).
pub const MAX_LINK_DATA: usize = 255;
pub const MAX_NODE_DATA: usize = 1 << 20;
/// Median data sizes (FBWorkload's `link_datasize`, `node_datasize`).
pub const LINK_DATA_MEDIAN: f64 = 8.0;
pub const NODE_DATA_MEDIAN: f64 = 128.0;
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
    use strata::internals::Rng;

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
