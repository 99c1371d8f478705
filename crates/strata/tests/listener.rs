//! Event listeners: a recording listener sees a scripted workload's events in order and with
//! numbers that agree with each other and with the files on disk; write stalls form a chain
//! of changes; callbacks may read the database; a panicking listener harms nothing.

use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use strata::{
    BackgroundErrorInfo, BackgroundErrorReason, CompactionJobInfo, CompactionReason, Db,
    EventListener, FlushJobInfo, FlushReason, Options, TableFileCreationInfo,
    TableFileCreationReason, TableFileDeletionInfo, TableFileDeletionReason, WalFileDeletionInfo,
    WriteStallCause, WriteStallCondition, WriteStallInfo,
};

/// An event as the recorder keeps it: what the tests compare.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    FlushBegin {
        file: u64,
        wal: u64,
        memtable_entries: u64,
        reason: FlushReason,
    },
    FlushCompleted {
        file: u64,
        table_entries: u64,
        table_bytes: u64,
        reason: FlushReason,
        /// The table was on disk when the callback ran.
        exists: bool,
    },
    CompactionBegin {
        inputs: Vec<(usize, u64)>,
        output_level: usize,
        reason: CompactionReason,
    },
    CompactionCompleted {
        inputs: Vec<(usize, u64)>,
        outputs: Vec<(usize, u64)>,
        trivial_move: bool,
        bytes_read: u64,
        bytes_written: u64,
        ok: bool,
        /// Every output was on disk when the callback ran.
        exist: bool,
    },
    TableCreated {
        file: u64,
        bytes: u64,
        reason: TableFileCreationReason,
    },
    TableDeleted {
        file: u64,
        reason: TableFileDeletionReason,
    },
    WalDeleted {
        wal: u64,
    },
    Stall {
        previous: WriteStallCondition,
        current: WriteStallCondition,
        cause: Option<WriteStallCause>,
    },
    BackgroundError {
        reason: BackgroundErrorReason,
        writes_stopped: bool,
    },
}

/// A gate a callback waits at while it is closed.
#[derive(Default)]
struct Gate {
    closed: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn set_closed(&self, closed: bool) {
        *self.closed.lock().unwrap() = closed;
        self.cv.notify_all();
    }

    fn pass(&self) {
        let mut closed = self.closed.lock().unwrap();
        while *closed {
            closed = self.cv.wait(closed).unwrap();
        }
    }
}

/// Records every event; flushes and compactions wait at their gates as they begin.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Event>>,
    flush_gate: Gate,
    compaction_gate: Gate,
}

impl Recorder {
    fn push(&self, event: Event) {
        self.events.lock().unwrap().push(event);
    }

    fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    /// The events recorded from index `from` on.
    fn since(&self, from: usize) -> Vec<Event> {
        self.events()[from..].to_vec()
    }

    fn stalls(&self) -> Vec<Event> {
        let all = self.events();
        all.into_iter()
            .filter(|e| matches!(e, Event::Stall { .. }))
            .collect()
    }

