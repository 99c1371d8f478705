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
//! nodes without links), at most
//! [`MAX_LINKS_PER_NODE`](super::linkbench_gen::MAX_LINKS_PER_NODE), split evenly over the
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
//! Outdegrees come from LinkBench's empirical distribution there (`nlinks_func = real`, a
//! data file); the Pareto law above stands in for it.
//!
//! Operations, as LinkBench's MySQL store does them: add_link and update_link upsert the
//! link (a hidden or missing link becomes visible and counts one more; a visible one gets
//! the new data, time and the next version, its index entry moving with the time);
//! delete_link hides a visible link; add_node takes the next id after the largest;
//! update_node and delete_node change only a node that is there. Each write operation is
//! one transaction with `--transaction_db` or `--optimistic_transaction_db` (its reads
//! `for_update`), otherwise one atomic write batch while the workload's lock of the row is
//! held ([`super::batch`]): the read of the link and the merge into its count then cannot
//! interleave with another writer of that link list. Reads (count_link, multiget_link,
//! get_link_list, get_node) go to the database directly, as LinkBench's autocommit reads.
//! The load writes batches of [`LOAD_BATCH_LINKS`] links, with their nodes, index entries
//! and counts (counts there are plain puts of the final number).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use strata::internals::Rng;

use super::super::engine::{Engine, EngineKind, EngineResult, TxnError, TxnOps, WriteOp};
use super::super::{thread_generators, BenchArgs, BoxError};
use super::batch::{BatchOps, RowLocks, Writes};
use super::linkbench_data::{
    choose_op, count_key, count_value, link_key, link_time_key, node_key, parse_count,
    parse_link_time_key, Link, Node, Op, Verifier, COUNT_CF, HISTORY_LIMIT, HISTORY_QUERY_P,
    LINK_CF, LINK_TIME_CF, NODE_CF, NODE_TYPE, RANGE_LIMIT, VISIBILITY_HIDDEN, VISIBILITY_VISIBLE,
};
use super::linkbench_gen::{
    data_size, initial_link_time, multiget_size, now_ms, uniform, Access, Graph, IdChooser,
    DEFAULT_LINK_TYPE, LINK_DATA_MEDIAN, LINK_TYPES, MAX_LINK_DATA, MAX_NODE_DATA,
    NODE_DATA_MEDIAN, P_ADD_EXISTS, P_DELETE_EXISTS, P_GET_EXISTS, P_UPDATE_EXISTS,
};
use super::{claim, require, run_threads, Ctx, Outcome, Recorder};

// The steps.

/// The workload's name in the database's marker.
pub const WORKLOAD: &str = "linkbench";
/// Links per write batch of the load (LinkBench's bulk-insert size), with their index
/// entries, their nodes and counts.
const LOAD_BATCH_LINKS: usize = 1024;
/// Nodes a load thread takes at a time.
const LOAD_CHUNK: u64 = 1000;

/// The operation types of the load's report: one per write batch.
const LOAD_OPS: &[&str] = &["load_batch"];
/// The request phase's, in [`Op`] order.
const REQUEST_OPS: &[&str] = &[
    "add_link",
    "delete_link",
    "update_link",
    "count_link",
    "multiget_link",
    "get_link_list",
    "add_node",
    "update_node",
    "delete_node",
    "get_node",
];

/// How the counts are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counts {
    /// A `uint64add` merge in the link's batch.
    Merged,
    /// Read and written in the link's transaction.
    InTransaction,
}

/// The flags the steps cannot run with, as an error naming the step, the flag and the engine.
pub fn check_flags(name: &str, args: &BenchArgs) -> Result<(), String> {
    if args.linkbench_nodes == 0 {
        return Err(format!("{name}: --linkbench_nodes must be at least 1"));
    }
    if args.txn_mode().is_none() {
        if args.engine == EngineKind::Lmdb {
            return Err(format!(
                "{name}: --engine=lmdb has no merge operator, which keeps linkbench's link \
                 counts when its writes are plain batches: add --transaction_db (each write \
                 then is one LMDB write transaction that reads and writes its count)"
            ));
        }
        match args.options.merge_operator.as_str() {
            "" | "uint64add" => {}
            other => {
                return Err(format!(
                    "{name}: --merge_operator={other} does not fit: linkbench keeps its link \
                     counts by uint64add merges (leave the flag out: the run sets it)"
                ))
            }
        }
    }
    Ok(())
}

