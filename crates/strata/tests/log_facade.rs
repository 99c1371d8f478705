//! The `LOG` file's lines reach the application's logger through the `log` facade, target
//! `strata`, at a level that says what each line is. (A test binary of its own: a process has
//! one logger.)

use std::sync::{Arc, Mutex};

use log::{Level, LevelFilter, Log, Metadata, Record};
use strata::{Db, EventListener, FlushJobInfo, Options};

/// Keeps every record of target `strata`.
struct TestLogger {
    records: Mutex<Vec<(Level, String)>>,
}

impl Log for TestLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "strata"
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let line = record.args().to_string();
            self.records.lock().unwrap().push((record.level(), line));
        }
    }

    fn flush(&self) {}
}

static LOGGER: TestLogger = TestLogger {
    records: Mutex::new(Vec::new()),
};

/// Panics as a flush begins: an error line.
struct Panicker;

impl EventListener for Panicker {
    fn on_flush_begin(&self, _: &FlushJobInfo) {
        panic!("listener failure");
    }
}

#[test]
fn every_log_line_is_a_record_of_the_facade_at_its_level() {
    log::set_logger(&LOGGER).unwrap();
    log::set_max_level(LevelFilter::Trace);
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.listeners = vec![Arc::new(Panicker)];
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.put(b"a", b"2").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.close().unwrap();

    let records = LOGGER.records.lock().unwrap().clone();
    let text = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    // Each line is a timestamp, a space, then the message the facade was given.
    let lines: Vec<&str> = text.lines().map(|l| l.split_once(' ').unwrap().1).collect();
    let messages: Vec<&str> = records.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(messages, lines);

    let level_of = |start: &str| {
        let found = records.iter().find(|(_, m)| m.starts_with(start));
        found.map(|(l, _)| *l)
    };
    let cases = [
        ("opened ", Level::Info),
        ("flush: memtable of family 'default'", Level::Info),
        ("compaction of family 'default'", Level::Info),
        (
            "event listener panicked in on_flush_begin: listener failure",
            Level::Error,
        ),
    ];
    for (start, level) in cases {
        assert_eq!(level_of(start), Some(level), "{start}: {records:#?}");
    }
}
