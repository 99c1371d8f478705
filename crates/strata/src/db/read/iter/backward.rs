//! The iterator's backward scan: the newest visible version of the key before the current
//! position, its value read from a blob file or merged when it needs to be.

use super::{DbIterator, Direction, TtlCheck};
use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::key::{ParsedKey, ValueKind};

impl DbIterator {
    /// Backward: keeps the newest visible version of the key before the current position.
    pub(super) fn find_prev_user_entry(&mut self) {
        let seq = self.seq();
        self.merged = false;
        self.blob_forward = false;
        // The value of the blob reference at hand, when the version is one and a TTL family
        // needs its expiry now.
        let mut blob_value = Vec::new();
        // `saved_value` holds the reference of the put found so far, not yet read: an older
        // version met first in this direction is often replaced by a newer one before the
        // key is done, and its value would be read for nothing.
        let mut pending_blob = false;
        let mut found_kind = ValueKind::Delete;
        // The merge operands of the key being scanned, oldest first, after its newest put or
        // delete so far; with a put below them, `saved_value` holds its value.
        let mut operands: Vec<Vec<u8>> = Vec::new();
        let mut has_base = false;
        while self.iter.valid() {
            let lower = self.lower.as_deref();
            let Some(p) = ParsedKey::parse(self.iter.key()) else {
                self.parse_current();
                break;
            };
            if lower.is_some_and(|l| self.order.lt(p.user_key, l))
                || self.outside_prefix(p.user_key)
            {
                break;
            }
            if p.seq <= seq {
                if found_kind != ValueKind::Delete && self.order.lt(p.user_key, &self.saved_key) {
                    break; // the previous key's newest visible version is found
                }
                let (kind, in_blob, read_now) = match self.prev_kind(&p, &mut blob_value) {
                    Ok(found) => found,
                    Err(e) => {
                        self.error.get_or_insert(e);
                        found_kind = ValueKind::Delete;
                        break;
                    }
                };
                match kind {
                    Some(ValueKind::Put) => {
                        found_kind = ValueKind::Put;
                        operands.clear();
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.saved_value.clear();
                        match read_now {
                            true => std::mem::swap(&mut self.saved_value, &mut blob_value),
                            false => self.saved_value.extend_from_slice(self.iter.value()),
                        }
                        pending_blob = in_blob && !read_now;
                    }
                    Some(ValueKind::Delete | ValueKind::SingleDelete) => {
                        found_kind = ValueKind::Delete;
                        pending_blob = false;
                        operands.clear();
                        self.saved_key.clear();
                        self.saved_value.clear();
                    }
                    Some(ValueKind::Merge) => {
                        match found_kind {
                            ValueKind::Put => has_base = true,
                            ValueKind::Merge => {}
                            _ => {
                                has_base = false;
                                self.saved_value.clear();
                            }
                        }
                        // The merge needs its base's value.
                        if std::mem::take(&mut pending_blob) {
                            let reference = std::mem::take(&mut self.saved_value);
                            let read = Self::read_blob(
                                &self.blobs,
                                &self.saved_key,
                                &reference,
                                &mut self.saved_value,
                            );
                            if let Err(e) = read {
                                self.error.get_or_insert(e);
                                found_kind = ValueKind::Delete;
                                break;
                            }
                        }
                        found_kind = ValueKind::Merge;
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        operands.push(self.iter.value().to_vec());
                    }
                    // (kind_of turns blob references into puts.)
                    Some(ValueKind::RangeDeletion | ValueKind::BlobIndex) | None => {}
                }
            }
            self.iter.prev();
        }
        if !self.iter.valid() {
            // Versions of a key come oldest first in this direction: a scan cut short by a
            // read error may hold an older version than the newest visible one, and must
            // end on the error, not on that version.
            if let Err(e) = self.iter.status() {
                self.error.get_or_insert(e);
                found_kind = ValueKind::Delete;
            }
        }
        self.finish_prev_entry(found_kind, pending_blob, has_base, operands);
    }

    /// The kind of version `p` (at the iterator's position) as a backward scan sees it: a
    /// blob reference is a put, a deleted or expired version a delete. Also whether it is a
    /// blob reference, and whether its value was read into `blob_value` now (a TTL family
    /// needs the value's expiry before the version is taken).
    fn prev_kind(
        &self,
        p: &ParsedKey<'_>,
        blob_value: &mut Vec<u8>,
    ) -> Result<(Option<ValueKind>, bool, bool)> {
        let mut kind = Self::kind_of(&self.range_del, p);
        let in_blob = kind == Some(ValueKind::Put) && p.kind == ValueKind::BlobIndex as u8;
        let read_now = in_blob && self.ttl_now.is_some();
        if read_now {
            Self::read_blob(&self.blobs, p.user_key, self.iter.value(), blob_value)?;
        }
        if kind == Some(ValueKind::Put) {
            let value = || match read_now {
                true => blob_value.as_slice(),
                false => self.iter.value(),
            };
            match Self::ttl_check(self.ttl_now, value) {
                TtlCheck::Live => {}
                TtlCheck::Expired => kind = Some(ValueKind::Delete),
                TtlCheck::Short(len) => {
                    return Err(crate::db::ttl::short_value_error(
                        &self.family,
                        p.user_key,
                        len,
                    ));
                }
            }
        }
        Ok((kind, in_blob, read_now))
    }

    /// The end of a backward scan that found `found_kind` as the key's newest visible
    /// version: reads the value of a put left in a blob file (`pending_blob`), merges the
    /// `operands` (as the scan met them) onto the base put (`has_base`) or none, and leaves the
    /// iterator on the entry, or invalid when the key is deleted or a step failed.
    fn finish_prev_entry(
        &mut self,
        mut found_kind: ValueKind,
        pending_blob: bool,
        has_base: bool,
        mut operands: Vec<Vec<u8>>,
    ) {
        if found_kind == ValueKind::Put && pending_blob {
            if let Err(e) = self.read_saved_blob() {
                self.error.get_or_insert(e);
                found_kind = ValueKind::Delete;
            }
        }
        if found_kind == ValueKind::Merge {
            operands.reverse();
            let base = has_base.then_some(self.saved_value.as_slice());
            let merged = match self.merge_operator.as_deref() {
                Some(op) => crate::merge::full_merge(op, &self.saved_key, base, &operands),
                None => Err(crate::merge::no_operator_error(
                    &self.family,
                    &self.saved_key,
                )),
            };
            match merged {
                Ok(v) => self.saved_value = v,
                Err(e) => {
                    self.error.get_or_insert(e);
                    found_kind = ValueKind::Delete;
                }
            }
        }
        if found_kind == ValueKind::Delete {
            self.valid = false;
            self.saved_key.clear();
            self.saved_value.clear();
            self.direction = Direction::Forward;
        } else {
            self.valid = true;
        }
    }
}
