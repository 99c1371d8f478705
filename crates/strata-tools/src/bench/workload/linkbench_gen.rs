//! The random choices of Linkbench (see `linkbench.rs` for the workload): Zipf's law by
//! rejection-inversion, fixed permutations of the ids, the outdegree power law, the id2s of
//! LinkBench's `ID2Chooser`, log-normal data sizes and geometric multiget sizes.

use std::time::{SystemTime, UNIX_EPOCH};

use strata::internals::Rng;

/// LinkBench's first link type (`LinkStore.DEFAULT_LINK_TYPE`); the types are consecutive.
pub const DEFAULT_LINK_TYPE: u64 = 123_456_789;
/// Link types (FBWorkload's `link_type_count`).
pub const LINK_TYPES: u64 = 2;
/// The most links one node gets at load.
pub const MAX_LINKS_PER_NODE: u64 = 100_000;
/// Largest link data (`LinkStore.MAX_LINK_DATA`) and node data (`NodeStore.MAX_NODE_DATA`).
pub const MAX_LINK_DATA: usize = 255;
pub const MAX_NODE_DATA: usize = 1 << 20;
/// Median data sizes (FBWorkload's `link_datasize`, `node_datasize`).
pub const LINK_DATA_MEDIAN: f64 = 8.0;
pub const NODE_DATA_MEDIAN: f64 = 128.0;

/// Pareto shape of the outdegree.
const OUTDEGREE_SHAPE: f64 = 1.25;
/// Log-normal sigma of data sizes (LinkBench's `LINK_DATASIZE_SIGMA`, `NODE_DATASIZE_SIGMA`).
const DATA_SIZE_SIGMA: f64 = 1.0;
/// Links per multiget: geometric with p 0.382 in 1..=128 (mean about 2.6).
const MULTIGET_P: f64 = 0.382;
const MULTIGET_MAX: u64 = 128;

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
    pub fn node_of_rank(&self, rank: u64) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
