# Chain through a blocker that was asleep before anyone waited for it: T1 (nice 19)
# takes the mutex and at once waits on the rwsem T2 (nice 19) holds for writing with
# 1500 us of work inside; only then does the critical thread wait for the mutex.
# T1's rwsem wait began while T1 did not matter to SuperPass, so no probe reported
# it: the engine learns it when it boosts T1, from the module's record of waits in
# progress, and the chain reaches T2. 4 nice-0 hogs, SuperPass off / on; on must cut
# the p99.9 wait by >= 72% against off, over >= 1000 waits per mode (sp-follow.c).
# off_n10 / on_n10 run the critical thread at nice -10, as Android runs the UI thread.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-follow -s chain-asleep -m off,on,off_n10,on_n10 -d ${SP_FOLLOW_SECS:-8} -H 4 -a 0 -i 100 -b 1500 -e 100 -p 1000 -R 72 -N 1000 > /tmp/chain-asleep.out 2>&1
rc=$?
grep -v '^M ' /tmp/chain-asleep.out
grep '^M ' /tmp/chain-asleep.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
