#!/bin/sh
# Guest test: superpassctl -> binder (binderfs + rsb_hub) -> superpass-service -> ioctl ->
# the superpass module, then the inversion scenario registered through the service.
#
# Runs inside the test VM as root, after superpass.ko and sp_testdev.ko are loaded
# (tests/guest/suites/60-sp-service.sh does both; `cargo xtask vm-test --filter sp-service`).
# Needs on PATH: superpass-service, superpassctl, shell-cmd and sp-runas (service/examples/),
# rsb_hub, rsb_device, and for step 5 sp-inversion (tests/guest/sp-inversion.c). rsb_hub
# reads its policy from /etc/rsbinder/hub.d (tests/service/hub.toml).
#
# Android's conditions: /proc is remounted hidepid=2,gid=readproc (3009) for the test, and
# the service runs as init would start it from superpass.rc: uid and gid system (1000), the
# readproc group, CAP_SYS_NICE only (sp-runas). /dev/superpass is 0660 system, the binder
# device 0666. A shell-uid (2000) client may read but not change state; `cmd` goes through
# a real shell-command transaction (shell-cmd) and only root and shell may use it.
#
# Step 3c turns RT-UI on and off with `cmd ... fifo on|off`: the registered UI and render
# threads must become SCHED_FIFO 1 (the service has CAP_SYS_NICE, as on a device), a thread of
# role OTHER must stay fair, and each must come back to SCHED_OTHER at its nice value when it
# leaves the set or RT-UI goes off (policy, priority and nice read from /proc/<pid>/stat).
#
# Step 5 runs sp-inversion with modes off,ext: in "ext" its critical thread prints
# "critical <pid> <tid>", waits for a line on stdin, and is registered only through
# `superpassctl add-critical ... --hold`; sp-inversion -R fails unless ext cuts the
# p99.9 wait by $SP_MIN_REDUCTION% (default 72) against off.
#
# Output: one "ok - ..." / "not ok - ..." line per check, then "N passed, N failed";
# "key value" metric lines go to $SPTEST_METRICS when it is set.
set -u
METRICS=${SPTEST_METRICS:-/dev/null}
SECS=${SP_SECS:-10}
WORK=$(mktemp -d /tmp/superpass-e2e.XXXXXX)
PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "not ok - $*"; }
check() { desc=$1; shift; if "$@" >>"$WORK/log" 2>&1; then ok "$desc"; else bad "$desc"; fi; }
cleanup() {
    [ -n "${SVC_PID:-}" ] && kill "$SVC_PID" 2>/dev/null
    [ -n "${HUB_PID:-}" ] && kill "$HUB_PID" 2>/dev/null
    wait 2>/dev/null
    # The other guest tests of this boot expect the default /proc.
    mount -o remount,hidepid=0,gid=0 /proc 2>/dev/null
}
trap cleanup EXIT
CTL="superpassctl"
AID_SYSTEM=1000
AID_SHELL=2000
AID_READPROC=3009
# The service as init starts it (service/superpass.rc: user system, group system readproc,
# capabilities SYS_NICE).
start_service() {
    sp-runas --uid $AID_SYSTEM --gid $AID_SYSTEM --groups $AID_SYSTEM,$AID_READPROC --caps sys_nice \
        -- superpass-service --state "$WORK/state/state.json" >>"$WORK/service.log" 2>&1 &
    SVC_PID=$!
}

# 1. Binder: binderfs device and rsb_hub as the service manager.
if [ ! -e /dev/binderfs/binder ]; then
    rsb_device binder >>"$WORK/log" 2>&1 || { bad "binderfs device"; echo "0 passed, 1 failed"; exit 1; }
fi
ok "binderfs device /dev/binderfs/binder"
rsb_hub >>"$WORK/hub.log" 2>&1 &
HUB_PID=$!
sleep 0.5
if kill -0 $HUB_PID 2>/dev/null; then
    ok "rsb_hub serves with its policy"
else
    bad "rsb_hub serves with its policy"; cat "$WORK/hub.log"
    echo "$PASS passed, $FAIL failed"; exit 1
fi

# 2. The service on the real module, in Android's conditions.
[ -c /dev/superpass ] && ok "/dev/superpass exists" || bad "/dev/superpass exists"
chown $AID_SYSTEM:$AID_SYSTEM /dev/superpass && chmod 0660 /dev/superpass
chmod 0666 /dev/binderfs/binder
# mktemp -d makes a 0700 directory: the service must reach its state directory inside.
chmod 0755 "$WORK"
mkdir -p "$WORK/state" && chown $AID_SYSTEM:$AID_SYSTEM "$WORK/state"
check "/proc remounted hidepid=2,gid=readproc" mount -o remount,hidepid=2,gid=$AID_READPROC /proc
check "another uid cannot see root's processes" sh -c "! sp-runas --uid 4242 --gid 4242 -- ls /proc/1/task"
start_service
i=0
until $CTL version >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
if ! $CTL version >>"$WORK/log" 2>&1; then
    bad "superpassctl reaches the service over binder"; tail -n 30 "$WORK/service.log" "$WORK/log"
    echo "$PASS passed, $FAIL failed"; exit 1
