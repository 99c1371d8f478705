//! The info log: a text file `LOG` in the database directory, one line per event worth
//! knowing afterwards (open, flushes, compactions and the ones skipped, background errors),
//! each starting with a UTC timestamp as RocksDB's does (`2026/11/22-09:15:02.123456`).
//!
//! It rotates: at open, and once it passes `max_log_file_size` bytes, `LOG` is renamed to
//! `LOG.old.N` (N one above the newest old log) and a new `LOG` begins; old logs beyond
//! `keep_log_file_num` are deleted, oldest first. Writing it never fails an operation: on an
//! error the line is lost, and after a failed rotation the log stops.
//!
//! Every line is also a record of the `log` facade (target `strata`, without the timestamp,
//! which the application's logger adds its own way), so that an application routes the
//! engine's lines with its own: `error` for what stops background work or a listener that
//! panicked, `warn` for work skipped, `info` for the rest. A line the file loses (or a
//! database with no `LOG`, opened read-only) still reaches the facade. The library installs no
//! logger: without one the records cost a check of the facade's level and nothing else.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use ::log::Level;
use parking_lot::Mutex;

use crate::filename::{old_log_name, parse_old_log, LOG};
use crate::fs::{FileSystem, WritableFile};
use crate::util::utc_fields;

/// The info log of an open database.
pub(crate) struct InfoLog {
    state: Mutex<Option<Writer>>,
}

/// The file being written and what rotating it needs.
struct Writer {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    file: Box<dyn WritableFile>,
    max_size: u64,
    keep: usize,
}

impl InfoLog {
    /// Starts a new `LOG` in `dir` (rotating the one there), rotating again past `max_size`
    /// bytes (0: never) and keeping `keep` old logs. If the file cannot be created the log is
    /// disabled.
    pub fn open(fs: Arc<dyn FileSystem>, dir: &Path, max_size: u64, keep: usize) -> InfoLog {
        let file = start(fs.as_ref(), dir, keep);
        InfoLog {
            state: Mutex::new(file.map(|file| Writer {
                fs,
                dir: dir.to_path_buf(),
                file,
                max_size,
                keep,
            })),
        }
    }

    /// An info log that writes nothing (a database opened read-only).
    pub fn disabled() -> InfoLog {
        InfoLog {
            state: Mutex::new(None),
        }
    }

    /// Appends a line about work done or a state reached.
    pub fn info(&self, message: fmt::Arguments<'_>) {
        self.log(Level::Info, message);
    }

    /// Appends a line about work skipped or a fault the engine goes on after.
    pub fn warn(&self, message: fmt::Arguments<'_>) {
        self.log(Level::Warn, message);
    }

    /// Appends a line about an error that stops work.
    pub fn error(&self, message: fmt::Arguments<'_>) {
        self.log(Level::Error, message);
    }

    /// Appends one line, and hands it to the `log` facade at `level`.
    fn log(&self, level: Level, message: fmt::Arguments<'_>) {
        ::log::log!(target: "strata", level, "{message}");
        let line = format!("{} {message}\n", timestamp(SystemTime::now()));
        let mut state = self.state.lock();
        let Some(w) = state.as_mut() else {
            return;
        };
        if w.file.append(line.as_bytes()).is_err() {
            *state = None;
            return;
        }
        if w.max_size > 0 && w.file.len() >= w.max_size {
            match start(w.fs.as_ref(), &w.dir, w.keep) {
                Some(file) => w.file = file,
                None => *state = None,
            }
        }
    }
}

/// Moves the current `LOG` (if any) to the next `LOG.old.N`, deletes old logs beyond `keep`,
/// and creates a new `LOG`; `None` if it cannot be created.
fn start(fs: &dyn FileSystem, dir: &Path, keep: usize) -> Option<Box<dyn WritableFile>> {
    let mut old: Vec<u64> = fs
        .list_dir(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|name| parse_old_log(name))
        .collect();
    old.sort_unstable();
    let path = dir.join(LOG);
    if fs.exists(&path) {
        let next = old.last().map_or(1, |n| n + 1);
        if fs.rename(&path, &dir.join(old_log_name(next))).is_ok() {
            old.push(next);
        }
    }
    let excess = old.len().saturating_sub(keep);
    for &n in &old[..excess] {
        let name = if n == 0 {
            crate::filename::LOG_OLD.to_string()
        } else {
            old_log_name(n)
        };
        let _ = fs.remove_file(&dir.join(name));
    }
    fs.create_writable(&path).ok()
}

/// `YYYY/MM/DD-HH:MM:SS.micros` in UTC.
fn timestamp(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (y, mo, d, h, mi, s) = utc_fields(since.as_secs());
    let micros = since.subsec_micros();
    format!("{y:04}/{mo:02}/{d:02}-{h:02}:{mi:02}:{s:02}.{micros:06}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let t = |s: u64| timestamp(UNIX_EPOCH + Duration::from_micros(s));
        assert_eq!(t(0), "1970/01/01-00:00:00.000000");
        // 2000-02-29 12:34:56.789012 (a leap day in a leap century).
        assert_eq!(t(951_827_696_789_012), "2000/02/29-12:34:56.789012");
        // 2026-11-22 00:00:00.
        assert_eq!(t(1_795_305_600_000_000), "2026/11/22-00:00:00.000000");
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn each_open_starts_a_new_log_and_keeps_the_last_ones() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn FileSystem> = Arc::new(crate::fs::PosixFs);
        for i in 0..4 {
            InfoLog::open(fs.clone(), dir.path(), 0, 2).info(format_args!("open {i}"));
        }
        assert_eq!(names(dir.path()), ["LOG", "LOG.old.2", "LOG.old.3"]);
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert!(read("LOG").ends_with(" open 3\n"));
        assert!(read("LOG.old.3").ends_with(" open 2\n"));
        assert!(read("LOG.old.2").ends_with(" open 1\n"));
    }

    #[test]
    fn a_log_past_its_size_rotates_and_an_earlier_builds_old_log_goes_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("LOG.old"), "from before\n").unwrap();
        let fs: Arc<dyn FileSystem> = Arc::new(crate::fs::PosixFs);
        let log = InfoLog::open(fs, dir.path(), 200, 3);
        for i in 0..20 {
            log.info(format_args!("line {i} of about forty-five bytes"));
        }
        let all = names(dir.path());
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(!all.contains(&"LOG.old".to_string()), "{all:?}");
        for name in &all {
            let size = std::fs::metadata(dir.path().join(name)).unwrap().len();
            assert!(size < 200 + 60, "{name}: {size} bytes");
        }
        let current = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
        assert!(current.ends_with(" line 19 of about forty-five bytes\n") || current.is_empty());
    }
}
