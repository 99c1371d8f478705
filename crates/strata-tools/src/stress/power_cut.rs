//! Power cuts in the crash loop (`--sync_fault_injection`, db_stress's name): the child runs
//! on a [`FaultFs`] and, at a random moment, cuts its own power. It freezes the file system
//! (every later change fails, so what is on disk stays as it is), writes what a power cut
//! would leave of the database (unsynced tails cut or left as garbage, names not made durable
//! by a directory sync undone: see `strata::fs::fault`) into a fresh directory beside it,
//! writes its trace, and exits with [`EXIT_POWER_CUT`]. The parent swaps the image in,
//! reopens it and checks it against the trace.
//!
//! The trace: every write of every thread, in the thread's order, with two ticks of one
//! clock shared by the threads: `issued` (taken before the write is handed to the database)
//! and `acked` (taken after it returned; [`NEVER`] if it did not). If `acked(x) < issued(y)`,
//! `x` comes before `y` in the database's order. A barrier is a write acknowledged as durable
//! (a sync write with the WAL on), a `sync_wal`, or a flush of every family: everything
//! acknowledged before it was issued is durable once it returns.
//!
//! The check ([`check`]): the threads own disjoint keys, so for each thread the keys it owns
//! must hold what its first `p` writes left (from the expected state of the run's start),
//! for some `p`; `p` must cover the thread's last acknowledged barrier; and the `p`s of all
//! threads must be one point of the global order: a time `T` such that every write
//! acknowledged before `T` is in and every write issued after it is out (no hole across
//! threads). With `--disable_wal`, the barriers are the flushes.
//!
//! Layout of the trace file (text, one line per record): `thread issued acked barrier` then
//! `key:id` pairs (the value id each key holds after the write, 0 = absent).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use strata::fs::fault::{FaultCounts, FaultFs, PowerCut};

use super::oracle::Oracle;
use super::Blocks;

/// The exit code of a child that cut its power.
pub const EXIT_POWER_CUT: i32 = 75;

/// `acked` of a write that never returned.
pub const NEVER: u64 = u64::MAX;

/// One write (or barrier) of a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub issued: u64,
    pub acked: u64,
    pub barrier: bool,
    /// (key, the value id it holds after the write).
    pub writes: Vec<(u64, u32)>,
}

/// The writes of a child's threads.
pub struct Trace {
    clock: AtomicU64,
    threads: Vec<Mutex<Vec<Record>>>,
}

impl Trace {
    pub fn new(threads: u64) -> Trace {
        Trace {
            clock: AtomicU64::new(0),
            threads: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    fn lock(&self, t: u64) -> std::sync::MutexGuard<'_, Vec<Record>> {
        self.threads[t as usize]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records that thread `t` is about to hand a write to the database; returns its index.
    pub fn begin(&self, t: u64, writes: Vec<(u64, u32)>, barrier: bool) -> usize {
        let mut records = self.lock(t);
        records.push(Record {
            issued: self.clock.fetch_add(1, Ordering::SeqCst),
            acked: NEVER,
            barrier,
            writes,
        });
        records.len() - 1
    }

    /// Records that write `index` of thread `t` returned.
    pub fn ack(&self, t: u64, index: usize) {
        let tick = self.clock.fetch_add(1, Ordering::SeqCst);
        self.lock(t)[index].acked = tick;
    }

    /// Writes the trace to `path`.
    fn save(&self, path: &Path) -> std::io::Result<()> {
        let mut text = String::new();
        for (t, records) in self.threads.iter().enumerate() {
            let records = records
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for r in records.iter() {
                let _ = write!(text, "{t} {} {} {}", r.issued, r.acked, u8::from(r.barrier));
                for (k, id) in &r.writes {
                    let _ = write!(text, " {k}:{id}");
                }
                text.push('\n');
            }
        }
        std::fs::write(path, text)
    }
}

/// Reads a trace written for `threads` threads.
pub fn load(path: &Path, threads: u64) -> Result<Vec<Vec<Record>>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("trace {}: {e}", path.display()))?;
    let mut out = vec![Vec::new(); threads as usize];
    for (n, line) in text.lines().enumerate() {
        let bad = || format!("trace {} line {}: {line:?}", path.display(), n + 1);
        let mut words = line.split(' ');
        let mut num =
            || -> Result<u64, String> { words.next().and_then(|w| w.parse().ok()).ok_or_else(bad) };
        let (t, issued, acked, barrier) = (num()?, num()?, num()?, num()?);
        let writes = words
            .map(|w| {
                let (k, id) = w.split_once(':').ok_or_else(bad)?;
                Ok((
                    k.parse().map_err(|_| bad())?,
                    id.parse().map_err(|_| bad())?,
                ))
            })
            .collect::<Result<_, String>>()?;
        out.get_mut(t as usize).ok_or_else(bad)?.push(Record {
            issued,
            acked,
            barrier: barrier == 1,
            writes,
        });
    }
    Ok(out)
}

