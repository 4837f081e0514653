# Chain: the critical thread waits on a mutex held by T1 (nice 19), which then
# waits on an rwsem T2 (nice 19) holds for writing with 1500 us of work inside:
# critical -> T1 -> T2. 4 nice-0 hogs, SuperPass off / on; on must cut the
# p99.9 wait by >= 72% against off, over >= 1000 waits per mode (sp-follow.c).
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-follow -s chain -m off,on,off_n10,on_n10 -d ${SP_FOLLOW_SECS:-8} -H 4 -a 100 -i 100 -b 1500 -e 100 -p 1000 -R 72 -N 1000 > /tmp/chain.out 2>&1
rc=$?
grep -v '^M ' /tmp/chain.out
grep '^M ' /tmp/chain.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