    /// Waits (at most 30 s) until an event `matches`.
    fn wait_for(&self, what: &str, matches: impl Fn(&Event) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.events().iter().any(&matches) {
            assert!(Instant::now() < deadline, "no {what}: {:#?}", self.events());
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn levels_and_numbers(files: &[strata::CompactionFileInfo]) -> Vec<(usize, u64)> {
    files.iter().map(|f| (f.level, f.file_number)).collect()
}

impl EventListener for Recorder {
    fn on_flush_begin(&self, info: &FlushJobInfo) {
        self.push(Event::FlushBegin {
            file: info.file_number,
            wal: info.wal_number,
            memtable_entries: info.memtable_entries,
            reason: info.reason,
        });
        self.flush_gate.pass();
    }

    fn on_flush_completed(&self, info: &FlushJobInfo) {
        self.push(Event::FlushCompleted {
            file: info.file_number,
            table_entries: info.table_entries,
            table_bytes: info.table_bytes,
            reason: info.reason,
            exists: info.file_path.exists(),
        });
    }

    fn on_compaction_begin(&self, info: &CompactionJobInfo) {
        self.push(Event::CompactionBegin {
            inputs: levels_and_numbers(&info.input_files),
            output_level: info.output_level,
            reason: info.reason,
        });
        self.compaction_gate.pass();
    }

    fn on_compaction_completed(&self, info: &CompactionJobInfo) {
        self.push(Event::CompactionCompleted {
            inputs: levels_and_numbers(&info.input_files),
            outputs: levels_and_numbers(&info.output_files),
            trivial_move: info.trivial_move,
            bytes_read: info.bytes_read,
            bytes_written: info.bytes_written,
            ok: info.status.is_ok(),
            exist: info.output_files.iter().all(|f| f.path.exists()),
        });
    }

    fn on_stall_conditions_changed(&self, info: &WriteStallInfo) {
        assert_eq!(info.cf_name, "default");
        self.push(Event::Stall {
            previous: info.previous,
            current: info.current,
            cause: info.cause,
        });
    }

    fn on_background_error(&self, info: &BackgroundErrorInfo) {
        self.push(Event::BackgroundError {
            reason: info.reason,
            writes_stopped: info.writes_stopped,
        });
    }

    fn on_table_file_created(&self, info: &TableFileCreationInfo) {
        assert_eq!(info.cf_name, "default");
        assert_eq!(std::fs::metadata(&info.path).unwrap().len(), info.bytes);
        self.push(Event::TableCreated {
            file: info.file_number,
            bytes: info.bytes,
            reason: info.reason,
        });
    }

    fn on_table_file_deleted(&self, info: &TableFileDeletionInfo) {
        assert!(!info.path.exists(), "{info:?}");
        self.push(Event::TableDeleted {
            file: info.file_number,
            reason: info.reason,
        });
    }

    fn on_wal_file_deleted(&self, info: &WalFileDeletionInfo) {
        assert!(!info.path.exists(), "{info:?}");
        self.push(Event::WalDeleted {
            wal: info.log_number,
        });
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn options(listeners: Vec<Arc<dyn EventListener>>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    options.max_write_buffer_number = 2;
    options.disable_auto_compactions = true;
    options.listeners = listeners;
    options
}

/// Checks that each stall change starts where the one before it ended, from `Normal`, and
/// that a cause is given exactly when writes are held back.
fn check_stall_chain(stalls: &[Event]) {
    let mut at = WriteStallCondition::Normal;
    for e in stalls {
        let Event::Stall {
            previous,
            current,
            cause,
        } = e
        else {
            unreachable!()
        };
        assert_eq!(*previous, at, "{stalls:#?}");
        assert_eq!(
            cause.is_some(),
            *current != WriteStallCondition::Normal,
            "{e:?}"
        );
        at = *current;
    }
}

/// Checks what must hold across a whole run: each flushed table was created with the size
/// the flush reports and existed at completion; each compaction's outputs existed at
/// completion, and the inputs of each merge were deleted after it completed.
fn check_consistency(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::FlushCompleted {
                file,
                table_bytes,
                exists,
                ..
            } => {
                assert!(exists, "flushed table {file} missing at completion");
                let created = events[..i].iter().any(|c| {
                    *c == Event::TableCreated {
                        file: *file,
                        bytes: *table_bytes,
                        reason: TableFileCreationReason::Flush,
                    }
                });
                assert!(
                    created,
                    "table {file} completed but not created: {events:#?}"
                );
            }
            Event::CompactionCompleted {
                inputs,
                outputs,
                trivial_move,
                exist,
                ok: true,
                ..
            } => {
                assert!(exist, "{e:?}");
                if *trivial_move {
                    let moved: Vec<u64> = inputs.iter().map(|f| f.1).collect();
                    let landed: Vec<u64> = outputs.iter().map(|f| f.1).collect();
                    assert_eq!(moved, landed, "{e:?}");
                    continue;
                }
                for (_, input) in inputs {
                    let deleted = events[i..].iter().any(|d| {
                        *d == Event::TableDeleted {
                            file: *input,
                            reason: TableFileDeletionReason::Obsolete,
                        }
                    });
                    assert!(deleted, "input {input} of {e:?} never deleted: {events:#?}");
                }
            }
            _ => {}
        }
    }
}

#[test]
fn a_scripted_workload_is_told_in_order_with_consistent_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder::default());
    let db = Arc::new(Db::open(dir.path(), options(vec![recorder.clone()])).unwrap());

    // Puts and a flush: its table, then the WAL it frees.
    for i in 0..100 {
        db.put(key(i), b"first").unwrap();
    }
    db.flush().unwrap();
    let events = recorder.events();
    let Event::FlushBegin {
        file: first, wal, ..
    } = events[0]
    else {
        panic!("{events:#?}")
    };
    let bytes = std::fs::metadata(dir.path().join(format!("{first:06}.sst")))
        .unwrap()
        .len();
    assert_eq!(
        events,
        [
            Event::FlushBegin {
                file: first,
                wal,
                memtable_entries: 100,
                reason: FlushReason::Manual
            },
            Event::TableCreated {
                file: first,
                bytes,
                reason: TableFileCreationReason::Flush
            },
            Event::FlushCompleted {
                file: first,
                table_entries: 100,
                table_bytes: bytes,
                reason: FlushReason::Manual,
                exists: true
            },
            Event::WalDeleted { wal },
        ]
    );

    // A second table over the same keys, then a manual compaction of both.
    for i in 0..100 {
        db.put(key(i), b"second").unwrap();
    }
    db.flush().unwrap();
    let Event::FlushCompleted { file: second, .. } = recorder.events()[6] else {
        panic!("{:#?}", recorder.events())
    };
    let before = recorder.events().len();
    db.compact_range(None, None).unwrap();
    let events = recorder.since(before);
    let Event::CompactionBegin {
        inputs,
        output_level,
        reason: CompactionReason::Manual,
    } = &events[0]
    else {
        panic!("{events:#?}")
    };
    assert_eq!(inputs, &[(0, second), (0, first)], "L0, newest first");
    let Event::TableCreated {
        file: merged,
        reason: TableFileCreationReason::Compaction,
        ..
    } = events[1]
    else {
        panic!("{events:#?}")
    };
    let Event::CompactionCompleted {
        outputs,
        bytes_read,
        bytes_written,
        ok: true,
        ..
    } = &events[2]
    else {
        panic!("{events:#?}")
    };
    assert_eq!(outputs, &[(*output_level, merged)]);
    let size = |n: u64| {
        std::fs::metadata(dir.path().join(format!("{n:06}.sst")))
            .map(|m| m.len())
            .unwrap_or(0)
    };
    assert_eq!(*bytes_written, size(merged));
    assert!(*bytes_read > 0);
    // The inputs are deleted after the compaction is told of (once no version in use names
    // them: by close at the latest, checked at the end); the merged table stays.
    assert!(events[3..].iter().all(
        |e| matches!(e, Event::TableDeleted { file, .. } if *file == first || *file == second)
    ));
    assert_eq!(db.get(key(7)).unwrap().as_deref(), Some(&b"second"[..]));

    // A stall: with the flush held at its beginning, a writer fills the active memtable
    // while the full one waits, and stops until the flush goes on.
    recorder.flush_gate.set_closed(true);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..400 {
                db.put(key(i), [b'v'; 1000]).unwrap();
            }
        })
    };
    recorder.wait_for("stop", |e| {
        matches!(
            e,
            Event::Stall {
                current: WriteStallCondition::Stopped,
                ..
            }
        )
    });
    assert!(!writer.is_finished(), "writes are stopped");
    recorder.flush_gate.set_closed(false);
    writer.join().unwrap();
    db.flush().unwrap();
    recorder.wait_for("the end of the stall", |e| {
        matches!(
            e,
            Event::Stall {
                previous: WriteStallCondition::Stopped,
                ..
            }
        )
    });
    let stalls = recorder.stalls();
    assert_eq!(
        stalls[0],
        Event::Stall {
            previous: WriteStallCondition::Normal,
            current: WriteStallCondition::Stopped,
            cause: Some(WriteStallCause::MemtableLimit)
        }
    );
    check_stall_chain(&stalls);
    let full_flushes = recorder
        .events()
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::FlushCompleted {
                    reason: FlushReason::WriteBufferFull,
                    ..
                }
            )
        })
        .count();
    assert!(full_flushes >= 2, "{:#?}", recorder.events());

    Arc::try_unwrap(db).unwrap().close().unwrap();
    let events = recorder.events();
    check_consistency(&events);
    for file in [first, second] {
        let deleted = Event::TableDeleted {
            file,
            reason: TableFileDeletionReason::Obsolete,
        };
        assert!(events.contains(&deleted), "{file}: {events:#?}");
        assert!(!dir.path().join(format!("{file:06}.sst")).exists());
    }
    assert!(dir.path().join(format!("{merged:06}.sst")).exists());
}

