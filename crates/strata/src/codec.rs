//! Byte encodings shared by every on-disk format.
//!
//! - fixed-width integers are little-endian;
//! - varints are LEB128 (7 bits per byte, high bit set on every byte but the last), at most
//!   5 bytes for a u32 and 10 for a u64;
//! - a length-prefixed slice is a varint32 length followed by the bytes;
//! - checksums are crc32c, stored masked (see [`mask_crc`]) so that a crc of data that itself
//!   holds crcs does not degenerate.
//!
//! Decoders take a `&mut &[u8]` cursor and return `None` on truncated or malformed input;
//! they never panic on any bytes.

/// Reads 4 little-endian bytes at the start of `src`; `None` if it is shorter.
pub fn decode_fixed32(src: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(src.get(..4)?.try_into().ok()?))
}

/// Reads 8 little-endian bytes at the start of `src`; `None` if it is shorter.
pub fn decode_fixed64(src: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(src.get(..8)?.try_into().ok()?))
}

/// Appends `v` as a varint (1 to 5 bytes).
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v));
}

/// Appends `v` as a varint (1 to 10 bytes).
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// The number of bytes `put_varint64(v)` appends.
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Takes a varint32 off the front of `src`.
pub fn get_varint32(src: &mut &[u8]) -> Option<u32> {
    // Most varints are lengths under 128, one byte: taken without the loop.
    if let Some((&byte, rest)) = src.split_first() {
        if byte < 0x80 {
            *src = rest;
            return Some(u32::from(byte));
        }
    }
    let v = get_varint_limited(src, 5)?;
    u32::try_from(v).ok()
}

/// Takes a varint64 off the front of `src`.
pub fn get_varint64(src: &mut &[u8]) -> Option<u64> {
    get_varint_limited(src, 10)
}

fn get_varint_limited(src: &mut &[u8], max_bytes: usize) -> Option<u64> {
    let mut result: u64 = 0;
    for (i, &byte) in src.iter().enumerate().take(max_bytes) {
        let shift = 7 * i as u32;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            return None; // would overflow u64
        }
        result |= bits << shift;
        if byte & 0x80 == 0 {
            *src = &src[i + 1..];
            return Some(result);
        }
    }
    None
}

/// Appends a varint32 length and then `data`.
#[inline]
pub fn put_length_prefixed(dst: &mut Vec<u8>, data: &[u8]) {
    put_varint32(dst, data.len() as u32);
    dst.extend_from_slice(data);
}

/// Takes a length-prefixed slice off the front of `src`.
pub fn get_length_prefixed<'a>(src: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = get_varint32(src)? as usize;
    if src.len() < len {
        return None;
    }
    let (data, rest) = src.split_at(len);
    *src = rest;
    Some(data)
}

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a crc32c for storage: rotate right by 15 bits and add a constant.
/// Do not change: the masked form is on disk.
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// crc32c of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// crc32c of `init`'s data followed by `data`.
pub fn crc32c_extend(init: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(init, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        let mut values = vec![0u64, 1, 127, 128, 255, 300, 16383, 16384, u64::MAX];
        for shift in 0..64 {
            values.push(1u64 << shift);
            values.push((1u64 << shift) - 1);
        }
        let mut buf = Vec::new();
        for &v in &values {
            put_varint64(&mut buf, v);
        }
        let mut cursor = &buf[..];
        for &v in &values {
            let before = cursor.len();
            assert_eq!(get_varint64(&mut cursor), Some(v));
            assert_eq!(before - cursor.len(), varint_len(v));
        }
        assert!(cursor.is_empty());
    }

    #[test]
    fn varint_decoders_reject_truncated_and_overlong_input() {
        let mut buf = Vec::new();
        put_varint64(&mut buf, u64::MAX);
        for cut in 0..buf.len() {
            let mut c = &buf[..cut];
            assert_eq!(get_varint64(&mut c), None);
        }
        let mut c: &[u8] = &[0xff; 11];
        assert_eq!(get_varint64(&mut c), None);
        let mut c: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(get_varint32(&mut c), None, "over u32::MAX");
    }

    #[test]
    fn length_prefixed_slices_round_trip() {
        let mut buf = Vec::new();
        put_length_prefixed(&mut buf, b"");
        put_length_prefixed(&mut buf, b"hello");
        let mut c = &buf[..];
        assert_eq!(get_length_prefixed(&mut c), Some(&b""[..]));
        assert_eq!(get_length_prefixed(&mut c), Some(&b"hello"[..]));
        assert_eq!(get_length_prefixed(&mut c), None);
        let mut short = &buf[1..buf.len() - 1];
        assert_eq!(get_length_prefixed(&mut short), None);
    }

    #[test]
    fn crc_mask_round_trips_and_changes_value() {
        for data in [&b""[..], b"a", b"hello world"] {
            let crc = crc32c(data);
            assert_ne!(mask_crc(crc), crc);
            assert_eq!(unmask_crc(mask_crc(crc)), crc);
        }
        // Known answer for crc32c("123456789").
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c_extend(crc32c(b"1234"), b"56789"), 0xe306_9283);
    }
}
