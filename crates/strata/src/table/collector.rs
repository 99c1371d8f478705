//! Table property collectors (RocksDB's `TablePropertiesCollector`): user code that sees
//! every entry added to a table as it is built, and returns properties of its own, stored in
//! the table's properties block beside the engine's.
//!
//! A family's options hold factories ([`TablePropertiesCollectorFactory`]); each table a
//! flush, a compaction, a repair or an [`SstWriter`](crate::SstWriter) builds gets one new
//! collector from each factory. [`TablePropertiesCollector::add`] sees each point entry in
//! the table's order (range deletions are not point entries and are not shown), and
//! [`TablePropertiesCollector::finish`] returns the collector's properties once the last
//! entry is in.
//!
//! Layout: a user property is one more `name -> value` entry of the properties block
//! (`properties.rs`), under its name as given. Names beginning with `strata.` are the
//! engine's and are refused. A reader puts every entry whose name does not begin with
//! `strata.` in [`TableProperties::user_properties`](super::properties::TableProperties);
//! readers that predate user properties ignore those names (they skip any name they do not
//! know), so a table with user properties stays readable by them and its format version
//! does not change. Two collectors naming the same property: the later factory's value is
//! kept.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::key::{ParsedKey, SequenceNumber, ValueKind};
use crate::table::TableFamily;

/// The prefix of the engine's own property names, which user properties may not take.
pub const RESERVED_PREFIX: &str = "strata.";

/// What kind of entry a collector is shown (RocksDB's `EntryType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryType {
    /// A put (a value kept in a blob file included).
    Put,
    /// A deletion.
    Delete,
    /// A single deletion.
    SingleDelete,
    /// A merge operand.
    Merge,
    /// A value kept in a blob file: the entry's value is the reference.
    BlobIndex,
    /// Any other entry, and entries of tables whose keys are not internal keys.
    Other,
}

/// One entry added to a table, as a collector sees it.
#[derive(Debug, Clone, Copy)]
pub struct CollectedEntry<'a> {
    /// The user key (the whole key in a table not of internal keys).
    pub key: &'a [u8],
    /// The value as stored (uncompressed).
    pub value: &'a [u8],
    /// The kind of the entry.
    pub entry_type: EntryType,
    /// The entry's sequence number (0 in a table not of internal keys).
    pub seq: SequenceNumber,
    /// Bytes of the table written so far (a rough figure, as RocksDB's `file_size`).
    pub file_size: u64,
}

/// Sees the entries of one table as it is built and gives properties of its own.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use strata::{
///     CollectedEntry, CollectorContext, Db, Options, TablePropertiesCollector,
///     TablePropertiesCollectorFactory,
/// };
///
/// /// Counts the keys of each table.
/// #[derive(Default)]
/// struct KeyCount(u64);
///
/// impl TablePropertiesCollector for KeyCount {
///     fn add(&mut self, _entry: &CollectedEntry<'_>) {
///         self.0 += 1;
///     }
///     fn finish(&mut self) -> BTreeMap<String, Vec<u8>> {
///         BTreeMap::from([("my.keys".to_string(), self.0.to_string().into_bytes())])
///     }
/// }
///
/// struct KeyCounts;
///
/// impl TablePropertiesCollectorFactory for KeyCounts {
///     fn create(&self, _: &CollectorContext<'_>) -> Box<dyn TablePropertiesCollector> {
///         Box::<KeyCount>::default()
///     }
///     fn name(&self) -> &str {
///         "KeyCounts"
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.table_properties_collector_factories = vec![Arc::new(KeyCounts)];
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"a", b"1")?;
/// db.put(b"b", b"2")?;
/// db.flush()?;
/// let files = db.live_files_metadata();
/// assert_eq!(files[0].user_properties["my.keys"], b"2");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TablePropertiesCollector: Send {
    /// Sees one entry; entries come in the table's key order.
    fn add(&mut self, entry: &CollectedEntry<'_>);

    /// The collector's properties, once every entry has been added. Names must not begin
    /// with `strata.` (the table is then not written, and the error names the property).
    fn finish(&mut self) -> BTreeMap<String, Vec<u8>>;
}

/// What a factory is told about the table a collector is made for.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CollectorContext<'a> {
    /// The column family the table is written for; `None` outside a database (an
    /// `SstWriter`, tools).
    pub column_family: Option<&'a TableFamily>,
}

/// Makes one collector per table (RocksDB's `TablePropertiesCollectorFactory`). Shared by
/// the threads that build tables.
pub trait TablePropertiesCollectorFactory: Send + Sync {
    /// A new collector for one table.
    fn create(&self, context: &CollectorContext<'_>) -> Box<dyn TablePropertiesCollector>;

    /// The factory's name, for logs and debug output.
    fn name(&self) -> &str;
}

impl fmt::Debug for dyn TablePropertiesCollectorFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TablePropertiesCollectorFactory({})", self.name())
    }
}

/// The collectors of one table being built.
pub(crate) struct Collectors {
    collectors: Vec<(String, Box<dyn TablePropertiesCollector>)>,
    /// Whether the table's keys are internal keys (else they are shown whole).
    internal_keys: bool,
}

impl Collectors {
    /// One collector from each of `factories`; `None` without factories, so that a table
    /// built without them does no work for them.
    pub(crate) fn new(
        factories: &[Arc<dyn TablePropertiesCollectorFactory>],
        column_family: Option<&TableFamily>,
        internal_keys: bool,
    ) -> Option<Collectors> {
        if factories.is_empty() {
            return None;
        }
        let context = CollectorContext { column_family };
        Some(Collectors {
            collectors: factories
                .iter()
                .map(|f| (f.name().to_string(), f.create(&context)))
                .collect(),
            internal_keys,
        })
    }

    /// Shows every collector the entry `key` (as stored in the table) -> `value`.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8], file_size: u64) {
        let (key, entry_type, seq) = match self.internal_keys {
            true => match ParsedKey::parse(key) {
                Some(p) => (p.user_key, entry_type(p.value_kind()), p.seq),
                None => (key, EntryType::Other, 0),
            },
            false => (key, EntryType::Other, 0),
        };
        let entry = CollectedEntry {
            key,
            value,
            entry_type,
            seq,
            file_size,
        };
        for (_, c) in &mut self.collectors {
            c.add(&entry);
        }
    }

    /// The properties of every collector, or the first name among them that is reserved
    /// (with the factory that gave it).
    pub(crate) fn finish(mut self) -> Result<BTreeMap<String, Vec<u8>>, String> {
        let mut all = BTreeMap::new();
        for (factory, c) in &mut self.collectors {
            for (name, value) in c.finish() {
                if name.starts_with(RESERVED_PREFIX) {
                    return Err(format!(
                        "table properties collector {factory} gave property {name:?}: \
                         names beginning with {RESERVED_PREFIX:?} are the engine's"
                    ));
                }
                all.insert(name, value);
            }
        }
        Ok(all)
    }
}

fn entry_type(kind: Option<ValueKind>) -> EntryType {
    match kind {
        Some(ValueKind::Put) => EntryType::Put,
        Some(ValueKind::Delete) => EntryType::Delete,
        Some(ValueKind::SingleDelete) => EntryType::SingleDelete,
        Some(ValueKind::Merge) => EntryType::Merge,
        Some(ValueKind::BlobIndex) => EntryType::BlobIndex,
        _ => EntryType::Other,
    }
}
