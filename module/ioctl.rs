// SPDX-License-Identifier: GPL-2.0

//! `/dev/superpass` ioctls: decoded and applied by superpass-core's `abi`.
//!
//! Only what the platform alone can decide is done here: whether the command exists, whether the
//! caller may run it (`CAP_SYS_NICE` for [`abi::needs_privilege`] commands), copying the message in and out of user memory, and
//! which threads the caller's TIDs name (its PID namespace's, translated to the kernel's). The buffer is allocated before the engine lock is taken.

use kernel::prelude::*;
use kernel::uaccess::UserSlice;

use crate::ffi;
use crate::state;
use crate::superpass_core::abi::{self, AbiError, Request, TidSpace};
use crate::superpass_core::Tid;

/// The calling task's PID namespace: the caller's TIDs against the kernel's, which the engine uses.
struct CallerSpace;

impl TidSpace for CallerSpace {
    fn to_engine(&self, tid: Tid) -> Option<Tid> {
        ffi::tid_to_engine(tid)
    }

    fn to_caller(&self, tid: Tid) -> Option<Tid> {
        ffi::tid_to_caller(tid)
    }
}

/// Runs ioctl `cmd` with user argument `arg`.
pub(crate) fn ioctl(cmd: u32, arg: usize) -> Result<(), AbiError> {
    if !abi::COMMANDS.iter().any(|&(_, c)| c == cmd) {
        return Err(AbiError::UnknownCommand);
    }
    if abi::needs_privilege(cmd) && !ffi::capable_sys_nice() {
        return Err(AbiError::NotPermitted);
    }
    let size = abi::ioc_size(cmd);
    let dir = abi::ioc_dir(cmd);
    // Allocated here, outside the engine lock.
    let mut buf = KVec::from_elem(0u8, size, GFP_KERNEL).map_err(|_| AbiError::NoSpace)?;
    if dir & abi::IOC_WRITE != 0 {
        UserSlice::new(arg, size)
            .reader()
            .read_slice(&mut buf)
            .map_err(|_| AbiError::Fault)?;
    }
    let mut req = Request::decode(cmd, &buf)?;
    req.to_engine(&CallerSpace)?;
    let now = ffi::now();
    let n = {
        let mut g = state::lock().ok_or(AbiError::NotFound)?;
        let n = g.engine.apply(now, &req, &mut buf, &CallerSpace)?;
        drop(g);
        if let Request::SetEnabled(on) = req {
            pr_info!("fast track {}\n", if on { "enabled" } else { "disabled" });
        }
        n
    };
    if req.changes_probes() {
        // From process context, without the engine lock: it may sleep.
        ffi::probes_sync();
    }
    if dir & abi::IOC_READ != 0 && n > 0 {
        UserSlice::new(arg, size)
            .writer()
            .write_slice(&buf[..n])
            .map_err(|_| AbiError::Fault)?;
    }
    Ok(())
}