/// Set once the power is off: a worker whose write fails then waits for the end.
static POWER_OFF: AtomicBool = AtomicBool::new(false);

/// The child's fault file system, when it runs on one.
static FAULT_FS: OnceLock<FaultFs> = OnceLock::new();

/// The fault file system of this process, if it runs on one.
pub fn fault_fs() -> Option<&'static FaultFs> {
    FAULT_FS.get()
}

/// Makes this process run on a fault file system (once).
pub fn install_fault_fs(fs: FaultFs) -> &'static FaultFs {
    FAULT_FS.get_or_init(|| fs)
}

/// True once this process cut its power.
pub fn power_is_off() -> bool {
    POWER_OFF.load(Ordering::SeqCst)
}

/// Called by a thread whose operation failed after the power went off: waits for the
/// process to end.
pub fn wait_for_the_end() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The files of a power cut and of the fault counts, beside the database.
pub struct CutFiles {
    pub image: PathBuf,
    pub trace: PathBuf,
    pub counts: PathBuf,
}

impl CutFiles {
    pub fn of(db: &Path) -> CutFiles {
        let with = |p: &Path, ext: &str| {
            let mut s = p.as_os_str().to_os_string();
            s.push(ext);
            PathBuf::from(s)
        };
        CutFiles {
            image: with(db, ".powercut"),
            trace: with(db, ".powercut-trace"),
            counts: with(db, ".faults"),
        }
    }
}

/// Writes the fault counts (a line of `name=count`).
pub fn save_counts(path: &Path, c: &FaultCounts) -> std::io::Result<()> {
    let tmp = path.with_extension("faults.tmp");
    std::fs::write(
        &tmp,
        format!(
            "read_errors={} write_errors={} sync_errors={} enospc={} metadata_errors={}\n",
            c.read_errors, c.write_errors, c.sync_errors, c.enospc, c.metadata_errors
        ),
    )?;
    std::fs::rename(tmp, path)
}

/// Reads the counts [`save_counts`] wrote (zeros if there are none).
pub fn load_counts(path: &Path) -> FaultCounts {
    let mut c = FaultCounts::default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for pair in text.split_whitespace() {
        let Some((name, n)) = pair.split_once('=') else {
            continue;
        };
        let n: u64 = n.parse().unwrap_or(0);
        match name {
            "read_errors" => c.read_errors = n,
            "write_errors" => c.write_errors = n,
            "sync_errors" => c.sync_errors = n,
            "enospc" => c.enospc = n,
            "metadata_errors" => c.metadata_errors = n,
            _ => {}
        }
    }
    c
}

/// Starts the child's power-cut thread: at `at`, it cuts the power (see the module's doc)
/// and ends the process. Until then it saves the fault counts now and then.
pub fn start_cut_timer(
    fs: &'static FaultFs,
    trace: Option<&'static Trace>,
    db: PathBuf,
    files: CutFiles,
    at: Option<Instant>,
    seed: u64,
) {
    std::thread::spawn(move || {
        loop {
            let _ = save_counts(&files.counts, &fs.fault_counts());
            match at {
                Some(at) if Instant::now() >= at => break,
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        POWER_OFF.store(true, Ordering::SeqCst);
        fs.freeze();
        let cut = PowerCut {
            garbage_one_in: 4,
            partial_one_in: 4,
            seed,
        };
        let done = (|| -> std::io::Result<()> {
            if let Some(trace) = trace {
                trace.save(&files.trace)?;
            }
            save_counts(&files.counts, &fs.fault_counts())?;
            let tmp = files.image.with_extension("powercut.tmp");
            if tmp.exists() {
                std::fs::remove_dir_all(&tmp)?;
            }
            fs.write_durable_image(&db, &tmp, &cut)?;
            std::fs::rename(&tmp, &files.image)
        })();
        match done {
            Ok(()) => std::process::exit(EXIT_POWER_CUT),
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "the power cut failed: {e}");
                std::process::exit(1);
            }
        }
    });
}

