//! An in-process backend: a `superpass_core::Engine` running the module's own request path.

use std::time::Instant;

use superpass_core::{Engine, NoObserver};

use super::{Device, DeviceError};

/// A [`Device`] that serves ioctls from an in-memory engine, for host tests and demos.
///
/// It runs `Engine::ioctl`, the request path the kernel module runs, on the same buffers the
/// kernel backend would pass to the driver. What only a kernel knows (privilege, whether a
/// TID exists) the service checks before it gets here.
pub struct MemoryDevice {
    engine: Engine<NoObserver>,
    start: Instant,
}

impl MemoryDevice {
    /// An engine for `nr_cpus` CPUs, as the module creates at load.
    pub fn new(nr_cpus: u32) -> Self {
        Self {
            engine: Engine::new(nr_cpus, NoObserver),
            start: Instant::now(),
        }
    }

    /// The engine, for tests that look behind the ABI.
    pub fn engine(&self) -> &Engine<NoObserver> {
        &self.engine
    }
}

impl Device for MemoryDevice {
    fn ioctl(&mut self, cmd: u32, buf: &mut [u8]) -> Result<(), DeviceError> {
        let now = self.start.elapsed().as_nanos() as u64;
        self.engine
            .ioctl(now, cmd, buf)
            .map(drop)
            .map_err(DeviceError::from_abi)
    }

    fn kind(&self) -> &'static str {
        "memory"
    }
}
