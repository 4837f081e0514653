//! How a message is declared: once, by one [`messages!`] entry.
//!
//! An entry is the message's struct as Rust spells it, plus its C struct tag and the commands it
//! is the argument of. From it come the `#[repr(C)]` struct, its [`Wire`] codec, its
//! [`Message`] implementation and the [`MessageDesc`] that `cargo xtask gen-headers` writes the
//! C header from, so the four cannot disagree. Validation is the message's own `check` method,
//! which its decoding calls, once.

use super::codec::{Reader, Wire, Writer};
use super::errors::AbiError;

/// A message that crosses the ioctl boundary.
pub trait Message: Sized {
    /// Its size in bytes: `size_of::<Self>()`, which has no padding (checked at compile time).
    const SIZE: usize;
    /// Writes the message (with a fresh header) into the first [`Self::SIZE`] bytes of `out`.
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError>;
    /// Reads and fully validates a message from exactly [`Self::SIZE`] bytes.
    fn decode(b: &[u8]) -> Result<Self, AbiError>;
}

/// A message's C layout, which the header generator writes out.
#[derive(Clone, Copy, Debug)]
pub struct MessageDesc {
    /// The Rust name (`TidMsg`).
    pub name: &'static str,
    /// The C struct tag (`sp_tid`).
    pub c_tag: &'static str,
    /// The size in bytes.
    pub size: usize,
    /// Every field, in order.
    pub fields: &'static [FieldDesc],
    /// The commands (names in [`COMMANDS`](super::COMMANDS)) whose argument it is.
    pub commands: &'static [&'static str],
}

/// One field of a [`MessageDesc`].
#[derive(Clone, Copy, Debug)]
pub struct FieldDesc {
    /// The field's name, in Rust and C.
    pub name: &'static str,
    /// The Rust name of its type, or of its element type for an array: `u32`, `i32`, `u64` or
    /// a message declared before.
    pub ty: &'static str,
    /// For an array, its length and the name of the constant that is its length.
    pub len: Option<(usize, &'static str)>,
    /// The offset in bytes.
    pub offset: usize,
    /// The size in bytes.
    pub size: usize,
}

/// Reads a message, checking its size and header but nothing the message's `check` checks.
pub(super) fn read<M: Message + Wire>(b: &[u8]) -> Result<M, AbiError> {
    M::get(&mut Reader::message(b, M::SIZE)?)
}

/// Writes a message with a fresh header.
pub(super) fn write<M: Message + Wire>(m: &M, out: &mut [u8]) -> Result<(), AbiError> {
    let mut w = Writer::new(out, M::SIZE)?;
    m.put(&mut w);
    w.header(M::SIZE);
    Ok(())
}

/// Declares the messages, in C order (each after the structs it embeds), and [`MESSAGES`].
///
/// An entry is `message Name as c_tag for [COMMANDS]`, then `, checked by method` when decoding
/// must validate it (`fn method(&self) -> Result<_, AbiError>`, returning the value it carries),
/// then the fields. `part Name as c_tag` declares a struct that messages embed, with no header
/// and no [`Message`] of its own. A field's type is a scalar, a declared struct, or an array
/// `[T; LEN]` whose length is the constant `LEN`. `messages!(@struct Name { fields })` declares a
/// struct with the same codec but no C layout, for parts of a message encoded on their own. The
/// expansion names this module, `codec` and `errors` as siblings of the caller's.
///
/// [`MESSAGES`]: super::MESSAGES
macro_rules! messages {
    (@impl message $name:ident $($check:ident)?) => {
        impl super::declare::Message for $name {
            const SIZE: usize = core::mem::size_of::<Self>();
            fn encode(&self, out: &mut [u8]) -> Result<(), super::errors::AbiError> {
                super::declare::write(self, out)
            }
            fn decode(b: &[u8]) -> Result<Self, super::errors::AbiError> {
                let m: Self = super::declare::read(b)?;
                $(m.$check()?;)?
                Ok(m)
            }
        }
    };
    (@impl part $name:ident) => {};
    (@len) => {
        None
    };
    (@len $len:ident) => {
        Some(($len, stringify!($len)))
    };
    (@struct
        $(#[$meta:meta])*
        $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $($ty:ident)? $([$elem:ident; $len:ident])?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $($ty)? $([$elem; $len])?,
            )*
        }

        // The wire layout is the #[repr(C)] layout: both sides may also cast.
        const _: () = assert!(
            core::mem::size_of::<$name>()
                == 0 $(+ core::mem::size_of::<$($ty)? $([$elem; $len])?>())*,
            concat!(stringify!($name), " has padding"),
        );

        impl super::codec::Wire for $name {
            fn put(&self, w: &mut super::codec::Writer<'_>) {
                $(super::codec::Wire::put(&self.$field, w);)*
            }
            fn get(r: &mut super::codec::Reader<'_>) -> Result<Self, super::errors::AbiError> {
                Ok(Self {
                    $($field: super::codec::Wire::get(r)?,)*
                })
            }
        }
    };
    ($(
        $(#[$meta:meta])*
        $kind:ident $name:ident as $c_tag:ident $(for [$($cmd:ident),* $(,)?])?
            $(, checked by $check:ident)? {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $($ty:ident)? $([$elem:ident; $len:ident])?
            ),* $(,)?
        }
    )*) => {
        $(
            messages!(@struct
                $(#[$meta])*
                $name {
                    $(
                        $(#[$fmeta])*
                        $field: $($ty)? $([$elem; $len])?
                    ),*
                }
            );

            impl $name {
                /// The layout the C header generator writes.
                pub const DESC: super::declare::MessageDesc = super::declare::MessageDesc {
                    name: stringify!($name),
                    c_tag: stringify!($c_tag),
                    size: core::mem::size_of::<Self>(),
                    fields: &[$(super::declare::FieldDesc {
                        name: stringify!($field),
                        ty: concat!($(stringify!($ty),)? $(stringify!($elem),)?),
                        len: messages!(@len $($len)?),
                        offset: core::mem::offset_of!($name, $field),
                        size: core::mem::size_of::<$($ty)? $([$elem; $len])?>(),
                    }),*],
                    commands: &[$($(stringify!($cmd)),*)?],
                };
            }

            messages!(@impl $kind $name $($check)?);
        )*

        /// Every message and embedded struct, each after the structs it embeds.
        pub const MESSAGES: &[super::declare::MessageDesc] = &[$($name::DESC),*];
    };
}

pub(super) use messages;