/// The merge operator the steps need: uint64add when the counts are merges.
pub fn merge_operator(args: &BenchArgs) -> Option<&'static str> {
    args.txn_mode().is_none().then_some("uint64add")
}

/// The run's header line: the graph's size, the requests and how writes are made.
pub fn header(args: &BenchArgs) -> String {
    let requests = match args.duration {
        0 => format!("{} requests per thread", args.reads()),
        s => format!("{s} seconds of requests"),
    };
    let writes = match args.txn_mode() {
        Some(m) => format!("{} transactions", m.name()),
        None => "write batches, counts by uint64add merges".into(),
    };
    format!(
        "Linkbench:  {} nodes, {LINK_TYPES} link types; {requests}; writes: {writes}",
        args.linkbench_nodes
    )
}

/// `linkbench_load`: the graph of `--linkbench_nodes` nodes, in write batches.
pub fn load(ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    let (args, db) = (ctx.args, ctx.db);
    let mut marker = claim(db, WORKLOAD, ctx.name)?;
    if let Some(nodes) = marker.facts.get("nodes") {
        return Err(format!(
            "{}: the database at {} already holds a linkbench graph of {nodes} nodes: load \
             into a new database (leave out --use_existing_db)",
            ctx.name,
            db.path().display()
        )
        .into());
    }
    let nodes = args.linkbench_nodes;
    marker.facts.insert("nodes".into(), nodes.to_string());
    marker.write(db.path())?;
    let graph = Graph::new(nodes);
    let next_chunk = AtomicU64::new(1);
    let (loaded_nodes, loaded_links) = (AtomicU64::new(0), AtomicU64::new(0));
    let now = now_ms();
    let sync = args.options.sync;
    let mut outcome = run_threads(ctx, args.threads, LOAD_OPS, |_, number, rec| {
        let (mut rng, mut values) = thread_generators(args, number);
        let mut batch = BatchOps::new(db);
        let (mut links_in_batch, mut bytes) = (0, 0);
        let flush = |batch: &mut BatchOps<'_>, rec: &mut Recorder<'_>, bytes: &mut usize| {
            let start = Instant::now();
            batch.commit(sync)?;
            rec.record(0, start, true);
            rec.wrote_bytes(std::mem::take(bytes));
            EngineResult::Ok(())
        };
        loop {
            let first = next_chunk.fetch_add(LOAD_CHUNK, Ordering::Relaxed);
            if first > nodes {
                break;
            }
            for id1 in first..(first + LOAD_CHUNK).min(nodes + 1) {
                let size = data_size(&mut rng, NODE_DATA_MEDIAN, MAX_NODE_DATA);
                let node = Node {
                    kind: NODE_TYPE,
                    version: 1,
                    time: (now / 1000) as u32,
                    data: values.next(size).to_vec(),
                };
                bytes += put(&mut batch, NODE_CF, &node_key(id1), &node.encode())?;
                for link_type in DEFAULT_LINK_TYPE..DEFAULT_LINK_TYPE + LINK_TYPES {
                    let n = graph.links(id1, link_type);
                    for k in 0..n {
                        let size = data_size(&mut rng, LINK_DATA_MEDIAN, MAX_LINK_DATA);
                        let link = Link {
                            visibility: VISIBILITY_VISIBLE,
                            version: 0,
                            time: initial_link_time(&mut rng, now),
                            data: values.next(size).to_vec(),
                        };
                        let id2 = id1 + k;
                        let index = link_time_key(id1, link_type, link.time, id2);
                        bytes += put(
                            &mut batch,
                            LINK_CF,
                            &link_key(id1, link_type, id2),
                            &link.encode(),
                        )?;
                        bytes += put(&mut batch, LINK_TIME_CF, &index, &link.index_value())?;
                        links_in_batch += 1;
                        if links_in_batch >= LOAD_BATCH_LINKS {
                            flush(&mut batch, rec, &mut bytes)?;
                            links_in_batch = 0;
                        }
                    }
                    if n > 0 {
                        let key = count_key(id1, link_type);
                        bytes += put(&mut batch, COUNT_CF, &key, &count_value(n))?;
                    }
                    loaded_links.fetch_add(n, Ordering::Relaxed);
                }
                loaded_nodes.fetch_add(1, Ordering::Relaxed);
            }
        }
        flush(&mut batch, rec, &mut bytes)
    })?;
    let (nodes, links) = (loaded_nodes.into_inner(), loaded_links.into_inner());
    // The result line counts what a load is measured by: nodes and links written.
    outcome.total.done = nodes + links;
    outcome.message = format!("( nodes:{nodes} links:{links} )");
    outcome.notes.push(format!(
        "graph: {nodes} nodes, {links} links ({:.2} per node, at most {} on one node), \
         written in batches of up to {LOAD_BATCH_LINKS} links",
        links as f64 / nodes.max(1) as f64,
        graph.total_links(graph.node_of_rank(0))
    ));
    verify_if_asked(args, db, &mut outcome)?;
    Ok(outcome)
}

