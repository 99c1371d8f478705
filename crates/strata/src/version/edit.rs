//! Version edits: the records of the manifest, each a change to the set of table files.
//!
//! Byte layout (on disk; tags never change meaning and are never reused):
//!
//! ```text
//! edit  := field*
//! field := tag: varint32 | payload
//!   1 log number        varint64   WALs below it are flushed and not needed
//!   2 next file number  varint64
//!   3 last sequence     varint64
//!   4 deleted file      level: varint32 | number: varint64
//!   5 new file          level: varint32 | number: varint64 | size: varint64
//!                       | smallest: length-prefixed internal key | largest: same
//!                       | smallest seq: varint64 | largest seq: varint64
//!                       | entries: varint64 | deletions: varint64
//!   6 comparator        length-prefixed name of the user key order of family
//!                       `column family` (see below)
//!   7 column family     varint32   the family the edit's files and log number belong to
//!                                  (absent: 0, the default family)
//!   8 add family        length-prefixed name: the edit creates family `column family`
//!   9 drop family       (no payload): the edit drops family `column family`
//!  10 max family        varint32   the largest family id ever used (ids are not reused)
//!  11 prefix extractor  length-prefixed name of the family's prefix extractor (empty: none);
//!                                  in the edit that creates a family, the first edit of
//!                                  each family in a manifest, and the edit of the first open
//!                                  of a family whose manifest had none
//!  12 family ttl        varint64   family `column family` is a TTL family (its values carry
//!                                  an expiry suffix); the payload is the ttl in seconds it
//!                                  was created with. Written with the family's creation
//!                                  (and in every manifest's record of the family after)
//!  13 new blob file     number: varint64 | records: varint64 | file size: varint64
//!                       | value bytes: varint64   a blob file (`crate::blob`) of family
//!                                  `column family`, finished and synced
//!  14 (retired: never written; a blob file's garbage follows from the tables'
//!     references, tag 16)
//!  15 deleted blob file number: varint64
//!  16 new file, referring to blob files: the payload of 5, then
//!                       references: varint32 | (blob file number: varint64 | records: varint64
//!                       | bytes: varint64) per blob file, by number   how many of the
//!                                  table's entries refer to each blob file, and the bytes of
//!                                  the records they refer to. Written in place of 5 for a
//!                                  table that holds blob references
//!  17 atomic group      varint32   the edit belongs to a group of edits recorded as one
//!                                  (an atomic flush of several families); the payload is
//!                                  how many edits of the group follow it. The group's
//!                                  records are written together and synced once; a reader
//!                                  applies a group only once its last edit (payload 0) is
//!                                  read, and drops a group the manifest ends inside (its
//!                                  sync never returned)
//! ```
//!
//! A manifest's first edit of a family lists its blob files (tag 13) before the tables that
//! refer to them. A blob file's garbage is the records no table refers to; a file with no
//! table referring to it leaves the version (see `Version::apply`).
//!
//! A family without tag 11 was written by a build that had no prefix extractors: its
//! extractor is unknown until an open records one. Once recorded it never changes (an open
//! with another is refused, see `db/open.rs`).
//! The comparator (tag 6) is the name of the family's user key order
//! ([`crate::Comparator::name`]). It is written in the edit that creates a family and, in
//! every manifest, in the first edit of each family (the one holding its whole state); the
//! last one read for a family is its order. Manifests written before families had their own
//! order carry [`LEGACY_COMPARATOR_NAME`] in the default family's first edit and none for
//! other families: both mean bytewise (`leveldb.BytewiseComparator`). The first edit of a
//! manifest always carries one.
//!
//! The log number of an edit is its family's: WALs below it hold nothing of that family that
//! is not in its tables. A WAL is needed while any family's log number is at or below it.
//!
//! Text notation of a file (Debug, tools): `000012:[a#1,PUT-f#9,DEL]`.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::codec::{
    get_length_prefixed, get_varint32, get_varint64, put_length_prefixed, put_varint32,
    put_varint64,
};
use crate::key::ParsedKey;
use crate::table::Table;

