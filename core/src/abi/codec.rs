//! The wire codec: bounds-checked, native-endian reads and writes of message fields.
//!
//! A message is its `#[repr(C)]` fields in order, with no padding, framed by a header holding
//! the message's size and [`ABI_VERSION`]. [`Wire`] reads and writes one field; [`Reader`] and
//! [`Writer`] frame a whole message, so the header is checked before any field is read and
//! rewritten after every field is written.

use super::errors::AbiError;

/// The ABI version every message's header must carry.
pub const ABI_VERSION: u32 = 1;

/// Bounds-checked native-endian field reader.
#[derive(Clone)]
pub(super) struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads a message of `size` bytes: `b` must be exactly that long and start with a header
    /// naming that size and [`ABI_VERSION`].
    pub(super) fn message(b: &'a [u8], size: usize) -> Result<Self, AbiError> {
        if b.len() != size {
            return Err(AbiError::BadSize);
        }
        let r = Self { b, pos: 0 };
        let mut head = r.clone();
        if u32::get(&mut head)? as usize != size {
            return Err(AbiError::BadSize);
        }
        if u32::get(&mut head)? != ABI_VERSION {
            return Err(AbiError::BadVersion);
        }
        Ok(r)
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], AbiError> {
        let s = self
            .b
            .get(self.pos..self.pos + N)
            .ok_or(AbiError::BadSize)?;
        self.pos += N;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
}

/// Bounds-checked native-endian field writer.
pub(super) struct Writer<'a> {
    b: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// Writes into the first `size` bytes of `b`, which must hold at least that many.
    pub(super) fn new(b: &'a mut [u8], size: usize) -> Result<Self, AbiError> {
        if b.len() < size {
            return Err(AbiError::BadSize);
        }
        Ok(Self { b, pos: 0 })
    }

    /// Writes a header for a message of `size` bytes at the start: every message leaves with
    /// its own size and [`ABI_VERSION`], whatever its header field held.
    pub(super) fn header(&mut self, size: usize) {
        self.pos = 0;
        (size as u32).put(self);
        ABI_VERSION.put(self);
    }

    fn put(&mut self, v: &[u8]) {
        // `new` checked the buffer against the message's size, so this is always in range.
        if let Some(d) = self.b.get_mut(self.pos..self.pos + v.len()) {
            d.copy_from_slice(v);
        }
        self.pos += v.len();
    }
}

/// A value with a fixed native-endian wire form: a scalar, an array or a declared struct.
pub(super) trait Wire: Sized {
    /// Writes the value at the writer's position.
    fn put(&self, w: &mut Writer<'_>);
    /// Reads a value at the reader's position.
    fn get(r: &mut Reader<'_>) -> Result<Self, AbiError>;
}

macro_rules! scalars {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn put(&self, w: &mut Writer<'_>) {
                w.put(&self.to_ne_bytes());
            }
            fn get(r: &mut Reader<'_>) -> Result<Self, AbiError> {
                Ok(Self::from_ne_bytes(r.take()?))
            }
        }
    )*};
}

scalars!(u32, i32, u64);

impl<T: Wire + Copy + Default, const N: usize> Wire for [T; N] {
    fn put(&self, w: &mut Writer<'_>) {
        for x in self {
            x.put(w);
        }
    }
    fn get(r: &mut Reader<'_>) -> Result<Self, AbiError> {
        let mut a = [T::default(); N];
        for x in &mut a {
            *x = T::get(r)?;
        }
        Ok(a)
    }
}
