//! The crash loop of `strata stress --crash`: a child process runs the workers and is killed
//! at a random moment (or, with `--sync_fault_injection`, cuts its own power: see
//! [`power_cut`]); the database is reopened and checked (against the oracle, or the bank's
//! ledger), and the next child starts.
//!
//! A child whose writes still fail after an injected fault and `resume` exits with
//! [`EXIT_REOPEN`]: the parent checks the database as after a kill.
//!
//! The last line of the loop is a summary of `name=count` pairs, which `strata crashtest`
//! reads.

use super::power_cut::{self, CutFiles};
use super::*;
use strata::fs::fault::FaultCounts;

/// The exit code of a child whose database needs a reopen after an injected fault.
pub const EXIT_REOPEN: i32 = 76;

/// The line a child prints once its database is open and its workers start: the kill's
/// random moment is counted from it, not from the spawn, so that a slow open (a debug
/// build, a loaded machine, a long recovery) does not eat the interval and leave children
/// killed before their first operation.
pub(super) const READY_LINE: &str = "workers starting";

/// Tells the parent the workers start (see [`READY_LINE`]).
pub(super) fn say_ready(a: &StressArgs) {
    if a.child {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{READY_LINE}");
        let _ = out.flush();
    }
}

/// How long a parent waits for a child's [`READY_LINE`] before it starts the kill's
/// interval anyway.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// A channel that receives `()` when `child` prints [`READY_LINE`]; its standard output
/// is drained to the end so that the child never blocks on a full pipe.
fn watch_ready(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(out).lines() {
                match line {
                    Ok(l) if l == READY_LINE => {
                        let _ = tx.send(());
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        });
    }
    rx
}

/// What the crash loop checks, for the plain test or the bank.
pub(super) trait CrashChecks {
    /// Checks the database before the first run.
    fn before_first_run(&mut self) -> Result<(), BoxError>;
    /// Reopens and checks the database after a kill; returns the checks made.
    fn after_kill(&mut self) -> Result<u64, AfterKill>;
    /// Swaps in the image a power cut left, reopens and checks it; returns the checks made.
    fn after_power_cut(&mut self, files: &CutFiles) -> Result<u64, AfterKill> {
        let _ = files;
        Err(AfterKill::Violation(
            "this test has no power-cut check".into(),
        ))
    }
    /// The expected-state file a child of a power-cut run works on (a copy: the parent's
    /// stays as it was at the run's start).
    fn child_expected_state(&mut self) -> Result<Option<PathBuf>, BoxError> {
        Ok(None)
    }
    /// What the runs did, for the last line.
    fn summary(&mut self) -> Result<String, BoxError>;
    /// What the checks counted are.
    fn what(&self) -> &'static str;
}

/// Why a check after a kill failed.
pub(super) enum AfterKill {
    Reopen(String),
    Violation(String),
}

/// The plain test's checks: every key against the oracle.
pub(super) struct PlainChecks<'a> {
    pub(super) a: &'a StressArgs,
    pub(super) oracle_path: &'a Path,
    pub(super) ops_before: u64,
}

