//! Compaction options: the style (leveled, universal with `universal`, FIFO with `fifo`),
//! the L0 triggers, level sizes and output file sizes, background threads, the pending-bytes
//! stall limits, compactions by table age and the last level reserved for ingestion behind;
//! and the `PickerOptions` the compaction picker reads of them.

use super::Options;
use crate::compaction::{CompactionStyle, PickerOptions};
use crate::error::{Error, Result};

impl Options {
    /// Checks the shape of the tree, the triggers, the compaction threads, the universal and
    /// FIFO sub-options and the compactions by table age.
    pub(super) fn validate_compaction(&self) -> Result<()> {
        if !(2..=crate::version::NUM_LEVELS).contains(&self.num_levels) {
            return Err(Error::InvalidArgument(format!(
                "num_levels is {}, it must be between 2 and {}",
                self.num_levels,
                crate::version::NUM_LEVELS
            )));
        }
        if self.level0_file_num_compaction_trigger < 1
            || self.level0_slowdown_writes_trigger < self.level0_file_num_compaction_trigger
            || self.level0_stop_writes_trigger < self.level0_slowdown_writes_trigger
        {
            return Err(Error::InvalidArgument(format!(
                "level0 triggers must satisfy 1 <= level0_file_num_compaction_trigger ({}) <= \
                 level0_slowdown_writes_trigger ({}) <= level0_stop_writes_trigger ({})",
                self.level0_file_num_compaction_trigger,
                self.level0_slowdown_writes_trigger,
                self.level0_stop_writes_trigger
            )));
        }
        if self.max_bytes_for_level_multiplier.is_nan() || self.max_bytes_for_level_multiplier < 1.0
        {
            return Err(Error::InvalidArgument(
                "max_bytes_for_level_multiplier must be at least 1".into(),
            ));
        }
        if self.max_bytes_for_level_base < 1 || self.target_file_size_base < 1 {
            return Err(Error::InvalidArgument(
                "max_bytes_for_level_base and target_file_size_base must be at least 1".into(),
            ));
        }
        if self.target_file_size_multiplier < 1 {
            return Err(Error::InvalidArgument(
                "target_file_size_multiplier must be at least 1".into(),
            ));
        }
        if self.max_background_jobs < 1 || self.max_subcompactions < 1 {
            return Err(Error::InvalidArgument(format!(
                "max_background_jobs ({}) and max_subcompactions ({}) must be at least 1",
                self.max_background_jobs, self.max_subcompactions
            )));
        }
        let u = &self.universal;
        if u.min_merge_width < 2 || u.max_merge_width < u.min_merge_width {
            return Err(Error::InvalidArgument(format!(
                "universal merge widths must satisfy 2 <= min_merge_width ({}) <= \
                 max_merge_width ({})",
                u.min_merge_width, u.max_merge_width
            )));
        }
        if self.hard_pending_compaction_bytes_limit != 0
            && self.hard_pending_compaction_bytes_limit < self.soft_pending_compaction_bytes_limit
        {
            return Err(Error::InvalidArgument(format!(
                "hard_pending_compaction_bytes_limit ({}) is below \
                 soft_pending_compaction_bytes_limit ({})",
                self.hard_pending_compaction_bytes_limit, self.soft_pending_compaction_bytes_limit
            )));
        }
        if self.allow_ingest_behind {
            if self.compaction_style == CompactionStyle::Fifo {
                return Err(Error::InvalidArgument(
                    "allow_ingest_behind is not supported with FIFO compaction (it has no \
                     levels to keep the ingested files under)"
                        .into(),
                ));
            }
            if self.num_levels < 3 {
                return Err(Error::InvalidArgument(format!(
                    "allow_ingest_behind reserves the last level, so num_levels must be at \
                     least 3 (it is {})",
                    self.num_levels
                )));
            }
        }
        let by_age = self.periodic_compaction_seconds > 0 || self.table_ttl_seconds > 0;
        match self.compaction_style {
            CompactionStyle::Fifo if self.fifo.max_table_files_size == 0 => {
                Err(Error::InvalidArgument(
                    "fifo.max_table_files_size is 0: FIFO compaction would delete every table \
                     as it is written"
                        .into(),
                ))
            }
            CompactionStyle::Fifo if self.periodic_compaction_seconds > 0 => {
                Err(Error::InvalidArgument(format!(
                    "periodic_compaction_seconds ({}) is not supported with FIFO compaction, \
                     which never rewrites tables: use table_ttl_seconds to delete old ones",
                    self.periodic_compaction_seconds
                )))
            }
            CompactionStyle::Universal if by_age => Err(Error::InvalidArgument(format!(
                "periodic_compaction_seconds ({}) and table_ttl_seconds ({}) are not supported \
                 with universal compaction (leveled and FIFO only)",
                self.periodic_compaction_seconds, self.table_ttl_seconds
            ))),
            _ => Ok(()),
        }
    }

    /// The levels compaction may write: all of them, or all but the last when
    /// [`Options::allow_ingest_behind`] reserves it.
    pub(crate) fn compaction_levels(&self) -> usize {
        match self.allow_ingest_behind {
            true => self.num_levels - 1,
            false => self.num_levels,
        }
    }

    /// The options the compaction picker reads.
    pub(crate) fn picker_options(&self) -> PickerOptions {
        PickerOptions {
            num_levels: self.compaction_levels(),
            level0_file_num_compaction_trigger: self.level0_file_num_compaction_trigger,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            max_bytes_for_level_multiplier: self.max_bytes_for_level_multiplier,
            style: self.compaction_style,
            universal: self.universal,
            read_triggered: self.read_triggered_compaction,
            blob_gc_force: (self.enable_blob_garbage_collection
                && self.blob_garbage_collection_force_threshold < 1.0)
                .then_some((
                    self.blob_garbage_collection_age_cutoff,
                    self.blob_garbage_collection_force_threshold,
                )),
            fifo: self.fifo,
            periodic_compaction_seconds: self.periodic_compaction_seconds,
            table_ttl_seconds: self.table_ttl_seconds,
        }
    }

    /// The grandparent overlap at which a compaction output is cut.
    pub(crate) fn max_compaction_bytes(&self) -> u64 {
        match self.max_compaction_bytes {
            0 => self.target_file_size_base.saturating_mul(25),
            n => n,
        }
    }

    /// The size at which compaction outputs into `level` are cut.
    pub(crate) fn target_file_size(&self, level: usize) -> u64 {
        let steps = level.saturating_sub(1).min(u32::MAX as usize) as u32;
        u64::from(self.target_file_size_multiplier)
            .checked_pow(steps)
            .map_or(u64::MAX, |m| self.target_file_size_base.saturating_mul(m))
    }

    /// Threads that run compactions (all background jobs but the flush thread).
    pub(crate) fn compaction_threads(&self) -> usize {
        self.max_background_jobs.saturating_sub(1).max(1)
    }
}
