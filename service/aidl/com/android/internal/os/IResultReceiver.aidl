// SPDX-License-Identifier: Apache-2.0
//
// The part of the platform's result receiver that `cmd` waits on: a shell command's handler
// answers it once with the command's result code. Only the wire matters here (descriptor,
// FIRST_CALL_TRANSACTION, one int), so this declares the int-only form the native `cmd` uses.

package com.android.internal.os;

oneway interface IResultReceiver {
    void send(int resultCode);
}