/// Checks the keys recovered after a power cut (`observed`: each key's value id) against the
/// expected state at the run's start and the run's trace (see the module's doc).
pub fn check(
    base: &Oracle,
    observed: &[u32],
    trace: &[Vec<Record>],
    blocks: Blocks,
) -> Result<(), String> {
    let mut valid = Vec::with_capacity(trace.len());
    for (t, records) in trace.iter().enumerate() {
        let own = blocks.of_thread(t as u64);
        let v = prefixes(base, observed, records, own.clone());
        if v.is_empty() {
            return Err(no_prefix(base, observed, records, own, t));
        }
        let durable = records
            .iter()
            .rposition(|r| r.barrier && r.acked != NEVER)
            .map_or(0, |i| i + 1);
        let v: Vec<usize> = v.into_iter().filter(|&p| p >= durable).collect();
        if v.is_empty() {
            return Err(format!(
                "thread {t}: a durable write was lost: its writes up to #{durable} were \
                 acknowledged as durable (a sync write, sync_wal or flush), but its keys hold \
                 an earlier state"
            ));
        }
        valid.push(v);
    }
    // A time T at which every thread's recovered prefix is one: writes acknowledged before T
    // in, writes issued at or after T out.
    let mut times: Vec<u64> = trace
        .iter()
        .flatten()
        .flat_map(|r| [r.issued + 1, r.acked.saturating_add(1)])
        .collect();
    times.push(0);
    times.sort_unstable();
    times.dedup();
    let fits = |time: u64| {
        trace.iter().zip(&valid).all(|(records, v)| {
            let acked_before = records.partition_point(|r| r.acked < time);
            let issued_before = records.partition_point(|r| r.issued < time);
            let i = v.partition_point(|&p| p < acked_before);
            i < v.len() && v[i] <= issued_before
        })
    };
    if times.into_iter().any(fits) {
        return Ok(());
    }
    let chosen: Vec<usize> = valid.iter().map(|v| v[0]).collect();
    Err(format!(
        "the recovered state is no point of the write order: the threads' recovered prefixes \
         are {chosen:?} writes (of {:?}), and no moment has every write acknowledged before it \
         in and every write issued after it out (a hole across threads)",
        trace.iter().map(Vec::len).collect::<Vec<_>>()
    ))
}

/// The numbers of first writes of a thread whose state its keys hold.
fn prefixes(
    base: &Oracle,
    observed: &[u32],
    records: &[Record],
    own: std::ops::Range<u64>,
) -> Vec<usize> {
    let mut current: std::collections::HashMap<u64, u32> = Default::default();
    let now = |current: &std::collections::HashMap<u64, u32>, k: u64| {
        current
            .get(&k)
            .copied()
            .unwrap_or_else(|| base.state(k).committed)
    };
    let mut mismatched = own
        .clone()
        .filter(|&k| base.state(k).committed != observed[k as usize])
        .count();
    let mut out = Vec::new();
    if mismatched == 0 {
        out.push(0);
    }
    for (i, r) in records.iter().enumerate() {
        for &(k, id) in &r.writes {
            if !own.contains(&k) {
                continue;
            }
            let before = now(&current, k) == observed[k as usize];
            let after = id == observed[k as usize];
            match (before, after) {
                (true, false) => mismatched += 1,
                (false, true) => mismatched -= 1,
                _ => {}
            }
            current.insert(k, id);
        }
        if mismatched == 0 {
            out.push(i + 1);
        }
    }
    out
}

