//! Repair's step 4: each WAL's records into memtables, per family, then into tables.

use super::Repairer;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use crate::db::blob::at_write::WalBlobReader;
use crate::db::write::two_phase::COMMIT_MARKER;
use crate::error::Result;
use crate::filename::wal_path;
use crate::key::ValueKind;
use crate::log::{LogReader, ReadError};
use crate::memtable::MemTable;
use crate::table::TableOptions;
use crate::write_batch::DecodedBatch;

impl Repairer<'_> {
    /// Step 4 for WAL `number`: its records into memtables, per family, then tables.
    pub(super) fn convert_wal(
        &mut self,
        number: u64,
        committed: &mut HashSet<Vec<u8>>,
    ) -> Result<()> {
        let path = wal_path(&self.dir, number);
        let mut reader = LogReader::new(self.fs.open_sequential(&path)?);
        let fs = self.fs.clone();
        let dir = self.dir.clone();
        let mut blobs = WalBlobReader::new(fs.as_ref(), &dir);
        let mut mems: BTreeMap<u32, Arc<MemTable>> = BTreeMap::new();
        let mut unknown: BTreeSet<u32> = self.report.unknown_families.iter().copied().collect();
        // A record is in the tables if a table of its family holds a later write (flushes go
        // in sequence order), or if its WAL is below the family's log number in them (which
        // still knows when every table at the bottom has its numbers written as 0).
        let in_tables: BTreeMap<u32, (u64, u64)> = self
            .families
            .iter()
            .map(|(&id, f)| (id, (f.largest_seq(), f.log_number)))
            .collect();
        loop {
            let at = reader.end_of_last_record();
            let record = match reader.read_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(ReadError::Bad(bad)) => {
                    self.report.wal_corruptions.push(format!(
                        "{} at offset {}: {}",
                        path.display(),
                        bad.offset,
                        bad.reason
                    ));
                    break;
                }
                Err(ReadError::Io(e)) => return Err(e),
            };
            let batch = match DecodedBatch::parse(record) {
                Ok(b) => b,
                Err(why) => {
                    self.report
                        .wal_corruptions
                        .push(format!("{} at offset {at}: {why}", path.display()));
                    break;
                }
            };
            // A batch is converted whole or not at all, its values written at put read back.
            let values: std::result::Result<Vec<Vec<u8>>, String> = batch
                .iter()
                .filter_map(|e| match e {
                    Ok(e) if e.kind == ValueKind::BlobIndex => {
                        Some(blobs.value(number, e.key, e.value))
                    }
                    Ok(_) => None,
                    Err(why) => Some(Err(why)),
                })
                .collect();
            let mut values = match values {
                Ok(values) => values.into_iter(),
                Err(why) => {
                    self.report
                        .wal_corruptions
                        .push(format!("{} at offset {at}: {why}", path.display()));
                    break;
                }
            };
            for blob in batch.log_data() {
                if let Some(name) = blob.strip_prefix(COMMIT_MARKER) {
                    committed.insert(name.to_vec());
                }
            }
            for (seq, entry) in (batch.seq..).zip(batch.iter().flatten()) {
                match (self.families.get(&entry.cf), in_tables.get(&entry.cf)) {
                    (Some(_), Some(&(largest, log))) if seq <= largest || number < log => {
                        self.report.wal_entries_in_tables += 1;
                    }
                    (Some(f), _) => {
                        let mem = mems.entry(entry.cf).or_insert_with(|| {
                            Arc::new(MemTable::with_order(
                                number,
                                f.options.write_buffer_size,
                                f.order(),
                            ))
                        });
                        match entry.kind {
                            ValueKind::BlobIndex => {
                                let value = values.next().unwrap_or_default();
                                mem.add(seq, ValueKind::Put, entry.key, &value);
                            }
                            kind => mem.add(seq, kind, entry.key, entry.value),
                        }
                        self.report.wal_entries += 1;
                    }
                    (None, _) => {
                        unknown.insert(entry.cf);
                        self.report.wal_entries_dropped += 1;
                    }
                }
                self.report.last_sequence = self.report.last_sequence.max(seq);
            }
        }
        self.report.unknown_families = unknown.into_iter().collect();
        for (id, mem) in mems {
            let table = self.next_file_number;
            self.next_file_number += 1;
            let family = &self.families[&id];
            let table_family = family.table_family(id);
            // Every record of the family in this WAL is now in a table.
            let options = TableOptions {
                column_family: Some(table_family.clone()),
                log_number: number + 1,
                ..family.options.table_options(false)
            };
            self.write_table(table, &mem, options)?;
            let scanned = self.scan_table(table, Some(table_family))?;
            self.report.tables_from_wals.push(table);
            if let Some(f) = self.families.get_mut(&id) {
                f.files.push(scanned.meta);
                f.log_number = f.log_number.max(number + 1);
            }
        }
        Ok(())
    }
}
