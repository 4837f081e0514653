//! How the service and its clients find each other: kernel binder or binder over a Unix socket.

use std::path::{Path, PathBuf};

use rsbinder::entry::{KernelEndpoint, WireProfile, WireVersion};
use rsbinder::{Client, Endpoint, Strong, Uri};

use crate::aidl::ISuperPass;
use crate::SERVICE_NAME;

/// Where to serve or connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Kernel binder through the service manager, on the default device or the one given.
    Kernel(Option<PathBuf>),
    /// Binder RPC over the Unix socket at this path (no driver, no service manager).
    Rpc(PathBuf),
}

impl Transport {
    /// From the `--rpc` and `--binder` flags: RPC if a socket is given.
    pub fn from_flags(rpc: Option<PathBuf>, binder: Option<PathBuf>) -> Self {
        match rpc {
            Some(p) => Self::Rpc(p),
            None => Self::Kernel(binder),
        }
    }

    /// The rsbinder URI: RPC speaks the android-13+ wire, which death notifications need.
    pub fn uri(&self) -> Uri {
        match self {
            Self::Kernel(None) => Uri::kernel(),
            Self::Kernel(Some(d)) => {
                Uri::new(Endpoint::Kernel(KernelEndpoint::default().with_driver(d)))
            }
            Self::Rpc(path) => rpc_uri(path),
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Kernel(None) => write!(f, "kernel binder"),
            Self::Kernel(Some(d)) => write!(f, "binder device {}", d.display()),
            Self::Rpc(p) => write!(f, "RPC socket {}", p.display()),
        }
    }
}

/// The RPC URI for a Unix socket at `path` (made absolute).
pub fn rpc_uri(path: &Path) -> Uri {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Uri::new(Endpoint::unix(abs)).with_wire(WireProfile::Android13Plus(WireVersion::MAX))
}

/// Frees `path` for the service's socket: a socket nobody serves on is removed; a live socket
/// or anything that is not a socket is left alone and refused.
pub fn clear_stale_socket(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    if !meta.file_type().is_socket() {
        return Err(format!(
            "refusing to replace {}: it exists and is not a socket",
            path.display()
        ));
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(format!(
            "{} is in use: another service is serving on it",
            path.display()
        ));
    }
    std::fs::remove_file(path).map_err(|e| format!("cannot remove {}: {e}", path.display()))
}

/// A connection to the service, kept open while its proxy is used.
pub struct Connection {
    client: Client,
    /// The service.
    pub service: Strong<dyn ISuperPass>,
}

impl Connection {
    /// Connects and looks the service up.
    ///
    /// `callbacks` opens an incoming connection on RPC so the server can watch binders this
    /// client hosts (needed to hand it a token that dies with this process); such a client
    /// must be [`closed`](Self::close) to end its session before the process exits normally.
    pub fn open(t: &Transport, callbacks: bool) -> rsbinder::Result<Self> {
        let client = match t {
            Transport::Kernel(_) => Client::open(t.uri())?,
            Transport::Rpc(_) => Client::open_with(t.uri(), |o, _| {
                if callbacks {
                    o.incoming_connections = Some(1);
                }
            })?,
        };
        let service = client.get::<dyn ISuperPass>(SERVICE_NAME)?;
        Ok(Self { client, service })
    }

    /// True on kernel binder.
    pub fn is_kernel(&self) -> bool {
        self.client.session().is_none()
    }

    /// Ends an RPC session (a no-op on kernel binder).
    pub fn close(&self) {
        if let Some(s) = self.client.session() {
            s.close_session();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn only_a_stale_socket_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.sock");
        assert_eq!(clear_stale_socket(&missing), Ok(()));

        let file = dir.path().join("state.json");
        std::fs::write(&file, "{}").unwrap();
        let e = clear_stale_socket(&file).unwrap_err();
        assert!(e.contains("not a socket"), "{e}");
        assert!(file.exists(), "a regular file is never removed");

        let live = dir.path().join("live.sock");
        let listener = UnixListener::bind(&live).unwrap();
        assert!(clear_stale_socket(&live).unwrap_err().contains("in use"));
        drop(listener);
        assert_eq!(
            clear_stale_socket(&live),
            Ok(()),
            "nobody serves on it any more"
        );
        assert!(!live.exists());
    }
}