/// One put into a load batch; its bytes.
fn put(batch: &mut BatchOps<'_>, cf: usize, key: &[u8], value: &[u8]) -> EngineResult<usize> {
    batch
        .write(WriteOp::Put { cf, key, value })
        .map_err(|e| match e {
            TxnError::Failed(e) => e,
            TxnError::Retry(why) => format!("a load batch asked to be retried ({why:?})").into(),
        })?;
    Ok(key.len() + value.len())
}

/// What the request threads share.
struct Requests<'a> {
    chooser: IdChooser,
    /// The id of the next node add_node creates.
    next_node: AtomicU64,
    writes: Writes<'a>,
    counts: Counts,
    history_queries: AtomicU64,
}

/// `linkbench`: LinkBench's request mix on the loaded graph, `--reads` requests per thread
/// or for `--duration` seconds.
pub fn run(ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    let (args, db) = (ctx.args, ctx.db);
    let marker = require(db, WORKLOAD, ctx.name, "linkbench_load")?;
    let nodes = marker.number("nodes")?;
    // add_node continues after the largest id, also one an earlier run added.
    let mut largest = nodes;
    db.scan_range(NODE_CF, b"", None, true, &mut |key, _| {
        if let Ok(id) = <[u8; 8]>::try_from(key) {
            largest = largest.max(u64::from_be_bytes(id));
        }
        false
    })?;
    let locks = RowLocks::new();
    let mode = args.txn_mode();
    let shared = Requests {
        chooser: IdChooser::new(Graph::new(nodes)),
        next_node: AtomicU64::new(largest + 1),
        writes: Writes {
            db,
            mode,
            sync: args.options.sync,
            locks: &locks,
        },
        counts: match mode {
            Some(_) => Counts::InTransaction,
            None => Counts::Merged,
        },
        history_queries: AtomicU64::new(0),
    };
    let mut outcome = run_threads(ctx, args.threads, REQUEST_OPS, |_, number, rec| {
        request_thread(args, db, &shared, number, rec)
    })?;
    outcome.message = format!(
        "( requests:{} found:{} )",
        outcome.total.done, outcome.total.found
    );
    outcome.notes.push(match mode {
        Some(m) => format!(
            "writes: one {} transaction per operation, counts read and written in it",
            m.name()
        ),
        None => "writes: one batch per operation, counts kept by uint64add merges".into(),
    });
    let lists = outcome.ops.get(Op::GetLinkList as usize).count;
    outcome.notes.push(format!(
        "graph of {nodes} nodes (next new node {}); {} of {lists} link lists were history queries",
        shared.next_node.load(Ordering::Relaxed),
        shared.history_queries.load(Ordering::Relaxed)
    ));
    verify_if_asked(args, db, &mut outcome)?;
    Ok(outcome)
}

