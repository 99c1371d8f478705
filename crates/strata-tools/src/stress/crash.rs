//! The crash loop of `strata stress --crash`: a child process runs the workers and is killed
//! at a random moment; the database is reopened and checked (against the oracle, or the
//! bank's ledger), and the next child starts.

use super::*;

/// What the crash loop checks, for the plain test or the bank.
pub(super) trait CrashChecks {
    /// Checks the database before the first run.
    fn before_first_run(&mut self) -> Result<(), BoxError>;
    /// Reopens and checks the database after a kill; returns the checks made.
    fn after_kill(&mut self) -> Result<u64, AfterKill>;
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

    fn summary(&mut self) -> Result<String, BoxError> {
        let ops = Oracle::open(self.oracle_path, self.a.keys)?.ops() - self.ops_before;
        Ok(format!("about {ops} operations"))
    }

    fn what(&self) -> &'static str {
        "key checks"
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
    let (mut runs, mut kills, mut verified) = (0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        runs += 1;
        let mut child = Command::new(&exe)
            .arg("stress")
            .args(child_args(&parent, oracle_path, rng.next_u64()))
            .stdout(Stdio::null())
            .spawn()?;
        let wait = Duration::from_millis(1 + rng.below(a.kill_interval_ms.max(1)));
        let kill_at = (Instant::now() + wait).min(deadline);
        let mut exited = None;
        while Instant::now() < kill_at {
            if let Some(status) = child.try_wait()? {
                exited = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        match exited {
            Some(status) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: the child exited on its own ({status})"),
                ));
            }
            None => {
                child.kill()?;
                child.wait()?;
                kills += 1;
            }
        }
        match checks.after_kill() {
            Ok(n) => verified += n,
            Err(AfterKill::Reopen(e)) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: reopening after the kill failed: {e}"),
                ));
            }
            Err(AfterKill::Violation(e)) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: VIOLATION after the kill: {e}"),
                ));
            }
        }
    }
    let summary = checks.summary()?;
    writeln!(
        std::io::stdout(),
        "crash test passed: {runs} runs, {kills} kills, {summary}, {verified} {} in {:.0} s",
        checks.what(),
        started.elapsed().as_secs_f64()
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
