# A critical thread's synchronous binder call finds no free pool thread: the server's one
# pool thread (nice 10) is kept busy by a nice-10 client's calls of 500 us of work each,
# under 4 nice-0 hogs (sp-binder-chain -s pool), so the critical call is queued behind a
# background call. With SuperPass on, the busy pool thread is the queued call's blocker
# (max_pool_candidates) until it takes the call, then its owner. It fails unless the binder
# mechanism is live and every on mode tracked the calls and granted; the p99.9 cut is
# reported, not judged yet (docs/module.md).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
. /lib/sptest/binder.sh
sp_binder_suite pool
