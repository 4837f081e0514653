# Every vendor hook fires on its path: sp_hooktest counts each hook while
#@boot hooktest  (sp_hooktest.ko pins the restricted hooks: keep these in their own VM)
# sp-contend creates mutex and rwsem contention, wakeups, ticks and thread exits;
# sp-futex -x PI-mutex and futex contention.
[ -e /proc/sp_hooktest ] || insmod /lib/modules/sp/sp_hooktest.ko || exit 1
grep -q "^register\..* -" /proc/sp_hooktest && { echo "a registration failed:"; grep "^register\." /proc/sp_hooktest; exit 1; }
sp-contend -t 4 -n 60 -s 2 /proc/sp_hooktest_lock mutex:500 > /tmp/c1 || exit 1
sp-contend -t 4 -n 60 -s 2 /proc/sp_hooktest_lock write:500,read:500,read:500 > /tmp/c2 || exit 1
# PI-mutex and owner-word-lock contention: the rt_mutex and futex hooks.
sp-futex -x 200 || exit 1
sed 's/^contend_/mutex_/' /tmp/c1 >> "$SPTEST_METRICS"
sed 's/^contend_/rwsem_/' /tmp/c2 >> "$SPTEST_METRICS"
# Let a few ticks and task frees (RCU) happen.
sleep 1
fail=0
while read -r hook count; do
	case $hook in
		android_*)
			echo "$hook $count" >> "$SPTEST_METRICS"
			if [ "$count" -gt 0 ]; then echo "fired   $hook $count"; else echo "NOT FIRED $hook"; fail=1; fi ;;
		selftest.bad_args)
			echo "bad_args $count" >> "$SPTEST_METRICS"
			[ "$count" = 0 ] || { echo "probes saw bad arguments: $count"; fail=1; } ;;
	esac
done < /proc/sp_hooktest
exit $fail
