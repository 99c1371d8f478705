//! Linkbench's data model (see `linkbench.rs` for the workload): its column families, the
//! encoding of its keys and values, and the [`Verifier`] of its invariants.

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

/// The type of every node (`LinkStore.DEFAULT_NODE_TYPE`).
pub const NODE_TYPE: u32 = 2048;
/// Links a link list returns at most (`LinkStore.DEFAULT_LIMIT`).
pub const RANGE_LIMIT: usize = 10_000;
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
