#!/usr/bin/env python3
"""Decodes a .pftrace with Perfetto's own schema and prints a JSON summary.

Exit 0 with the summary; exit 2 if the perfetto/protobuf packages are missing (so the Rust
test can skip); exit 1 if the trace does not decode or carries fields the schema lacks.
Install: pip install perfetto protobuf
"""
import json
import sys

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    from google.protobuf.unknown_fields import UnknownFieldSet
except ImportError as e:  # pragma: no cover
    print(f"missing python packages: {e}", file=sys.stderr)
    sys.exit(2)


def unknown_fields(msg, path, out):
    """Collects every field the schema does not know, recursively."""
    if len(UnknownFieldSet(msg)) > 0:
        out.append(path or msg.DESCRIPTOR.name)
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        # Repeated containers have no ListFields; works across protobuf versions.
        items = [value] if hasattr(value, "ListFields") else list(value)
        for i, item in enumerate(items):
            unknown_fields(item, f"{path}.{fd.name}[{i}]", out)


def main():
    data = open(sys.argv[1], "rb").read()
    trace = pb.Trace()
    trace.ParseFromString(data)
    if trace.ByteSize() != len(data):
        print("re-encoded size differs: fields were dropped", file=sys.stderr)
    counts = {"packets": len(trace.packet)}

    def bump(k, n=1):
        counts[k] = counts.get(k, 0) + n

    unknown = []
    seqs_first = {}
    for i, p in enumerate(trace.packet):
        unknown_fields(p, f"packet[{i}]", unknown)
        seqs_first.setdefault(str(p.trusted_packet_sequence_id), p.sequence_flags)
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            bump("thread_descriptors" if td.HasField("thread") else "process_descriptors")
        if p.HasField("track_event"):
            te = p.track_event
            bump({1: "slice_begin", 2: "slice_end"}.get(te.type, "track_event_other"))
        if p.HasField("ftrace_events"):
            for ev in p.ftrace_events.event:
                bump(ev.WhichOneof("event") or "none")
    counts["first_packet_flags"] = seqs_first
    counts["unknown_fields"] = unknown[:10]
    print(json.dumps(counts, sort_keys=True))
    sys.exit(1 if unknown else 0)


if __name__ == "__main__":
    main()
