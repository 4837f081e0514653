# The inversion scenario on a kernel rwsem (blocker writes, critical reads), SuperPass off / on / SCHED_FIFO
# critical thread; on must cut the p99.9 wait by >= 72% against off.
# Captures ftrace per mode (SPTRACE lines -> target/vm/inversion-*.trace): 2 s, or
# sp.trace=S seconds from the kernel command line (the demo asks for most of the mode).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
secs=$(sed -n 's/.*sp\.secs=\([0-9]*\).*/\1/p' /proc/cmdline)
tsecs=$(sed -n 's/.*sp\.trace=\([0-9]*\).*/\1/p' /proc/cmdline)
sp-inversion -l rwsem -m off,on,fifo -d ${secs:-10} -H 4 -w 500 -p 1000 -R 72 -T ${tsecs:-2} > /tmp/inv.out 2>&1
rc=$?
grep -v '^M \|^SPTRACE ' /tmp/inv.out
grep '^SPTRACE ' /tmp/inv.out
grep '^M ' /tmp/inv.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
