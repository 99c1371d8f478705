//! `strata backup create|list|verify|restore|delete|purge`: incremental backups of a database
//! (RocksDB's `BackupEngine` behind `ldb backup` / `ldb restore`), through
//! `strata::BackupEngine`. Every error ends the command with a non-zero exit status and a
//! message naming the directory or file that is wrong.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use strata::{BackupEngine, BackupInfo, Db, Options};

use super::recorded::families_as_recorded;
use crate::cli::BoxError;

/// `strata backup ...`.
#[derive(Args)]
pub struct BackupArgs {
    #[command(subcommand)]
    command: BackupCommand,
}

#[derive(Subcommand)]
enum BackupCommand {
    /// Back up the database in DB_DIR into BACKUP_DIR (created if missing); only tables not
    /// already there are copied. Needs the database's lock: use it on a database no process
    /// has open (a program backs up its own open database with `BackupEngine`).
    Create {
        db_dir: PathBuf,
        backup_dir: PathBuf,
    },
    /// Print one line per backup: id, time (UTC), files, bytes, bytes of tables another
    /// backup holds too, bytes copied when it was made.
    List { backup_dir: PathBuf },
    /// Check that every file of backup ID is there with its recorded size and crc32c.
    Verify { backup_dir: PathBuf, id: u64 },
    /// Restore backup ID into TARGET_DIR (which must not exist or be empty), checking each
    /// file's crc32c as it is copied.
    Restore {
        backup_dir: PathBuf,
        id: u64,
        target_dir: PathBuf,
    },
    /// Delete backup ID and the tables no other backup uses.
    Delete { backup_dir: PathBuf, id: u64 },
    /// Delete the oldest backups until KEEP remain.
    Purge { backup_dir: PathBuf, keep: usize },
}

/// Runs one `strata backup` command.
pub fn run(args: &BackupArgs) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    match &args.command {
        BackupCommand::Create { db_dir, backup_dir } => {
            let db = open_db(db_dir)?;
            let mut engine = open_engine(backup_dir)?;
            let info = engine.create_backup(&db).map_err(|e| {
                format!(
                    "backup of {} into {}: {e}",
                    db_dir.display(),
                    backup_dir.display()
                )
            })?;
            db.close()?;
            writeln!(out, "{}", line(&info))?;
        }
        BackupCommand::List { backup_dir } => {
            let engine = open_existing_engine(backup_dir)?;
            for info in engine.list_backups() {
                writeln!(out, "{}", line(&info))?;
            }
            for id in engine.damaged_backups() {
                writeln!(
                    out,
                    "backup {id} damaged metadata (`strata backup verify {} {id}` says why)",
                    backup_dir.display()
                )?;
            }
        }
        BackupCommand::Verify { backup_dir, id } => {
            let engine = open_existing_engine(backup_dir)?;
            engine.verify_backup(*id)?;
            writeln!(out, "backup {id} OK")?;
        }
        BackupCommand::Restore {
            backup_dir,
            id,
            target_dir,
        } => {
            let engine = open_existing_engine(backup_dir)?;
            engine.restore(*id, target_dir)?;
            writeln!(out, "backup {id} restored into {}", target_dir.display())?;
        }
        BackupCommand::Delete { backup_dir, id } => {
            let mut engine = open_existing_engine(backup_dir)?;
            engine.delete_backup(*id)?;
            writeln!(out, "backup {id} deleted")?;
        }
        BackupCommand::Purge { backup_dir, keep } => {
            let mut engine = open_existing_engine(backup_dir)?;
            for id in engine.purge_old_backups(*keep)? {
                writeln!(out, "backup {id} deleted")?;
            }
        }
    }
    Ok(())
}

/// One line about a backup: `backup 2 2026-11-23T19:04:05Z 9 files 81234 bytes 70000 shared
/// 11234 copied`.
fn line(info: &BackupInfo) -> String {
    format!(
        "backup {} {} {} files {} bytes {} shared {} copied",
        info.id,
        utc(info.timestamp),
        info.num_files,
        info.size,
        info.shared_bytes,
        info.copied_bytes
    )
}

/// Seconds since the Unix epoch as an ISO 8601 UTC time (the proleptic Gregorian calendar,
/// by the days-from-civil inverse).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The database at `dir` with every column family, for writing (a backup starts with a
/// checkpoint, which flushes), with no background compaction to reshape it meanwhile.
fn open_db(dir: &Path) -> Result<Db, BoxError> {
    let mut options = Options::default();
    options.disable_auto_compactions = true;
    let families = match dir.join("CURRENT").exists() {
        true => families_as_recorded(dir, &mut options)?,
        false => Vec::new(),
    };
    Ok(Db::open_cf(dir, options.clone(), families)
        .map_err(|e| format!("opening {}: {e}", dir.display()))?)
}

fn open_engine(dir: &Path) -> Result<BackupEngine, BoxError> {
    Ok(BackupEngine::open(dir)
        .map_err(|e| format!("opening backup directory {}: {e}", dir.display()))?)
}

/// Commands other than `create` do not make a backup directory where there is none.
fn open_existing_engine(dir: &Path) -> Result<BackupEngine, BoxError> {
    if !dir.exists() {
        return Err(format!("no backup directory {}", dir.display()).into());
    }
    open_engine(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_utc_dates() {
        for (secs, want) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_763_924_645, "2025-11-23T19:04:05Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
        ] {
            assert_eq!(utc(secs), want, "{secs}");
        }
    }
}