/// One request thread: operations drawn from [`MIX`] until the step's count or time is up.
fn request_thread(
    args: &BenchArgs,
    db: &dyn Engine,
    shared: &Requests<'_>,
    number: u64,
    rec: &mut Recorder<'_>,
) -> EngineResult<()> {
    let (mut rng, mut values) = thread_generators(args, number);
    let chooser = &shared.chooser;
    let graph = chooser.graph();
    let counts = shared.counts;
    // Link lists that filled RANGE_LIMIT: (id1, type, time of the oldest link returned).
    let mut history: Vec<(u64, u64, u64)> = Vec::new();
    let mut done = 0;
    while rec.more(done, args.reads()) {
        done += 1;
        let op = choose_op(uniform(&mut rng));
        // The bytes a read operation read (the writes count theirs and go on to the next).
        let read = match op {
            Op::AddLink | Op::UpdateLink => {
                let p = if op == Op::AddLink {
                    P_ADD_EXISTS
                } else {
                    P_UPDATE_EXISTS
                };
                let id1 = chooser.choose(&mut rng, Access::LinkWrites);
                let link_type = chooser.link_type(&mut rng);
                let id2 = graph.choose_id2(&mut rng, id1, link_type, p);
                let size = data_size(&mut rng, LINK_DATA_MEDIAN, MAX_LINK_DATA);
                let data = values.next(size);
                let time = now_ms();
                let start = Instant::now();
                let mut existed = false;
                shared.writes.run(
                    rec,
                    Some(link_row(id1, link_type)),
                    &mut |t: &mut dyn TxnOps| {
                        existed = upsert_link(t, counts, (id1, link_type, id2), time, data)?;
                        Ok(())
                    },
                )?;
                rec.wrote_bytes(24 + 13 + 32 + 4 + 2 * data.len() + 24);
                rec.record(op as usize, start, existed);
                continue;
            }
            Op::DeleteLink => {
                let id1 = chooser.choose(&mut rng, Access::LinkWrites);
                let link_type = chooser.link_type(&mut rng);
                let id2 = graph.choose_id2(&mut rng, id1, link_type, P_DELETE_EXISTS);
                let start = Instant::now();
                let mut hidden = false;
                shared.writes.run(
                    rec,
                    Some(link_row(id1, link_type)),
                    &mut |t: &mut dyn TxnOps| {
                        hidden = hide_link(t, counts, (id1, link_type, id2))?;
                        Ok(())
                    },
                )?;
                if hidden {
                    rec.wrote_bytes(24 + 13 + 32 + 24);
                }
                rec.record(op as usize, start, hidden);
                continue;
            }
            Op::CountLink => {
                let id1 = chooser.choose(&mut rng, Access::LinkReads);
                let link_type = chooser.link_type(&mut rng);
                let start = Instant::now();
                let count = db.get_value(COUNT_CF, &count_key(id1, link_type))?;
                rec.record(op as usize, start, count.is_some());
                count.is_some().then_some(24)
            }
            Op::MultigetLink => {
                let id1 = chooser.choose(&mut rng, Access::LinkReads);
                let link_type = chooser.link_type(&mut rng);
                let n = multiget_size(&mut rng);
                let id2s = graph.choose_id2s(&mut rng, id1, link_type, n, P_GET_EXISTS);
                let start = Instant::now();
                let mut bytes = 0;
                for id2 in id2s {
                    if let Some(v) = db.get_value(LINK_CF, &link_key(id1, link_type, id2))? {
                        bytes += 24 + v.len();
                    }
                }
                rec.record(op as usize, start, bytes > 0);
                Some(bytes)
            }
            Op::GetLinkList => {
                let from_history = !history.is_empty() && uniform(&mut rng) < HISTORY_QUERY_P;
                let (id1, link_type, before, slot) = if from_history {
                    let slot = rng.below(history.len() as u64) as usize;
                    let (id1, link_type, oldest) = history[slot];
                    (id1, link_type, Some(oldest), Some(slot))
                } else {
                    let id1 = chooser.choose(&mut rng, Access::LinkReads);
                    (id1, chooser.link_type(&mut rng), None, None)
                };
                let start = Instant::now();
                let list = link_list(db, id1, link_type, before)?;
                rec.record(op as usize, start, list.links > 0);
                if from_history {
                    shared.history_queries.fetch_add(1, Ordering::Relaxed);
                }
                remember_tail(&mut history, &mut rng, (id1, link_type), &list, slot);
                Some(list.bytes)
            }
            Op::AddNode => {
                let id = shared.next_node.fetch_add(1, Ordering::Relaxed);
                let size = data_size(&mut rng, NODE_DATA_MEDIAN, MAX_NODE_DATA);
                let node = Node {
                    kind: NODE_TYPE,
                    version: 1,
                    time: (now_ms() / 1000) as u32,
                    data: values.next(size).to_vec(),
                };
                let value = node.encode();
                let start = Instant::now();
                shared
                    .writes
                    .run(rec, Some(node_row(id)), &mut |t: &mut dyn TxnOps| {
                        t.write(WriteOp::Put {
                            cf: NODE_CF,
                            key: &node_key(id),
                            value: &value,
                        })
                    })?;
                rec.wrote_bytes(8 + value.len());
                rec.record(op as usize, start, true);
                continue;
            }
            Op::UpdateNode => {
                let id = chooser.choose(&mut rng, Access::NodeUpdates);
                let size = data_size(&mut rng, NODE_DATA_MEDIAN, MAX_NODE_DATA);
                let data = values.next(size);
                let time = (now_ms() / 1000) as u32;
                let start = Instant::now();
                let mut updated = false;
                shared
                    .writes
                    .run(rec, Some(node_row(id)), &mut |t: &mut dyn TxnOps| {
                        updated = update_node(t, id, time, data)?;
                        Ok(())
                    })?;
                if updated {
                    rec.wrote_bytes(8 + 16 + data.len());
                }
                rec.record(op as usize, start, updated);
                continue;
            }
            Op::DeleteNode => {
                let id = chooser.choose(&mut rng, Access::NodeDeletes);
                let start = Instant::now();
                let mut deleted = false;
                shared
                    .writes
                    .run(rec, Some(node_row(id)), &mut |t: &mut dyn TxnOps| {
                        deleted = t.get(NODE_CF, &node_key(id), true)?.is_some();
                        if deleted {
                            t.write(WriteOp::Delete {
                                cf: NODE_CF,
                                key: &node_key(id),
                            })?;
                        }
                        Ok(())
                    })?;
                if deleted {
                    rec.wrote_bytes(8);
                }
                rec.record(op as usize, start, deleted);
                continue;
            }
            Op::GetNode => {
                let id = chooser.choose(&mut rng, Access::NodeReads);
                let start = Instant::now();
                let node = db.get_value(NODE_CF, &node_key(id))?;
                rec.record(op as usize, start, node.is_some());
                node.map(|v| 8 + v.len())
            }
        };
        if let Some(bytes) = read {
            rec.read_bytes(bytes);
        }
    }
    Ok(())
}

