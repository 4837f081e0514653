//! `adb shell cmd vendor.superpass.ISuperPass/default ...`: a front object for the shell command.
//!
//! `cmd` sends `SHELL_COMMAND_TRANSACTION` (`_CMD`) to the service's binder with this payload
//! (libbinder's layout): three flat file-descriptor objects (in, out, err), an `int` argc and
//! argc `String16` arguments, a nullable `IShellCallback` binder and a nullable
//! `IResultReceiver` binder. It then waits until the receiver is sent the command's result
//! code (`send(int)`, oneway, `FIRST_CALL_TRANSACTION`).
//!
//! rsbinder 0.12's generated stub does not handle `_CMD`, but a `Binder` hands every code
//! outside the AIDL method range to its `Remotable` before any interface check, so
//! [`ShellFront`] sits in front of the generated stub: it answers `_CMD` itself, running the
//! same command table as `dumpsys` ([`commands`]), with the service's own settings at hand
//! ([`commands::Local`]), and forwards every other code to the stub unchanged. Only root and shell may run commands; the commands that change state then pass
//! the service's usual caller check.
//!
//! The fds are read from the flat objects' words with the public parcel API: rsbinder's own
//! fd reader is private. A received parcel owns the fds the driver installed and closes them
//! when it drops, so the front duplicates them. Words cannot prove that an fd came from the
//! driver rather than from a crafted payload naming one of the service's own fds, so the front
//! takes only streams a shell hands over (pipes, sockets, terminals, /dev/null, regular files).

use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::Arc;

use rsbinder::{
    FromIBinder, Interface, Parcel, Remotable, SIBinder, Stability, StatusCode, Strong,
    TransactionCode, SHELL_COMMAND_TRANSACTION,
};

use crate::aidl::{BnSuperPass, ISuperPass};
use crate::caller;
use crate::commands::{self, Local};
use crate::result_receiver::IResultReceiver;
use crate::service::SuperPass;

/// `BINDER_TYPE_FD` (`B_PACK_CHARS('f', 'd', '*', 0x85)`): the type word of a flat fd object.
pub const BINDER_TYPE_FD: u32 = 0x6664_2a85;

/// `BINDER_TYPE_BINDER` (`B_PACK_CHARS('s', 'b', '*', 0x85)`): a local binder's flat object.
pub const BINDER_TYPE_BINDER: u32 = 0x7362_2a85;

/// Bytes of a `flat_binder_object` on a 64-bit binder ABI.
pub const FLAT_OBJECT_SIZE: usize = 24;

/// The most arguments a shell command may carry (a bound on what a caller makes us allocate).
pub const MAX_ARGS: i32 = 64;

/// The binder object the service registers: `_CMD` here, everything else to the AIDL stub.
pub struct ShellFront {
    stub: Strong<dyn ISuperPass>,
    local: Arc<dyn Local + Send + Sync>,
}

impl ShellFront {
    /// Wraps `svc` in the generated stub and puts the front before it.
    pub fn new_binder(svc: SuperPass) -> SIBinder {
        let local = svc.local();
        let stub = BnSuperPass::new_binder(svc);
        rsbinder::Binder::new_with_stability(Self { stub, local }, Stability::Vintf).as_binder()
    }

    fn shell_command(&self, reader: &mut Parcel) -> rsbinder::Result<()> {
        let uid = rsbinder::get_calling_uid();
        if !caller::may_run_shell_commands(uid) {
            log::warn!("refused a shell command from uid {uid} (only root and shell may)");
            return Err(StatusCode::PermissionDenied);
        }
        if !reader.is_kernel_backed() {
            // RPC carries fds as table indices that only rsbinder's private reader resolves.
            log::warn!("a shell command over RPC: use dump arguments or superpassctl");
            return Err(StatusCode::InvalidOperation);
        }
        let mut req = ShellRequest::read(reader)?;
        let code = commands::run_shell(
            &*self.stub,
            Some(&*self.local),
            &req.args,
            &mut req.out,
            &mut req.err,
        );
        let _ = req.out.flush();
        drop(req.input);
        match req.receiver {
            Some(r) => answer(r, code),
            None => log::debug!("shell command without a result receiver"),
        }
        Ok(())
    }
}

/// Sends `code` to a result receiver; a failure is only logged, as the command already ran.
fn answer(receiver: SIBinder, code: i32) {
    match <dyn IResultReceiver as FromIBinder>::try_from(receiver) {
        Ok(r) => {
            if let Err(e) = r.send(code) {
                log::warn!("cannot answer the shell command's result receiver: {e:?}");
            }
        }
        Err(e) => log::warn!("the shell command's result receiver is not one ({e:?})"),
    }
}

