//! Protobuf wire format: a bounds-checked, zero-copy reader and a small encoder.
//!
//! The reader never panics and never allocates: every read checks the remaining bytes and
//! returns [`WireError`] instead. Field numbers and meanings live in the callers
//! (`perfetto.rs`, `writer.rs`); this module only knows the wire format.

use std::fmt;

/// Why bytes could not be read as protobuf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// The buffer ended inside a tag, varint, fixed value or length-delimited field.
    Truncated {
        /// Offset, within the buffer being read, of the item that did not fit.
        at: usize,
    },
    /// A varint ran past 10 bytes.
    VarintTooLong {
        /// Offset of the varint.
        at: usize,
    },
    /// Wire types 3, 4 (groups), 6 and 7 do not occur in Perfetto traces.
    BadWireType {
        /// The wire type found.
        wire_type: u8,
        /// Offset of the tag.
        at: usize,
    },
    /// Field number 0 is reserved and marks garbage.
    FieldZero {
        /// Offset of the tag.
        at: usize,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { at } => write!(f, "truncated protobuf at byte {at}"),
            WireError::VarintTooLong { at } => {
                write!(f, "varint longer than 10 bytes at byte {at}")
            }
            WireError::BadWireType { wire_type, at } => {
                write!(f, "unsupported wire type {wire_type} at byte {at}")
            }
            WireError::FieldZero { at } => write!(f, "field number 0 at byte {at}"),
        }
    }
}

impl std::error::Error for WireError {}

impl WireError {
    /// The same error, its offset counted from `by` bytes earlier (for a buffer that is a
    /// piece of a longer input).
    pub fn shifted(self, by: usize) -> WireError {
        match self {
            WireError::Truncated { at } => WireError::Truncated { at: at + by },
            WireError::VarintTooLong { at } => WireError::VarintTooLong { at: at + by },
            WireError::BadWireType { wire_type, at } => WireError::BadWireType {
                wire_type,
                at: at + by,
            },
            WireError::FieldZero { at } => WireError::FieldZero { at: at + by },
        }
    }
}

/// One field's payload, borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: a string, bytes, a nested message or a packed repeated field.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

impl<'a> Value<'a> {
    /// The value as an unsigned integer, whatever its numeric wire type.
    pub fn as_u64(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            Value::Bytes(_) => None,
        }
    }

    /// The value as a signed 64-bit integer (`int64`, `int32` sign-extended by the encoder).
    pub fn as_i64(self) -> Option<i64> {
        self.as_u64().map(|v| v as i64)
    }

    /// The value as `int32`: protobuf encodes negative `int32` as a sign-extended 64-bit varint.
    pub fn as_i32(self) -> Option<i32> {
        self.as_u64().map(|v| v as i32)
    }

    /// The value as raw bytes, for length-delimited fields.
    pub fn as_bytes(self) -> Option<&'a [u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The value as UTF-8 text; invalid UTF-8 is `None` so callers can count it.
    pub fn as_str(self) -> Option<&'a str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }
}

/// Reads one varint at `*pos`, advancing it.
#[inline]
pub fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, WireError> {
    let start = *pos;
    let mut result: u64 = 0;
    for i in 0..10 {
        let Some(&b) = buf.get(start + i) else {
            return Err(WireError::Truncated { at: start });
        };
        result |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *pos = start + i + 1;
            return Ok(result);
        }
    }
    Err(WireError::VarintTooLong { at: start })
}

/// Iterates over the fields of one message; after the first error it yields nothing more.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Fields<'a> {
    /// Starts reading `buf` as one message.
    pub fn new(buf: &'a [u8]) -> Self {
        Fields {
            buf,
            pos: 0,
            failed: false,
        }
    }

    /// Offset of the next field within the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn read_field(&mut self) -> Result<(u32, Value<'a>), WireError> {
        let at = self.pos;
        let tag = read_varint(self.buf, &mut self.pos)?;
        let number = (tag >> 3) as u32;
        if number == 0 {
            return Err(WireError::FieldZero { at });
        }
        let value = match (tag & 7) as u8 {
            0 => Value::Varint(read_varint(self.buf, &mut self.pos)?),
            1 => Value::Fixed64(u64::from_le_bytes(self.take::<8>()?)),
            2 => {
                let len = read_varint(self.buf, &mut self.pos)?;
                let start = self.pos;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| start.checked_add(l))
                    .filter(|&e| e <= self.buf.len())
                    .ok_or(WireError::Truncated { at: start })?;
                self.pos = end;
                Value::Bytes(&self.buf[start..end])
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take::<4>()?)),
            wire_type => return Err(WireError::BadWireType { wire_type, at }),
        };
        Ok((number, value))
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let at = self.pos;
        let bytes = self
            .buf
            .get(at..at + N)
            .ok_or(WireError::Truncated { at })?;
        self.pos = at + N;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.read_field();
        self.failed = r.is_err();
        Some(r)
    }
}