/// The lock row of a link list, and of a node (apart from each other).
fn link_row(id1: u64, link_type: u64) -> u64 {
    id1.wrapping_mul(LINK_TYPES) ^ link_type
}

fn node_row(id: u64) -> u64 {
    id ^ (1 << 63)
}

/// A stored value that is not the workload's.
fn not_ours(what: &str, key: &[u8]) -> TxnError {
    TxnError::Failed(
        format!(
            "linkbench: the {what} at key {key:02x?} does not parse (was the database written \
             by something else?)"
        )
        .into(),
    )
}

/// add_link and update_link (LinkBench's addLink, an upsert): the link becomes visible
/// with `data` at `time`; its index entry follows its time; a link that was not visible
/// adds one to its count. Returns whether the link existed (visible or hidden).
fn upsert_link(
    t: &mut dyn TxnOps,
    counts: Counts,
    (id1, link_type, id2): (u64, u64, u64),
    time: u64,
    data: &[u8],
) -> Result<bool, TxnError> {
    let key = link_key(id1, link_type, id2);
    let old = match t.get(LINK_CF, &key, true)? {
        Some(v) => Some(Link::decode(&v).ok_or_else(|| not_ours("link", &key))?),
        None => None,
    };
    let link = Link {
        visibility: VISIBILITY_VISIBLE,
        version: old.as_ref().map_or(0, |o| o.version.wrapping_add(1)),
        time,
        data: data.to_vec(),
    };
    let was_visible = old
        .as_ref()
        .is_some_and(|o| o.visibility == VISIBILITY_VISIBLE);
    if let Some(o) = old.as_ref().filter(|_| was_visible) {
        let stale = link_time_key(id1, link_type, o.time, id2);
        t.write(WriteOp::Delete {
            cf: LINK_TIME_CF,
            key: &stale,
        })?;
    }
    t.write(WriteOp::Put {
        cf: LINK_CF,
        key: &key,
        value: &link.encode(),
    })?;
    t.write(WriteOp::Put {
        cf: LINK_TIME_CF,
        key: &link_time_key(id1, link_type, time, id2),
        value: &link.index_value(),
    })?;
    if !was_visible {
        add_to_count(t, counts, id1, link_type, 1)?;
    }
    Ok(old.is_some())
}

