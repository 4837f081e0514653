# A caller in a child PID namespace (a container, a sandboxed service) names
# threads by its namespace's TIDs; the module's hooks report the kernel's. The
# module translates at the ioctl: a thread registered from the child namespace
# is listed there by the child's TID and from the initial namespace by its own,
# and the inversion scenario and the owner-hinted futex lock (the hint is the
# holder's own gettid()) both cut the p99.9 wait by >= 72% from inside it.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
unshare -p -f true 2>/dev/null || { echo "no PID namespaces in this kernel (CONFIG_PID_NS)"; exit 77; }
fail=0
# A sleeper registered by its TID in the child namespace; the child sees it by that TID.
unshare -p -f --mount-proc sh -c '
	sleep 60 & s=$!
	sp-ctl critical $s || exit 1
	got=$(sp-ctl list)
	echo "child_tid $s listed_in_child $got"
	[ "$got" = "$s" ] || { echo "FAIL the child namespace lists \"$got\", not its TID $s"; exit 1; }
	sleep 3
' > /tmp/pidns.out 2>&1 &
child=$!
sleep 1
cat /tmp/pidns.out
g=$(sp-ctl list)
echo "listed_in_init ${g:-none}"
if [ -z "$g" ] || [ "$(cat /proc/$g/comm 2>/dev/null)" != sleep ]; then
	echo "FAIL the initial namespace lists \"$g\", not the sleeper's own TID"; fail=1
else
	echo "ok   registered from the child namespace, listed by the kernel's TID $g in the initial one"
fi
wait $child || fail=1
cat /tmp/pidns.out
grep -q '^child_tid' /tmp/pidns.out && echo "child_registered 1" >> "$SPTEST_METRICS"
sp-ctl critical
for l in mutex hint; do
	if [ $l = mutex ]; then
		unshare -p -f --mount-proc sp-inversion -l mutex -m off,on -d 5 -H 4 -w 500 -o 100 -p 1000 -R 72 > /tmp/pidns-$l.out 2>&1
	else
		unshare -p -f --mount-proc sp-futex -l hint -m off,on -d 5 -H 4 -w 500 -p 1000 -R 72 > /tmp/pidns-$l.out 2>&1
	fi
	r=$?
	grep -v '^M \|^SPTRACE ' /tmp/pidns-$l.out
	grep '^M ' /tmp/pidns-$l.out | cut -c3- | sed "s/^/${l}_/" >> "$SPTEST_METRICS"
	[ $r = 0 ] || { echo "FAIL $l from the child namespace (exit $r)"; fail=1; }
done
exit $fail
