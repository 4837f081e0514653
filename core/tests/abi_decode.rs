//! Decoding arbitrary bytes never panics, and every failure maps to a real errno.

use proptest::prelude::*;
use superpass_core::abi::{self, Request};
use superpass_core::{Engine, NoObserver};

fn cmd() -> impl Strategy<Value = u32> {
    prop_oneof![
        prop::sample::select(abi::COMMANDS.iter().map(|c| c.1).collect::<Vec<_>>()),
        any::<u32>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn decode_never_panics(cmd in cmd(), mut bytes in prop::collection::vec(any::<u8>(), 0..600), hdr in any::<bool>()) {
        // Half the time give it a valid header so decoding reaches the body.
        let size = abi::ioc_size(cmd);
        if hdr && bytes.len() >= 8 {
            bytes[..4].copy_from_slice(&(size as u32).to_ne_bytes());
            bytes[4..8].copy_from_slice(&abi::ABI_VERSION.to_ne_bytes());
        }
        if let Err(e) = Request::decode(cmd, &bytes) {
            prop_assert!([1, 2, 3, 7, 14, 22, 25, 28].contains(&e.errno()));
        }
    }

    #[test]
    fn ioctl_on_arbitrary_input_is_an_errno_or_success(cmd in cmd(), body in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut e = Engine::new(2, NoObserver);
        let size = abi::ioc_size(cmd).max(8);
        let mut buf = vec![0u8; size];
        buf[..4].copy_from_slice(&(abi::ioc_size(cmd) as u32).to_ne_bytes());
        buf[4..8].copy_from_slice(&abi::ABI_VERSION.to_ne_bytes());
        for (d, s) in buf[8..].iter_mut().zip(body) {
            *d = s;
        }
        let len = abi::ioc_size(cmd);
        match e.ioctl(0, cmd, &mut buf[..len.min(size)]) {
            Ok(n) => prop_assert!(n <= len),
            Err(err) => prop_assert!(err.errno() > 0),
        }
        e.check_invariants().map_err(TestCaseError::fail)?;
    }
}
