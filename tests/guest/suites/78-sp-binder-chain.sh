# A critical thread's synchronous binder calls into a server whose two pool threads (nice
# -10, standing in for ACK's binder priority inheritance, which this kernel lacks) take a
# kernel mutex in every call that a nice-19 thread of the server keeps taking for 500 us,
# under 4 nice-0 hogs (sp-binder-chain -s chain). The caller waits on the server thread
# (android_vh_binder_proc_transaction_finish names it), which waits on the holder: on must
# cut the p99.9 round trip by >= 72% against off, with the critical thread at nice 0 and at
# nice -10 (off_n10 / on_n10), and SuperPass must have granted with the binder mechanism live.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
mkdir -p /dev/binderfs
grep -q ' /dev/binderfs ' /proc/mounts || mount -t binder binder /dev/binderfs || exit 1
secs=$(sed -n 's/.*sp\.secs=\([0-9]*\).*/\1/p' /proc/cmdline)
sp-binder-chain -D /dev/binderfs -s chain -m off,on,off_n10,on_n10 -d ${secs:-10} -H 4 -w 500 \
	-p 1000 -R 72 > /tmp/bchain.out 2>&1
rc=$?
grep -v '^M \|^SPTRACE ' /tmp/bchain.out
grep '^SPTRACE ' /tmp/bchain.out
grep '^M ' /tmp/bchain.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
