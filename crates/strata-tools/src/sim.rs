//! `strata sim`: the compaction simulator (`strata::internals::sim`) from the command line,
//! with db_bench's flag names and defaults where db_bench has the flag.

use clap::Args;
use strata::internals::sim::{self, Distribution, Policy, SimOptions, Step};
use strata::internals::PickerOptions;
use strata::{CompactionStyle, UniversalOptions};

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

    /// Memtable bytes per put (the engine's skiplist takes 149 for a 116-byte entry).
    #[arg(long, default_value_t = 149)]
    pub memtable_entry_bytes: u64,

    /// Memtable bytes at which it is flushed.
    #[arg(long, default_value_t = 64 << 20)]
    pub write_buffer_size: u64,

    /// Compaction output files are cut at this size.
    #[arg(long, default_value_t = 64 << 20)]
    pub target_file_size_base: u64,

    /// Smallest target size of the base level.
    #[arg(long, default_value_t = 256 << 20)]
    pub max_bytes_for_level_base: u64,

    /// Growth factor between levels.
    #[arg(long, default_value_t = 10.0)]
    pub max_bytes_for_level_multiplier: f64,

    /// Levels of the tree (2 to 7).
    #[arg(long, default_value_t = 7)]
    pub num_levels: usize,

    /// L0 files (leveled) or sorted runs (universal) that trigger a compaction.
    #[arg(long, default_value_t = 4)]
    pub level0_file_num_compaction_trigger: usize,

    /// Overlap with the level below at which an output is cut (0 = 25 times
    /// --target_file_size_base).
    #[arg(long, default_value_t = 0)]
    pub max_compaction_bytes: u64,

    /// 0 = leveled, 1 = universal.
    #[arg(long, default_value_t = 0)]
    pub compaction_style: u32,

    /// Universal: percent of slack when comparing run sizes.
    #[arg(long, default_value_t = 1)]
    pub universal_size_ratio: u32,

    /// Universal: fewest runs merged at once.
    #[arg(long, default_value_t = 2)]
    pub universal_min_merge_width: usize,

    /// Universal: most runs merged at once (0 = no limit).
    #[arg(long, default_value_t = 0)]
    pub universal_max_merge_width: usize,

    /// Universal: newer runs' bytes, in percent of the oldest run, that force a full merge.
    #[arg(long, default_value_t = 200)]
    pub universal_max_size_amplification_percent: u32,

    /// Compaction policy: strata (the engine's) or rocksdb, with +feature or -feature changes
    /// (floor, scores, expand, cut, roundrobin), e.g. strata+floor or rocksdb-cut.
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

    /// With --compaction_speed: L0 files at which writes wait for compaction (0 = never).
    #[arg(long, default_value_t = 36)]
    pub level0_stop_writes_trigger: usize,

    /// Seed of the key generator (0 = db_bench's 1000).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Runs the simulation and prints its per-level table.
pub fn run(args: &SimArgs) -> Result<(), Box<dyn std::error::Error>> {
    let steps = args
        .benchmarks
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Step::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let style = match args.compaction_style {
        0 => CompactionStyle::Leveled,
        1 => CompactionStyle::Universal,
        n => return Err(format!("compaction_style {n} is not simulated (0 or 1)").into()),
    };
    if !(2..=7).contains(&args.num_levels) {
        return Err("num_levels must be between 2 and 7".into());
    }
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
        write_buffer_size: args.write_buffer_size,
        target_file_size_base: args.target_file_size_base.max(1),
        max_compaction_bytes: args.max_compaction_bytes,
        picker: PickerOptions {
            num_levels: args.num_levels,
            level0_file_num_compaction_trigger: args.level0_file_num_compaction_trigger.max(1),
            max_bytes_for_level_base: args.max_bytes_for_level_base.max(1),
            max_bytes_for_level_multiplier: args.max_bytes_for_level_multiplier.max(1.0),
            style,
            universal: UniversalOptions {
                size_ratio: args.universal_size_ratio,
                min_merge_width: args.universal_min_merge_width,
                max_merge_width: match args.universal_max_merge_width {
                    0 => usize::MAX,
                    n => n,
                },
                max_size_amplification_percent: args.universal_max_size_amplification_percent,
            },
        },
        policy: Policy::parse(&args.policy)?,
        distribution,
        compaction_speed: args.compaction_speed.max(0.0),
        level0_stop_writes_trigger: args.level0_stop_writes_trigger,
        seed: if args.seed == 0 { 1000 } else { args.seed },
    };
    let started = std::time::Instant::now();
    let report = sim::run(&o, &steps);
    print!("{report}");
    println!("simulated in {:.2} s", started.elapsed().as_secs_f64());
    Ok(())
}