const LOG_NUMBER: u32 = 1;
const NEXT_FILE_NUMBER: u32 = 2;
const LAST_SEQUENCE: u32 = 3;
const DELETED_FILE: u32 = 4;
const NEW_FILE: u32 = 5;
const COMPARATOR: u32 = 6;
const COLUMN_FAMILY: u32 = 7;
const ADD_COLUMN_FAMILY: u32 = 8;
const DROP_COLUMN_FAMILY: u32 = 9;
const MAX_COLUMN_FAMILY: u32 = 10;
const PREFIX_EXTRACTOR: u32 = 11;
const FAMILY_TTL: u32 = 12;
const NEW_BLOB_FILE: u32 = 13;
const RETIRED_BLOB_GARBAGE: u32 = 14;
const DELETED_BLOB_FILE: u32 = 15;
const NEW_FILE_WITH_BLOBS: u32 = 16;
const ATOMIC_GROUP: u32 = 17;

/// The id of the default column family, which every database has.
pub const DEFAULT_FAMILY_ID: u32 = 0;

/// The name of the default column family.
pub const DEFAULT_FAMILY_NAME: &str = "default";

/// The comparator name manifests carried before column families had their own key order:
/// it means bytewise. Read, never written.
pub const LEGACY_COMPARATOR_NAME: &str = "strata.internal-bytewise";

/// The user key order a recorded comparator name means: the legacy name is bytewise.
pub fn user_comparator_name(recorded: &str) -> &str {
    match recorded {
        LEGACY_COMPARATOR_NAME => crate::comparator::BYTEWISE_NAME,
        name => name,
    }
}

/// What the manifest knows of one table file.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct FileMeta {
    /// The file number (`NNNNNN.sst`).
    pub number: u64,
    /// Bytes in the file.
    pub size: u64,
    /// The smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// The largest internal key in the file.
    pub largest: Vec<u8>,
    /// The smallest sequence number in the file.
    pub smallest_seq: u64,
    /// The largest sequence number in the file.
    pub largest_seq: u64,
    /// Entries in the file.
    pub entries: u64,
    /// Deletions in the file.
    pub deletions: u64,
    /// The blob files the table's entries refer to, by number: how many entries refer to
    /// each, and the bytes of the records they refer to. Empty for a table without blob
    /// references. When the table leaves the tree, what it referred to is garbage unless
    /// the tables that replace it refer to it again.
    pub blob_refs: Vec<BlobCount>,
    /// The table's open reader, once a lookup has opened it, when the database keeps every
    /// table open (see `PinnedReader`); not part of the record.
    pub reader: PinnedReader,
}

/// A table's open reader kept with its file's metadata, so that a lookup reaches it through
/// the version it reads instead of the table cache (a hash lookup under a shard's lock and
/// a reference count each time). Only a database with `max_open_files` unlimited fills it,
/// since a reader kept here stays open as long as a version holds the file, whatever the
/// table cache evicts.
///
/// A memo beside the record, not part of it: a copy of the metadata starts without one,
/// and two records compare equal whatever their readers.
#[derive(Default)]
pub struct PinnedReader(OnceLock<Arc<Table>>);

impl PinnedReader {
    /// The reader, if one was kept.
    pub fn get(&self) -> Option<&Arc<Table>> {
        self.0.get()
    }

    /// Keeps `table` (unless a reader was kept meanwhile) and returns the one kept.
    pub fn keep(&self, table: Arc<Table>) -> &Arc<Table> {
        self.0.get_or_init(|| table)
    }
}

impl Clone for PinnedReader {
    fn clone(&self) -> PinnedReader {
        PinnedReader::default()
    }
}

impl PartialEq for PinnedReader {
    fn eq(&self, _: &PinnedReader) -> bool {
        true
    }
}

impl Eq for PinnedReader {}

