#!/usr/bin/env python3
"""Time spillway.isa's evidence over every function of a library (issue 23's
speed target: librocsparse1 7.2.4, ~96 million instructions).

    PYTHONPATH=checker python3 benchmarks/bench_isa.py LIBRARY [--reference]

Reads the code objects with spillway's own formats readers, then
``isa.vector.evidence_many`` per code object (``--reference``: the
plain-Python ``isa.evidence`` per function).  One process, one core.
"""

from __future__ import annotations

import argparse
import resource
import struct
import sys
import time

from spillway.formats import containers
from spillway.isa import evidence, kernel_ranges
from spillway.resources.targets import target_id_from_flags


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--reference", action="store_true", help="the plain-Python decoder, function by function")
    args = parser.parse_args(argv)
    if not args.reference:
        from spillway.isa import vector
    started, cpu = time.perf_counter(), time.process_time()
    result = containers.scan_path(args.library)
    objects = functions = instructions = incomplete = 0
    decode_cpu = 0.0
    for image in result.images:
        items = list(containers.expand(image, containers.ScanResult())) \
            if isinstance(image, containers.PendingImages) else [image]
        for item in items:
            data = item.payload
            if len(data) < 64:
                continue
            target = target_id_from_flags(struct.unpack_from("<I", data, 48)[0], 5)
            code, ranges = kernel_ranges(data, functions=True)
            batch = [(r.start, r.size, r.private_segment_buffer is not False) for r in ranges]
            before = time.process_time()
            if args.reference:
                found = [evidence(code, start, size, target, psb) for start, size, psb in batch]
            else:
                found = vector.evidence_many(code, batch, target)
            decode_cpu += time.process_time() - before
            objects += 1
            functions += len(found)
            instructions += sum(f.instructions for f in found)
            incomplete += sum(f.status != "complete" for f in found)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{objects} code objects, {functions} functions, {instructions} instructions, {incomplete} not complete")
    print(f"evidence {decode_cpu:.1f} CPU-s; total {time.process_time() - cpu:.1f} CPU-s, "
          f"{time.perf_counter() - started:.1f} s wall, max RSS {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
