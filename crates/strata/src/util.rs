//! Small helpers with no better home: printable keys, a seeded random generator and a cache
//! line prefetch.

/// Asks the CPU to start bringing the cache line holding `byte` in, without waiting for it:
/// a lookup that will read several cold lines of unrelated structures asks for all of them
/// first, so that their misses overlap instead of following one another. A hint only; a
/// no-op on targets without the instruction.
#[inline]
pub fn prefetch(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the pointer comes from a reference, and a prefetch neither faults nor changes
    // anything the program can observe.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((byte as *const u8).cast::<i8>())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

/// Asks for the lines of a block that a lookup in it touches first, all at once: its first
/// line, the first line of each further page it spans, its middle line and its last. A
/// block read in place from a mapped table by a new process misses the cache at each, and a
/// 4 KiB block not aligned to pages usually spans two, each a TLB miss too. The trailer and
/// restart array at the end, the restart keys and the entry scan would otherwise reach them
/// one after another, each waiting for the one before. (A block from the block cache gains
/// nothing measurable from it: docs/benchmarks.md.)
#[inline]
pub fn prefetch_block(bytes: &[u8]) {
    const PAGE: usize = 4096;
    let Some(last) = bytes.len().checked_sub(1) else {
        return;
    };
    prefetch(&bytes[0]);
    prefetch(&bytes[last / 2]);
    prefetch(&bytes[last]);
    let mut at = PAGE - (bytes.as_ptr() as usize % PAGE);
    while at < last {
        prefetch(&bytes[at]);
        at += PAGE;
    }
}

/// [`prefetch`] of a raw address, for an address kept apart from what it points into (a
/// cache entry's hint). A prefetch never faults, so any address is sound; one that no longer
/// points into live memory only wastes the request.
#[inline]
pub fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch neither faults nor changes anything the program can observe,
    // whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Renders bytes for humans: printable ASCII as is, everything else as `\xNN`.
pub fn printable(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'\\' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// A small, fast, seeded pseudo-random generator (SplitMix64). Not for cryptography; used for
/// skiplist heights and in tests, where a seed must reproduce a run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `1/n`.
    #[inline]
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// The proleptic Gregorian date (year, month, day) of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of the era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the year from March 1st
    let mp = (5 * doy + 2) / 153; // month from March, 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Seconds since the Unix epoch as UTC (year, month, day, hour, minute, second).
pub fn utc_fields(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    (year, month, day, s / 3600, s / 60 % 60, s % 60)
}

/// Seconds since the Unix epoch as an RFC 3339 UTC date-time: `2026-11-23T10:15:00Z`.
pub fn utc_datetime(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = utc_fields(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// The message of a caught panic.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_string(),
        (_, Some(s)) => s.clone(),
        _ => "(no message)".to_string(),
    }
}