impl fmt::Debug for FileMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = |k: &[u8]| match ParsedKey::parse(k) {
            Some(p) => format!("{p:?}"),
            None => crate::util::printable(k),
        };
        write!(
            f,
            "{:06}:[{}-{}]",
            self.number,
            key(&self.smallest),
            key(&self.largest)
        )
    }
}

/// What the manifest knows of one blob file: what it holds, and how much of that no table
/// references any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileMeta {
    /// The file number (`NNNNNN.blob`).
    pub number: u64,
    /// Records (values) in the file.
    pub records: u64,
    /// Bytes of the whole file.
    pub file_size: u64,
    /// The values' bytes before compression.
    pub value_bytes: u64,
    /// Records no table refers to.
    pub garbage_records: u64,
    /// Bytes of those records (as their references count them).
    pub garbage_bytes: u64,
}

impl BlobFileMeta {
    /// Bytes of the file's records: the file without its header and footer.
    pub fn record_bytes(&self) -> u64 {
        self.file_size
            .saturating_sub((crate::blob::HEADER_LEN + crate::blob::FOOTER_LEN) as u64)
    }
}

/// Records of one blob file and their bytes: the garbage an edit found in it, or the
/// references a table holds to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobCount {
    /// The blob file.
    pub number: u64,
    /// Records.
    pub records: u64,
    /// Their bytes (whole records, as [`crate::blob::BlobIndex::size`] counts them).
    pub bytes: u64,
}

/// Counts the blob references among a table's entries, by blob file: what
/// [`FileMeta::blob_refs`] records. Used by the table writer and by repair.
#[derive(Debug, Default)]
pub struct BlobRefCounter(std::collections::BTreeMap<u64, (u64, u64)>);

impl BlobRefCounter {
    /// Counts the entry `(ikey, value)` if it is a blob reference. The error is the printable
    /// user key of a reference that does not decode.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<(), String> {
        let trailer = crate::key::TRAILER_LEN;
        if ikey.len() < trailer
            || ikey[ikey.len() - trailer] != crate::key::ValueKind::BlobIndex as u8
        {
            return Ok(());
        }
        let index = crate::blob::BlobIndex::decode(value)
            .ok_or_else(|| crate::util::printable(crate::key::user_key(ikey)))?;
        let count = self.0.entry(index.file_number).or_default();
        count.0 += 1;
        count.1 += index.size;
        Ok(())
    }

    /// The counts, by blob file number.
    pub fn into_counts(self) -> Vec<BlobCount> {
        self.0
            .into_iter()
            .map(|(number, (records, bytes))| BlobCount {
                number,
                records,
                bytes,
            })
            .collect()
    }
}

/// A change to the set of files, plus the counters recorded with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// The name of the family's user key order (see the module notes).
    pub comparator: Option<String>,
    /// The column family the files and the log number belong to.
    pub column_family: u32,
    /// Creates family `column_family` with this name.
    pub add_column_family: Option<String>,
    /// Drops family `column_family`.
    pub drop_column_family: bool,
    /// The largest column family id ever used.
    pub max_column_family: Option<u32>,
    /// Family `column_family` is a TTL family created with this ttl, in seconds.
    pub family_ttl: Option<u64>,
    /// The name of the family's prefix extractor, empty for none.
    pub prefix_extractor: Option<String>,
    /// WALs with a smaller number hold nothing of the family that is not in its tables.
    pub log_number: Option<u64>,
    /// The next unused file number.
    pub next_file_number: Option<u64>,
    /// The last sequence number written to a table.
    pub last_sequence: Option<u64>,
    /// Files removed: (level, number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added: (level, file).
    pub new_files: Vec<(usize, FileMeta)>,
    /// Blob files added (their garbage counts are ignored: garbage follows from the tables).
    pub new_blob_files: Vec<BlobFileMeta>,
    /// Blob files removed.
    pub deleted_blob_files: Vec<u64>,
    /// In a group of edits recorded as one (tag 17): how many edits of the group follow.
    pub atomic_group: Option<u32>,
}

