//! TTL column families (RocksDB's `DBWithTTL`): values that expire.
//!
//! Byte layout of a stored value in a family with a `ttl`:
//!
//! ```text
//! stored := user value | expiry: fixed64 (little-endian seconds since the Unix epoch)
//! ```
//!
//! The expiry is the [`Clock`]'s time of the write plus the ttl (the family's, or the one given
//! to `Db::put_with_ttl`), rounded up to whole seconds and saturating. An entry is *expired*
//! once the clock reads a time after its expiry (`now > expiry`). Reads strip the suffix and
//! treat an expired newest version as a deletion of its key; compactions turn it into one (a
//! built-in filter applied before the family's own compaction filter, which sees the value
//! without the suffix). A stored value shorter than the suffix is corrupt.
//!
//! Merge operands are not supported in TTL families: their options are refused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes of the expiry suffix.
pub const SUFFIX_LEN: usize = 8;

/// The time TTL families read: seconds since the Unix epoch. Injectable, so that tests of
/// expiry need not wait ([`ManualClock`]).
///
/// The example of [`ManualClock`] sets one in [`Options::clock`](crate::Options::clock).
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch now.
    fn now_secs(&self) -> u64;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_secs(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

/// A clock that moves only when told to: for tests of expiry.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use strata::{Db, ManualClock, Options};
///
/// let clock = Arc::new(ManualClock::new(1_000));
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.ttl = Some(Duration::from_secs(60)); // the default family's values live a minute
/// options.clock = clock.clone();
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"session", b"token")?;
/// db.put_with_ttl(b"code", b"1234", Duration::from_secs(3600))?;
/// clock.advance(Duration::from_secs(61));
/// assert_eq!(db.get(b"session")?, None); // expired
/// assert_eq!(db.get(b"code")?.as_deref(), Some(&b"1234"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `secs`.
    pub fn new(secs: u64) -> ManualClock {
        ManualClock(AtomicU64::new(secs))
    }

    /// Sets the time to `secs`.
    pub fn set(&self, secs: u64) {
        self.0.store(secs, Ordering::SeqCst);
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(whole_secs(by), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for dyn Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock(now {})", self.now_secs())
    }
}

/// `d` in whole seconds, rounded up.
pub fn whole_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Appends the expiry of a value written at `now` with `ttl` to `out`.
pub fn append_expiry(out: &mut Vec<u8>, now: u64, ttl: Duration) {
    out.extend_from_slice(&now.saturating_add(whole_secs(ttl)).to_le_bytes());
}

/// A stored value split into the user value and its expiry; `None` when it is shorter than
/// the suffix.
pub fn split(stored: &[u8]) -> Option<(&[u8], u64)> {
    let at = stored.len().checked_sub(SUFFIX_LEN)?;
    let (value, suffix) = stored.split_at(at);
    let expiry = u64::from_le_bytes(suffix.try_into().ok()?);
    Some((value, expiry))
}

/// True when a value with `expiry` is expired at `now`.
pub fn is_expired(expiry: u64, now: u64) -> bool {
    now > expiry
}

/// The reason a stored value of a TTL family is corrupt (for errors naming the family).
pub fn short_value_reason(key: &[u8], len: usize) -> String {
    format!(
        "value of key '{}' is {len} bytes, shorter than the {SUFFIX_LEN}-byte expiry \
         timestamp every value of a TTL family carries",
        crate::util::printable(key)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_appended_rounded_up_and_split_back() {
        let mut v = b"value".to_vec();
        append_expiry(&mut v, 100, Duration::from_millis(1500));
        assert_eq!(v.len(), 5 + SUFFIX_LEN);
        assert_eq!(split(&v), Some((&b"value"[..], 102)));
        assert!(!is_expired(102, 102));
        assert!(is_expired(102, 103));
        let mut w = Vec::new();
        append_expiry(&mut w, u64::MAX - 1, Duration::from_secs(10));
        assert_eq!(split(&w), Some((&b""[..], u64::MAX)));
        assert_eq!(split(b"short"), None);
    }

    #[test]
    fn the_manual_clock_moves_only_when_told() {
        let c = ManualClock::new(5);
        assert_eq!(c.now_secs(), 5);
        c.advance(Duration::from_secs(3));
        assert_eq!(c.now_secs(), 8);
        c.set(1);
        assert_eq!(c.now_secs(), 1);
        assert!(SystemClock.now_secs() > 1_600_000_000);
    }
}
