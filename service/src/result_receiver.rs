//! The stubs of `com.android.internal.os.IResultReceiver`, which `cmd` waits on (see build.rs).

#![allow(missing_docs, clippy::all, reason = "generated code")]

rsbinder::include_aidl!("result_receiver");

pub use com::android::internal::os::IResultReceiver::{
    BnResultReceiver, BpResultReceiver, IResultReceiver,
};