/// Iterates the varints of a repeated field, packed (`Bytes`) or not (a single `Varint`).
#[derive(Debug, Clone)]
pub struct Varints<'a> {
    buf: &'a [u8],
    pos: usize,
    single: Option<u64>,
    failed: bool,
}

impl<'a> Varints<'a> {
    /// Reads `value` as one element or as a packed run of varints.
    pub fn new(value: Value<'a>) -> Self {
        match value {
            Value::Bytes(buf) => Varints {
                buf,
                pos: 0,
                single: None,
                failed: false,
            },
            other => Varints {
                buf: &[],
                pos: 0,
                single: other.as_u64(),
                failed: false,
            },
        }
    }
}

impl Iterator for Varints<'_> {
    type Item = Result<u64, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(v) = self.single.take() {
            return Some(Ok(v));
        }
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = read_varint(self.buf, &mut self.pos);
        self.failed = r.is_err();
        Some(r)
    }
}

/// Appends `v` as a varint.
#[inline]
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends a field tag.
#[inline]
pub fn put_tag(buf: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire_type));
}

/// Appends an unsigned varint field (`uint32`, `uint64`, `bool`, enums).
#[inline]
pub fn put_uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(buf, field, 0);
    put_varint(buf, v);
}

/// Appends a signed `int32`/`int64` field; negatives take ten bytes, as protobuf specifies.
#[inline]
pub fn put_int(buf: &mut Vec<u8>, field: u32, v: i64) {
    put_uint(buf, field, v as u64);
}

/// Appends a length-delimited field (string or bytes).
#[inline]
pub fn put_bytes(buf: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(buf, field, 2);
    put_varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// Appends a nested message whose body `body` writes in place.
///
/// One length byte is reserved up front; bodies of 128 bytes or more shift once to make
/// room for a longer length, so small messages cost no copy.
pub fn put_message(buf: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    put_tag(buf, field, 2);
    let len_at = buf.len();
    buf.push(0);
    body(buf);
    let len = buf.len() - len_at - 1;
    if len < 0x80 {
        buf[len_at] = len as u8;
    } else {
        let mut len_bytes = Vec::with_capacity(5);
        put_varint(&mut len_bytes, len as u64);
        buf.splice(len_at..len_at + 1, len_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut pos = 0;
            assert_eq!(read_varint(&b, &mut pos), Ok(v));
            assert_eq!(pos, b.len());
        }
    }

    #[test]
    fn negative_int32_reads_back() {
        let mut b = Vec::new();
        put_int(&mut b, 3, -5);
        assert_eq!(b.len(), 11);
        let (n, v) = Fields::new(&b).next().unwrap().unwrap();
        assert_eq!((n, v.as_i32()), (3, Some(-5)));
    }

    #[test]
    fn nested_message_lengths() {
        for len in [0usize, 1, 127, 128, 20_000] {
            let mut b = Vec::new();
            put_message(&mut b, 7, |b| b.extend(std::iter::repeat_n(0x55u8, len)));
            let fields: Vec<_> = Fields::new(&b).collect();
            assert_eq!(fields.len(), 1);
            let (n, v) = fields[0].unwrap();
            assert_eq!(n, 7);
            assert_eq!(v.as_bytes().unwrap().len(), len);
        }
    }

    #[test]
    fn truncation_is_an_error() {
        let mut b = Vec::new();
        put_bytes(&mut b, 1, b"hello");
        b.pop();
        let r: Vec<_> = Fields::new(&b).collect();
        assert_eq!(r, vec![Err(WireError::Truncated { at: 2 })]);
    }

    #[test]
    fn bad_wire_type_and_field_zero() {
        assert!(matches!(
            Fields::new(&[0x0b]).next(),
            Some(Err(WireError::BadWireType { wire_type: 3, .. }))
        ));
        assert!(matches!(
            Fields::new(&[0x00, 0x00]).next(),
            Some(Err(WireError::FieldZero { at: 0 }))
        ));
        let long = [0xffu8; 11];
        assert_eq!(
            read_varint(&long, &mut 0),
            Err(WireError::VarintTooLong { at: 0 })
        );
    }

    #[test]
    fn packed_and_single_varints() {
        let mut packed = Vec::new();
        for v in [1u64, 300, 5] {
            put_varint(&mut packed, v);
        }
        let got: Vec<_> = Varints::new(Value::Bytes(&packed))
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, vec![1, 300, 5]);
        let got: Vec<_> = Varints::new(Value::Varint(9)).map(Result::unwrap).collect();
        assert_eq!(got, vec![9]);
    }
}
