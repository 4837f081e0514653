# An app's frame loop (sp-frames.c): a UI thread and a RenderThread at nice -10
# draw at 60 Hz and then at 120 Hz, 1000 frames per mode, taking the app's
# locks (the test device's kernel mutex and rwsem, mmap_lock through mmap and
# mprotect, the owner-hinted futex lock, a PI mutex) that nice-10 background
# workers also hold, against 4 nice-0 hogs busy half of every 10 ms. Modes off,
# on (both threads registered), fifo (both SCHED_FIFO 1, kernel PI on the PI
# mutex) and on+fifo (both registered and SCHED_FIFO 1; metrics *_onfifo_*).
# Metrics hz60_* and hz120_*: frames, janky frames, late by more than a
# frame, worst lateness, lock waits (count, >= 1 ms, p99.9, max), busy CPU, the
# share of janky frames from lock waits and from waiting for a CPU, frame time
# p50 / p90 / p99, lock wait and runnable time per frame, on / fifo / on+fifo
# against off, and on+fifo's janky share against the better of on and fifo
# (onfifo_janky_vs_best_pp, percentage points).
#
# Enforced (-V), at both rates: on cuts janky frames by >= 29.2% and the lock
# waits' p99.9 by >= 72% against off, has no more janky frames than fifo beyond
# sampling noise (two standard errors) and no more frames late by more than a
# frame than fifo;
# on+fifo cuts the lock waits' p99.9 by >= 72% against off and has at most 10
# lock waits over 16 ms (sp-frames.c, ONFIFO_MAX_LONG_WAITS; in four runs on a
# busy host off and fifo had 82-225, on 0-7, on+fifo 0-4). Whether on+fifo has
# no more janky frames than the better of on and fifo is printed as a PASS or
# WARN line, not judged: it held in those runs, by 0.5-8.6 points
# (docs/deploy.md has the runs). The suite takes ~130-140 s, ~95 s before on+fifo.
# The frame's work is 29% of it (UI an eighth, RenderThread a sixth). Three
# runs (2026-12-04, one in this boot after all the tests before it): janky
# frames at 60 Hz off 29.0 / 22.8% -> on 1.2 / 0.0% (fifo 17.9 / 11.5%); at
# 120 Hz off 30.1 / 29.4 / 34.4% -> on 5.1 / 5.5 / 2.6% (fifo 22.6 / 15.4 /
# 18.3%); lock-wait p99.9 cut 90-96%. on's janky frames at 120 Hz are mostly
# near misses: 3 / 5 / 0 of them late by more than a frame (worst 18.8 ms,
# against off's 177-225 and worst 135-146 ms), their mean 10-11 ms split as
# 2.5 work + 1.8-2.4 lock waits + 2.5-3.7 runnable + 2.7-3.3 the rest, where
# off's 24 ms hold 16-17 of lock waits. A slower or noisier host costs on
# first: fifo's threads never wait for a CPU (0.1 ms a frame, against 1.1-1.7
# ms in off and on alike), so the log prints that split for every mode.
# Not enforced, only reported: busy CPU within +1% of off (-c -1). The hogs
# keep both CPUs 98-100% busy, so the figure is a saturated share that cannot
# show SuperPass's own cost (sp-overhead measures that); and a mode that
# skips vsyncs draws fewer frames a second, leaving more idle time.
#@boot superpass  (superpass.ko pins the restricted hooks: its tests share one VM)
[ -e /dev/superpass ] || insmod /lib/modules/sp/superpass.ko || exit 1
[ -e /dev/superpass-test ] || insmod /lib/modules/sp/sp_testdev.ko || exit 1
# What else runs: earlier tests of this boot must leave nothing busy behind.
echo "load before sp-frames: $(cat /proc/loadavg)"
top -b -n 1 | head -n 12
rc=0
for hz in 60 120; do
	sp-frames -r $hz -n 1000 -V -c -1 > /tmp/frames.out 2>&1
	r=$?
	grep -v '^M ' /tmp/frames.out
	grep '^M ' /tmp/frames.out | cut -c3- | sed "s/^/hz${hz}_/" >> "$SPTEST_METRICS"
	[ $r = 0 ] || rc=1
done
exit $rc
