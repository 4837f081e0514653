//! The single definition of the `/dev/superpass` ioctl interface.
//!
//! The kernel module decodes requests with this code and the service encodes them with it, so
//! the two sides cannot drift. Command numbers use the Linux `_IOC` encoding; every message is a
//! `#[repr(C)]` struct that starts with a [`Header`] carrying its size and the ABI version, and
//! is (de)serialised field by field in native byte order, validating everything: sizes, version,
//! counts, reserved fields, TIDs, roles and tunable ranges. Errors are typed and map to errno.
//! docs/abi.md documents every command.
//!
//! One file per plane: the command numbers (`ioctl`), the mechanism bits ([`mech`]), the errors
//! (`errors`), the field codec (`codec`), how a message is declared (`declare`), the messages
//! (`messages`), the decoded request (`request`) and how callers name threads (`names`).

mod codec;
mod declare;
mod errors;
mod ioctl;
pub mod mech;
mod messages;
mod names;
mod request;

pub use codec::ABI_VERSION;
pub use declare::{FieldDesc, Message, MessageDesc};
pub use errors::AbiError;
pub use ioctl::{
    ioc, ioc_dir, ioc_nr, ioc_size, ioc_type, ior, iow, iowr, is_mutating, needs_privilege,
    ADD_CRITICAL, COMMANDS, GET_CRITICAL, GET_STATS, GET_TUNABLES, GET_VERSION, IOC_NONE, IOC_READ,
    IOC_WRITE, MAGIC, REMOVE_CRITICAL, RESET_STATS, SET_CRITICAL, SET_ENABLED, SET_TUNABLES,
};
pub use mech::MECH_NAMES;
pub use messages::{
    CriticalEntry, CriticalList, CriticalOne, Enable, Header, StatsHead, StatsMsg, TidMsg,
    TunablesMsg, VersionInfo, MAX_CRITICAL_ENTRIES, MESSAGES, TUNABLE_SLOTS,
};
pub use names::{SameSpace, TidSpace};
pub use request::{request_header, Request};
