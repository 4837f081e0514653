# Restricted-hook rules, as ACK has them: two probes per hook (-EBUSY for a
#@boot hooktest  (sp_hooktest.ko pins the restricted hooks: keep these in their own VM)
# third, also from another module, and for the generic tracepoint API), no
# detach, no module pinned by the kernel (a module with restricted probes
# pins itself); normal hooks detach, re-attach and are shared.
[ -e /proc/sp_hooktest ] || insmod /lib/modules/sp/sp_hooktest.ko || exit 1
fail=0
val() { sed -n "s/^$1 //p" "$2"; }
expect() { # file key wanted description
	got=$(val "$2" "$1")
	echo "$2 $got" >> "$SPTEST_METRICS"
	if [ "$got" = "$3" ]; then echo "ok   $4 ($2=$got)"; else echo "FAIL $4 ($2=$got, want $3)"; fail=1; fi
}
S=/proc/sp_hooktest
expect $S selftest.rvh_second_attach 0 "a second probe on each restricted hook is accepted"
expect $S selftest.rvh_third_attach -16 "a third probe on a restricted hook gets -EBUSY"
expect $S selftest.kernel_pins 0 "the kernel pins no module for its restricted probes"
expect $S selftest.rvh_generic_attach -16 "tracepoint_probe_register on a restricted hook gets -EBUSY"
expect $S selftest.rvh_detach -1 "tracepoint_probe_unregister on a restricted hook is refused (-EPERM)"
expect $S selftest.rvh_is_restricted 1 "restricted hook is tagged"
expect $S selftest.vh_is_restricted 0 "normal hook is not tagged"
expect $S selftest.vh_detach 0 "normal hook detaches"
expect $S selftest.vh_reattach 0 "normal hook re-attaches"

insmod /lib/modules/sp/sp_hookpeer.ko || { echo "FAIL insmod sp_hookpeer"; exit 1; }
P=/proc/sp_hookpeer
for h in android_rvh_enqueue_task android_rvh_dequeue_task android_rvh_replace_next_task_fair \
	android_rvh_check_preempt_wakeup_fair android_rvh_select_task_rq_fair \
	android_rvh_tick_entry android_rvh_flush_task; do
	expect $P third_attach.$h -16 "another module attaching a third probe to $h gets -EBUSY"
done
expect $P shared_attach.android_vh_record_mutex_lock_starttime 0 "another module shares a normal hook"
sp-contend -t 2 -n 10 -s 0 /proc/sp_hooktest_lock mutex:100 > /dev/null
hits=$(val shared_hits $P)
echo "peer_shared_hits $hits" >> "$SPTEST_METRICS"
[ "$hits" -gt 0 ] && echo "ok   shared normal hook fires for both modules ($hits)" || { echo "FAIL shared hook never fired"; fail=1; }
if rmmod sp_hookpeer; then echo "ok   module without restricted probes unloads"; else echo "FAIL rmmod sp_hookpeer"; fail=1; fi
if rmmod sp_hooktest 2>/dev/null; then
	echo "FAIL module owning restricted probes was unloaded"; fail=1
else
	echo "ok   module owning restricted probes (pinned by itself) cannot be unloaded"
fi
[ -e /proc/sp_hooktest ] || { echo "FAIL sp_hooktest gone"; fail=1; }
exit $fail
