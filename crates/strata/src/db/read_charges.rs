//! The read charges a closed database leaves for the next process that opens it
//! (`READ_CHARGES`).
//!
//! Read-triggered compaction (`version/read_charge.rs`) merges L0 into the level below once
//! reads have spent on the L0 files about what the merge would cost. The charge lives in the
//! version, in memory, so a database read by many short processes (a service that restarts,
//! command-line tools, each step of a benchmark) started every process from nothing: each
//! paid for the extra sorted runs its whole life and none ever paid for the merge. At close
//! each family's charge is written here with the L0 files it was paid for; at open a family
//! whose L0 holds exactly those files starts from that charge, and the background threads
//! merge L0 as soon as it reaches the merge's cost, as one long process would have.
//!
//! The file is a hint: it holds no data. One that is missing, damaged or about other L0
//! files is ignored (the damage noted in the info log), and nothing else reads it. It is
//! written through a temporary file and a rename, so a crash leaves the old one or the new
//! one; a process that ends without closing leaves the last close's, whose files a
//! flush or compaction since has most likely replaced.
//!
//! Layout (text, one line each, `\n` after every line):
//!
//! ```text
//! strata-read-charges 1
//! <family id> <charge in bytes> <L0 file numbers, comma-separated, newest first>
//! ...
//! crc32c <the masked crc32c of the bytes before this line, 8 hex digits>
//! ```

use std::fmt::Write as _;

use crate::db::DbInner;
use crate::filename::READ_CHARGES;

/// The first line of the file.
const HEADER: &str = "strata-read-charges 1";
/// The largest file read (about 40 bytes a family, plus its L0 file numbers).
const MAX_FILE_BYTES: usize = 1 << 20;

/// One family's charge and the L0 files it was paid for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyCharge {
    pub family: u32,
    pub bytes: u64,
    /// The family's L0 file numbers, in the version's order (newest first).
    pub l0: Vec<u64>,
}

/// The file's bytes for `charges`.
pub fn encode(charges: &[FamilyCharge]) -> Vec<u8> {
    let mut text = format!("{HEADER}\n");
    for c in charges {
        let files: Vec<String> = c.l0.iter().map(u64::to_string).collect();
        let _ = writeln!(text, "{} {} {}", c.family, c.bytes, files.join(","));
    }
    let crc = crate::codec::mask_crc(crc32c::crc32c(text.as_bytes()));
    let _ = writeln!(text, "crc32c {crc:08x}");
    text.into_bytes()
}

/// The charges in a file's bytes, or what is wrong with them.
pub fn decode(bytes: &[u8]) -> std::result::Result<Vec<FamilyCharge>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not text".to_string())?;
    let body_end = text
        .trim_end_matches('\n')
        .rfind('\n')
        .map(|i| i + 1)
        .ok_or("no checksum line")?;
    let (body, last) = text.split_at(body_end);
    let stored = last
        .strip_prefix("crc32c ")
        .and_then(|hex| hex.strip_suffix('\n'))
        .filter(|hex| hex.len() == 8)
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .ok_or("the last line is not a checksum")?;
    let actual = crate::codec::mask_crc(crc32c::crc32c(body.as_bytes()));
    if stored != actual {
        return Err(format!(
            "checksum mismatch (stored {stored:08x}, computed {actual:08x})"
        ));
    }
    let mut lines = body.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!("the first line is not '{HEADER}'"));
    }
    lines
        .enumerate()
        .map(|(i, line)| decode_line(line).ok_or(format!("line {} is malformed", i + 2)))
        .collect()
}

