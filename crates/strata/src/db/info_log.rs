//! The info log: a text file `LOG` in the database directory, one line per event worth
//! knowing afterwards (open, flushes, compactions and the ones skipped, background errors),
//! each starting with a UTC timestamp as RocksDB's does (`2026/11/22-09:15:02.123456`). The
//! previous one is kept as `LOG.old`. Writing it never fails an operation: on an error the
//! line is lost.

use std::fmt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::filename::{LOG, LOG_OLD};
use crate::fs::{FileSystem, WritableFile};
use crate::util::utc_fields;

/// The info log of an open database.
pub(crate) struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

impl InfoLog {
    /// Starts a new `LOG` in `dir`, keeping the last one as `LOG.old`. If the file cannot be
    /// created the log is disabled.
    pub fn open(fs: &dyn FileSystem, dir: &Path) -> InfoLog {
        let path = dir.join(LOG);
        if fs.exists(&path) {
            let _ = fs.rename(&path, &dir.join(LOG_OLD));
        }
        InfoLog {
            file: Mutex::new(fs.create_writable(&path).ok()),
        }
    }

    /// An info log that writes nothing (a database opened read-only).
    pub fn disabled() -> InfoLog {
        InfoLog {
            file: Mutex::new(None),
        }
    }

    /// Appends one line.
    pub fn log(&self, message: fmt::Arguments<'_>) {
        let line = format!("{} {message}\n", timestamp(SystemTime::now()));
        let mut file = self.file.lock();
        if let Some(f) = file.as_mut() {
            if f.append(line.as_bytes()).is_err() {
                *file = None;
            }
        }
    }
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

    #[test]
    fn a_new_log_keeps_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        let fs = crate::fs::PosixFs;
        InfoLog::open(&fs, dir.path()).log(format_args!("first"));
        InfoLog::open(&fs, dir.path()).log(format_args!("second {}", 2));
        let old = std::fs::read_to_string(dir.path().join(LOG_OLD)).unwrap();
        let new = std::fs::read_to_string(dir.path().join(LOG)).unwrap();
        assert!(old.ends_with(" first\n"), "{old}");
        assert!(new.ends_with(" second 2\n"), "{new}");
    }
}