impl VersionEdit {
    /// The edit's encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(name) = &self.comparator {
            put_varint32(&mut out, COMPARATOR);
            put_length_prefixed(&mut out, name.as_bytes());
        }
        if self.column_family != DEFAULT_FAMILY_ID {
            put_varint32(&mut out, COLUMN_FAMILY);
            put_varint32(&mut out, self.column_family);
        }
        if let Some(name) = &self.add_column_family {
            put_varint32(&mut out, ADD_COLUMN_FAMILY);
            put_length_prefixed(&mut out, name.as_bytes());
        }
        if self.drop_column_family {
            put_varint32(&mut out, DROP_COLUMN_FAMILY);
        }
        if let Some(remaining) = self.atomic_group {
            put_varint32(&mut out, ATOMIC_GROUP);
            put_varint32(&mut out, remaining);
        }
        if let Some(max) = self.max_column_family {
            put_varint32(&mut out, MAX_COLUMN_FAMILY);
            put_varint32(&mut out, max);
        }
        if let Some(ttl) = self.family_ttl {
            put_varint32(&mut out, FAMILY_TTL);
            put_varint64(&mut out, ttl);
        }
        if let Some(name) = &self.prefix_extractor {
            put_varint32(&mut out, PREFIX_EXTRACTOR);
            put_length_prefixed(&mut out, name.as_bytes());
        }
        for (tag, value) in [
            (LOG_NUMBER, self.log_number),
            (NEXT_FILE_NUMBER, self.next_file_number),
            (LAST_SEQUENCE, self.last_sequence),
        ] {
            if let Some(v) = value {
                put_varint32(&mut out, tag);
                put_varint64(&mut out, v);
            }
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(&mut out, DELETED_FILE);
            put_varint32(&mut out, level as u32);
            put_varint64(&mut out, number);
        }
        for (level, f) in &self.new_files {
            let tag = match f.blob_refs.is_empty() {
                true => NEW_FILE,
                false => NEW_FILE_WITH_BLOBS,
            };
            put_varint32(&mut out, tag);
            put_varint32(&mut out, *level as u32);
            put_varint64(&mut out, f.number);
            put_varint64(&mut out, f.size);
            put_length_prefixed(&mut out, &f.smallest);
            put_length_prefixed(&mut out, &f.largest);
            for v in [f.smallest_seq, f.largest_seq, f.entries, f.deletions] {
                put_varint64(&mut out, v);
            }
            if !f.blob_refs.is_empty() {
                put_varint32(&mut out, f.blob_refs.len() as u32);
                for r in &f.blob_refs {
                    for v in [r.number, r.records, r.bytes] {
                        put_varint64(&mut out, v);
                    }
                }
            }
        }
        for &number in &self.deleted_blob_files {
            put_varint32(&mut out, DELETED_BLOB_FILE);
            put_varint64(&mut out, number);
        }
        for b in &self.new_blob_files {
            put_varint32(&mut out, NEW_BLOB_FILE);
            for v in [b.number, b.records, b.file_size, b.value_bytes] {
                put_varint64(&mut out, v);
            }
        }
        out
    }

    /// Decodes an edit; the error says what is wrong.
    pub fn decode(mut src: &[u8]) -> Result<VersionEdit, String> {
        let mut e = VersionEdit::default();
        let src = &mut src;
        while !src.is_empty() {
            let tag = get_varint32(src).ok_or("bad tag")?;
            let u64_field = |src: &mut &[u8], what: &str| {
                get_varint64(src).ok_or_else(|| format!("bad {what}"))
            };
            match tag {
                COMPARATOR => {
                    let name = get_length_prefixed(src).ok_or("bad comparator name")?;
                    e.comparator = Some(String::from_utf8_lossy(name).into_owned());
                }
                COLUMN_FAMILY => {
                    e.column_family = get_varint32(src).ok_or("bad column family id")?;
                }
                ADD_COLUMN_FAMILY => {
                    let name = get_length_prefixed(src).ok_or("bad column family name")?;
                    let name =
                        std::str::from_utf8(name).map_err(|_| "column family name is not UTF-8")?;
                    e.add_column_family = Some(name.to_string());
                }
                DROP_COLUMN_FAMILY => e.drop_column_family = true,
                ATOMIC_GROUP => {
                    e.atomic_group = Some(get_varint32(src).ok_or("bad atomic group count")?);
                }
                MAX_COLUMN_FAMILY => {
                    e.max_column_family = Some(get_varint32(src).ok_or("bad max column family")?);
                }
                FAMILY_TTL => e.family_ttl = Some(u64_field(src, "family ttl")?),
                PREFIX_EXTRACTOR => {
                    let name = get_length_prefixed(src).ok_or("bad prefix extractor name")?;
                    let name = std::str::from_utf8(name)
                        .map_err(|_| "prefix extractor name is not UTF-8")?;
                    e.prefix_extractor = Some(name.to_string());
                }
                LOG_NUMBER => e.log_number = Some(u64_field(src, "log number")?),
                NEXT_FILE_NUMBER => e.next_file_number = Some(u64_field(src, "next file number")?),
                LAST_SEQUENCE => e.last_sequence = Some(u64_field(src, "last sequence")?),
                DELETED_FILE => {
                    let level = get_varint32(src).ok_or("bad level")? as usize;
                    let number = u64_field(src, "file number")?;
                    e.deleted_files.push((level, number));
                }
                NEW_FILE | NEW_FILE_WITH_BLOBS => {
                    let level = get_varint32(src).ok_or("bad level")? as usize;
                    let number = u64_field(src, "file number")?;
                    let size = u64_field(src, "file size")?;
                    let smallest = get_length_prefixed(src).ok_or("bad smallest key")?.to_vec();
                    let largest = get_length_prefixed(src).ok_or("bad largest key")?.to_vec();
                    let f = FileMeta {
                        number,
                        size,
                        smallest,
                        largest,
                        smallest_seq: u64_field(src, "smallest seq")?,
                        largest_seq: u64_field(src, "largest seq")?,
                        entries: u64_field(src, "entries")?,
                        deletions: u64_field(src, "deletions")?,
                        blob_refs: Vec::new(),
                        reader: Default::default(),
                    };
                    let mut f = f;
                    if tag == NEW_FILE_WITH_BLOBS {
                        let n = get_varint32(src).ok_or("bad blob reference count")?;
                        // Bounded by the bytes left (each takes at least three), so a corrupt
                        // count cannot allocate much.
                        f.blob_refs.reserve((n as usize).min(src.len() / 3));
                        for _ in 0..n {
                            f.blob_refs.push(BlobCount {
                                number: u64_field(src, "referenced blob file")?,
                                records: u64_field(src, "blob references")?,
                                bytes: u64_field(src, "referenced blob bytes")?,
                            });
                        }
                    }
                    e.new_files.push((level, f));
                }
                NEW_BLOB_FILE => e.new_blob_files.push(BlobFileMeta {
                    number: u64_field(src, "blob file number")?,
                    records: u64_field(src, "blob file records")?,
                    file_size: u64_field(src, "blob file size")?,
                    value_bytes: u64_field(src, "blob file value bytes")?,
                    garbage_records: 0,
                    garbage_bytes: 0,
                }),
                RETIRED_BLOB_GARBAGE => return Err("retired version edit tag 14".into()),
                DELETED_BLOB_FILE => e
                    .deleted_blob_files
                    .push(u64_field(src, "deleted blob file number")?),
                other => return Err(format!("unknown version edit tag {other}")),
            }
        }
        Ok(e)
    }
}