/// delete_link (LinkBench's deleteLink without expunge): a visible link is hidden, leaves
/// the index and its count. Returns whether it was visible.
fn hide_link(
    t: &mut dyn TxnOps,
    counts: Counts,
    (id1, link_type, id2): (u64, u64, u64),
) -> Result<bool, TxnError> {
    let key = link_key(id1, link_type, id2);
    let Some(v) = t.get(LINK_CF, &key, true)? else {
        return Ok(false);
    };
    let mut link = Link::decode(&v).ok_or_else(|| not_ours("link", &key))?;
    if link.visibility != VISIBILITY_VISIBLE {
        return Ok(false);
    }
    link.visibility = VISIBILITY_HIDDEN;
    t.write(WriteOp::Put {
        cf: LINK_CF,
        key: &key,
        value: &link.encode(),
    })?;
    t.write(WriteOp::Delete {
        cf: LINK_TIME_CF,
        key: &link_time_key(id1, link_type, link.time, id2),
    })?;
    add_to_count(t, counts, id1, link_type, -1)?;
    Ok(true)
}

/// Adds `delta` to the count of (id1, link_type).
fn add_to_count(
    t: &mut dyn TxnOps,
    counts: Counts,
    id1: u64,
    link_type: u64,
    delta: i64,
) -> Result<(), TxnError> {
    let key = count_key(id1, link_type);
    // uint64add adds modulo 2^64: adding 2^64 - 1 subtracts one.
    let operand = count_value(delta as u64);
    match counts {
        Counts::Merged => t.write(WriteOp::Merge {
            cf: COUNT_CF,
            key: &key,
            operand: &operand,
        }),
        Counts::InTransaction => {
            let now = match t.get(COUNT_CF, &key, true)? {
                None => 0,
                Some(v) => parse_count(&v).ok_or_else(|| not_ours("count", &key))?,
            };
            t.write(WriteOp::Put {
                cf: COUNT_CF,
                key: &key,
                value: &count_value(now.wrapping_add(delta as u64)),
            })
        }
    }
}