impl CrashChecks for PlainChecks<'_> {
    fn before_first_run(&mut self) -> Result<(), BoxError> {
        let oracle = Oracle::open(self.oracle_path, self.a.keys)?;
        let db = open_store(self.a)?;
        verify(&db, &oracle, self.a).map_err(|e| format!("before the first run: {e}"))?;
        db.close()?;
        self.ops_before = oracle.ops();
        Ok(())
    }

    fn after_kill(&mut self) -> Result<u64, AfterKill> {
        let oracle = Oracle::open(self.oracle_path, self.a.keys).map_err(AfterKill::Violation)?;
        let db = open_store(self.a).map_err(|e| AfterKill::Reopen(e.to_string()))?;
        let n = verify(&db, &oracle, self.a).map_err(AfterKill::Violation)?;
        db.close()
            .map_err(|e| AfterKill::Violation(format!("close: {e}")))?;
        Ok(n)
    }

    fn after_power_cut(&mut self, files: &CutFiles) -> Result<u64, AfterKill> {
        let a = self.a;
        let io = |what: &str, e: std::io::Error| AfterKill::Violation(format!("{what}: {e}"));
        std::fs::remove_dir_all(&a.db).map_err(|e| io("removing the database", e))?;
        std::fs::rename(&files.image, &a.db).map_err(|e| io("swapping in the image", e))?;
        let base = Oracle::open(self.oracle_path, a.keys).map_err(AfterKill::Violation)?;
        let child = Oracle::open(&self.child_path(), a.keys).map_err(AfterKill::Violation)?;
        base.add_ops(child.ops().saturating_sub(base.ops()))
            .map_err(AfterKill::Violation)?;
        let trace = power_cut::load(&files.trace, a.threads).map_err(AfterKill::Violation)?;
        let db = open_store(a).map_err(|e| AfterKill::Reopen(e.to_string()))?;
        let observed = observe(&db, &base, a, false).map_err(AfterKill::Violation)?;
        power_cut::check(&base, &observed, &trace, Blocks::of(a)).map_err(AfterKill::Violation)?;
        // The threads' own families: created, dropped and synced as the child's oracle says.
        super::churn::verify_families(&db, &child, a).map_err(AfterKill::Violation)?;
        for t in 0..a.threads.min(super::oracle::FAMILY_SLOTS) {
            base.set_family(t, child.family(t))
                .map_err(AfterKill::Violation)?;
        }
        for (k, &id) in observed.iter().enumerate() {
            base.commit(k as u64, id).map_err(AfterKill::Violation)?;
        }
        db.close()
            .map_err(|e| AfterKill::Violation(format!("close: {e}")))?;
        Ok(a.keys)
    }

    fn child_expected_state(&mut self) -> Result<Option<PathBuf>, BoxError> {
        if !self.a.sync_fault_injection {
            return Ok(None);
        }
        let copy = self.child_path();
        std::fs::copy(self.oracle_path, &copy)?;
        Ok(Some(copy))
    }

    fn summary(&mut self) -> Result<String, BoxError> {
        let ops = Oracle::open(self.oracle_path, self.a.keys)?.ops() - self.ops_before;
        Ok(format!("about {ops} operations"))
    }

    fn what(&self) -> &'static str {
        "key checks"
    }
}

impl PlainChecks<'_> {
    fn child_path(&self) -> PathBuf {
        let mut p = self.oracle_path.as_os_str().to_os_string();
        p.push(".child");
        PathBuf::from(p)
    }
}

/// What the runs of a crash loop did.
#[derive(Debug, Default)]
struct Tally {
    runs: u64,
    kills: u64,
    power_cuts: u64,
    reopens: u64,
    checks: u64,
    faults: FaultCounts,
}

impl Tally {
    fn add_faults(&mut self, c: FaultCounts) {
        let f = &mut self.faults;
        f.read_errors += c.read_errors;
        f.write_errors += c.write_errors;
        f.sync_errors += c.sync_errors;
        f.enospc += c.enospc;
        f.metadata_errors += c.metadata_errors;
    }
}

