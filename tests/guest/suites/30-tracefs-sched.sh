# tracefs records sched_switch, sched_waking and sched_blocked_reason.
#@boot hooktest  (sp_hooktest.ko pins the restricted hooks: keep these in their own VM)
T=/sys/kernel/tracing
[ -d $T/events/sched ] || { echo "no $T/events/sched"; exit 1; }
[ -e /proc/sp_hooktest ] || insmod /lib/modules/sp/sp_hooktest.ko || exit 1
echo 1 > /proc/sys/kernel/sched_schedstats || { echo "cannot enable schedstats"; exit 1; }
echo 0 > $T/tracing_on
echo > $T/trace
echo 1024 > $T/buffer_size_kb
for e in sched_switch sched_waking sched_blocked_reason; do
	echo 1 > $T/events/sched/$e/enable || { echo "cannot enable sched/$e"; exit 1; }
done
echo 1 > $T/tracing_on
# Mutex waits sleep uninterruptibly: they produce sched_blocked_reason.
sp-contend -t 4 -n 20 -s 1 /proc/sp_hooktest_lock mutex:1000 > /dev/null
echo 0 > $T/tracing_on
for e in sched_switch sched_waking sched_blocked_reason; do
	echo 0 > $T/events/sched/$e/enable
done
echo 0 > /proc/sys/kernel/sched_schedstats
cat $T/trace > /tmp/trace.txt
fail=0
for e in sched_switch sched_waking sched_blocked_reason; do
	n=$(grep -c " $e: " /tmp/trace.txt)
	echo "$e $n" >> "$SPTEST_METRICS"
	if [ "$n" -gt 0 ]; then echo "recorded $e: $n"; else echo "NOT RECORDED $e"; fail=1; fi
done
grep -m1 " sched_blocked_reason: " /tmp/trace.txt
echo > $T/trace
exit $fail
