//! `shell-cmd`: sends a shell command to a binder service the way Android's `cmd` does.
//!
//! Usage: `shell-cmd [--binder DEVICE] [--service NAME] [ARGS...]` (kernel binder only). It
//! sends `SHELL_COMMAND_TRANSACTION` with libbinder's payload: flat fd objects for in
//! (/dev/null), out and err (pipes it drains), argc and the arguments as `String16`, a null
//! shell callback and its own `IResultReceiver`, then waits for the result code. It prints
//! the service's output and errors and exits with that code (255 for -1); 2 if the
//! transaction fails, 3 if no result arrives.
//!
//! rsbinder writes an fd only wrapped as a `ParcelFileDescriptor`, so the payload is built
//! by hand: the arguments and binders are written into an rsbinder parcel (which takes the
//! receiver's references), its bytes are read back, and the fd objects are put in front;
//! `Parcel::from_ipc_parts` then sends those bytes with an object table naming all four
//! objects. The end-to-end test (tests/service/service-e2e.sh) uses it for `cmd`.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use rsbinder::{Client, Endpoint, Interface, Parcel, SIBinder, Uri, SHELL_COMMAND_TRANSACTION};
use superpass_service::result_receiver::{BnResultReceiver, IResultReceiver};
use superpass_service::shell::{BINDER_TYPE_BINDER, BINDER_TYPE_FD, FLAT_OBJECT_SIZE};
use superpass_service::status::describe_code;
use superpass_service::SERVICE_NAME;

/// Records the result code `send` delivers.
struct Receiver(std::sync::Mutex<mpsc::Sender<i32>>);

impl Interface for Receiver {}

impl IResultReceiver for Receiver {
    fn send(&self, code: i32) -> rsbinder::BinderResult<()> {
        let _ = self.0.lock().map(|tx| tx.send(code));
        Ok(())
    }
}

/// A flat fd object as libbinder's `writeFileDescriptor(fd, false)` writes it.
fn fd_object(fd: i32) -> [u8; FLAT_OBJECT_SIZE] {
    let mut o = [0u8; FLAT_OBJECT_SIZE];
    o[0..4].copy_from_slice(&BINDER_TYPE_FD.to_ne_bytes());
    o[8..12].copy_from_slice(&(fd as u32).to_ne_bytes());
    o
}

/// A no-op: the buffer behind the sent parcel belongs to `main`.
fn keep_buffer(_: Option<&Parcel>, _: u64, _: usize, _: u64, _: usize) -> rsbinder::Result<()> {
    Ok(())
}

/// Reads `r` to its end on a thread, so a large output cannot fill the pipe and stall both.
fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

fn run() -> Result<i32, (u8, String)> {
    let mut device: Option<PathBuf> = None;
    let mut service = SERVICE_NAME.to_string();
    let mut args: Vec<String> = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--binder" if args.is_empty() => device = it.next().map(PathBuf::from),
            "--service" if args.is_empty() => service = it.next().unwrap_or_default(),
            _ => args.push(a),
        }
    }
    let fail = |what: &str, e: &dyn std::fmt::Debug| (2u8, format!("{what}: {e:?}"));
    let uri = match &device {
        Some(d) => Uri::new(Endpoint::Kernel(
            rsbinder::entry::KernelEndpoint::default().with_driver(d),
        )),
        None => Uri::kernel(),
    };
    let client =
        Client::open(uri).map_err(|e| (2, format!("open binder: {}", describe_code(e))))?;
    let target: SIBinder = client
        .binder(&service)
        .map_err(|e| (2, format!("look up {service}: {}", describe_code(e))))?;
    let proxy = target
        .as_proxy()
        .ok_or_else(|| (2, format!("{service} is not a remote binder")))?;

    let input = File::open("/dev/null").map_err(|e| fail("/dev/null", &e))?;
    let (out_r, out_w) = std::io::pipe().map_err(|e| fail("pipe", &e))?;
    let (err_r, err_w) = std::io::pipe().map_err(|e| fail("pipe", &e))?;
    let out = drain(out_r);
    let err = drain(err_r);

    let (tx, rx) = mpsc::channel();
    let receiver = BnResultReceiver::new_binder(Receiver(std::sync::Mutex::new(tx)));
    let receiver = receiver.as_binder();

    // Everything after the fds, written by rsbinder so that the receiver's flat object and
    // references are its own.
    let mut tail = Parcel::new();
    let put = |p: &mut Parcel| -> rsbinder::Result<usize> {
        p.write(&(args.len() as i32))?;
        for a in &args {
            p.write(a)?;
        }
        p.write(&None::<&SIBinder>)?; // no IShellCallback
        let at = p.data_position();
        p.write(&Some(&receiver))?;
        Ok(at)
    };
    let receiver_at = put(&mut tail).map_err(|e| fail("write the arguments", &e))?;
    let len = tail.data_size();
    tail.set_data_position(0);
    let mut bytes = Vec::with_capacity(3 * FLAT_OBJECT_SIZE + len);
    for fd in [&input as &dyn AsRawFd, &out_w, &err_w] {
        bytes.extend_from_slice(&fd_object(fd.as_raw_fd()));
    }
    while tail.data_position() < len {
        let w = tail
            .read_u32()
            .map_err(|e| fail("read the arguments back", &e))?;
        bytes.extend_from_slice(&w.to_ne_bytes());
    }
    let receiver_off = 3 * FLAT_OBJECT_SIZE + receiver_at;
    let kind = bytes
        .get(receiver_off..receiver_off + 4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    if kind != Some(BINDER_TYPE_BINDER) {
        return Err((2, format!("the receiver is not at byte {receiver_off}")));
    }
    let mut objects: [u64; 4] = [
        0,
        FLAT_OBJECT_SIZE as u64,
        2 * FLAT_OBJECT_SIZE as u64,
        receiver_off as u64,
    ];
    // SAFETY: `bytes` and `objects` outlive `send` and nothing else touches them meanwhile;
    // the four offsets name a 24-byte object each inside `bytes`; the three fd objects name
    // fds (`input`, `out_w`, `err_w`) that stay open until `send` is dropped.
    let send = unsafe {
        Parcel::from_ipc_parts(
            bytes.as_mut_ptr(),
            bytes.len(),
            objects.as_mut_ptr(),
            objects.len(),
            keep_buffer,
        )
    };
    let sent = proxy.submit_transact(SHELL_COMMAND_TRANSACTION, &send, 0);
    drop(send);
    // The service holds its own copies: ours must close for the pipes to reach their end.
    drop((input, out_w, err_w));
    let code = match sent {
        Ok(_) => rx.recv_timeout(Duration::from_secs(30)).ok(),
        Err(e) => {
            eprintln!(
                "shell-cmd: the shell-command transaction failed: {}",
                describe_code(e)
            );
            None
        }
    };
    drop(tail);
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    use std::io::Write;
    let _ = std::io::stdout().write_all(&out);
    let _ = std::io::stderr().write_all(&err);
    match (sent, code) {
        (Err(_), _) => Err((2, String::new())),
        (Ok(_), None) => Err((3, "no result code within 30 s".into())),
        (Ok(_), Some(c)) => Ok(c),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => ExitCode::from(code as u8),
        Err((code, msg)) => {
            if !msg.is_empty() {
                eprintln!("shell-cmd: {msg}");
            }
            ExitCode::from(code)
        }
    }
}