#[test]
fn level0_files_delay_then_stop_writes_until_compaction_clears_them() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder::default());
    let mut options = options(vec![recorder.clone()]);
    options.disable_auto_compactions = false;
    options.level0_file_num_compaction_trigger = 2;
    options.level0_slowdown_writes_trigger = 2;
    options.level0_stop_writes_trigger = 3;
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    // The compaction L0 calls for waits at its beginning, so L0 grows.
    recorder.compaction_gate.set_closed(true);
    for table in 0..3u32 {
        db.put(key(table), b"v").unwrap();
        db.flush().unwrap();
    }
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || db.put(b"after", b"stop").unwrap())
    };
    recorder.wait_for("stop", |e| {
        matches!(
            e,
            Event::Stall {
                current: WriteStallCondition::Stopped,
                ..
            }
        )
    });
    assert!(!writer.is_finished(), "writes are stopped");
    recorder.compaction_gate.set_closed(false);
    writer.join().unwrap();
    db.wait_for_compactions().unwrap();
    recorder.wait_for("the end of the stall", |e| {
        matches!(
            e,
            Event::Stall {
                current: WriteStallCondition::Normal,
                ..
            }
        )
    });
    let stalls = recorder.stalls();
    check_stall_chain(&stalls);
    let l0 = Some(WriteStallCause::L0FileCountLimit);
    assert_eq!(
        stalls[..2],
        [
            Event::Stall {
                previous: WriteStallCondition::Normal,
                current: WriteStallCondition::Delayed,
                cause: l0
            },
            Event::Stall {
                previous: WriteStallCondition::Delayed,
                current: WriteStallCondition::Stopped,
                cause: l0
            },
        ]
    );
    assert!(recorder.events().iter().any(|e| matches!(
        e,
        Event::CompactionBegin {
            reason: CompactionReason::LevelL0FilesNum,
            ..
        }
    )));
    Arc::try_unwrap(db).unwrap().close().unwrap();
    check_consistency(&recorder.events());
}

