//! The workloads of `strata bench`: steps of `--benchmarks` that model an application rather
//! than one db_bench loop (YCSB's core workloads, the expanding-range read, Linkbench, the
//! insert benchmark), one module each, on the engine's workload operations ([`Engine::get_value`], [`Engine::write_ops`],
//! [`Engine::scan_range`], [`Engine::run_transaction`]).
//!
//! What they share lives here:
//!
//! - The step table ([`STEPS`]) and what each step needs before the database is opened: its
//!   column families ([`WorkloadStep::families`]) and a check of the flags against the
//!   engine ([`WorkloadStep::check`]), whose error names the step, the flag and the engine.
//! - The threads of a step (threads.rs: [`run_threads`], and [`run_step_threads`], which the
//!   db_bench steps of `steps.rs` run on too) and the [`Recorder`] each thread times its
//!   operations with (recorder.rs). The step's [`Outcome`] goes through the same reporting
//!   as the db_bench steps (result line, write-amp, IO and CPU per operation, the tree, the
//!   database size), with a table of the operation types before it.
//! - The workload marker (marker.rs), which refuses a step run on a database built by
//!   another workload.

mod batch;
mod expanding_range;
mod insert_bench;
mod linkbench;
mod linkbench_data;
mod linkbench_gen;
mod marker;
mod recorder;
mod threads;
mod ycsb;
mod zipfian;

use std::time::Instant;

use super::engine::Engine;
use super::report::{Intervals, ThreadStats};
use super::{BenchArgs, BoxError};

pub use marker::*;
pub use recorder::*;
pub use threads::*;
pub use ycsb::YcsbMix;

/// A workload step of `--benchmarks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadStep {
    /// YCSB's load phase: `--ycsb_records` records inserted.
    YcsbLoad,
    /// One of YCSB's core workloads A to F.
    Ycsb(YcsbMix),
    /// readrandom over a key range that grows until it covers `--num` keys.
    ExpandingRange,
    /// Linkbench's load phase: `--linkbench_nodes` nodes and their links.
    LinkbenchLoad,
    /// Linkbench's request phase.
    Linkbench,
    /// A step of the insert benchmark.
    InsertBench(insert_bench::Step),
}

/// The workload steps by name, in the order `--help` lists them.
pub const STEPS: &[(&str, WorkloadStep)] = &[
    ("ycsb_load", WorkloadStep::YcsbLoad),
    ("ycsb_a", WorkloadStep::Ycsb(YcsbMix::A)),
    ("ycsb_b", WorkloadStep::Ycsb(YcsbMix::B)),
    ("ycsb_c", WorkloadStep::Ycsb(YcsbMix::C)),
    ("ycsb_d", WorkloadStep::Ycsb(YcsbMix::D)),
    ("ycsb_e", WorkloadStep::Ycsb(YcsbMix::E)),
    ("ycsb_f", WorkloadStep::Ycsb(YcsbMix::F)),
    ("expandingrange", WorkloadStep::ExpandingRange),
    ("linkbench_load", WorkloadStep::LinkbenchLoad),
    ("linkbench", WorkloadStep::Linkbench),
    (
        "insertbench_l_i0",
        WorkloadStep::InsertBench(insert_bench::Step::LoadWithoutIndexes),
    ),
    (
        "insertbench_create_index",
        WorkloadStep::InsertBench(insert_bench::Step::CreateIndexes),
    ),
    (
        "insertbench_l_i1",
        WorkloadStep::InsertBench(insert_bench::Step::Insert),
    ),
    (
        "insertbench_l_i2",
        WorkloadStep::InsertBench(insert_bench::Step::InsertDelete),
    ),
    (
        "insertbench_qr100",
        WorkloadStep::InsertBench(insert_bench::Step::Query {
            rows_per_second: 100,
        }),
    ),
    (
        "insertbench_qr500",
        WorkloadStep::InsertBench(insert_bench::Step::Query {
            rows_per_second: 500,
        }),
    ),
    (
        "insertbench_qr1000",
        WorkloadStep::InsertBench(insert_bench::Step::Query {
            rows_per_second: 1000,
        }),
    ),
];

