# The inversion scenario on a kernel mutex, SuperPass off / on / SCHED_FIFO
# critical thread; on must cut the p99.9 wait by >= 72% against off. The blocker
# holds the lock for 500 us of every 600 us it runs (-o 100), so that a starved
# blocker is nearly always starved inside it: with half its time outside, off
# had as few as 8 inversions in a run, too few for its p99.9 to be one. A
# mode then runs on until it has 1000 waits (off's inversions are long).
# Captures ftrace per mode (-> target/vm/inversion-*.trace, by the shared folder): 2 s, or
# sp.trace=S seconds from the kernel command line (the demo asks for most of the mode),
# and with SuperPass on each later wait over 16 ms (cargo xtask vm-test itemizes them).
# off_n10 / on_n10 run the same with the critical thread at nice -10, as Android runs
# the UI thread and RenderThread (metrics off_n10_*, on_n10_*; the plain modes keep nice 0).
# on+fifo: SuperPass on and the critical thread SCHED_FIFO 1 (registered as in on, the
# policy as in fifo: RT-UI with SuperPass; metrics onfifo_*). -R 72 judges it too: its
# p99.9 cut >= 72% against off, and its longest wait no longer than on's plus 16 ms
# (sp-inversion.c, ONFIFO_MARGIN_US: the host's stalls); both longest waits are printed.
# It has no ftrace window of its own (that is for the demo's picture of off / on / fifo);
# its waits over 16 ms are captured as on's are.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
tsecs=$(sed -n 's/.*sp\.trace=\([0-9]*\).*/\1/p' /proc/cmdline)
sp-inversion -l mutex -m off,on,fifo,on+fifo,off_n10,on_n10 -d ${SP_SECS:-10} -H 4 -w 500 -o 100 -p 1000 -R 72 -T ${tsecs:-2} > /tmp/inv.out 2>&1
rc=$?
grep -v '^M \|^SPTRACE ' /tmp/inv.out
grep '^SPTRACE ' /tmp/inv.out
grep '^M ' /tmp/inv.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
