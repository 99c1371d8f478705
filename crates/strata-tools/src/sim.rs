//! `strata sim`: the compaction simulator (`strata::internals::sim`) from the command line,
//! with db_bench's flag names and defaults where db_bench has the flag.

use clap::Args;
use strata::internals::picker_options;
use strata::internals::sim::{self, Distribution, Policy, SimOptions, Step};

use crate::engine_flags::EngineFlags;

/// `strata sim` flags.
#[derive(Args, Debug, Clone)]
#[command(rename_all = "snake_case", args_override_self = true)]
pub struct SimArgs {
    /// Comma-separated steps: fillrandom, overwrite (random keys), fillseq, flush,
    /// waitforcompaction.
    #[arg(long, default_value = "fillrandom,overwrite,flush,waitforcompaction")]
    pub benchmarks: String,

    /// Keys in the key space; each fill step writes this many.
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,

    /// Key bytes of an entry.
    #[arg(long, default_value_t = 16)]
    pub key_size: u64,

    /// Value bytes of an entry.
    #[arg(long, default_value_t = 100)]
    pub value_size: u64,

    /// Memtable bytes per put (the engine's skiplist takes 141 for a 116-byte entry).
    #[arg(long, default_value_t = 141)]
    pub memtable_entry_bytes: u64,

    /// The engine's options (those the pickers and the memtable size read; the others have
    /// no effect here).
    #[command(flatten)]
    pub engine: EngineFlags,

    /// Compaction policy: strata (the engine's) or rocksdb, with +feature or -feature changes
    /// (floor, scores, expand, cut, roundrobin, tier, lazy), e.g. strata+floor or rocksdb-cut.
    #[arg(long, default_value = "strata")]
    pub policy: String,

    /// Key distribution of random steps: uniform or zipfian.
    #[arg(long, default_value = "uniform")]
    pub distribution: String,

    /// Exponent of --distribution=zipfian.
    #[arg(long, default_value_t = 0.99)]
    pub zipf_theta: f64,

    /// Bytes a compaction reads and writes in the time the workload puts one byte; one
    /// compaction runs at a time, so L0 grows while it runs (0 = compactions take no time).
    #[arg(long, default_value_t = 0.0)]
    pub compaction_speed: f64,

    /// Seed of the key generator (0 = db_bench's 1000).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Runs the simulation and prints its per-level table.
pub fn run(args: &SimArgs) -> Result<(), crate::cli::BoxError> {
    let steps = args
        .benchmarks
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Step::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let options = args.engine.options()?;
    if args.num == 0 || args.num > u64::from(u32::MAX) {
        return Err("num must be between 1 and 2^32-1".into());
    }
    let distribution = match args.distribution.as_str() {
        "uniform" => Distribution::Uniform,
        "zipfian" if args.zipf_theta > 0.0 && args.zipf_theta < 1.0 => {
            Distribution::Zipfian(args.zipf_theta)
        }
        "zipfian" => return Err("zipf_theta must be between 0 and 1".into()),
        other => return Err(format!("unknown distribution {other:?}").into()),
    };
    let o = SimOptions {
        num: args.num,
        entry_bytes: args.key_size + args.value_size,
        memtable_entry_bytes: args.memtable_entry_bytes,
        write_buffer_size: options.write_buffer_size as u64,
        target_file_size_base: options.target_file_size_base.max(1),
        max_compaction_bytes: options.max_compaction_bytes,
        picker: picker_options(&options),
        policy: Policy::parse(&args.policy)?,
        distribution,
        compaction_speed: args.compaction_speed.max(0.0),
        level0_stop_writes_trigger: options.level0_stop_writes_trigger,
        seed: if args.seed == 0 { 1000 } else { args.seed },
    };
    let started = std::time::Instant::now();
    let report = sim::run(&o, &steps);
    print!("{report}");
    println!("simulated in {:.2} s", started.elapsed().as_secs_f64());
    Ok(())
}
