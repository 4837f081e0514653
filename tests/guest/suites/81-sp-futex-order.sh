# Futex queue order: a background thread and then the critical thread (nice
# -10) go to sleep on one futex word, and one wake is sent. The kernel wakes
# equal-priority waiters first come, first woken: the background thread, which
# would run its own critical section before the critical thread's. With
# SuperPass on, the critical thread is queued first (queue_first,
# android_vh_alter_futex_plist_add) and wakes first: in at least 95% of the
# rounds on, at most 5% off, and queued_first counts every on round.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-futex-order -r 200 > /tmp/forder.out 2>&1
rc=$?
grep -v '^M ' /tmp/forder.out
grep '^M ' /tmp/forder.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