/// Reads the database from every callback, through a weak handle set after open.
#[derive(Default)]
struct Reader {
    db: OnceLock<Weak<Db>>,
    reads: Mutex<u64>,
}

impl Reader {
    fn read(&self) {
        let Some(db) = self.db.get().and_then(Weak::upgrade) else {
            return;
        };
        db.get(key(1)).unwrap();
        let keys = db.range(&key(0)[..]..&key(50)[..]).count();
        assert!(keys <= 50);
        *self.reads.lock().unwrap() += 1;
    }
}

impl EventListener for Reader {
    fn on_flush_begin(&self, _: &FlushJobInfo) {
        self.read();
    }
    fn on_flush_completed(&self, _: &FlushJobInfo) {
        self.read();
    }
    fn on_compaction_begin(&self, _: &CompactionJobInfo) {
        self.read();
    }
    fn on_compaction_completed(&self, _: &CompactionJobInfo) {
        self.read();
    }
    fn on_stall_conditions_changed(&self, _: &WriteStallInfo) {
        self.read();
    }
    fn on_table_file_created(&self, _: &TableFileCreationInfo) {
        self.read();
    }
    fn on_table_file_deleted(&self, _: &TableFileDeletionInfo) {
        self.read();
    }
    fn on_wal_file_deleted(&self, _: &WalFileDeletionInfo) {
        self.read();
    }
}

/// Runs `work` in a thread of its own; fails if it does not end within a minute.
fn within_a_minute(work: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        work();
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(60))
        .expect("the workload did not finish: a callback deadlocked");
}

#[test]
fn a_listener_reading_the_database_from_its_callbacks_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let reader = Arc::new(Reader::default());
    let listener = reader.clone();
    within_a_minute(move || {
        let mut options = options(vec![listener.clone()]);
        options.write_buffer_size = 16 << 10;
        options.disable_auto_compactions = false;
        options.level0_file_num_compaction_trigger = 2;
        options.max_bytes_for_level_base = 64 << 10;
        options.target_file_size_base = 16 << 10;
        let db = Arc::new(Db::open(&path, options).unwrap());
        listener.db.set(Arc::downgrade(&db)).unwrap();
        for i in 0..5000 {
            db.put(key(i % 2000), [b'v'; 100]).unwrap();
        }
        db.flush().unwrap();
        db.compact_range(None, None).unwrap();
        db.wait_for_compactions().unwrap();
        // Closes the database, here or in a callback holding the last handle.
        drop(db);
    });
    assert!(*reader.reads.lock().unwrap() > 10);
}

/// Panics in every callback.
struct Panicker;

