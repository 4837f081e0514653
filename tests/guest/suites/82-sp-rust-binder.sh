# sp-binder-chain's chain scenario (see 78-sp-binder-chain.sh) through Rust Binder's vendor
# hooks: this kernel has no Rust Binder, so sp_testdev.ko's stand-in (spt_rbinder.c) makes
# the calls and fires android_vh_rust_binder_set_priority as a server thread takes one and
# android_vh_rust_binder_restore_priority at its reply, reading nothing but what
# RUST_BINDER_LAYOUT describes. It fails unless the rust_binder mechanism is live and every
# on mode tracked the calls and granted.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
. /lib/sptest/binder.sh
sp_binder_suite chain rust