/// Why no prefix of a thread's writes matches its keys: the keys that differ from the
/// closest prefix.
fn no_prefix(
    base: &Oracle,
    observed: &[u32],
    records: &[Record],
    own: std::ops::Range<u64>,
    t: usize,
) -> String {
    let mut current: std::collections::HashMap<u64, u32> =
        own.clone().map(|k| (k, base.state(k).committed)).collect();
    let differ = |c: &std::collections::HashMap<u64, u32>| -> Vec<(u64, u32, u32)> {
        let mut d: Vec<_> = c
            .iter()
            .filter(|&(&k, &id)| observed[k as usize] != id)
            .map(|(&k, &id)| (k, id, observed[k as usize]))
            .collect();
        d.sort_unstable();
        d
    };
    let mut best = (differ(&current), 0);
    for (i, r) in records.iter().enumerate() {
        for &(k, id) in &r.writes {
            current.insert(k, id);
        }
        let d = differ(&current);
        if d.len() < best.0.len() {
            best = (d, i + 1);
        }
    }
    let shown: Vec<String> = best
        .0
        .iter()
        .take(5)
        .map(|(k, want, got)| format!("key {k} holds value id {got}, expected {want}"))
        .collect();
    format!(
        "thread {t}: its keys hold no prefix of its {} writes; closest: the first {} writes, \
         where {} keys differ: {}",
        records.len(),
        best.1,
        best.0.len(),
        shown.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(issued: u64, acked: u64, barrier: bool, writes: &[(u64, u32)]) -> Record {
        Record {
            issued,
            acked,
            barrier,
            writes: writes.to_vec(),
        }
    }

    /// Two threads (keys 0-1 and 2-3), each with two writes; the table says which recovered
    /// states pass.
    #[test]
    fn a_power_cut_must_leave_one_point_of_the_write_order() {
        let dir = tempfile::tempdir().unwrap();
        let base = Oracle::open(&dir.path().join("o"), 4).unwrap();
        let blocks = Blocks {
            keys: 4,
            threads: 2,
        };
        // Thread 0 writes key 0 (ticks 0-1) then key 1 (ticks 4-5); thread 1 writes key 2
        // (ticks 2-3) then key 3 (6-7, never acknowledged).
        let trace = |sync: bool| {
            vec![
                vec![rec(0, 1, false, &[(0, 1)]), rec(4, 5, sync, &[(1, 1)])],
                vec![rec(2, 3, false, &[(2, 1)]), rec(6, NEVER, false, &[(3, 1)])],
            ]
        };
        let cases: &[(&[u32], bool, Result<(), &str>)] = &[
            (&[0, 0, 0, 0], false, Ok(())),
            (&[1, 1, 1, 1], false, Ok(())),
            (&[1, 0, 1, 0], false, Ok(())),
            (&[1, 0, 0, 0], false, Ok(())),
            // Thread 1's first write was issued after thread 0's first returned: a hole.
            (&[0, 0, 1, 0], false, Err("hole across threads")),
            // Thread 0's second write was acknowledged before thread 1's second was issued.
            (&[1, 0, 1, 1], false, Err("hole across threads")),
            // Key 1 without key 0: no prefix of thread 0's writes.
            (&[0, 1, 0, 0], false, Err("no prefix")),
            (&[1, 1, 7, 0], false, Err("key 2 holds value id 7")),
            // A synced write acknowledged: it and what came before it must be there.
            (&[1, 0, 1, 0], true, Err("durable write was lost")),
            (&[1, 1, 1, 0], true, Ok(())),
        ];
        for (observed, sync, want) in cases {
            let got = check(&base, observed, &trace(*sync), blocks);
            match (want, &got) {
                (Ok(()), Ok(())) => {}
                (Err(w), Err(e)) if e.contains(w) => {}
                _ => panic!("{observed:?} sync={sync}: expected {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn traces_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let t = Trace::new(2);
        let i = t.begin(1, vec![(5, 2), (6, 0)], true);
        t.ack(1, i);
        t.begin(0, vec![], false);
        t.save(&dir.path().join("t")).unwrap();
        let back = load(&dir.path().join("t"), 2).unwrap();
        // One clock for both threads: the begin takes tick 0, its ack 1, the next begin 2.
        assert_eq!(back[1], vec![rec(0, 1, true, &[(5, 2), (6, 0)])]);
        assert_eq!(back[0], vec![rec(2, NEVER, false, &[])]);
        assert!(load(&dir.path().join("t"), 1).is_err());
    }
}
