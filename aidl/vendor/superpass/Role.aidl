/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

/**
 * Why a thread is latency critical; the values are the module's role codes.
 */
@VintfStability
@Backing(type="int")
enum Role {
    /** The app's main (UI) thread: tid == pid. */
    UI = 0,
    /** The app's RenderThread. */
    RENDER = 1,
    /** Any other thread a client declares critical (audio, input, ...). */
    OTHER = 2,
}
