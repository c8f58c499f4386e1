#!/usr/bin/env python3
"""Benchmark: source lines at library scale (issue 32's target: on a library
the size of librocsparse1 7.2.4 built with line tables, mapping lines adds no
more than half of ``report --isa``'s CPU time, in under 800 MB).

    PYTHONPATH=checker python3 benchmarks/bench_lines.py [--work DIR] [--variants 8]
        [--targets gfx906,gfx90a,gfx942,gfx1100,gfx1201] [--instructions 96000000]
        [--pyelftools 4] [--no-report] [--json FILE]

No Debian library ships line tables, so the library is built:
1. benchmarks/lines/lines_library.hip (template kernels in the shapes of a
   sparse/dense linear algebra library, instantiated over types and sizes,
   inlining benchmarks/lines/ops.h) is compiled VARIANTS times (-DVARIANT=v
   changes constants, so each variant's code differs) for TARGETS into one
   bundle per variant: ``clang++-22 -x hip --cuda-device-only -nogpuinc
   -nogpulib -O3 -gline-tables-only --offload-arch=...`` (cached in WORK).
2. The library is WORK/library: hard links of those bundles, as many as
   reach INSTRUCTIONS (librocsparse1 7.2.4: about 96 million).  Every copy
   is read and decoded again by both measurements below, as a library's
   distinct code objects are; what the copies share is their rows'
   density (rows per instruction), printed with the figures.
3. ``spillway report --isa --all --json -o FILE WORK/library`` in a process
   of its own: wall, CPU (user + system of it and its workers, os.wait4),
   peak RSS of the largest process.
4. The line mapping in a process of its own (one core), one code object at a
   time as the reader goes: its functions' evidence (vector.evidence_many:
   report --isa's work, timed apart, keeping its decoded arrays), then for
   the kernels with scratch accesses or AGPR copies (what a report shows
   lines for) the line tables read with the other sequences skimmed
   (isa.source_lines.object_lines), their listings from those arrays
   (vector.listings_many) and their model (kernel_lines): the added CPU; and the whole tables run without skimming
   (read_lines), the cost of every instruction's line.  Peak RSS of that
   process.
5. pyelftools' line programs (relocate_dwarf_sections=False) on the first
   PYELFTOOLS code objects, against read_lines on the same: the parser choice.
6. (--end-to-end) what the line mapping costs ``report --isa`` itself (its
   records' ``source_lines``): the same command on WORK/library-without-lines,
   the same bundles with the section name ``.debug_line`` written
   ``.debug_linX`` (same bytes otherwise: the reader finds no line table and
   writes records without source_lines), against step 3's run; and
   ``llvm-objdump-22 -d -l`` on one copy's code objects (unbundled into WORK),
   times the copies: what LLVM's tool costs for every instruction's line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "lines" / "lines_library.hip"
TARGETS = "gfx906,gfx90a,gfx942,gfx1100,gfx1201"


def build(work: Path, variants: int, targets: str) -> list[Path]:
    work.mkdir(parents=True, exist_ok=True)
    out = []
    for variant in range(variants):
        bundle = work / f"lines_library.{variant}.{targets.replace(',', '-')}.hipfb"
        if not bundle.exists():
            print(f"building variant {variant} for {targets}", file=sys.stderr)
            partial = bundle.with_suffix(".partial")
            subprocess.run(["clang++-22", "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3",
                            "-gline-tables-only", f"-DVARIANT={variant}",
                            *[f"--offload-arch={t}" for t in targets.split(",")],
                            "-c", str(SOURCE), "-o", str(partial)], check=True)
            partial.rename(bundle)
        out.append(bundle)
    return out


def code_objects(paths: list[Path]):
    from spillway.formats import containers
    for path in paths:
        for image in containers.scan_path(str(path)).images:
            items = list(containers.expand(image, containers.ScanResult())) \
                if isinstance(image, containers.PendingImages) else [image]
            yield from items


def measure_lines(paths: list[Path], pyelftools: int) -> dict:
    """Step 4 and 5, in this process."""
    from spillway.formats.dwarf_lines import read_lines
    from spillway.isa import kernel_ranges, vector
    from spillway.isa.source_lines import kernel_lines, object_lines
    from spillway.resources.targets import target_id_from_flags

    figures = {"code_objects": 0, "functions": 0, "instructions": 0, "rows": 0, "kernels_with_lines": 0,
               "instructions_with_lines": 0, "placed": 0, "evidence_cpu": 0.0, "tables_cpu": 0.0, "lines_cpu": 0.0,
               "model_cpu": 0.0, "full_tables_cpu": 0.0, "pyelftools_cpu": 0.0, "pyelftools_same_cpu": 0.0,
               "pyelftools_objects": 0}
    started = time.process_time()
    for item in code_objects(paths):
        data = item.payload
        if len(data) < 64:
            continue
        target = target_id_from_flags(struct.unpack_from("<I", data, 48)[0], 5)
        code, ranges = kernel_ranges(data, functions=True)
        kernels = [(r.start, r.size, r.private_segment_buffer is not False) for r in ranges]
        before = time.process_time()
        decoded = vector.DecodedSection()
        found = vector.evidence_many(code, kernels, target, keep=decoded)
        figures["evidence_cpu"] += time.process_time() - before
        figures["code_objects"] += 1
        figures["functions"] += len(found)
        figures["instructions"] += sum(f.instructions for f in found)
        chosen = [n for n, f in enumerate(found) if f.scratch_loads + f.scratch_stores + f.agpr_writes + f.agpr_reads]

        before = time.process_time()
        lines = object_lines(data, [(ranges[n].section, ranges[n].start, ranges[n].start + ranges[n].size)
                                    for n in chosen])
        figures["tables_cpu"] += time.process_time() - before
        traffic = vector.line_traffic_many(code, [kernels[n] for n in chosen], target, [found[n] for n in chosen],
                                           decoded, lines, [ranges[n].section for n in chosen])
        figures["lines_cpu"] += time.process_time() - before
        figures["kernels_with_lines"] += sum(bool(t) for t in traffic)
        figures["instructions_with_lines"] += sum(found[n].instructions for n in chosen)
        figures["placed"] += sum(r.accesses + r.agpr_copies for t in traffic for r in t)

        before = time.process_time()
        listings = vector.listings_many(code, [kernels[n] for n in chosen], target, [found[n] for n in chosen],
                                        decoded)
        models = [kernel_lines(listing, branches, lines, ranges[n].section, ranges[n].start)
                  for n, (listing, branches) in zip(chosen, listings)]
        figures["model_cpu"] += time.process_time() - before
        assert [m.by_line for m in models] == traffic

        before = time.process_time()
        tables = read_lines(data)
        figures["full_tables_cpu"] += time.process_time() - before
        figures["rows"] += sum(len(t.rows) for t in tables)
        if figures["pyelftools_objects"] < pyelftools:
            figures["pyelftools_objects"] += 1
            before = time.process_time()
            _pyelftools_rows(data)
            figures["pyelftools_cpu"] += time.process_time() - before
            before = time.process_time()
            read_lines(data)
            figures["pyelftools_same_cpu"] += time.process_time() - before
    figures["total_cpu"] = time.process_time() - started
    figures["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return figures


def _pyelftools_rows(data: memoryview) -> int:
    import io

    from elftools.elf.elffile import ELFFile
    dwarf = ELFFile(io.BytesIO(bytes(data))).get_dwarf_info(relocate_dwarf_sections=False)
    rows = 0
    for unit in dwarf.iter_CUs():
        program = dwarf.line_program_for_CU(unit)
        if program is not None:
            rows += sum(1 for entry in program.get_entries() if entry.state is not None)
    return rows


def end_to_end(work: Path, bundles: list[Path], copies: int) -> dict:
    """Step 6: report --isa without line tables, and llvm-objdump -d -l on one copy."""
    hidden = work / "library-without-lines"
    hidden.mkdir(exist_ok=True)
    for old in hidden.iterdir():
        old.unlink()
    for bundle in bundles:
        data = bundle.read_bytes()
        changed = data.replace(b".debug_line\0", b".debug_linX\0")
        assert changed.count(b".debug_linX\0") >= 1 and len(changed) == len(data), bundle
        plain = work / (bundle.name + ".without-lines")
        plain.write_bytes(changed)
        for copy in range(copies):
            os.link(plain, hidden / f"{copy:04d}.{bundle.name}")
    out: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        out["report_isa_without_lines"] = timed([sys.executable, "-m", "spillway", "report", "--isa", "--all",
                                                 "--json", "-o", f"{scratch}/report.json", str(hidden)])
    print(f"report --isa without line tables: {out['report_isa_without_lines']}", file=sys.stderr)
    # llvm-objdump -d -l on one copy's code objects (each bundle's, unbundled by spillway's reader).
    objects = work / "objects"
    objects.mkdir(exist_ok=True)
    written = []
    for number, item in enumerate(code_objects(bundles)):
        path = objects / f"{number:03d}.co"
        path.write_bytes(bytes(item.payload))
        written.append(path)
    cpu = wall = 0.0
    for path in written:
        found = timed(["llvm-objdump-22", "-d", "-l", "-z", str(path)], stdout=subprocess.DEVNULL)
        cpu += found["cpu"]
        wall += found["wall"]
    out["objdump_one_copy"] = {"code_objects": len(written), "cpu": cpu, "wall": wall}
    out["objdump_library_cpu"] = cpu * copies
    print(f"llvm-objdump-22 -d -l -z on one copy ({len(written)} code objects): {cpu:.1f} CPU-s; x {copies} "
          f"copies: {cpu * copies:.0f} CPU-s", file=sys.stderr)
    return out


def timed(argv: list[str], stdout=None) -> dict:
    wall = time.perf_counter()
    process = subprocess.Popen(argv, stdout=stdout)
    _pid, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"{' '.join(argv[:4])}...: exit status {status}")
    return {"wall": time.perf_counter() - wall, "cpu": usage.ru_utime + usage.ru_stime,
            "max_rss_mb": usage.ru_maxrss / 1024}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spillway-bench-lines")
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--targets", default=TARGETS)
    parser.add_argument("--instructions", type=float, default=96e6)
    parser.add_argument("--pyelftools", type=int, default=4)
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--end-to-end", action="store_true",
                        help="also report --isa on the library without line tables, and llvm-objdump -d -l")
    parser.add_argument("--measure-lines", nargs="*", help=argparse.SUPPRESS)   # the child of step 4
    args = parser.parse_args(argv)
    if args.measure_lines is not None:
        print(json.dumps(measure_lines([Path(p) for p in args.measure_lines], args.pyelftools)))
        return 0

    bundles = build(args.work, args.variants, args.targets)
    one_copy = json.loads(subprocess.run([sys.executable, __file__, "--pyelftools", "0", "--measure-lines",
                                          *map(str, bundles)], capture_output=True, text=True,
                                         check=True).stdout)["instructions"]
    copies = max(1, round(args.instructions / one_copy))
    library = args.work / "library"
    if library.exists():
        for old in library.iterdir():
            old.unlink()
    library.mkdir(exist_ok=True)
    for copy in range(copies):
        for bundle in bundles:
            os.link(bundle, library / f"{copy:04d}.{bundle.name}")
    files = sorted(library.iterdir())
    print(f"library: {len(bundles)} bundles x {copies} copies = {len(files)} files, "
          f"~{one_copy * copies / 1e6:.1f} M instructions", file=sys.stderr)
    results: dict = {"bundles": [b.name for b in bundles], "copies": copies}
    if not args.no_report:
        with tempfile.TemporaryDirectory() as scratch:
            results["report_isa"] = timed([sys.executable, "-m", "spillway", "report", "--isa", "--all", "--json",
                                           "-o", f"{scratch}/report.json", str(library)])
        print(f"report --isa: {results['report_isa']}", file=sys.stderr)
    if args.end_to_end:
        results.update(end_to_end(args.work, bundles, copies))
    child = subprocess.run([sys.executable, __file__, "--pyelftools", str(args.pyelftools), "--measure-lines",
                            *map(str, files)], capture_output=True, text=True, check=True)
    lines = results["lines"] = json.loads(child.stdout)
    print(f"{lines['code_objects']} code objects, {lines['functions']} functions, "
          f"{lines['instructions'] / 1e6:.1f} M instructions, {lines['rows'] / 1e6:.1f} M rows "
          f"({lines['rows'] / lines['instructions']:.2f} per instruction)")
    print(f"evidence (report --isa's decoding): {lines['evidence_cpu']:.1f} CPU-s")
    print(f"line mapping for the {lines['kernels_with_lines']} kernels with scratch or AGPR copies "
          f"({100 * lines['instructions_with_lines'] / lines['instructions']:.0f}% of the instructions; "
          f"{lines['placed']} accesses and copies placed, "
          f"{100 * lines['placed'] / lines['instructions']:.2f}% of the instructions): "
          f"{lines['lines_cpu']:.1f} CPU-s (tables {lines['tables_cpu']:.1f}); "
          f"the whole model of those kernels: {lines['model_cpu']:.1f} CPU-s more")
    print(f"every table run whole: {lines['full_tables_cpu']:.1f} CPU-s; the child process: "
          f"{lines['total_cpu']:.1f} CPU-s, max RSS {lines['max_rss_mb']:.0f} MB")
    if lines["pyelftools_objects"]:
        slower = lines["pyelftools_cpu"] / lines["pyelftools_same_cpu"]
        print(f"pyelftools on {lines['pyelftools_objects']} code objects: {lines['pyelftools_cpu']:.2f} CPU-s "
              f"against {lines['pyelftools_same_cpu']:.2f} ({slower:.0f}x)")
    if "report_isa" in results:
        report = results["report_isa"]
        print(f"report --isa --all --json: {report['cpu']:.1f} CPU-s, {report['wall']:.1f} s wall, "
              f"max RSS {report['max_rss_mb']:.0f} MB; line mapping / report --isa: "
              f"{lines['lines_cpu'] / report['cpu']:.2f} "
              f"(whole tables: {lines['full_tables_cpu'] / report['cpu']:.2f})")
        if "report_isa_without_lines" in results:
            without = results["report_isa_without_lines"]
            added = report["cpu"] - without["cpu"]
            print(f"report --isa without line tables: {without['cpu']:.1f} CPU-s, max RSS "
                  f"{without['max_rss_mb']:.0f} MB; source_lines add {added:.1f} CPU-s = "
                  f"{added / without['cpu']:.2f} of it; llvm-objdump-22 -d -l -z: "
                  f"{results['objdump_library_cpu']:.0f} CPU-s for the library (one copy x copies)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