impl Remotable for ShellFront {
    fn descriptor() -> &'static str {
        <BnSuperPass as Remotable>::descriptor()
    }

    fn on_transact(
        &self,
        code: TransactionCode,
        reader: &mut Parcel,
        reply: &mut Parcel,
    ) -> rsbinder::Result<()> {
        if code == SHELL_COMMAND_TRANSACTION {
            return self.shell_command(reader);
        }
        let stub = self.stub.as_binder();
        if !reader.is_kernel_backed() {
            // RPC has consumed the interface token already; the stub's RPC entry expects that.
            return stub.rpc_transact(code, reader, reply);
        }
        // The stub's kernel entry rewinds the parcel and checks the interface token itself.
        stub.as_transactable()
            .ok_or(StatusCode::UnknownTransaction)?
            .transact(code, reader, reply)
    }

    fn on_dump(&self, writer: &mut dyn Write, args: &[String]) -> rsbinder::Result<()> {
        commands::run_dump(&*self.stub, Some(&*self.local), args, writer);
        Ok(())
    }
}

/// What a `_CMD` transaction carries, with the fds duplicated out of the parcel.
pub struct ShellRequest {
    /// The command's stdin (unused: no command reads input).
    pub input: File,
    /// Where the command's output goes.
    pub out: File,
    /// Where its errors go.
    pub err: File,
    /// The arguments after the service name.
    pub args: Vec<String>,
    /// The caller's `IResultReceiver`, if it sent one.
    pub receiver: Option<SIBinder>,
}

impl ShellRequest {
    /// Reads the libbinder layout of a shell command from a kernel parcel.
    pub fn read(reader: &mut Parcel) -> rsbinder::Result<Self> {
        let input = read_fd(reader, "in")?;
        let out = read_fd(reader, "out")?;
        let err = read_fd(reader, "err")?;
        let argc = reader.read_i32()?;
        if !(0..=MAX_ARGS).contains(&argc) {
            log::warn!("shell command with {argc} arguments (0 to {MAX_ARGS} allowed)");
            return Err(StatusCode::BadValue);
        }
        let args = (0..argc)
            .map(|_| reader.read::<String>())
            .collect::<rsbinder::Result<Vec<_>>>()?;
        let _callback: Option<SIBinder> = reader.read()?;
        let receiver: Option<SIBinder> = reader.read()?;
        Ok(Self {
            input,
            out,
            err,
            args,
            receiver,
        })
    }
}

/// Reads one flat fd object's words and duplicates its fd (close-on-exec).
fn read_fd(reader: &mut Parcel, which: &str) -> rsbinder::Result<File> {
    let kind = reader.read_u32()?;
    let _flags = reader.read_u32()?;
    let handle = reader.read_u32()?;
    let _high = reader.read_u32()?;
    let _cookie = reader.read_u64()?;
    if kind != BINDER_TYPE_FD {
        log::warn!("shell command: the {which} slot holds object type {kind:#x}, not an fd");
        return Err(StatusCode::BadType);
    }
    let raw = handle as RawFd;
    if !is_shell_stream(raw) {
        log::warn!("shell command: the {which} fd {raw} is not a pipe, socket, tty or file");
        return Err(StatusCode::BadValue);
    }
    // SAFETY: F_DUPFD_CLOEXEC reads no memory; a bad fd number only makes it fail.
    let dup = unsafe { libc::fcntl(raw, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        log::warn!(
            "shell command: cannot duplicate the {which} fd: {}",
            std::io::Error::last_os_error()
        );
        return Err(StatusCode::BadValue);
    }
    // SAFETY: `dup` is a new fd this process owns and nothing else refers to.
    Ok(unsafe { File::from_raw_fd(dup) })
}

/// True for the kinds of file a shell passes as a command's stdio.
fn is_shell_stream(fd: RawFd) -> bool {
    // SAFETY: an all-zero `stat` is a valid value, and fstat writes only into it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out pointer; a bad fd number only makes fstat fail.
    if fd < 0 || unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFREG => true,
        libc::S_IFCHR => {
            // SAFETY: isatty only queries the fd.
            let tty = unsafe { libc::isatty(fd) } == 1;
            tty || is_dev_null(st.st_rdev)
        }
        _ => false,
    }
}

fn is_dev_null(rdev: libc::dev_t) -> bool {
    libc::major(rdev) == 1 && libc::minor(rdev) == 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn takes_shell_streams_only() {
        let (r, w) = std::io::pipe().unwrap();
        assert!(is_shell_stream(r.as_raw_fd()));
        assert!(is_shell_stream(w.as_raw_fd()));
        let null = File::open("/dev/null").unwrap();
        assert!(is_shell_stream(null.as_raw_fd()));
        let file = tempfile::tempfile().unwrap();
        assert!(is_shell_stream(file.as_raw_fd()));
        let dir = File::open("/").unwrap();
        assert!(!is_shell_stream(dir.as_raw_fd()));
        // A character device that is neither a terminal nor /dev/null, like /dev/superpass.
        if let Ok(zero) = File::open("/dev/zero") {
            assert!(!is_shell_stream(zero.as_raw_fd()));
        }
        assert!(!is_shell_stream(-1));
    }

    #[test]
    fn type_words_are_the_driver_constants() {
        let pack = |a: u8, b: u8, c: u8, d: u8| u32::from_be_bytes([a, b, c, d]);
        assert_eq!(BINDER_TYPE_FD, pack(b'f', b'd', b'*', 0x85));
        assert_eq!(BINDER_TYPE_BINDER, pack(b's', b'b', b'*', 0x85));
        assert_eq!(SHELL_COMMAND_TRANSACTION, pack(b'_', b'C', b'M', b'D'));
    }
}
