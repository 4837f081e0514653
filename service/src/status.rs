//! How the service's failures reach a binder caller.

use rsbinder::{ExceptionCode, Status, StatusCode};

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
            format!(
                "transaction failed: {}",
                describe_code(s.transaction_error())
            )
        }
        e => format!("{e:?}: {msg}"),
    }
}

/// A binder transport status in words, for CLIs (not Rust's `NameNotFound` or `Errno(-13)`).
pub fn describe_code(c: StatusCode) -> String {
    match c {
        StatusCode::NameNotFound => "no such service or binder device (is it running?)".into(),
        StatusCode::PermissionDenied => "permission denied".into(),
        StatusCode::DeadObject => "the service died".into(),
        StatusCode::UnknownTransaction => "the service does not know this call".into(),
        StatusCode::InvalidOperation => "not supported on this transport".into(),
        StatusCode::BadValue => "bad value".into(),
        StatusCode::BadType => "bad type or wrong interface".into(),
        StatusCode::FailedTransaction => "the transaction failed (too large, or refused)".into(),
        StatusCode::TimedOut => "timed out".into(),
        StatusCode::NoInit => "no binder driver".into(),
        StatusCode::Errno(e) => {
            let text = std::io::Error::from_raw_os_error(e.saturating_abs()).to_string();
            // Drop std's " (os error N)": the words are the message.
            match text.split_once(" (os error") {
                Some((words, _)) => words.to_string(),
                None => text,
            }
        }
        other => format!("binder error {}", i32::from(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_as_words() {
        assert_eq!(
            describe_code(StatusCode::PermissionDenied),
            "permission denied"
        );
        assert!(describe_code(StatusCode::Errno(-13)).starts_with("Permission denied"));
        assert!(describe_code(StatusCode::NameNotFound).contains("no such service"));
        let s = describe(&Status::from(StatusCode::DeadObject));
        assert!(!s.contains("DeadObject"), "{s}");
        for c in [
            StatusCode::NoMemory,
            StatusCode::Errno(-2),
            StatusCode::BadIndex,
        ] {
            assert!(
                !describe_code(c).contains('('),
                "{c:?}: {}",
                describe_code(c)
            );
        }
    }
}
