#!/bin/sh
# Guest test: superpassctl -> binder (binderfs + rsb_hub) -> superpass-service -> ioctl ->
# the superpass module, then the inversion scenario registered through the service.
#
# Runs inside the test VM as root, after superpass.ko is loaded with testdev=1
# (tests/guest/suites/60-sp-service.sh does both; `cargo xtask vm-test --filter sp-service`).
# Needs on PATH: superpass-service, superpassctl, rsb_hub, rsb_device, and for step 5
# sp-inversion (tests/guest/sp-inversion.c). rsb_hub reads its policy from
# /etc/rsbinder/hub.d (tests/service/hub.toml).
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
}
trap cleanup EXIT
CTL="superpassctl"

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

# 2. The service on the real module.
[ -c /dev/superpass ] && ok "/dev/superpass exists" || bad "/dev/superpass exists"
superpass-service --state "$WORK/state.json" >>"$WORK/service.log" 2>&1 &
SVC_PID=$!
i=0
until $CTL version >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
if ! $CTL version >>"$WORK/log" 2>&1; then
    bad "superpassctl reaches the service over binder"; tail -n 30 "$WORK/service.log" "$WORK/log"
    echo "$PASS passed, $FAIL failed"; exit 1
fi
ok "superpassctl reaches the service over binder"
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
    bad "sp-inversion or /dev/superpass-test missing (load superpass.ko testdev=1)"
fi

[ $FAIL -eq 0 ] || { echo "# logs in $WORK"; tail -n 30 "$WORK/service.log"; }
echo "$PASS passed, $FAIL failed"
echo "checks_passed $PASS" >>"$METRICS"
echo "checks_failed $FAIL" >>"$METRICS"
[ $FAIL -eq 0 ]
