# The /dev/superpass ABI: every command, bad inputs (size, version, too many
# TIDs, nonexistent TIDs, reserved fields, EPERM for an unprivileged caller)
# and 100,000 random ioctls (success or errno, no oops/WARN).
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
sp-abi -n 100000 > /tmp/abi.out 2>&1
rc=$?
grep -v '^M ' /tmp/abi.out
grep '^M ' /tmp/abi.out | cut -c3- >> "$SPTEST_METRICS"
exit $rc
