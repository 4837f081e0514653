# The HAL service end to end on the real module: superpassctl -> binder (binderfs,
# rsb_hub) -> superpass-service -> ioctl -> superpass.ko, and the inversion scenario
# with its critical thread registered through the service (tests/service/service-e2e.sh).
# Android's conditions: /proc hidepid=2,gid=readproc, the service as uid system with only
# CAP_SYS_NICE, `cmd` through real shell-command transactions, RT-UI (`cmd ... fifo on|off`)
# read back from /proc; metrics cmd_ok, fifo_ok and nonroot.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
SP_SECS=${SP_SECS:-10} sh /usr/share/superpass/service-e2e.sh
