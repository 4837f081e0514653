//! A client token: a local binder object whose only job is to die with its process.

use rsbinder::{
    Binder, Interface, Parcel, Remotable, Result, SIBinder, StatusCode, TransactionCode,
};

/// The descriptor of SuperPass client tokens (any binder works as a token; this is ours).
pub const DESCRIPTOR: &str = "vendor.superpass.IClientToken";

struct Token;

impl Remotable for Token {
    fn descriptor() -> &'static str {
        DESCRIPTOR
    }

    fn on_transact(&self, _: TransactionCode, _: &mut Parcel, _: &mut Parcel) -> Result<()> {
        Err(StatusCode::UnknownTransaction)
    }

    fn on_dump(&self, _: &mut dyn std::io::Write, _: &[String]) -> Result<()> {
        Ok(())
    }
}

/// A fresh token; pass it to the registering calls and keep it alive while they should hold.
pub fn new() -> SIBinder {
    Binder::new(Token).as_binder()
}