fi
ok "superpassctl reaches the service over binder"
check "the service uses the device backend" sh -c "$CTL state --json | grep -q '\"backend\": \"device\"'"
uid=$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$SVC_PID/status)
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/$SVC_PID/status)
if [ "$uid" = $AID_SYSTEM ] && [ "$capeff" = 0000000000800000 ]; then
    ok "the service runs as system with CAP_SYS_NICE only (CapEff $capeff)"
    echo "nonroot 1" >>"$METRICS"
else
    bad "the service runs as system with CAP_SYS_NICE only (uid $uid, CapEff $capeff)"
    echo "nonroot 0" >>"$METRICS"
fi

# 3. Through the ioctls to the module and back.
check "set a tunable" $CTL set max_depth 4
check "read it back from the module" sh -c "[ \"\$($CTL get max_depth)\" = 4 ]"
check "out-of-range tunable refused" sh -c "! $CTL set max_depth 0"
sleep 1000 &
SLEEPER=$!
check "register a critical thread" $CTL add-critical $SLEEPER $SLEEPER --role other
check "the module holds it (GET_STATS)" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 1'"
check "a thread of another process is refused" sh -c "! $CTL add-critical 1 $SLEEPER"
check "a kernel thread is refused" sh -c "! $CTL add-critical 2 2 2>$WORK/kthread.err && grep -q 'kernel thread' $WORK/kthread.err"
check "the service's own threads are refused" sh -c "! $CTL add-critical $SVC_PID $SVC_PID 2>$WORK/self.err && grep -q 'service itself' $WORK/self.err"
check "remove it" $CTL remove-critical $SLEEPER
check "the module dropped it" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 0'"
# Waits up to 5 s for the module to hold $1 critical threads (TCG on a busy host is slow).
wait_critical() {
    i=0
    until $CTL stats --json | grep -q "\"critical_threads\": $1"; do
        i=$((i + 1)); [ $i -gt 50 ] && return 1; sleep 0.1
    done
}
$CTL add-critical $SLEEPER $SLEEPER --hold >/dev/null 2>&1 &
HOLDER=$!
wait_critical 1
check "held registration reaches the module" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 1'"
kill -9 $HOLDER; wait $HOLDER 2>/dev/null
wait_critical 0
check "the holder's death drops it from the module" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 0'"
kill $SLEEPER
check "disable" $CTL disable
check "the module is off" sh -c "$CTL dump --json | grep -q '\"enabled\": false'"
check "enable" $CTL enable
check "dump shows active hooks" sh -c "$CTL dump | grep -q 'Active hooks'"
check "the dump transaction (dumpsys route) prints the report" sh -c "$CTL dumpsys | grep -q 'backend device'"
check "tuning through dump arguments" sh -c "$CTL dumpsys set max_depth 3 && [ \"\$($CTL get max_depth)\" = 3 ] && $CTL set max_depth 4"

# 3b. Callers of other uids, and `cmd` through a real shell-command transaction.
check "a shell-uid client may read" sh -c "[ \"\$(sp-runas --uid $AID_SHELL --gid $AID_SHELL -- $CTL get max_depth)\" = 4 ]"
check "a shell-uid client may not change state" sh -c \
    "! sp-runas --uid $AID_SHELL --gid $AID_SHELL -- $CTL set max_depth 3 2>$WORK/shell.err && grep -q 'permission denied' $WORK/shell.err"
cmd_ok=1
cmdcheck() { desc=$1; shift; if "$@" >>"$WORK/log" 2>&1; then ok "$desc"; else bad "$desc"; cmd_ok=0; fi; }
cmdcheck "cmd set (root)" sh -c "[ \"\$(shell-cmd set max_depth 3)\" = 'max_depth = 3' ]"
cmdcheck "cmd get reads the module" sh -c "[ \"\$(shell-cmd get max_depth)\" = 3 ] && [ \"\$($CTL get max_depth)\" = 3 ]"
cmdcheck "cmd prints the report" sh -c "shell-cmd | grep -q 'backend device'"
cmdcheck "cmd errors go to err with a failing result" sh -c \
    "shell-cmd set max_depth 99 >$WORK/cmd.out 2>$WORK/cmd.err; [ \$? = 255 ] && [ ! -s $WORK/cmd.out ] && grep -q ERROR_OUT_OF_RANGE $WORK/cmd.err"
