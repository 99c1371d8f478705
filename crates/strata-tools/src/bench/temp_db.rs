//! The database of a run without `--db`: a directory under the system temp dir that the run
//! removes however it ends: at the end, on an error or a closed stdout (when [`TempDb`] is
//! dropped), and on SIGINT or SIGTERM (from a thread that waits for them).

use std::path::{Path, PathBuf};
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Removes its directory when dropped, or when the process gets SIGINT or SIGTERM.
pub struct TempDb {
    path: PathBuf,
}

impl TempDb {
    /// Takes charge of `path` (which must be this run's own) and starts the thread that
    /// removes it on a signal, then ends the process as the signal would have.
    pub fn new(path: PathBuf) -> std::io::Result<TempDb> {
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let on_signal = path.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    remove(&on_signal);
                    // The default action of SIGINT and SIGTERM ends the process, so that its
                    // parent sees it ended by the signal.
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                    std::process::exit(128 + signal);
                }
            })?;
        Ok(TempDb { path })
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Removes `dir` and all it holds. The engine's background threads may still be writing
/// into it (after a signal), so a file that appears meanwhile is met with another try.
fn remove(dir: &Path) {
    for _ in 0..100 {
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => return,
        }
    }
}
