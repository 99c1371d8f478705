//! Entries in the `key#seq,KIND=value` notation (the Debug form of [`ParsedKey`] plus a
//! value), and the pieces of a tree built from entries: sorted vectors as iterators,
//! memtables, tables, and a whole tree ([`Lsm`]) of memtables, L0 tables and levels read
//! through one merging iterator, as the database reads its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fs::{FileSystem, PosixFs};
use crate::iterator::{ConcatIterator, FileBounds, InternalIterator, MergingIterator};
use crate::key::{append_internal_key, compare_internal, ParsedKey, ValueKind};
use crate::memtable::MemTable;
use crate::table::reader::{new_block_cache, TableReadOptions};
use crate::table::{Table, TableBuilder, TableOptions};
use crate::testing::harness::{Entries, Entry};
use crate::util::{printable, Rng};

/// Parses `key#seq,KIND` (KIND one of PUT, DEL, SINGLEDEL, MERGE; `\xNN` escapes in the key) into
/// an encoded internal key.
pub(crate) fn parse_key(s: &str) -> Result<Vec<u8>, String> {
    let (user, trailer) = s
        .rsplit_once('#')
        .ok_or_else(|| format!("{s:?}: expected key#seq,KIND"))?;
    let (seq, kind) = trailer
        .split_once(',')
        .ok_or_else(|| format!("{s:?}: expected key#seq,KIND"))?;
    let seq: u64 = seq
        .parse()
        .map_err(|e| format!("{s:?}: sequence number: {e}"))?;
    let kind = [
        ValueKind::Put,
        ValueKind::Delete,
        ValueKind::SingleDelete,
        ValueKind::Merge,
        ValueKind::BlobIndex,
    ]
    .into_iter()
    .find(|k| k.name() == kind)
    .ok_or_else(|| format!("{s:?}: unknown kind {kind:?}"))?;
    let mut ikey = Vec::new();
    append_internal_key(&mut ikey, &unescape(user)?, seq, kind as u8);
    Ok(ikey)
}

/// Parses `key#seq,KIND=value` (no `=value`: an empty value). Keys may not hold `=`.
pub(crate) fn parse_entry(s: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (key, value) = s.split_once('=').unwrap_or((s, ""));
    Ok((parse_key(key)?, unescape(value)?))
}

/// Parses entries separated by white space (and line breaks).
pub(crate) fn parse_entries(s: &str) -> Result<Vec<Entry>, String> {
    s.split_whitespace().map(parse_entry).collect()
}

/// An internal key in the notation.
pub(crate) fn show_key(ikey: &[u8]) -> String {
    match ParsedKey::parse(ikey) {
        Some(p) => format!("{p:?}"),
        None => format!("{:?}", printable(ikey)),
    }
}

/// Undoes [`printable`]: `\xNN` stands for the byte NN.
pub(crate) fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'\\' {
            let hex = tail
                .strip_prefix(b"x")
                .and_then(|t| t.get(..2))
                .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
                .ok_or_else(|| format!("{s:?}: bad escape"))?;
            out.push(hex);
            rest = &tail[3..];
        } else {
            out.push(b);
            rest = tail;
        }
    }
    Ok(out)
}

/// `items` in a random order.
pub(crate) fn shuffled<T: Clone>(rng: &mut Rng, items: &[T]) -> Vec<T> {
    let mut v = items.to_vec();
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
    v
}

/// A cursor that fails a read: after `steps` positionings and moves it stops, invalid,
/// with an injected error (a table whose next block cannot be read).
pub(crate) struct FailingAfter {
    inner: VecIter,
    steps: usize,
}

impl FailingAfter {
    /// `inner`, failing at its `steps`-th positioning or move (1: the first).
    pub(crate) fn new(inner: VecIter, steps: usize) -> FailingAfter {
        FailingAfter { inner, steps }
    }

    fn step(&mut self) -> bool {
        self.steps = self.steps.saturating_sub(1);
        self.steps > 0
    }
}