impl EventListener for Panicker {
    fn on_flush_begin(&self, _: &FlushJobInfo) {
        panic!("listener failure in flush begin");
    }
    fn on_flush_completed(&self, _: &FlushJobInfo) {
        panic!("listener failure in flush completed");
    }
    fn on_compaction_begin(&self, _: &CompactionJobInfo) {
        panic!("listener failure in compaction begin");
    }
    fn on_compaction_completed(&self, _: &CompactionJobInfo) {
        panic!("listener failure in compaction completed");
    }
    fn on_stall_conditions_changed(&self, _: &WriteStallInfo) {
        panic!("listener failure in stall change");
    }
    fn on_table_file_created(&self, _: &TableFileCreationInfo) {
        panic!("listener failure in table created");
    }
    fn on_table_file_deleted(&self, _: &TableFileDeletionInfo) {
        panic!("listener failure in table deleted");
    }
    fn on_wal_file_deleted(&self, _: &WalFileDeletionInfo) {
        panic!("listener failure in wal deleted");
    }
}

fn log_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("LOG")).unwrap()
}

#[test]
fn a_panicking_listener_does_not_stop_writes() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder::default());
    let mut options = options(vec![Arc::new(Panicker), recorder.clone()]);
    options.write_buffer_size = 16 << 10;
    options.disable_auto_compactions = false;
    options.level0_file_num_compaction_trigger = 2;
    let db = Db::open(dir.path(), options).unwrap();
    // Each key written three times, so that compactions merge (and delete their inputs).
    for i in 0..3000 {
        db.put(key(i % 1000), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    for i in (0..1000).step_by(37) {
        assert!(db.get(key(i)).unwrap().is_some(), "key {i}");
    }
    db.put(b"still", b"writable").unwrap();
    db.close().unwrap();
    // The listener after the panicking one heard everything.
    let events = recorder.events();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::FlushCompleted { .. })));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::CompactionCompleted { ok: true, .. })));
    check_consistency(&events);
    let log = log_text(dir.path());
    for callback in [
        "on_flush_begin",
        "on_compaction_completed",
        "on_table_file_deleted",
    ] {
        let line = format!("event listener panicked in {callback}: listener failure in");
        assert!(log.contains(&line), "{callback}: {log}");
    }
    // Reopened, the database holds every write.
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"still").unwrap().as_deref(), Some(&b"writable"[..]));
}

#[test]
fn a_failed_flush_is_a_background_error_that_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = strata::fs::fault::FaultFs::new();
    let recorder = Arc::new(Recorder::default());
    let mut options = options(vec![recorder.clone()]);
    options.fs = Arc::new(fs.clone());
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"a", b"1").unwrap();
    fs.set_full_for(Some(".sst"));
    assert!(db.flush().is_err());
    // Told once the flush thread has let go of its locks: perhaps after flush() returned.
    recorder.wait_for("the error", |e| matches!(e, Event::BackgroundError { .. }));
    let errors: Vec<Event> = recorder
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::BackgroundError { .. }))
        .collect();
    assert_eq!(
        errors,
        [Event::BackgroundError {
            reason: BackgroundErrorReason::Flush,
            writes_stopped: true
        }]
    );
    // A flush that failed is never told complete.
    assert!(!recorder
        .events()
        .iter()
        .any(|e| matches!(e, Event::FlushCompleted { .. })));
    fs.set_full_for(None);
    db.resume().unwrap();
    db.flush().unwrap();
    assert!(recorder
        .events()
        .iter()
        .any(|e| matches!(e, Event::FlushCompleted { .. })));
}

#[test]
fn each_flush_says_why_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    // A WAL left by the last open: replayed into a memtable, which is flushed after open.
    let db = Db::open(dir.path(), options(Vec::new())).unwrap();
    db.put(b"replayed", b"1").unwrap();
    db.close().unwrap();
    let recorder = Arc::new(Recorder::default());
    let db = Db::open(dir.path(), options(vec![recorder.clone()])).unwrap();
    // A manual compaction flushes first.
    db.put(b"compacted", b"1").unwrap();
    db.compact_range(None, None).unwrap();
    // Close flushes what was written without the WAL.
    let mut no_wal = strata::WriteOptions::default();
    no_wal.disable_wal = true;
    db.put_opt(b"unlogged", b"1", &no_wal).unwrap();
    db.close().unwrap();
    let reasons: Vec<FlushReason> = recorder
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::FlushCompleted { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            FlushReason::Recovery,
            FlushReason::ManualCompaction,
            FlushReason::Shutdown
        ]
    );
}