/// update_node (LinkBench's updateNode): an existing node gets new data, time and the next
/// version. Returns whether the node was there.
fn update_node(t: &mut dyn TxnOps, id: u64, time: u32, data: &[u8]) -> Result<bool, TxnError> {
    let key = node_key(id);
    let Some(v) = t.get(NODE_CF, &key, true)? else {
        return Ok(false);
    };
    let old = Node::decode(&v).ok_or_else(|| not_ours("node", &key))?;
    let node = Node {
        kind: old.kind,
        version: old.version.wrapping_add(1),
        time,
        data: data.to_vec(),
    };
    t.write(WriteOp::Put {
        cf: NODE_CF,
        key: &key,
        value: &node.encode(),
    })?;
    Ok(true)
}

/// What a link list returned.
struct LinkList {
    links: usize,
    bytes: usize,
    /// The time of the oldest link returned.
    oldest: u64,
}

/// get_link_list (LinkBench's getLinkList): the visible links of (id1, link_type), newest
/// first, at most RANGE_LIMIT of them, older than `before` if given (a history query).
fn link_list(
    db: &dyn Engine,
    id1: u64,
    link_type: u64,
    before: Option<u64>,
) -> EngineResult<LinkList> {
    let lower = count_key(id1, link_type);
    let upper = match before {
        Some(time) => link_time_key(id1, link_type, time, 0).to_vec(),
        None => count_key(id1, link_type + 1).to_vec(),
    };
    let mut list = LinkList {
        links: 0,
        bytes: 0,
        oldest: 0,
    };
    db.scan_range(
        LINK_TIME_CF,
        &lower,
        Some(&upper),
        true,
        &mut |key, value| {
            list.links += 1;
            list.bytes += key.len() + value.len();
            if let Some((_, _, time, _)) = parse_link_time_key(key) {
                list.oldest = time;
            }
            list.links < RANGE_LIMIT
        },
    )?;
    Ok(list)
}

/// Keeps LinkBench's cache of lists that filled RANGE_LIMIT (later history queries read on
/// from their oldest link): a full list is remembered (replacing a random one when the
/// cache is full), a history query that came back short is forgotten.
fn remember_tail(
    history: &mut Vec<(u64, u64, u64)>,
    rng: &mut Rng,
    (id1, link_type): (u64, u64),
    list: &LinkList,
    slot: Option<usize>,
) {
    let full = list.links >= RANGE_LIMIT;
    match slot {
        Some(i) if full => history[i].2 = list.oldest,
        Some(i) => {
            history.swap_remove(i);
        }
        None if full && !history.iter().any(|h| (h.0, h.1) == (id1, link_type)) => {
            let entry = (id1, link_type, list.oldest);
            if history.len() < HISTORY_LIMIT {
                history.push(entry);
            } else {
                let i = rng.below(history.len() as u64) as usize;
                history[i] = entry;
            }
        }
        None => {}
    }
}

/// With --verify_workload, checks the invariants of the module's doc and adds a note.
fn verify_if_asked(
    args: &BenchArgs,
    db: &dyn Engine,
    outcome: &mut Outcome,
) -> Result<(), BoxError> {
    if !args.verify_workload {
        return Ok(());
    }
    let mut v = Verifier::default();
    db.scan_range(LINK_CF, b"", None, false, &mut |k, val| {
        v.link(k, val);
        true
    })?;
    db.scan_range(COUNT_CF, b"", None, false, &mut |k, val| {
        v.count(k, val);
        true
    })?;
    db.scan_range(LINK_TIME_CF, b"", None, false, &mut |k, val| {
        v.index(k, val);
        true
    })?;
    let r = v
        .finish()
        .map_err(|e| format!("linkbench: verification failed: {e}"))?;
    outcome.notes.push(format!(
        "verified: {} links ({} visible), {} counts equal to their visible links, one index \
         entry per visible link",
        r.links, r.visible_links, r.counts
    ));
    Ok(())
}

#[cfg(test)]
mod tests;
