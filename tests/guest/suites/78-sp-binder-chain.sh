# A critical thread's synchronous binder calls into a server whose two pool threads (nice
# -10, standing in for ACK's binder priority inheritance, which this kernel lacks) take a
# kernel mutex in every call that a nice-19 thread of the server keeps taking for 500 us,
# under 4 nice-0 hogs (sp-binder-chain -s chain). The caller waits on the server thread
# (android_vh_binder_proc_transaction_finish names it), which waits on the holder. Off and
# on, with the critical thread at nice 0 and at nice -10 (off_n10 / on_n10). It fails unless the binder mechanism is live and every on mode
# tracked the calls and granted; the p99.9 cut is reported (p999_reduction_pct), not judged yet:
# docs/module.md has the figures and what is left.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
. /lib/sptest/binder.sh
sp_binder_suite chain