impl crate::iterator::FileBounds for FileMeta {
    fn smallest(&self) -> &[u8] {
        &self.smallest
    }
    fn largest(&self) -> &[u8] {
        &self.largest
    }
}

/// The data-driven tests' common parts: their runner, and the compact text notation of files
/// and versions they use (`compaction/testdata/*.txt`, `version/testdata/*.txt`).
///
/// A file is `NUMBER:LO-HI:BYTES`, for example `12:a-f:100`: file 12, user keys `a` to `f`,
/// 100 bytes. Its keys' sequence numbers are implied: every key of file N is a put at sequence
/// N (so in L0, newest first, higher numbers come first). A version is one line per non-empty
/// level, `Ln: FILE FILE ...`, in the version's order; an empty version is `empty`.
#[cfg(test)]
pub(crate) mod testdata {
    use super::FileMeta;
    use crate::key::{append_internal_key, user_key, ValueKind};
    use crate::version::Version;

    /// Runs every case of the data-driven test file `path` (relative to the crate) through
    /// `f`, with a state of type `S` shared by the cases of a file; returns how many ran.
    /// With `REWRITE` set in the environment, the file's expected outputs are rewritten.
    pub fn run<S: Default>(
        path: &str,
        mut f: impl FnMut(&mut datadriven::TestCase, &mut S) -> Result<String, String>,
    ) -> usize {
        let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
        let mut ran = 0;
        datadriven::walk(&path, |file| {
            let mut state = S::default();
            file.run(|case| {
                ran += 1;
                f(case, &mut state)
            });
        });
        ran
    }