impl WorkloadStep {
    /// The column families the step's workload keeps its data in (the first is "default"),
    /// or `None` for a workload on db_bench's key layout (the families of
    /// `--num_column_families`).
    pub fn families(self) -> Option<&'static [&'static str]> {
        match self {
            WorkloadStep::YcsbLoad | WorkloadStep::Ycsb(_) | WorkloadStep::ExpandingRange => None,
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => {
                Some(&linkbench_data::FAMILIES)
            }
            WorkloadStep::InsertBench(_) => Some(&insert_bench::FAMILIES),
        }
    }

    /// The flags (and the engine) the step cannot run with, as an error naming the step,
    /// the flag and the engine.
    pub fn check(self, name: &str, args: &BenchArgs) -> Result<(), String> {
        match self {
            WorkloadStep::YcsbLoad | WorkloadStep::Ycsb(_) => ycsb::check_flags(name, args),
            WorkloadStep::ExpandingRange => expanding_range::check_flags(name, args),
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => {
                linkbench::check_flags(name, args)
            }
            WorkloadStep::InsertBench(_) => insert_bench::check_flags(name, args),
        }
    }

    /// Runs the step.
    fn run(self, ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
        match self {
            WorkloadStep::YcsbLoad => ycsb::load(ctx),
            WorkloadStep::Ycsb(mix) => ycsb::run(ctx, mix),
            WorkloadStep::ExpandingRange => expanding_range::run(ctx),
            WorkloadStep::LinkbenchLoad => linkbench::load(ctx),
            WorkloadStep::Linkbench => linkbench::run(ctx),
            WorkloadStep::InsertBench(step) => insert_bench::run(ctx, step),
        }
    }

    /// The workload whose data the step reads and writes, when it has column families of
    /// its own.
    pub fn workload(self) -> Option<&'static str> {
        match self {
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => Some(linkbench::WORKLOAD),
            WorkloadStep::InsertBench(_) => Some(insert_bench::WORKLOAD),
            _ => None,
        }
    }

    /// The merge operator the step's writes need, set for the run when `--merge_operator`
    /// is not given.
    pub fn merge_operator(self, args: &BenchArgs) -> Option<&'static str> {
        match self {
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => {
                linkbench::merge_operator(args)
            }
            _ => None,
        }
    }
}

/// The families to open the database with for the workload steps of a run: those of its
/// workloads (which must agree), or `None` when none has families of its own.
pub fn families_of_run<'a>(
    steps: impl IntoIterator<Item = (&'a str, WorkloadStep)>,
    args: &BenchArgs,
) -> Result<Option<&'static [&'static str]>, String> {
    let mut chosen: Option<(&str, &'static [&'static str])> = None;
    for (name, step) in steps {
        let Some(families) = step.families() else {
            continue;
        };
        if args.num_column_families > 1 {
            return Err(format!(
                "{name}: --num_column_families={} does not fit: the workload has column \
                 families of its own ({})",
                args.num_column_families,
                families.join(", ")
            ));
        }
        match chosen {
            Some((other, f)) if f != families => {
                return Err(format!(
                    "{name} and {other} cannot run on one database: their column families \
                     differ ({} against {})",
                    families.join(", "),
                    f.join(", ")
                ))
            }
            Some(_) => {}
            None => chosen = Some((name, families)),
        }
    }
    Ok(chosen.map(|(_, f)| f))
}

/// The header lines of a run's workloads (after db_bench's header): what their flags make.
pub fn header_lines(steps: &[WorkloadStep], args: &BenchArgs) -> Vec<String> {
    let mut lines = Vec::new();
    if steps
        .iter()
        .any(|s| matches!(s, WorkloadStep::YcsbLoad | WorkloadStep::Ycsb(_)))
    {
        lines.push(ycsb::header(args));
    }
    if steps.contains(&WorkloadStep::ExpandingRange) {
        lines.push(expanding_range::header(args));
    }
    if steps
        .iter()
        .any(|s| matches!(s, WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench))
    {
        lines.push(linkbench::header(args));
    }
    if steps
        .iter()
        .any(|s| matches!(s, WorkloadStep::InsertBench(_)))
    {
        lines.push(insert_bench::header(args));
    }
    lines
}

/// What a workload step is given.
pub struct Ctx<'a> {
    pub args: &'a BenchArgs,
    pub db: &'a dyn Engine,
    /// The step's name in `--benchmarks`.
    pub name: &'a str,
    /// When the run began (the interval samples count from there).
    pub run_started: Instant,
}

/// What a workload step did, for the report.
pub struct Outcome {
    /// Operations per type, every thread's.
    pub ops: OpStats,
    /// The counts the db_bench report uses: operations done, bytes read and written, the
    /// threads' busy seconds, transactions and their retries.
    pub total: ThreadStats,
    /// Wall-clock seconds of the step.
    pub elapsed: f64,
    /// The end of the result line, e.g. `( records:1000 )`.
    pub message: String,
    /// Lines printed after the result line and the table of operation types.
    pub notes: Vec<String>,
    /// The interval samples (with `--report_interval_seconds` or `--plot`).
    pub intervals: Option<Intervals>,
    /// What the writer beside the threads did ([`Threads::writer`]), if there was one.
    pub writer: Option<WriterStats>,
}

/// Runs a workload step and returns what it did.
pub fn run_step(step: WorkloadStep, ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    step.run(ctx)
}
