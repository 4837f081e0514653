# Reader storm: a critical writer behind 12 readers that a write hold lets in
# at once, each computing 0.5 ms at nice 19 inside (more than max_readers = 4:
# the tracked readers are refilled from the recorded ones as they leave), and
# 4 nice-0 hogs, SuperPass off / on; on must cut the p99.9 wait by >= 72%
# against off, over >= 1000 waits per mode (sp-follow.c).
# Each mode starts after two storms past the registration (earlier readers are
# unknown to SuperPass: an rwsem names only its last reader).
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-follow -s storm -m off,on,off_n10,on_n10 -d ${SP_FOLLOW_SECS:-8} -H 4 -r 12 -a 500 -e 500 -p 1000 -R 72 -N 1000 > /tmp/storm.out 2>&1
rc=$?
grep -v '^M ' /tmp/storm.out
grep '^M ' /tmp/storm.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
