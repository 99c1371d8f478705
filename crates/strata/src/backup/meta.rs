//! The metadata file of one backup, `meta/NNNNNN` in the backup directory: text, one field a
//! line, so that a person can read it, and a checksum over the whole so that damage is found.
//!
//! ```text
//! strata-backup 1                       format line; a newer number is refused
//! id 2
//! timestamp 1763900000                  seconds since the Unix epoch
//! copied 40960                          bytes this backup copied in (the rest it shared)
//! shared 000012.sst 4096 1a2b3c4d       a table (or blob file): name in the database, size,
//!                                       crc32c (hex)
//! private MANIFEST-000015 512 0badf00d  any other file, in private/NNNNNN/
//! ...
//! crc32c 89abcdef                       crc32c of every byte before this line
//! ```
//!
//! Invariants: file names are plain names (no `/`, no whitespace, not `.` or `..`), each at
//! most once; shared names end in `.sst` or `.blob`. A shared file is stored under
//! `shared/<stem>_<crc32c>_<size>.<sst|blob>`, so two different files of one name (from two
//! databases, or a database restored and written again) never share a slot.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::codec::crc32c;
use crate::error::{Error, Result};

/// The format number this build writes and reads. Do not change: it is on disk.
pub const META_FORMAT: u32 = 1;

/// Where a file of a backup lives in the backup directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In `shared/`, possibly used by other backups too.
    Shared,
    /// In the backup's own `private/NNNNNN/`.
    Private,
}

/// One file of a backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub place: Place,
    /// Its name in the database (and in a restored one).
    pub name: String,
    pub size: u64,
    pub crc: u32,
}

impl FileEntry {
    /// The path of the file relative to the backup directory.
    pub fn stored_path(&self, id: u64) -> PathBuf {
        match self.place {
            Place::Shared => Path::new("shared").join(shared_name(&self.name, self.size, self.crc)),
            Place::Private => private_dir(id).join(&self.name),
        }
    }
}

/// `private/NNNNNN`, relative to the backup directory.
pub fn private_dir(id: u64) -> PathBuf {
    Path::new("private").join(format!("{id:06}"))
}

/// The extensions of the files backups share: tables and blob files, which never change once
/// written.
pub const SHARED_EXTENSIONS: [&str; 2] = ["sst", "blob"];

/// The name of a table or blob file in `shared/`: its name, crc32c and size, with its
/// extension.
pub fn shared_name(name: &str, size: u64, crc: u32) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}_{crc:08x}_{size}.{ext}"),
        None => format!("{name}_{crc:08x}_{size}"),
    }
}

/// Whether a file of this name goes to `shared/`.
pub fn is_shared(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| SHARED_EXTENSIONS.contains(&ext))
}

/// What a backup's metadata file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub id: u64,
    pub timestamp: u64,
    pub copied: u64,
    pub files: Vec<FileEntry>,
}

impl Meta {
    /// Bytes of all the backup's files.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The file's content.
    pub fn encode(&self) -> Vec<u8> {
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = writeln!(s, "strata-backup {META_FORMAT}");
        let _ = writeln!(s, "id {}", self.id);
        let _ = writeln!(s, "timestamp {}", self.timestamp);
        let _ = writeln!(s, "copied {}", self.copied);
        for f in &self.files {
            let place = match f.place {
                Place::Shared => "shared",
                Place::Private => "private",
            };
            let _ = writeln!(s, "{place} {} {} {:08x}", f.name, f.size, f.crc);
        }
        let crc = crc32c(s.as_bytes());
        let _ = writeln!(s, "crc32c {crc:08x}");
        s.into_bytes()
    }