cmdcheck "cmd as shell reads" sh -c "[ \"\$(sp-runas --uid $AID_SHELL --gid $AID_SHELL -- shell-cmd get max_depth)\" = 3 ]"
cmdcheck "cmd as shell cannot change state" sh -c \
    "! sp-runas --uid $AID_SHELL --gid $AID_SHELL -- shell-cmd set max_depth 4 2>$WORK/cmd.err && grep -q 'permission denied' $WORK/cmd.err"
cmdcheck "cmd refused to a uid other than root and shell" sh -c \
    "! sp-runas --uid $AID_SYSTEM --gid $AID_SYSTEM -- shell-cmd get max_depth 2>$WORK/cmd.err && grep -q 'permission denied' $WORK/cmd.err"
echo "cmd_ok $cmd_ok" >>"$METRICS"
$CTL set max_depth 4 >/dev/null

# 3c. RT-UI through `cmd`: the registered UI and render threads SCHED_FIFO 1, and back.
# "policy rt_priority nice" of a thread: fields 41, 40 and 19 of its stat (proc(5)).
sched_of() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $39, $38, $17 }'; }
fifo_ok=1
fifocheck() { desc=$1; shift; if "$@" >>"$WORK/log" 2>&1; then ok "$desc"; else bad "$desc"; fifo_ok=0; fi; }
sleep 1000 &
UI_T=$!
sleep 1000 &
RT_T=$!
sleep 1000 &
OT_T=$!
# Android runs the frame threads at nice -10; RT-UI must give that back.
renice -10 -p $UI_T >>"$WORK/log" 2>&1
ui_before=$(sched_of $UI_T)
rt_before=$(sched_of $RT_T)
echo "# RT-UI threads: ui $UI_T ($ui_before), render $RT_T ($rt_before), other $OT_T" >>"$WORK/log"
fifocheck "the UI thread starts fair at nice -10 ($ui_before)" test "$ui_before" = "0 0 -10"
fifocheck "fifo is off by default" sh -c "[ \"\$(shell-cmd fifo)\" = 'fifo: off' ] && shell-cmd | grep -q 'RT-UI (fifo): off'"
fifocheck "fifo with a bad value names the problem" sh -c \
    "shell-cmd fifo maybe >$WORK/cmd.out 2>$WORK/cmd.err; [ \$? = 255 ] && grep -q 'fifo takes on or off, not .maybe.' $WORK/cmd.err && grep -q 'fifo on|off' $WORK/cmd.err"
fifocheck "cmd as shell cannot turn fifo on" sh -c \
    "! sp-runas --uid $AID_SHELL --gid $AID_SHELL -- shell-cmd fifo on 2>$WORK/cmd.err && grep -q 'permission denied' $WORK/cmd.err"
$CTL foreground $UI_T $UI_T >>"$WORK/log" 2>&1
$CTL add-critical $RT_T $RT_T --role render >>"$WORK/log" 2>&1
$CTL add-critical $OT_T $OT_T --role other >>"$WORK/log" 2>&1
fifocheck "three critical threads registered" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 3'"
fifocheck "all fair while fifo is off" test "$(sched_of $UI_T | cut -d' ' -f1)$(sched_of $RT_T | cut -d' ' -f1)" = 00
shell-cmd fifo on >"$WORK/fifo.out" 2>>"$WORK/log"
cat "$WORK/fifo.out" >>"$WORK/log"
fifocheck "cmd fifo on: 2 of 2 threads SCHED_FIFO 1" grep -qx 'fifo: on, 2 of 2 UI and render threads SCHED_FIFO 1' "$WORK/fifo.out"
fifocheck "the UI thread is SCHED_FIFO 1 ($(sched_of $UI_T)), its nice kept" test "$(sched_of $UI_T)" = "1 1 ${ui_before##* }"
fifocheck "the RenderThread is SCHED_FIFO 1 ($(sched_of $RT_T))" test "$(sched_of $RT_T)" = "1 1 ${rt_before##* }"
fifocheck "a thread of role other stays SCHED_OTHER" test "$(sched_of $OT_T | cut -d' ' -f1)" = 0
fifocheck "dumpsys shows RT-UI" sh -c "$CTL dumpsys | grep -q 'RT-UI (fifo): on, 2 of 2 UI and render threads SCHED_FIFO 1'"
fifocheck "dumpsys --json shows RT-UI" sh -c "$CTL dumpsys --json | grep -q '\"fifo\": 2'"
fifocheck "the setting is saved" grep -q '"fifo": true' "$WORK/state/state.json"
$CTL remove-critical $RT_T >>"$WORK/log" 2>&1
fifocheck "an unregistered RenderThread is back to SCHED_OTHER at its nice ($(sched_of $RT_T))" test "$(sched_of $RT_T)" = "$rt_before"
fifocheck "the UI thread stays SCHED_FIFO 1" test "$(sched_of $UI_T | cut -d' ' -f1,2)" = "1 1"
fifocheck "cmd fifo off" sh -c "[ \"\$(shell-cmd fifo off)\" = 'fifo: off' ]"
fifocheck "fifo off puts the UI thread back to SCHED_OTHER at nice ${ui_before##* } ($(sched_of $UI_T))" test "$(sched_of $UI_T)" = "$ui_before"
fifocheck "the registrations stay" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 2'"
$CTL clear-foreground >>"$WORK/log" 2>&1
$CTL remove-critical $OT_T >>"$WORK/log" 2>&1
kill $UI_T $RT_T $OT_T 2>/dev/null
wait $UI_T $RT_T $OT_T 2>/dev/null
# On across the restart below (nothing is registered now, so nothing is promoted).
fifocheck "cmd fifo on with nothing registered" sh -c "[ \"\$(shell-cmd fifo on)\" = 'fifo: on, 0 of 0 UI and render threads SCHED_FIFO 1' ]"

