# Owner change: the critical thread waits on a mutex held by A (nice 19,
# 500 us inside) while B waits ahead of it; A hands over to B (nice 19,
# 1500 us inside), so the owner at the start of the wait is not the one it
# waits for longest. 4 nice-0 hogs, SuperPass off / on; on must cut the p99.9
# wait by >= 72% against off, over >= 1000 waits per mode (sp-follow.c).
# B wakes boosted (the unlock that wakes it names it the next blocker): on a
# kernel with uclamp its uclamp.min must have been raised (uclamp_boosts).
# The kernel computes clamps only once something used uclamp (Android's task
# profiles do at boot); sp-ctl uclamp-used does that here.
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-ctl uclamp-used || exit 1
sp-follow -s handoff -m off,on,off_n10,on_n10 -d ${SP_FOLLOW_SECS:-8} -H 4 -a 500 -b 1500 -e 100 -p 1000 -R 72 -N 1000 > /tmp/handoff.out 2>&1
rc=$?
grep -v '^M ' /tmp/handoff.out
grep '^M ' /tmp/handoff.out | cut -c3- >> "$SPTEST_METRICS"
if sp-ctl stats | grep -q '^mechanism uclamp$'; then
	u=$(sed -n 's/^M on_uclamp_boosts //p' /tmp/handoff.out)
	[ "${u:-0}" -gt 0 ] || { echo "FAIL no boosted task had its uclamp.min raised"; rc=1; }
fi
exit $rc