    /// Sets `$field` from the directive argument `$name` if the case has it:
    /// `take_arg!(case, "trigger", options.trigger)`.
    macro_rules! take_arg {
        ($case:expr, $name:literal, $field:expr) => {
            if let Some(v) = $case.try_take_arg($name).map_err(|e| e.to_string())? {
                $field = v;
            }
        };
    }
    pub(crate) use take_arg;

    /// Parses `NUMBER:LO-HI:BYTES`.
    pub fn parse_file(spec: &str) -> Result<FileMeta, String> {
        let bad = || format!("bad file {spec:?}: want NUMBER:LO-HI:BYTES");
        let mut parts = spec.split(':');
        let (Some(number), Some(range), Some(size), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
        let number: u64 = number.parse().map_err(|_| bad())?;
        let key = |k: &str| {
            let mut v = Vec::new();
            append_internal_key(&mut v, k.as_bytes(), number, ValueKind::Put as u8);
            v
        };
        Ok(FileMeta {
            number,
            size: size.parse().map_err(|_| bad())?,
            smallest: key(lo),
            largest: key(hi),
            smallest_seq: number,
            largest_seq: number,
            entries: 1,
            deletions: 0,
            blob_refs: Vec::new(),
            reader: Default::default(),
        })
    }

    /// A file in the notation (its sequence numbers are not shown).
    pub fn format_file(f: &FileMeta) -> String {
        format!(
            "{}:{}-{}:{}",
            f.number,
            String::from_utf8_lossy(user_key(&f.smallest)),
            String::from_utf8_lossy(user_key(&f.largest)),
            f.size
        )
    }

    /// Parses `Ln: FILE FILE ...` into the level and its files.
    pub fn parse_level(line: &str) -> Result<(usize, Vec<FileMeta>), String> {
        let (level, files) = line
            .split_once(':')
            .ok_or_else(|| format!("bad line {line:?}: want Ln: FILE ..."))?;
        let level = level
            .trim()
            .strip_prefix('L')
            .and_then(|l| l.parse().ok())
            .ok_or_else(|| format!("bad level in {line:?}"))?;
        let files = files.split_whitespace().map(parse_file);
        Ok((level, files.collect::<Result<_, _>>()?))
    }

    /// The version built from lines `Ln: FILE ...` (blank lines and `#` comments skipped).
    pub fn parse_version(text: &str) -> Result<Version, String> {
        let mut edit = super::VersionEdit::default();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (level, files) = parse_level(line)?;
            edit.new_files.extend(files.into_iter().map(|f| (level, f)));
        }
        Version::default().apply(&edit)
    }