    /// Parses the content of `path`; errors are corruption naming `path` and the offset of
    /// the bad line.
    pub fn decode(path: &Path, data: &[u8]) -> Result<Meta> {
        let bad = |offset: usize, reason: String| Error::corruption(path, offset as u64, reason);
        // The checksum line first: nothing else is trusted before it matches.
        let body_end = match data.strip_suffix(b"\n") {
            Some(rest) => rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1),
            None => return Err(bad(data.len(), "the file does not end in a newline".into())),
        };
        let (body, last) = data.split_at(body_end);
        let last = std::str::from_utf8(last).unwrap_or("").trim_end();
        let want = last
            .strip_prefix("crc32c ")
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| bad(body_end, "the last line is not 'crc32c <hex>'".into()))?;
        let got = crc32c(body);
        if got != want {
            return Err(bad(
                0,
                format!(
                    "checksum mismatch: the content has crc32c {got:08x}, the file says {want:08x}"
                ),
            ));
        }
        let text =
            std::str::from_utf8(body).map_err(|e| bad(e.valid_up_to(), "not UTF-8 text".into()))?;
        let mut id = None;
        let mut timestamp = None;
        let mut copied = None;
        let mut files: Vec<FileEntry> = Vec::new();
        let mut offset = 0;
        for (n, line) in text.lines().enumerate() {
            let at = offset;
            offset += line.len() + 1;
            let fields: Vec<&str> = line.split(' ').collect();
            let number = |s: &str| {
                s.parse::<u64>()
                    .map_err(|_| bad(at, format!("'{s}' is not a number in line '{line}'")))
            };
            if n == 0 {
                let version = match fields.as_slice() {
                    ["strata-backup", v] => number(v)?,
                    _ => return Err(bad(at, "not a Strata backup metadata file".into())),
                };
                if version > u64::from(META_FORMAT) {
                    return Err(bad(
                        at,
                        format!("written in backup format {version}; this build reads up to {META_FORMAT}"),
                    ));
                }
                continue;
            }
            match fields.as_slice() {
                ["id", v] => id = Some(number(v)?),
                ["timestamp", v] => timestamp = Some(number(v)?),
                ["copied", v] => copied = Some(number(v)?),
                [place @ ("shared" | "private"), name, size, crc] => {
                    let place = if *place == "shared" {
                        Place::Shared
                    } else {
                        Place::Private
                    };
                    check_name(name, place).map_err(|why| bad(at, why))?;
                    if files.iter().any(|f| f.name == *name) {
                        return Err(bad(at, format!("file {name} is listed twice")));
                    }
                    let crc = u32::from_str_radix(crc, 16)
                        .map_err(|_| bad(at, format!("'{crc}' is not a crc32c in hex")))?;
                    files.push(FileEntry {
                        place,
                        name: name.to_string(),
                        size: number(size)?,
                        crc,
                    });
                }
                _ => return Err(bad(at, format!("unknown line '{line}'"))),
            }
        }
        let missing = |what: &str| bad(0, format!("no '{what}' line"));
        Ok(Meta {
            id: id.ok_or_else(|| missing("id"))?,
            timestamp: timestamp.ok_or_else(|| missing("timestamp"))?,
            copied: copied.ok_or_else(|| missing("copied"))?,
            files,
        })
    }
}

/// Why `name` cannot be a file of a backup, if it cannot: a name read from metadata becomes a
/// path, so it must not climb out of its directory.
pub fn check_name(name: &str, place: Place) -> std::result::Result<(), String> {
    if name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_whitespace)
    {
        return Err(format!("'{name}' is not a plain file name"));
    }
    if place == Place::Shared && !is_shared(name) {
        return Err(format!(
            "shared file '{name}' is not a table (*.sst) or a blob file (*.blob)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Meta {
        Meta {
            id: 2,
            timestamp: 1_763_900_000,
            copied: 4608,
            files: vec![
                FileEntry {
                    place: Place::Shared,
                    name: "000012.sst".into(),
                    size: 4096,
                    crc: 0x1a2b_3c4d,
                },
                FileEntry {
                    place: Place::Private,
                    name: "MANIFEST-000015".into(),
                    size: 512,
                    crc: 0x0bad_f00d,
                },
            ],
        }
    }

    #[test]
    fn metadata_round_trips_and_reads_as_text() {
        let meta = sample();
        let bytes = meta.encode();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.starts_with("strata-backup 1\nid 2\ntimestamp 1763900000\ncopied 4608\n"),
            "{text}"
        );
        assert!(text.contains("shared 000012.sst 4096 1a2b3c4d\n"), "{text}");
        assert_eq!(Meta::decode(Path::new("m"), &bytes).unwrap(), meta);
        assert_eq!(meta.size(), 4608);
        assert_eq!(
            meta.files[0].stored_path(2),
            Path::new("shared/000012_1a2b3c4d_4096.sst")
        );
        assert_eq!(
            shared_name("000013.blob", 70, 0xab),
            "000013_000000ab_70.blob"
        );
        assert_eq!(
            meta.files[1].stored_path(2),
            Path::new("private/000002/MANIFEST-000015")
        );
    }

    /// Damaged or hostile metadata, each case with a piece of the error it must give.
    #[test]
    fn bad_metadata_is_corruption_with_a_reason() {
        let good = String::from_utf8(sample().encode()).unwrap();
        let body = |s: &str| {
            let mut t = s.to_string();
            let crc = crc32c(t.as_bytes());
            t.push_str(&format!("crc32c {crc:08x}\n"));
            t
        };
        let cases: &[(String, &str)] = &[
            (good.replace("4096", "4097"), "checksum mismatch"),
            (good.trim_end().to_string(), "does not end in a newline"),
            (good.replace("crc32c", "crc"), "not 'crc32c <hex>'"),
            (body("strata-backup 9\nid 1\n"), "backup format 9"),
            (body("something else\n"), "not a Strata backup"),
            (body("strata-backup 1\nid x\n"), "'x' is not a number"),
            (
                body("strata-backup 1\ntimestamp 1\ncopied 0\n"),
                "no 'id' line",
            ),
            (
                body("strata-backup 1\nprivate ../CURRENT 1 0\n"),
                "not a plain file name",
            ),
            (
                body("strata-backup 1\nshared CURRENT 1 0\n"),
                "is not a table",
            ),
            (
                body("strata-backup 1\nprivate A 1 0\nprivate A 1 0\n"),
                "listed twice",
            ),
            (body("strata-backup 1\nwhat now\n"), "unknown line"),
        ];
        for (text, want) in cases {
            let err = Meta::decode(Path::new("meta/000001"), text.as_bytes()).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::Corruption, "{text}");
            let msg = err.to_string();
            assert!(msg.contains("meta/000001") && msg.contains(want), "{msg}");
        }
    }
}
