//! The iterator's forward scan: the first visible, undeleted key, and merges resolved going
//! forward.

use super::{DbIterator, TtlCheck};
use crate::iterator::InternalIterator;
use crate::key::{ParsedKey, ValueKind};

impl DbIterator {
    /// Forward: stops at the first visible, undeleted key; with `skipping`, keys up to
    /// `saved_key` are hidden.
    pub(super) fn find_next_user_entry(&mut self, mut skipping: bool) {
        let seq = self.seq();
        self.merged = false;
        self.blob_forward = false;
        while self.iter.valid() {
            let upper = self.upper.as_deref();
            let Some(p) = ParsedKey::parse(self.iter.key()) else {
                self.parse_current();
                break;
            };
            if upper.is_some_and(|u| self.order.le(u, p.user_key))
                || self.outside_prefix(p.user_key)
            {
                break;
            }
            if p.seq <= seq {
                match Self::kind_of(&self.range_del, &p) {
                    Some(ValueKind::Delete | ValueKind::SingleDelete) => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        skipping = true;
                    }
                    Some(ValueKind::Put)
                        if !(skipping && self.order.le(p.user_key, &self.saved_key)) =>
                    {
                        let in_blob = p.kind == ValueKind::BlobIndex as u8;
                        if in_blob {
                            let read = Self::read_blob(
                                &self.blobs,
                                p.user_key,
                                self.iter.value(),
                                &mut self.saved_value,
                            );
                            if let Err(e) = read {
                                self.error.get_or_insert(e);
                                break;
                            }
                        }
                        let value = || match in_blob {
                            true => self.saved_value.as_slice(),
                            false => self.iter.value(),
                        };
                        match Self::ttl_check(self.ttl_now, value) {
                            TtlCheck::Live => {
                                self.valid = true;
                                self.blob_forward = in_blob;
                                self.saved_key.clear();
                                return;
                            }
                            // An expired newest version hides the key, as a delete does.
                            TtlCheck::Expired => {
                                self.saved_key.clear();
                                self.saved_key.extend_from_slice(p.user_key);
                                skipping = true;
                            }
                            TtlCheck::Short(len) => {
                                let e = crate::db::ttl::short_value_error(
                                    &self.family,
                                    p.user_key,
                                    len,
                                );
                                self.error.get_or_insert(e);
                                break;
                            }
                        }
                    }
                    Some(ValueKind::Merge)
                        if !(skipping && self.order.le(p.user_key, &self.saved_key)) =>
                    {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.merge_forward();
                        return;
                    }
                    // Hidden by a newer delete or already returned.
                    Some(ValueKind::Put | ValueKind::Merge) => {}
                    // (kind_of turns blob references into puts.)
                    Some(ValueKind::RangeDeletion | ValueKind::BlobIndex) | None => {}
                }
            }
            self.iter.next();
        }
        self.valid = false;
        self.saved_key.clear();
    }

    /// Forward, on the newest visible version of `saved_key`, a merge operand: reads the
    /// older versions down to the first put or delete (leaving the internal iterator on it)
    /// or to the next key, and merges them into `saved_value`.
    pub(super) fn merge_forward(&mut self) {
        let mut versions = vec![(ValueKind::Merge, self.iter.value().to_vec())];
        self.iter.next();
        while self.iter.valid() {
            let Some(p) = ParsedKey::parse(self.iter.key()) else {
                self.parse_current();
                break;
            };
            if p.user_key != self.saved_key.as_slice() {
                break;
            }
            if let Some(kind) = Self::kind_of(&self.range_del, &p) {
                let mut value = Vec::new();
                if p.kind == ValueKind::BlobIndex as u8 && kind == ValueKind::Put {
                    let read =
                        Self::read_blob(&self.blobs, p.user_key, self.iter.value(), &mut value);
                    if let Err(e) = read {
                        self.error.get_or_insert(e);
                        break;
                    }
                } else {
                    value.extend_from_slice(self.iter.value());
                }
                versions.push((kind, value));
                if kind != ValueKind::Merge {
                    break;
                }
            }
            self.iter.next();
        }
        let resolved = match (&self.error, self.iter.status()) {
            (Some(e), _) => Err(e.duplicate()),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => crate::merge::resolve(
                self.merge_operator.as_deref(),
                &self.family,
                &self.saved_key,
                versions.iter().map(|(k, v)| (*k, v.as_slice())),
            ),
        };
        match resolved {
            Ok(value) => {
                self.saved_value = value.unwrap_or_default();
                self.valid = true;
                self.merged = true;
            }
            Err(e) => {
                self.error.get_or_insert(e);
                self.valid = false;
                self.saved_key.clear();
            }
        }
    }
}