    /// The version in the notation, one line per non-empty level.
    pub fn format_version(v: &Version) -> String {
        let mut out = String::new();
        for (level, files) in v.levels.iter().enumerate() {
            if !files.is_empty() {
                let files: Vec<String> = files.iter().map(|f| format_file(f)).collect();
                out.push_str(&format!("L{level}: {}\n", files.join(" ")));
            }
        }
        if out.is_empty() {
            out.push_str("empty\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{append_internal_key, ValueKind};

    fn ik(k: &str, seq: u64, kind: ValueKind) -> Vec<u8> {
        let mut v = Vec::new();
        append_internal_key(&mut v, k.as_bytes(), seq, kind as u8);
        v
    }

    #[test]
    fn edits_round_trip_and_truncations_fail() {
        let f = FileMeta {
            number: 12,
            size: 4096,
            smallest: ik("a", 1, ValueKind::Put),
            largest: ik("f", 9, ValueKind::Delete),
            smallest_seq: 1,
            largest_seq: 9,
            entries: 100,
            deletions: 3,
            blob_refs: Vec::new(),
            reader: Default::default(),
        };
        assert_eq!(format!("{f:?}"), "000012:[a#1,PUT-f#9,DEL]");
        let with_blobs = FileMeta {
            number: 13,
            blob_refs: vec![
                BlobCount {
                    number: 20,
                    records: 10,
                    bytes: 4096,
                },
                BlobCount {
                    number: u64::MAX,
                    records: 1,
                    bytes: u64::MAX,
                },
            ],
            ..f.clone()
        };
        let e = VersionEdit {
            comparator: Some(crate::comparator::REVERSE_BYTEWISE_NAME.into()),
            column_family: 3,
            add_column_family: Some("index".into()),
            drop_column_family: true,
            max_column_family: Some(4),
            family_ttl: Some(3600),
            prefix_extractor: Some("fixed:4".into()),
            log_number: Some(7),
            next_file_number: Some(13),
            last_sequence: Some(99),
            deleted_files: vec![(0, 3), (1, 4)],
            new_files: vec![(0, f.clone()), (6, f), (1, with_blobs)],
            new_blob_files: vec![BlobFileMeta {
                number: 20,
                records: 1000,
                file_size: 1 << 30,
                value_bytes: (1 << 30) + 7,
                garbage_records: 0,
                garbage_bytes: 0,
            }],
            deleted_blob_files: vec![15],
            atomic_group: Some(2),
        };
        let bytes = e.encode();
        assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
        for cut in 1..bytes.len() {
            if let Ok(d) = VersionEdit::decode(&bytes[..cut]) {
                assert_ne!(d, e, "a truncated edit decoded as the whole");
            }
        }
        assert!(VersionEdit::decode(&[99]).is_err());
        // A retired tag is refused, not skipped.
        assert!(VersionEdit::decode(&[14, 1, 1, 1]).is_err());
    }

    /// Tag 11 carries the family's prefix extractor; the empty name (no extractor) is
    /// recorded too, unlike an absent tag (nothing known); a name that is not UTF-8 is
    /// refused, and so is a tag no version knows.
    #[test]
    fn the_prefix_extractor_tag_round_trips() {
        for name in [None, Some(""), Some("capped:16")] {
            let e = VersionEdit {
                column_family: 2,
                prefix_extractor: name.map(String::from),
                ..VersionEdit::default()
            };
            let bytes = e.encode();
            assert_eq!(bytes.contains(&(PREFIX_EXTRACTOR as u8)), name.is_some());
            assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
        }
        let err = VersionEdit::decode(&[PREFIX_EXTRACTOR as u8, 2, 0xff, 0xfe]).unwrap_err();
        assert_eq!(err, "prefix extractor name is not UTF-8");
        let err = VersionEdit::decode(&[99]).unwrap_err();
        assert_eq!(err, "unknown version edit tag 99");
    }
}