fn decode_line(line: &str) -> Option<FamilyCharge> {
    let mut fields = line.split(' ');
    let family = fields.next()?.parse().ok()?;
    let bytes = fields.next()?.parse().ok()?;
    let l0 = fields
        .next()?
        .split(',')
        .map(|n| n.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    fields
        .next()
        .is_none()
        .then_some(FamilyCharge { family, bytes, l0 })
}

impl DbInner {
    /// Writes each family's read charge (those with L0 files and a charge) to
    /// `READ_CHARGES`, or removes the file when none has one. Called at close, once the
    /// background threads are gone, so that no version changes meanwhile. A failure is
    /// only logged: the next process then starts from nothing, as it always did.
    pub(super) fn save_read_charges(&self) {
        let charges: Vec<FamilyCharge> = self
            .families()
            .values()
            .filter_map(|cf| {
                let version = cf.super_version().version.clone();
                let bytes = version.read_charge.bytes();
                let l0 = &version.levels[0];
                (bytes > 0 && !l0.is_empty()).then(|| FamilyCharge {
                    family: cf.id(),
                    bytes,
                    l0: l0.iter().map(|f| f.number).collect(),
                })
            })
            .collect();
        let path = self.path.join(READ_CHARGES);
        let saved = if charges.is_empty() {
            match self.fs.exists(&path) {
                true => self.fs.remove_file(&path),
                false => Ok(()),
            }
        } else {
            crate::fs::write_file_atomically(
                self.fs.as_ref(),
                &self.path,
                READ_CHARGES,
                &encode(&charges),
            )
        };
        if let Err(e) = saved {
            self.info_log.warn(format_args!(
                "could not save the read charges of L0 in {READ_CHARGES}: {e}"
            ));
        }
    }

    /// Gives each family whose L0 holds the files `READ_CHARGES` names the charge saved for
    /// them (module doc). A damaged file is noted in the info log and ignored.
    pub(super) fn restore_read_charges(&self) {
        let path = self.path.join(READ_CHARGES);
        if !self.fs.exists(&path) {
            return;
        }
        let charges = match crate::fs::read_small_file(self.fs.as_ref(), &path, MAX_FILE_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|bytes| decode(&bytes))
        {
            Ok(charges) => charges,
            Err(why) => {
                self.info_log.warn(format_args!(
                    "read charges in {} ignored: {why}",
                    path.display()
                ));
                return;
            }
        };
        let families = self.families();
        for charge in charges {
            let Some(cf) = families.get(&charge.family) else {
                continue;
            };
            let version = cf.super_version().version.clone();
            let l0: Vec<u64> = version.levels[0].iter().map(|f| f.number).collect();
            if l0 == charge.l0 {
                version.read_charge.restore(charge.bytes);
                self.info_log.info(format_args!(
                    "family '{}' starts with a read charge of {} bytes on its {} L0 files \
                     (saved at the last close; a merge costs {})",
                    cf.name(),
                    charge.bytes,
                    l0.len(),
                    version.l0_merge_input_bytes()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charge(family: u32, bytes: u64, l0: &[u64]) -> FamilyCharge {
        FamilyCharge {
            family,
            bytes,
            l0: l0.to_vec(),
        }
    }

    #[test]
    fn charges_decode_as_encoded() {
        for charges in [
            vec![],
            vec![charge(0, 92_000_000, &[24])],
            vec![charge(0, 1, &[9, 8, 7]), charge(3, u64::MAX, &[u64::MAX])],
        ] {
            assert_eq!(decode(&encode(&charges)), Ok(charges));
        }
    }

    /// A file of `body` under its right checksum.
    fn with_checksum(body: &str) -> Vec<u8> {
        let crc = crate::codec::mask_crc(crc32c::crc32c(body.as_bytes()));
        format!("{body}crc32c {crc:08x}\n").into_bytes()
    }

    /// Each damage is refused, naming what is wrong.
    #[test]
    fn damaged_files_are_refused() {
        let good = encode(&[charge(0, 5, &[12, 11])]);
        assert_eq!(good, with_checksum(&format!("{HEADER}\n0 5 12,11\n")));
        let flip = |at: usize| {
            let mut b = good.clone();
            b[at] ^= 1;
            b
        };
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("empty", vec![], "no checksum line"),
            ("not text", vec![0xff, b'\n', 0xfe, b'\n'], "not text"),
            (
                "cut short",
                good[..good.len() - 3].to_vec(),
                "not a checksum",
            ),
            (
                "a bit of the body",
                flip(HEADER.len() + 2),
                "checksum mismatch",
            ),
            (
                "a bit of the checksum",
                flip(good.len() - 3),
                "checksum mismatch",
            ),
            (
                "another version",
                with_checksum("strata-read-charges 2\n"),
                "the first line",
            ),
            (
                "a word for a number",
                with_checksum(&format!("{HEADER}\n0 five 12\n")),
                "line 2",
            ),
            (
                "no L0 files",
                with_checksum(&format!("{HEADER}\n0 5\n")),
                "line 2",
            ),
            (
                "a field too many",
                with_checksum(&format!("{HEADER}\n0 5 12 1\n")),
                "line 2",
            ),
            (
                "an empty file number",
                with_checksum(&format!("{HEADER}\n0 5 12,\n")),
                "line 2",
            ),
        ];
        for (what, bytes, expected) in cases {
            let err = decode(&bytes).expect_err(what);
            assert!(err.contains(expected), "{what}: {err}");
        }
    }
}