# 4. Restart keeps the mode and tunables.
check "the service saved its state as system" sh -c "grep -q max_depth $WORK/state/state.json"
kill "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
start_service
i=0
until $CTL version >/dev/null 2>&1; do i=$((i + 1)); [ $i -gt 50 ] && break; sleep 0.1; done
check "a restart restores tunables" sh -c "[ \"\$($CTL get max_depth)\" = 4 ]"
fifocheck "a restart restores fifo" sh -c "shell-cmd fifo | grep -q '^fifo: on'"
# Off again: step 5 measures SuperPass alone.
fifocheck "cmd fifo off after the restart" sh -c "[ \"\$(shell-cmd fifo off)\" = 'fifo: off' ]"
echo "fifo_ok $fifo_ok" >>"$METRICS"

# 5. The inversion scenario, its critical thread registered through the service only.
if command -v sp-inversion >/dev/null 2>&1 && [ -c /dev/superpass-test ]; then
    $CTL reset-stats >/dev/null
    mkfifo "$WORK/go"
    sp-inversion -l mutex -m off,ext -d "$SECS" -H 4 -w 500 -p 1000 -R "${SP_MIN_REDUCTION:-72}" \
        <"$WORK/go" >"$WORK/inv.out" 2>&1 &
    INV=$!
    exec 3>"$WORK/go"
    i=0
    until grep -q '^critical ' "$WORK/inv.out"; do
        i=$((i + 1)); [ $i -gt $(((SECS + 60) * 5)) ] && break; sleep 0.2
    done
    set -- $(grep '^critical ' "$WORK/inv.out")
    # "off" left SuperPass disabled: enabling it is the service's job too.
    check "enable through the service" $CTL enable
    $CTL add-critical "$2" "$3" --role ui --hold >>"$WORK/log" 2>&1 &
    HOLDER=$!
    i=0
    until $CTL stats --json | grep -q '"critical_threads": 1'; do
        i=$((i + 1)); [ $i -gt 50 ] && break; sleep 0.1
    done
    check "the service registered the scenario's critical thread (tid ${3:-?})" \
        sh -c "$CTL stats --json | grep -q '\"critical_threads\": 1'"
    echo go >&3
    exec 3>&-
    wait $INV
    rc=$?
    kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null
    grep -v '^M \|^critical ' "$WORK/inv.out"
    grep '^M ' "$WORK/inv.out" | cut -c3- | sed 's/^/inversion_/' >>"$METRICS"
    grants=$(sed -n 's/^M ext_grants //p' "$WORK/inv.out")
    check "the module granted fast tracks on the service's behalf (${grants:-0})" test "${grants:-0}" -gt 0
    check "p99.9 wait cut by >= ${SP_MIN_REDUCTION:-72}% against off (sp-inversion -R)" test $rc -eq 0
else
    bad "sp-inversion or /dev/superpass-test missing (load sp_testdev.ko)"
fi

[ $FAIL -eq 0 ] || { echo "# logs in $WORK"; tail -n 30 "$WORK/service.log"; }
echo "$PASS passed, $FAIL failed"
echo "checks_passed $PASS" >>"$METRICS"
echo "checks_failed $FAIL" >>"$METRICS"
[ $FAIL -eq 0 ]
