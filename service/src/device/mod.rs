//! The `/dev/superpass` backends behind one trait, and typed calls over them.
//!
//! A [`Device`] moves raw ioctl buffers: [`kernel::KernelDevice`] hands them to the module,
//! [`memory::MemoryDevice`] to an in-process `superpass_core::Engine` that runs the same request
//! path as the module. Everything above ([`Module`]) encodes and decodes with
//! `superpass_core::abi`, so the service never restates the ABI.

pub mod kernel;
pub mod memory;

use std::fmt;

use superpass_core::abi::{self, Message};
use superpass_core::tunables::Tunables;
use superpass_core::{Role, Tid};

/// An ioctl failure: the positive errno the module (or the engine) returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceError(pub i32);

impl DeviceError {
    /// The errno of a core ABI error.
    pub fn from_abi(e: abi::AbiError) -> Self {
        Self(e.errno())
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = std::io::Error::from_raw_os_error(self.0);
        write!(f, "errno {}: {msg}", self.0)
    }
}

impl std::error::Error for DeviceError {}

/// Something that executes `/dev/superpass` ioctls on raw argument buffers.
pub trait Device: Send {
    /// Runs ioctl `cmd` on `buf` (exactly `abi::ioc_size(cmd)` bytes), which holds the request
    /// and receives the reply.
    fn ioctl(&mut self, cmd: u32, buf: &mut [u8]) -> Result<(), DeviceError>;

    /// A short name for logs and `getState`: "device" or "memory".
    fn kind(&self) -> &'static str;
}

/// The module's answer to `GET_VERSION`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    /// The ABI version the module speaks.
    pub abi: u32,
    /// The compile-time capacity of the critical set.
    pub max_critical: u32,
    /// Hooks and mechanisms attached (`abi::mech` bits).
    pub active_mask: u64,
}

/// Typed `/dev/superpass` calls over any [`Device`].
pub struct Module {
    dev: Box<dyn Device>,
}

impl Module {
    /// Wraps a backend.
    pub fn new(dev: Box<dyn Device>) -> Self {
        Self { dev }
    }

    /// The backend's kind ("device" or "memory").
    pub fn kind(&self) -> &'static str {
        self.dev.kind()
    }

    /// Runs `cmd` with `msg` encoded as its argument.
    fn send<M: Message>(&mut self, cmd: u32, msg: &M) -> Result<Vec<u8>, DeviceError> {
        let mut buf = vec![0u8; abi::ioc_size(cmd)];
        msg.encode(&mut buf).map_err(DeviceError::from_abi)?;
        self.dev.ioctl(cmd, &mut buf)?;
        Ok(buf)
    }

    /// Runs read command `cmd` and decodes its reply as `M`.
    fn read<M: Message>(&mut self, cmd: u32) -> Result<M, DeviceError> {
        let mut buf = vec![0u8; abi::ioc_size(cmd)];
        abi::request_header(cmd, &mut buf).map_err(DeviceError::from_abi)?;
        self.dev.ioctl(cmd, &mut buf)?;
        M::decode(&buf[..M::SIZE]).map_err(DeviceError::from_abi)
    }

    /// `GET_VERSION`.
    pub fn version(&mut self) -> Result<Version, DeviceError> {
        let v: abi::VersionInfo = self.read(abi::GET_VERSION)?;
        Ok(Version {
            abi: v.hdr.version,
            max_critical: v.max_critical,
            active_mask: v.active_mask,
        })
    }

    /// `SET_CRITICAL`: replaces the module's whole critical set.
    pub fn set_critical(&mut self, entries: &[(Tid, Role)]) -> Result<(), DeviceError> {
        let list = abi::CriticalList::new(entries).map_err(DeviceError::from_abi)?;
        self.send(abi::SET_CRITICAL, &list).map(drop)
    }

    /// `SET_ENABLED`.
    pub fn set_enabled(&mut self, on: bool) -> Result<(), DeviceError> {
        self.send(abi::SET_ENABLED, &abi::Enable::new(on)).map(drop)
    }

    /// `GET_TUNABLES`.
    pub fn tunables(&mut self) -> Result<Tunables, DeviceError> {
        let m: abi::TunablesMsg = self.read(abi::GET_TUNABLES)?;
        m.tunables().map_err(DeviceError::from_abi)
    }

    /// `SET_TUNABLES` (all or nothing).
    pub fn set_tunables(&mut self, t: &Tunables) -> Result<(), DeviceError> {
        self.send(abi::SET_TUNABLES, &abi::TunablesMsg::new(t))
            .map(drop)
    }

    /// `GET_STATS`.
    pub fn stats(&mut self) -> Result<abi::StatsMsg, DeviceError> {
        self.read(abi::GET_STATS)
    }

    /// `RESET_STATS`.
    pub fn reset_stats(&mut self) -> Result<(), DeviceError> {
        self.send(
            abi::RESET_STATS,
            &abi::Header::for_size(abi::ioc_size(abi::RESET_STATS)),
        )
        .map(drop)
    }
}
