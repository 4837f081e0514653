# rwsem reader storm: a critical writer is blocked by more concurrent readers
# (8) than the tracking bound (max_readers, default 4). Reports how many
# readers were fast-tracked per wait, how many went untracked, and the wait
# distribution off vs on. Informational: passes if it ran and boosted readers.
# Each mode starts once every reader has left and re-entered after the
# critical thread registered: SuperPass cannot learn readers that entered before.
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-inversion -l rwsem -r 8 -m off,on,off_n10,on_n10 -d ${SP_READERS_SECS:-${SP_SECS:-8}} -H 4 -w 500 -p 2000 > /tmp/rd.out 2>&1
rc=$?
grep -v '^M ' /tmp/rd.out
grep '^M ' /tmp/rd.out | cut -c3- >> "$SPTEST_METRICS"
[ $rc = 0 ] || exit $rc
grants=$(sed -n 's/^M on_grants //p' /tmp/rd.out)
[ "${grants:-0}" -gt 0 ] || { echo "FAIL no reader was fast-tracked"; exit 1; }
