# binderfs mounts, a binder device can be created and opened, BINDER_VERSION answers.
mkdir -p /dev/binderfs
mount -t binder binder /dev/binderfs || { echo "mount -t binder failed"; exit 1; }
ls /dev/binderfs
sp-binder /dev/binderfs | tee -a "$SPTEST_METRICS"
rc=$?
# tee hides sp-binder's status; check the version line instead.
grep -q "^binder_protocol_version 8$" "$SPTEST_METRICS" || exit 1
umount /dev/binderfs
exit 0
