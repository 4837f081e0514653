#!/bin/sh
# Guest test: superpassctl -> binder (binderfs + rsb_hub) -> superpass-service -> ioctl ->
# the superpass module, then the inversion scenario registered through the service.
#
# Runs inside the test VM as root, after the module is loaded (/dev/superpass exists).
# Needs on PATH (or in $SP_BIN): superpass-service, superpassctl, rsb_hub, rsb_device
# (static x86_64 builds: `service/vm-tests/build-guest-bins.sh`).
# Optional: $SP_INVERSION, a workload that runs the priority-inversion scenario (contract
# below); without it, the scenario part is skipped and reported as such.
#
# Output: one "ok - ..." / "not ok - ..." line per check, then "N passed, N failed".
#
# Inversion workload contract ($SP_INVERSION):
#   $SP_INVERSION --wait-for-go
#     prints "critical <pid> <tid>" (the latency-critical thread) on its first stdout line,
#     then waits for one line on stdin, runs the scenario, prints "p99_ns <n>" and exits 0.
set -u
PATH="${SP_BIN:-/usr/local/bin}:$PATH"
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
}
trap cleanup EXIT
CTL="superpassctl"

# 1. Binder: binderfs device and rsb_hub as the service manager.
if [ ! -e /dev/binderfs/binder ]; then
    rsb_device binder >>"$WORK/log" 2>&1 || { bad "binderfs device"; echo "0 passed, 1 failed"; exit 1; }
fi
ok "binderfs device /dev/binderfs/binder"
rsb_hub --insecure-allow-all >>"$WORK/hub.log" 2>&1 &
HUB_PID=$!
sleep 0.5

# 2. The service on the real module.
[ -c /dev/superpass ] && ok "/dev/superpass exists" || bad "/dev/superpass exists"
superpass-service --state "$WORK/state.json" >>"$WORK/service.log" 2>&1 &
SVC_PID=$!
i=0
until $CTL version >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 50 ] && break; sleep 0.1
done
check "superpassctl reaches the service over binder" $CTL version
check "the service uses the device backend" sh -c "$CTL state | grep -q 'backend: \"device\"'"

# 3. Through the ioctls to the module and back.
check "set a tunable" $CTL set max_depth 4
check "read it back from the module" sh -c "[ \"\$($CTL get max_depth)\" = 4 ]"
check "out-of-range tunable refused" sh -c "! $CTL set max_depth 0"
sleep 1000 &
SLEEPER=$!
check "register a critical thread" $CTL add-critical $SLEEPER $SLEEPER --role other
check "the module holds it (GET_STATS)" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 1'"
check "a thread of another process is refused" sh -c "! $CTL add-critical 1 $SLEEPER"
check "remove it" $CTL remove-critical $SLEEPER
check "the module dropped it" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 0'"
$CTL add-critical $SLEEPER $SLEEPER --hold >/dev/null 2>&1 &
HOLDER=$!
sleep 0.5
check "held registration reaches the module" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 1'"
kill -9 $HOLDER; wait $HOLDER 2>/dev/null
sleep 0.5
check "the holder's death drops it from the module" sh -c "$CTL stats --json | grep -q '\"critical_threads\": 0'"
kill $SLEEPER
check "disable" $CTL disable
check "the module is off" sh -c "$CTL dump --json | grep -q '\"enabled\": false'"
check "enable" $CTL enable
check "dump shows active hooks" sh -c "$CTL dump | grep -q 'Active hooks'"
check "the dump transaction (dumpsys route) prints the report" sh -c "$CTL dumpsys | grep -q 'backend device'"
check "tuning through dump arguments" sh -c "$CTL dumpsys set max_depth 3 && [ \"\$($CTL get max_depth)\" = 3 ] && $CTL set max_depth 4"

# 4. Restart keeps the mode and tunables.
kill "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
superpass-service --state "$WORK/state.json" >>"$WORK/service.log" 2>&1 &
SVC_PID=$!
i=0
until $CTL version >/dev/null 2>&1; do i=$((i + 1)); [ $i -gt 50 ] && break; sleep 0.1; done
check "a restart restores tunables" sh -c "[ \"\$($CTL get max_depth)\" = 4 ]"

# 5. The inversion scenario improves when registered through the service.
run_inversion() { # $1 = register|baseline; prints p99_ns
    fifo="$WORK/go.$1"; rm -f "$fifo"; mkfifo "$fifo"
    "$SP_INVERSION" --wait-for-go <"$fifo" >"$WORK/inv.$1" 2>>"$WORK/log" &
    inv=$!
    exec 3>"$fifo"
    i=0; until [ -s "$WORK/inv.$1" ]; do i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.05; done
    set -- "$1" $(head -n1 "$WORK/inv.$1")
    if [ "$1" = register ]; then
        $CTL add-critical "$3" "$4" --role ui --hold >/dev/null 2>>"$WORK/log" &
        holder=$!; sleep 0.3
    fi
    echo go >&3; exec 3>&-
    wait $inv
    [ -n "${holder:-}" ] && kill "$holder" 2>/dev/null
    sed -n 's/^p99_ns //p' "$WORK/inv.$1"
}
if [ -n "${SP_INVERSION:-}" ] && [ -x "$SP_INVERSION" ]; then
    $CTL reset-stats >/dev/null
    base=$(run_inversion baseline)
    boosted=$(run_inversion register)
    echo "# inversion p99: baseline ${base:-?} ns, registered through the service ${boosted:-?} ns"
    check "the module granted fast tracks" sh -c "$CTL dump | grep -Eq '^  grants +[1-9]'"
    check "registered p99 is lower than baseline" test "${boosted:-0}" -gt 0 -a "${base:-0}" -gt "${boosted:-0}"
else
    echo "# SKIP inversion scenario: set SP_INVERSION to the workload binary"
fi

[ $FAIL -eq 0 ] || { echo "# logs in $WORK"; tail -n 30 "$WORK/service.log"; }
echo "$PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
