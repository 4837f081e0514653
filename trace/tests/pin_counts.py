"""Independent counts for the test corpus: Perfetto's own schema (perfetto_trace_pb2) for
protobuf, line matching for text. Prints: file, sched_switch events, wakeup events,
slice begins and instants, counter samples. tests/corpus.rs pins these numbers.

Usage: python3 trace/tests/pin_counts.py [FILE...]; without files it reads every trace in
the shared corpus folder the tests read ($SUPERPASS_CORPUS or ../shared/corpus beside the
checkout, then project-tests/)."""
import glob, gzip, os, re, sys, zlib
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

def raw(path):
    d = open(path, 'rb').read()
    if d[:2] == b'\x1f\x8b': d = gzip.decompress(d)
    return d

def proto(path):
    t = pb.Trace(); t.ParseFromString(raw(path))
    sw = wk = sl = ct = 0
    pk = list(t.packet)
    i = 0
    while i < len(pk):
        p = pk[i]; i += 1
        if p.HasField('compressed_packets'):
            inner = pb.Trace(); inner.ParseFromString(zlib.decompress(p.compressed_packets)); pk.extend(inner.packet)
        if p.HasField('ftrace_events'):
            for e in p.ftrace_events.event:
                k = e.WhichOneof('event')
                if k == 'sched_switch': sw += 1
                elif k in ('sched_waking', 'sched_wakeup', 'sched_wakeup_new'): wk += 1
                elif k in ('cpu_idle', 'cpu_frequency'): ct += 1
                elif k == 'print':
                    b = e.print.buf
                    if b[:2] in ('B|', 'I|', 'S|'): sl += 1
                    elif b[:2] == 'C|': ct += 1
            cs = p.ftrace_events.compact_sched
            sw += len(cs.switch_timestamp); wk += len(cs.waking_timestamp)
        if p.HasField('track_event'):
            if p.track_event.type in (1, 3): sl += 1
            elif p.track_event.type == 4: ct += 1
    return sw, wk, sl, ct

def text(path):
    d = raw(path)
    if d.startswith(b'TRACE:\n'): d = zlib.decompress(d[7:])
    s = d.decode('utf-8', 'replace')
    sw = len(re.findall(r': sched_switch: ', s))
    wk = len(re.findall(r': sched_wak(?:ing|eup|eup_new): ', s))
    sl = len(re.findall(r': (?:tracing_mark_write|0): [BIS]\|', s))
    ct = len(re.findall(r': (?:tracing_mark_write|0): C\|', s)) + len(re.findall(r': cpu_(?:idle|frequency): ', s))
    return sw, wk, sl, ct

def corpus_files():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.environ.get('SUPERPASS_CORPUS') or os.path.normpath(os.path.join(here, '../../../shared/corpus'))
    folder = os.path.join(root, 'project-tests')
    if not os.path.isdir(folder):
        sys.exit(f"{folder}: corpus folder absent; pass trace files or set SUPERPASS_CORPUS")
    return sorted(glob.glob(os.path.join(folder, '*')))

for f in sys.argv[1:] or corpus_files():
    if f.endswith((".md", ".py")):
        continue
    r = text(f) if f.endswith((".txt", ".ctrace", ".html.gz")) else proto(f)
    print(f, *r)
