//! How the service's failures reach a binder caller.

use rsbinder::{ExceptionCode, Status};

use crate::aidl::consts;
use crate::device::DeviceError;

/// `EX_SERVICE_SPECIFIC` with one of the interface's `ERROR_*` codes.
pub fn specific(code: i32, msg: impl Into<String>) -> Status {
    Status::new_service_specific_error(code, Some(msg.into()))
}

/// `EX_ILLEGAL_ARGUMENT`.
pub fn illegal(msg: &str) -> Status {
    Status::from((ExceptionCode::IllegalArgument, msg))
}

/// `EX_SECURITY`.
pub fn security(msg: &str) -> Status {
    Status::from((ExceptionCode::Security, msg))
}

/// A module failure: too-many errnos become `ERROR_TOO_MANY_THREADS`, others `ERROR_DEVICE`.
pub fn device(e: DeviceError) -> Status {
    let code = match e.0 {
        libc::E2BIG | libc::ENOSPC => consts::ERROR_TOO_MANY_THREADS,
        _ => consts::ERROR_DEVICE,
    };
    log::warn!("module refused a request: {e}");
    specific(code, format!("superpass module: {e}"))
}

/// A one-line rendering of a binder error for CLIs, naming the interface's error codes.
pub fn describe(s: &Status) -> String {
    let msg = s.message().unwrap_or("");
    match s.exception_code() {
        ExceptionCode::ServiceSpecific => {
            let code = s.service_specific_error();
            let name = match code {
                consts::ERROR_NO_SUCH_THREAD => "ERROR_NO_SUCH_THREAD",
                consts::ERROR_BAD_ROLE => "ERROR_BAD_ROLE",
                consts::ERROR_TOO_MANY_THREADS => "ERROR_TOO_MANY_THREADS",
                consts::ERROR_UNKNOWN_TUNABLE => "ERROR_UNKNOWN_TUNABLE",
                consts::ERROR_OUT_OF_RANGE => "ERROR_OUT_OF_RANGE",
                consts::ERROR_NOT_REGISTERED => "ERROR_NOT_REGISTERED",
                consts::ERROR_DEVICE => "ERROR_DEVICE",
                _ => "unknown error",
            };
            format!("{name} ({code}): {msg}")
        }
        ExceptionCode::Security => format!("permission denied: {msg}"),
        ExceptionCode::IllegalArgument => format!("invalid argument: {msg}"),
        ExceptionCode::TransactionFailed => {
            format!("transaction failed: {:?}", s.transaction_error())
        }
        e => format!("{e:?}: {msg}"),
    }
}