impl InternalIterator for FailingAfter {
    fn valid(&self) -> bool {
        self.steps > 0 && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        if self.step() {
            self.inner.seek_to_first();
        }
    }
    fn seek_to_last(&mut self) {
        if self.step() {
            self.inner.seek_to_last();
        }
    }
    fn seek(&mut self, target: &[u8]) {
        if self.step() {
            self.inner.seek(target);
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        if self.step() {
            self.inner.seek_for_prev(target);
        }
    }
    fn next(&mut self) {
        if self.step() {
            self.inner.next();
        }
    }
    fn prev(&mut self) {
        if self.step() {
            self.inner.prev();
        }
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> crate::error::Result<()> {
        match self.steps {
            0 => Err(crate::error::Error::Unavailable(
                "injected read error".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// A sorted vector of internal entries as an internal iterator.
pub(crate) struct VecIter {
    entries: Vec<Entry>,
    pos: Option<usize>,
}

impl VecIter {
    /// A cursor over `entries`, which are in internal-key order.
    pub(crate) fn new(entries: Vec<Entry>) -> VecIter {
        VecIter { entries, pos: None }
    }

    fn set(&mut self, i: usize) {
        self.pos = (i < self.entries.len()).then_some(i);
    }
}

impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.pos.is_some()
    }
    fn seek_to_first(&mut self) {
        self.set(0);
    }
    fn seek_to_last(&mut self) {
        self.pos = self.entries.len().checked_sub(1);
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self
            .entries
            .partition_point(|(k, _)| compare_internal(k, target).is_lt());
        self.set(i);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self
            .entries
            .partition_point(|(k, _)| compare_internal(k, target).is_le());
        self.pos = i.checked_sub(1);
    }
    fn next(&mut self) {
        if let Some(i) = self.pos {
            self.set(i + 1);
        }
    }
    fn prev(&mut self) {
        self.pos = self.pos.and_then(|i| i.checked_sub(1));
    }
    fn key(&self) -> &[u8] {
        self.pos.map_or(&[], |i| &self.entries[i].0)
    }
    fn value(&self) -> &[u8] {
        self.pos.map_or(&[], |i| &self.entries[i].1)
    }
}

/// A memtable holding `entries` (internal keys), added in a random order.
pub(crate) fn memtable(
    entries: &Entries,
    rng: &mut Rng,
    write_buffer_size: usize,
) -> Arc<MemTable> {
    let mem = Arc::new(MemTable::new(rng.next_u64(), write_buffer_size));
    for (ikey, value) in shuffled(rng, entries) {
        let p = ParsedKey::parse(&ikey).expect("an internal key");
        let kind = p.value_kind().expect("a stored kind");
        mem.add(p.seq, kind, p.user_key, &value);
    }
    mem
}

/// Which blocks a table opened by [`open_table`] caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caching {
    /// No block cache.
    None,
    /// Data blocks in a block cache.
    Data,
    /// A small cache that also holds the index and filter blocks (so they are evicted and
    /// read again); the top-level blocks of partitioned tables stay pinned.
    All,
    /// As `All`, with the top-level blocks of partitioned tables in the cache too
    /// (`pin_top_level_index_and_filter` off).
    AllUnpinned,
}

/// Writes `entries` (in the order of `options.comparator`) to a new table at `path`.
pub(crate) fn write_table(path: &Path, entries: &Entries, options: TableOptions) {
    let file = PosixFs.create_writable(path).unwrap();
    let mut b = TableBuilder::new(file, options);
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    let (_, props) = b.finish().unwrap();
    assert_eq!(props.entries, entries.len() as u64);
}

/// Opens the table at `path`.
pub(crate) fn open_table(
    path: &Path,
    options: TableOptions,
    caching: Caching,
) -> crate::Result<Arc<Table>> {
    let all = matches!(caching, Caching::All | Caching::AllUnpinned);
    let size = if all { 8 << 10 } else { 1 << 20 };
    let read = TableReadOptions {
        block_cache: (caching != Caching::None).then(|| Arc::new(new_block_cache(size, 4))),
        cache_id: 1,
        cache_index_and_filter: all,
        pin_top_level_index_and_filter: caching != Caching::AllUnpinned,
        ..TableReadOptions::uncached(options)
    };
    Table::open(PosixFs.open_random(path)?, path, &read).map(Arc::new)
}

/// Writes `entries` to a table at `path`, opens it and checks that it reads back whole.
pub(crate) fn table(
    path: &Path,
    entries: &Entries,
    options: TableOptions,
    caching: Caching,
) -> Arc<Table> {
    write_table(path, entries, options.clone());
    let table = open_table(path, options, caching).unwrap();
    assert_eq!(table.verify().unwrap(), entries.len() as u64);
    table
}

/// Options of the tables of internal keys these helpers write: tiny blocks, so that even a
/// few entries span several.
pub(crate) fn internal_table_options() -> TableOptions {
    TableOptions {
        block_size: 64,
        restart_interval: 2,
        ..TableOptions::for_internal_keys()
    }
}

/// A file of a sorted run: its key bounds, and its entries in a table or in memory.
pub(crate) struct RunFile {
    smallest: Vec<u8>,
    largest: Vec<u8>,
    table: Option<Arc<Table>>,
    entries: Vec<Entry>,
}

impl RunFile {
    /// A file of `entries` (at least one, in internal-key order): a table written at `path`,
    /// or without a path, the entries in memory.
    pub(crate) fn new(entries: Vec<Entry>, path: Option<&Path>) -> Arc<RunFile> {
        let table = path.map(|p| table(p, &entries, internal_table_options(), Caching::None));
        Arc::new(RunFile {
            smallest: entries.first().expect("a file has entries").0.clone(),
            largest: entries.last().expect("a file has entries").0.clone(),
            entries: if table.is_some() { Vec::new() } else { entries },
            table,
        })
    }

    /// An iterator over the file.
    pub(crate) fn open(&self) -> Box<dyn InternalIterator> {
        match &self.table {
            Some(t) => Box::new(t.iter()),
            None => Box::new(VecIter::new(self.entries.clone())),
        }
    }
}

impl FileBounds for RunFile {
    fn smallest(&self) -> &[u8] {
        &self.smallest
    }
    fn largest(&self) -> &[u8] {
        &self.largest
    }
}

/// A concatenating iterator over a sorted run.
pub(crate) fn concat(files: Vec<Arc<RunFile>>) -> ConcatIterator<Arc<RunFile>> {
    ConcatIterator::new(files, Box::new(|f: &Arc<RunFile>| Ok(f.open())))
}

/// A tree of memtables, L0 tables and levels of sorted runs, in a temporary directory.
pub(crate) struct Lsm {
    dir: tempfile::TempDir,
    tables: u64,
    memtables: Vec<Arc<MemTable>>,
    l0: Vec<Arc<Table>>,
    /// Levels 1 and deeper; `levels[0]` is L1.
    levels: Vec<Vec<Arc<RunFile>>>,
}

impl Lsm {
    /// An empty tree.
    pub(crate) fn new() -> Lsm {
        Lsm {
            dir: tempfile::tempdir().unwrap(),
            tables: 0,
            memtables: Vec::new(),
            l0: Vec::new(),
            levels: Vec::new(),
        }
    }

    fn sorted(mut entries: Vec<Entry>) -> Result<Vec<Entry>, String> {
        entries.sort_by(|a, b| compare_internal(&a.0, &b.0));
        match entries.windows(2).find(|w| w[0].0 == w[1].0) {
            Some(w) => Err(format!("{} is given twice", show_key(&w[0].0))),
            None => Ok(entries),
        }
    }

    fn new_path(&mut self) -> PathBuf {
        self.tables += 1;
        self.dir.path().join(format!("{:06}.sst", self.tables))
    }

    /// Adds a memtable holding `entries`, older than those added before.
    pub(crate) fn add_memtable(&mut self, entries: Vec<Entry>) -> Result<(), String> {
        let entries = Self::sorted(entries)?;
        let mut rng = Rng::new(self.memtables.len() as u64);
        self.memtables.push(memtable(&entries, &mut rng, 1 << 16));
        Ok(())
    }

    /// Adds an L0 table holding `entries`, older than those added before.
    pub(crate) fn add_l0(&mut self, entries: Vec<Entry>) -> Result<(), String> {
        let entries = Self::sorted(entries)?;
        let path = self.new_path();
        self.l0.push(table(
            &path,
            &entries,
            internal_table_options(),
            Caching::None,
        ));
        Ok(())
    }

    /// Adds a table holding `entries` (at least one) to `level` (1 or deeper), after the
    /// level's last table: its keys must all come after that table's.
    pub(crate) fn add_file(&mut self, level: usize, entries: Vec<Entry>) -> Result<(), String> {
        let entries = Self::sorted(entries)?;
        let Some(first) = entries.first() else {
            return Err(format!("a file of L{level} holds no entry"));
        };
        if level == 0 {
            return Err("L0 tables go through add_l0".into());
        }
        if self.levels.len() < level {
            self.levels.resize_with(level, Vec::new);
        }
        if let Some(prev) = self.levels[level - 1].last() {
            if compare_internal(&prev.largest, &first.0).is_ge() {
                return Err(format!(
                    "L{level}: {} does not come after {}",
                    show_key(&first.0),
                    show_key(&prev.largest)
                ));
            }
        }
        let path = self.new_path();
        self.levels[level - 1].push(RunFile::new(entries, Some(&path)));
        Ok(())
    }

    /// One merging iterator over the whole tree, with a child per memtable, per L0 table and
    /// per non-empty level (a concatenating iterator opening its tables as it reaches them).
    pub(crate) fn iter(&self) -> MergingIterator {
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for m in &self.memtables {
            children.push(Box::new(m.iter()));
        }
        for t in &self.l0 {
            children.push(Box::new(t.iter()));
        }
        for files in self.levels.iter().filter(|l| !l.is_empty()) {
            children.push(Box::new(concat(files.clone())));
        }
        MergingIterator::new(children)
    }

    /// The tree's shape: the keys of each memtable, the key bounds of each table.
    pub(crate) fn describe(&self) -> String {
        let mut out = String::new();
        for m in &self.memtables {
            let mut it = m.iter();
            it.seek_to_first();
            let mut keys = Vec::new();
            while it.valid() {
                keys.push(show_key(it.key()));
                it.next();
            }
            out.push_str(&format!("mem: {}\n", keys.join(" ")));
        }
        let bounds = |t: &Arc<Table>| {
            let mut it = t.iter();
            it.seek_to_first();
            let first = show_key(it.key());
            it.seek_to_last();
            format!("{first}-{}", show_key(it.key()))
        };
        for t in &self.l0 {
            out.push_str(&format!("L0: {}\n", bounds(t)));
        }
        for (i, files) in self.levels.iter().enumerate() {
            let files: Vec<String> = files
                .iter()
                .map(|f| format!("{}-{}", show_key(&f.smallest), show_key(&f.largest)))
                .collect();
            if !files.is_empty() {
                out.push_str(&format!("L{}: {}\n", i + 1, files.join(" ")));
            }
        }
        out
    }
}