/// Crash mode: children run the stress test and are killed; the parent verifies each time.
pub(super) fn crash_loop(
    a: &StressArgs,
    oracle_path: &Path,
    checks: &mut dyn CrashChecks,
) -> Result<ExitCode, BoxError> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(a.duration);
    let seed = seed_of(a);
    let mut rng = Rng::new(seed);
    writeln!(
        std::io::stdout(),
        "crash test: seed {seed}; database {}, expected state {}",
        a.db.display(),
        oracle_path.display()
    )?;
    checks.before_first_run()?;
    let exe = std::env::current_exe()?;
    // This process's flags: the ones after the `stress` subcommand.
    let parent: Vec<OsString> = std::env::args_os()
        .skip_while(|a| a != "stress")
        .skip(1)
        .collect();
    let files = CutFiles::of(&a.db);
    let mut t = Tally::default();
    while Instant::now() < deadline {
        t.runs += 1;
        let runs = t.runs;
        for stale in [&files.image, &files.trace, &files.counts] {
            if stale.is_dir() {
                std::fs::remove_dir_all(stale)?;
            } else if stale.exists() {
                std::fs::remove_file(stale)?;
            }
        }
        let child_oracle = checks.child_expected_state()?;
        let wait = Duration::from_millis(1 + rng.below(a.kill_interval_ms.max(1)));
        let mut args = child_args(
            &parent,
            child_oracle.as_deref().unwrap_or(oracle_path),
            rng.next_u64(),
        );
        if a.sync_fault_injection {
            args.push(format!("--power_cut_after_ms={}", wait.as_millis().max(1)).into());
        }
        let mut child = Command::new(&exe)
            .arg("stress")
            .args(args)
            .stdout(Stdio::piped())
            .spawn()?;
        let ready = watch_ready(&mut child);
        // A power-cut child ends itself (its timer starts once its database is open): give
        // it time to write its image. A killed child gets its interval once it is ready.
        let end_at = match a.sync_fault_injection {
            true => Instant::now() + wait + Duration::from_secs(120),
            false => {
                let ready_by = Instant::now() + READY_TIMEOUT;
                while Instant::now() < ready_by && child.try_wait()?.is_none() {
                    if ready.recv_timeout(Duration::from_millis(5)).is_ok() {
                        break;
                    }
                }
                (Instant::now() + wait).min(deadline)
            }
        };
        let mut exited = None;
        while Instant::now() < end_at {
            if let Some(status) = child.try_wait()? {
                exited = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let outcome = match exited {
            Some(status)
                if a.sync_fault_injection && status.code() == Some(power_cut::EXIT_POWER_CUT) =>
            {
                t.power_cuts += 1;
                checks.after_power_cut(&files)
            }
            Some(status) if status.code() == Some(EXIT_REOPEN) => {
                t.reopens += 1;
                checks.after_kill()
            }
            Some(status) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: the child exited on its own ({status})"),
                ));
            }
            None if a.sync_fault_injection => {
                child.kill()?;
                child.wait()?;
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: the child did not cut its power in time"),
                ));
            }
            None => {
                child.kill()?;
                child.wait()?;
                t.kills += 1;
                checks.after_kill()
            }
        };
        t.add_faults(power_cut::load_counts(&files.counts));
        match outcome {
            Ok(n) => t.checks += n,
            Err(AfterKill::Reopen(e)) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: reopening after the crash failed: {e}"),
                ));
            }
            Err(AfterKill::Violation(e)) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: VIOLATION after the crash: {e}"),
                ));
            }
        }
    }
    let summary = checks.summary()?;
    let f = &t.faults;
    writeln!(
        std::io::stdout(),
        "crash test passed: {} runs, {} kills, {} power cuts, {} reopens after faults, {summary}, \
         {} {} in {:.0} s; faults injected: {} read, {} write, {} sync, {} ENOSPC, {} metadata",
        t.runs,
        t.kills,
        t.power_cuts,
        t.reopens,
        t.checks,
        checks.what(),
        started.elapsed().as_secs_f64(),
        f.read_errors,
        f.write_errors,
        f.sync_errors,
        f.enospc,
        f.metadata_errors
    )?;
    writeln!(
        std::io::stdout(),
        "summary runs={} kills={} power_cuts={} reopens={} checks={} read_errors={} \
         write_errors={} sync_errors={} enospc={} metadata_errors={}",
        t.runs,
        t.kills,
        t.power_cuts,
        t.reopens,
        t.checks,
        f.read_errors,
        f.write_errors,
        f.sync_errors,
        f.enospc,
        f.metadata_errors
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Reports a failed crash run; the database and the expected state stay for diagnosis.
fn keep_evidence(a: &StressArgs, oracle_path: &Path, what: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stdout(),
        "{what}; keeping {} and {}",
        a.db.display(),
        oracle_path.display()
    );
    ExitCode::FAILURE
}

/// The flags of a crash-mode child: the parent's own (`parent`, as given after `stress`),
/// then those that make it a plain run that outlives the kill (a repeated flag takes its last
/// value).
pub(super) fn child_args(parent: &[OsString], oracle_path: &Path, seed: u64) -> Vec<OsString> {
    let mut expected_state = OsString::from("--expected_state=");
    expected_state.push(oracle_path);
    let mut args = parent.to_vec();
    args.extend([
        expected_state,
        "--duration=1000000".into(),
        format!("--seed={}", seed.max(1)).into(),
        "--crash=0".into(),
        "--child".into(),
    ]);
    args
}
