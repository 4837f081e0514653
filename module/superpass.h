/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between superpass.ko's C companion (superpass_*.c) and its
 * Rust crate (superpass_main.rs).
 *
 * Direction C -> Rust: the sp_hook_*() and sp_ioctl() entry points, defined
 * in superpass_main.rs. They take plain values (time, TIDs, CPU numbers, lock
 * addresses) plus opaque task/runqueue pointers that Rust only stores and
 * hands back to the sp_task_*() helpers.
 *
 * Direction Rust -> C: the engine lock, privilege and TID checks, task and
 * runqueue internals, CPU kicks and tracepoints. Rust declares them in
 * ffi.rs, each beside its one safe wrapper; `cargo xtask gen-headers` spells
 * both directions in C (superpass_ffi.h), so the two cannot drift.
 */
#ifndef SUPERPASS_H
#define SUPERPASS_H

#include <linux/types.h>

/* Lock kinds (SP_KIND_*), mechanism bits (SP_MECH_*), ...: generated from superpass-core. */
#include "superpass_consts.h"

/* Both directions' prototypes: generated from superpass_main.rs and ffi.rs. */
#include "superpass_ffi.h"

#endif /* SUPERPASS_H */
