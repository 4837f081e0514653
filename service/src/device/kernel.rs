//! The real backend: ioctls on the kernel module's character device.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use super::{Device, DeviceError};

/// A [`Device`] backed by `/dev/superpass`.
pub struct KernelDevice {
    file: File,
}

impl KernelDevice {
    /// Opens the device node read-write.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Self { file })
    }
}

impl Device for KernelDevice {
    fn ioctl(&mut self, cmd: u32, buf: &mut [u8]) -> Result<(), DeviceError> {
        debug_assert_eq!(buf.len(), superpass_core::abi::ioc_size(cmd));
        // SAFETY: `buf` is a live, exclusively borrowed buffer of exactly `_IOC_SIZE(cmd)` bytes,
        // which is all the module reads or writes through the pointer; the fd is open.
        let r = unsafe { libc::ioctl(self.file.as_raw_fd(), cmd as _, buf.as_mut_ptr()) };
        if r < 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            return Err(DeviceError(errno));
        }
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "device"
    }
}
