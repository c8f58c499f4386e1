#!/usr/bin/env python3
"""Sweep a clang's ``Occupancy [waves/SIMD]`` remark over VGPR, SGPR, AGPR, LDS and
work-group figures per target, and compare it with spillway's occupancy models.

    scripts/occupancy-sweep.py compile --compiler clang-23 --root /var/tmp/spillway-sid-root \\
        --out /tmp/sweep all          (or: gfx900 gfx950 gfx1151:wave64 gfx1030:cumode ...)
    scripts/occupancy-sweep.py check --model llvm23 /tmp/sweep/clang-23
    scripts/occupancy-sweep.py corpus --out tests/data/occupancy ...   (see tests/data/occupancy/README.md)

``compile`` writes one HIP source per target and mode whose kernels are forced to exact
figures (inline-asm clobbers of ``v<N>``/``s<N>``/``a<N>``, a ``__shared__`` array of N bytes,
``__launch_bounds__``), compiles it device-only with ``-Rpass-analysis=kernel-resource-usage``
(inside a chroot when ``--root`` is given: the sid root of toolchains-next.md section 2), and
stores, per kernel, the remark beside what spillway reads from the code object
(``<out>/<compiler>/<target>[-mode].json``).  Runs niced, two compiles at a time.
``check`` applies a model to those files and lists every kernel where the model's figure and
the remark differ (exit 1 when any does), and checks ``occupancy_next`` against the sweep:
a kernel whose resource sits at ``at_most`` must print ``waves``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "checker"))

MINI_HIP = REPO / "kernels" / "include" / "mini_hip.h"
_REMARK = re.compile(r"remark:\s+(?:Function Name: (?P<fn>\S+)|(?P<key>[A-Za-z ]+?(?: \[[^\]]+\])?): "
                     r"(?P<value>\S+)) \[")

# What the models were fitted on (``compile ... all``): 2026-12-01, clang 23 and clang 24 in the sid root.
ALL_SPECS = (
    "gfx600 gfx700 gfx803 gfx900 gfx906 gfx908 gfx90a gfx942 gfx950 gfx9-generic gfx9-4-generic "
    "gfx1010 gfx1010:cumode gfx10-1-generic gfx1030 gfx1030:cumode gfx1030:wave64 gfx10-3-generic "
    "gfx1100 gfx1100:wave64-cumode gfx1102 gfx1150 gfx1151 gfx1151:cumode gfx1151:wave64 gfx11-generic "
    "gfx1154 gfx1170 gfx1170:cumode gfx1170:wave64 gfx1171 gfx1172 gfx11-7-generic "
    "gfx1200 gfx1200:wave64 gfx1201:cumode gfx12-generic gfx1250 gfx1250-strict gfx1251 gfx12-5-generic "
    "gfx1310 gfx1310:cumode gfx1310:wave64 gfx13-generic").split()

MODES = {"": (), "wave64": ("-mwavefrontsize64",), "cumode": ("-mcumode",),
         "wave64-cumode": ("-mwavefrontsize64", "-mcumode")}


def parse_remarks(stderr: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    current = None
    for line in stderr.splitlines():
        match = _REMARK.search(line)
        if not match:
            continue
        if match.group("fn"):
            current = out.setdefault(match.group("fn"), {})
        elif current is not None:
            current[match.group("key").strip()] = match.group("value")
    return out


def gfx_major(target: str) -> int:
    digits = re.match(r"gfx(\d+)", target).group(1)
    if "generic" in target:
        return int(digits)
    return int(digits[:-2]) if len(digits) > 2 else int(digits[0])


# -- sources -------------------------------------------------------------------

HEADER = r'''#include "mini_hip.h"
#define KV(NAME, V, W) extern "C" __global__ void __launch_bounds__(W) NAME(float* p) { \
  asm volatile("" ::: V); p[threadIdx.x] = 1.0f; }
#define KL(NAME, V, L, W) extern "C" __global__ void __launch_bounds__(W) NAME(float* p) { \
  __shared__ char s[L]; s[threadIdx.x % L] = (char)p[threadIdx.x]; __syncthreads(); \
  asm volatile("" ::: V); p[threadIdx.x] = s[(threadIdx.x + 1) % L]; }
#define KS(NAME, S, W) extern "C" __global__ void __launch_bounds__(W) NAME(float* p) { \
  asm volatile("" ::: S, "v3"); p[threadIdx.x] = 1.0f; }
#define KA(NAME, V, A, W) extern "C" __global__ void __launch_bounds__(W) NAME(float* p) { \
  asm volatile("" ::: V, A); p[threadIdx.x] = 1.0f; }
'''

GROUP_SIZES = (32, 64, 96, 128, 192, 256, 320, 512, 768, 1024)
LDS_GRANULES = (256, 512, 1024, 1280, 2048)


def lds_values(max_lds: int, rng: random.Random) -> list[int]:
    """LDS sizes around every point where the number of resident work-groups can change,
    for every LDS pool and granule in use: dense at the thresholds, odd in between."""
    values = set()
    for pool in {max_lds, 2 * max_lds, 65536, 131072}:
        for groups in range(1, 41):
            x = pool // groups
            for g in LDS_GRANULES:
                down = x // g * g
                values.update((down, down + 1, down + 4))
            values.update((x, x + 1))
    values = sorted(v for v in values if 0 < v <= max_lds)
    # Thin out to keep compiles small; keep the smallest ones dense.
    keep = [v for v in values if v <= 4200] + rng.sample([v for v in values if v > 4200],
                                                        min(260, len([v for v in values if v > 4200])))
    return sorted(set(keep))


def source_for(target: str, wave: int, max_lds: int, seed: int) -> str:
    rng = random.Random(seed)
    major = gfx_major(target)
    lines = [HEADER]
    # VGPRs: both sides of every multiple of every granule in use, under a 64-thread bound
    vgprs = {1, 2, 3, 255, 256}
    for g in (4, 8, 12, 16, 24):
        for j in range(1, 256 // g + 1):
            vgprs.update((j * g, j * g + 1))
    for v in sorted(x for x in vgprs if 1 <= x <= 256):
        lines.append(f'KV(occ_v{v}, "v{v - 1}", 64)')
    # SGPRs: every count below GFX10 (they limit there), a few after
    sgprs = range(1, 103) if major < 10 else (1, 40, 80, 100, 104)
    for s in sgprs:
        lines.append(f'KS(occ_s{s}, "s{s - 1}", 256)')
    # LDS x work-group bound
    seen = set()
    values = lds_values(max_lds, rng)
    for lds in values:
        for group in (64, 256, 1024):
            seen.add((lds, group))
    for _ in range(150):
        seen.add((rng.randrange(1, max_lds // 4 + 1) * 4 - rng.choice((0, 1, 3)), rng.choice(GROUP_SIZES)))
    for lds, group in sorted(seen):
        if lds <= 0 or (wave == 64 and group < 64 and major < 10):
            continue
        lines.append(f'KL(occ_l{lds}_w{group}, "v3", {lds}, {group})')
    # VGPR and LDS together
    for v, lds, group in ((100, 6148, 256), (129, 4100, 256), (84, 12292, 512), (64, 8196, 1024),
                          (40, 20484, 1024), (24, 4100, 64), (48, 30000, 128)):
        if lds <= max_lds:
            lines.append(f'KL(occ_v{v}_l{lds}_w{group}, "v{v - 1}", {lds}, {group})')
    # AGPRs where the target has them
    lines.append("#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx942__) || "
                 "defined(__gfx950__) || defined(__GFX9_4_GENERIC__)")
    for v, a in ((61, 1), (61, 64), (65, 64), (2, 200), (17, 3), (128, 128), (200, 60), (1, 256),
                 (64, 65), (4, 57), (5, 59), (33, 96), (256, 256)):
        lines.append(f'KA(occ_v{v}_a{a}, "v{v - 1}", "a{a - 1}", 64)')
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def corpus_source() -> str:
    """The committed corpus (tests/data/occupancy/corpus.hip): every departure between the
    models and the steps around it, in few kernels (the code objects are committed)."""
    lines = [HEADER.replace('#include "mini_hip.h"', "// Generated by scripts/occupancy-sweep.py corpus-source; "
                                                     'see README.md.\n#include "mini_hip.h"')]
    for s in (40, 48, 49, 56, 57, 64, 65, 72, 73, 80, 81, 88, 89, 96, 97, 100, 101, 102):
        lines.append(f'KS(occ_s{s}, "s{s - 1}", 256)')
    for v in (8, 24, 25, 28, 29, 32, 33, 64, 65, 96, 97, 120, 121, 128, 129, 168, 169, 256):
        lines.append(f'KV(occ_v{v}, "v{v - 1}", 64)')
    for lds in (1537, 2049, 4096, 4097, 4100, 6144, 6145, 6148, 8192, 8193, 12288, 12292, 20481, 32768, 32769):
        for group in (64, 256, 1024):
            lines.append(f'KL(occ_l{lds}_w{group}, "v3", {lds}, {group})')
    for lds, group in ((5000, 192), (8836, 320), (9627, 768), (6000, 704), (40000, 256), (65536, 64)):
        lines.append(f'KL(occ_l{lds}_w{group}, "v3", {lds}, {group})')
    for v, lds, group in ((100, 6148, 256), (129, 4100, 256), (84, 12292, 512), (24, 4100, 64)):
        lines.append(f'KL(occ_v{v}_l{lds}_w{group}, "v{v - 1}", {lds}, {group})')
    lines.append("#if defined(__gfx950__) || defined(__gfx1250__)")
    for lds, group in ((81924, 64), (163840, 256)):
        lines.append(f'KL(occ_l{lds}_w{group}, "v3", {lds}, {group})')
    lines.append("#endif")
    lines.append("#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx942__) || defined(__gfx950__)")
    for v, a in ((61, 1), (61, 64), (65, 64), (2, 200), (17, 3), (128, 128)):
        lines.append(f'KA(occ_v{v}_a{a}, "v{v - 1}", "a{a - 1}", 64)')
    lines.append("#endif")
    return "\n".join(lines) + "\n"


# The remark lines kept per kernel in the corpus's JSON, one row per kernel (null: not printed,
# e.g. AGPRs on targets without them).
CORPUS_COLUMNS = ["Occupancy [waves/SIMD]", "VGPRs", "AGPRs", "TotalSGPRs", "LDS Size [bytes/block]",
                  "ScratchSize [bytes/lane]", "VGPRs Spill", "SGPRs Spill", "Dynamic Stack"]


def build_corpus(compiler: "Compiler", spec: str, out: Path) -> str:
    """Compile the corpus for one target and mode into a compressed offload bundle
    (``<out>/<compiler>/<tag>.ccob``, CCOB, KBs) and its remarks (``<tag>.json``)."""
    target, _, mode = spec.partition(":")
    tag = f"{target}-{mode}" if mode else target
    work = compiler.workdir(f"corpus-{tag}")
    shutil.copy(MINI_HIP, work / "mini_hip.h")
    shutil.copy(out / "corpus.hip", work / "corpus.hip")
    args = [f"--offload-arch={target}", *MODES[mode], "--offload-compress", "-c", "corpus.hip", "-o", f"{tag}.ccob"]
    result = compiler.run(work, args)
    if result.returncode != 0:
        return f"{tag}: compile failed: {result.stderr[-600:]}"
    remarks = parse_remarks(result.stderr)
    dest = out / compiler.name
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / f"{tag}.ccob", dest / f"{tag}.ccob")
    version = subprocess.run(
        (["chroot", compiler.root] if compiler.root else []) + [compiler.name, "--version"],
        capture_output=True, text=True).stdout.splitlines()[0]
    command = [compiler.name, "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3",
               "-Rpass-analysis=kernel-resource-usage", *args]
    head = {"compiler": version, "target": target, "mode": mode, "command": " ".join(command)}
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines += [f' "columns": {json.dumps(CORPUS_COLUMNS)},', ' "remarks": {']
    rows = [f"  {json.dumps(name)}: {json.dumps([remark.get(c) for c in CORPUS_COLUMNS])}"
            for name, remark in sorted(remarks.items())]
    lines += [",\n".join(rows), " }", "}"]
    (dest / f"{tag}.json").write_text("\n".join(lines) + "\n")
    return f"{tag}: {len(remarks)} kernels, {(dest / f'{tag}.ccob').stat().st_size} bytes"


# -- compiling -----------------------------------------------------------------

class Compiler:
    def __init__(self, name: str, root: str | None):
        self.name, self.root = name, root
        self.version = int(re.search(r"(\d+)$", name).group(1))

    def workdir(self, tag: str) -> Path:
        base = Path(self.root) / "tmp" / "spillway-occupancy-sweep" if self.root else \
            Path("/tmp/spillway-occupancy-sweep")
        path = base / self.name / tag
        path.mkdir(parents=True, exist_ok=True)
        return path

    def run(self, work: Path, args: list[str]) -> subprocess.CompletedProcess:
        command = [self.name, "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3",
                   "-Rpass-analysis=kernel-resource-usage", *args]
        if self.root:
            inner = Path("/") / work.relative_to(self.root)
            script = (f"cd {inner} && PATH=/usr/lib/llvm-{self.version}/bin:$PATH "
                      + " ".join(_quote(c) for c in command))
            full = ["nice", "-n", "10", "chroot", self.root, "bash", "-c", script]
        else:
            full = ["nice", "-n", "10", *command]
        return subprocess.run(full, cwd=work, capture_output=True, text=True)


def _quote(text: str) -> str:
    return text if re.fullmatch(r"[\w@%+=:,./-]+", text) else "'" + text.replace("'", "'\\''") + "'"


def probe_max_lds(compiler: Compiler, target: str, tag: str, flags: tuple = ()) -> int | None:
    """Largest per-work-group LDS the compiler accepts for the target (None: no target)."""
    work = compiler.workdir(f"probe-{tag}")
    shutil.copy(MINI_HIP, work / "mini_hip.h")
    best = None
    for size in (32768, 65536, 163840, 327680, 655360):
        (work / "p.hip").write_text(HEADER + f'KL(probe, "v3", {size}, 64)\n')
        result = compiler.run(work, [f"--offload-arch={target}", *flags, "--no-gpu-bundle-output", "-c",
                                     "p.hip", "-o", "p.co"])
        if result.returncode != 0:
            if best is None:
                return None
            break
        best = size
    return best


def read_records(path: Path) -> list[dict]:
    try:
        from spillway.report.reader import ReadOptions, read_path
    except ImportError:                                   # pre-2026 layout
        from spillway.reader import ReadOptions, read_path
    return read_path(str(path), ReadOptions())[1]


def compile_one(compiler: Compiler, spec: str, out: Path, seed: int) -> str:
    target, _, mode = spec.partition(":")
    tag = f"{target}-{mode}" if mode else target
    result_file = out / compiler.name / f"{tag}.json"
    if result_file.exists():
        return f"{tag}: cached"
    max_lds = probe_max_lds(compiler, target, tag, MODES[mode])
    if max_lds is None:
        return f"{tag}: {compiler.name} does not compile for it"
    wave = 64 if (gfx_major(target) < 10 or "wave64" in mode) else 32
    work = compiler.workdir(tag)
    shutil.copy(MINI_HIP, work / "mini_hip.h")
    (work / "k.hip").write_text(source_for(target, wave, max_lds, seed))
    result = compiler.run(work, [f"--offload-arch={target}", "--no-gpu-bundle-output", "-c", "k.hip", "-o",
                                 "k.co", *MODES[mode]])
    if result.returncode != 0:
        return f"{tag}: compile failed: {result.stderr[-600:]}"
    remarks = parse_remarks(result.stderr)
    kernels = []
    for record in read_records(work / "k.co"):
        remark = remarks[record["symbol"]]
        kernels.append({"symbol": record["symbol"], "remark": remark,
                        **{k: record[k] for k in ("target", "compiler", "vgpr_count", "agpr_count", "sgpr_count",
                                                  "group_segment_fixed_size", "wavefront_size",
                                                  "max_flat_workgroup_size", "workgroup_processor_mode")}})
    result_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = result_file.with_suffix(".tmp")
    tmp.write_text(json.dumps({"compiler": compiler.name, "target": target, "mode": mode, "max_lds": max_lds,
                               "flags": list(MODES[mode]), "kernels": kernels}, indent=0))
    tmp.replace(result_file)
    return f"{tag}: {len(kernels)} kernels"


# -- checking ------------------------------------------------------------------

def model_figure(kernel: dict, model: str):
    from spillway.resources import occupancy
    return occupancy.compute(kernel["target"], vgpr_count=kernel["vgpr_count"],
                             agpr_count=kernel.get("agpr_count"), sgpr_count=kernel["sgpr_count"],
                             group_segment_fixed_size=kernel["group_segment_fixed_size"],
                             wavefront_size=kernel["wavefront_size"],
                             max_flat_workgroup_size=kernel["max_flat_workgroup_size"],
                             workgroup_processor_mode=kernel["workgroup_processor_mode"] is not False,
                             model=model)


def check(paths: list[Path], model: str, verbose: bool) -> int:
    total = bad = unmodelled = next_checked = next_bad = 0
    for path in paths:
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        for file in files:
            doc = json.loads(file.read_text())
            if "-mcumode" in doc["flags"] and any(k["workgroup_processor_mode"] is None for k in doc["kernels"]):
                # clang 23 on gfx13 records neither .workgroup_processor_mode nor descriptor bit 29:
                # a CU-mode build cannot be told from a WGP-mode one, and spillway assumes WGP.
                print(f"{doc['compiler']} {file.stem}: skipped, the binary does not record CU mode")
                continue
            # figure per (resource vector) for the occupancy_next check
            by_shape = {}
            for k in doc["kernels"]:
                by_shape[_shape(k)] = int(k["remark"]["Occupancy [waves/SIMD]"])
            mismatches = []
            for k in doc["kernels"]:
                total += 1
                waves = int(k["remark"]["Occupancy [waves/SIMD]"])
                occ = model_figure(k, model)
                if occ.waves_per_simd is None:
                    unmodelled += 1
                    continue
                if occ.waves_per_simd != waves:
                    mismatches.append(k)
                    continue
                # occupancy_next against the sweep: where the sweep has the kernel with the
                # resource at at_most (and one above), their remarks must be waves and this figure.
                if occ.next and len(occ.next["needs"]) == 1:
                    need = occ.next["needs"][0]
                    field = {"vgpr": "vgpr_count", "sgpr": "sgpr_count", "lds": "group_segment_fixed_size",
                             "workgroup": "max_flat_workgroup_size"}.get(need["resource"])
                    if field and k.get("agpr_count") in (None, 0):
                        at = _shape(dict(k, **{field: need["at_most"]}))
                        above = _shape(dict(k, **{field: need["at_most"] + 1}))
                        if at in by_shape:
                            next_checked += 1
                            if by_shape[at] != occ.next["waves"]:
                                next_bad += 1
                                print(f"  next {file.name} {k['symbol']}: at_most {need} prints {by_shape[at]}, "
                                      f"model says {occ.next['waves']}")
                        if above in by_shape and by_shape[above] != waves:
                            next_bad += 1
                            print(f"  next {file.name} {k['symbol']}: one above {need} prints {by_shape[above]}, "
                                  f"current {waves}")
            bad += len(mismatches)
            status = "ok" if not mismatches else f"{len(mismatches)} differ"
            print(f"{doc['compiler']} {file.stem}: {len(doc['kernels'])} kernels, {status}")
            for k in mismatches[: (1000 if verbose else 8)]:
                occ = model_figure(k, model)
                print(f"    {k['symbol']}: vgpr {k['vgpr_count']} agpr {k['agpr_count']} sgpr {k['sgpr_count']} "
                      f"lds {k['group_segment_fixed_size']} wg {k['max_flat_workgroup_size']} "
                      f"wave {k['wavefront_size']}: remark {k['remark']['Occupancy [waves/SIMD]']}, "
                      f"{model} {occ.waves_per_simd} ({occ.limit})")
    print(f"{model}: {total} kernels, {bad} differ, {unmodelled} without a model; "
          f"occupancy_next checked on {next_checked}, {next_bad} wrong")
    return 1 if bad or next_bad else 0


def _shape(k: dict) -> tuple:
    return (k["vgpr_count"], k.get("agpr_count"), k["sgpr_count"] if k["symbol"].startswith("occ_s") else None,
            k["group_segment_fixed_size"], k["max_flat_workgroup_size"], k["wavefront_size"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--compiler", required=True, help="clang-22 (host), clang-23, clang-24 (in --root)")
    c.add_argument("--root", help="chroot with the compiler (the sid root)")
    c.add_argument("--out", required=True, type=Path)
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--seed", type=int, default=10)
    c.add_argument("specs", nargs="+", help="target[:wave64|cumode|wave64-cumode], or all (ALL_SPECS)")
    sub.add_parser("corpus-source", help="print the committed corpus source")
    cp = sub.add_parser("corpus", help="build the committed corpus (see tests/data/occupancy/README.md)")
    cp.add_argument("--compiler", required=True)
    cp.add_argument("--root")
    cp.add_argument("--out", required=True, type=Path)
    cp.add_argument("specs", nargs="+")
    k = sub.add_parser("check")
    k.add_argument("--model", required=True)
    k.add_argument("-v", "--verbose", action="store_true")
    k.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compile":
        compiler = Compiler(args.compiler, args.root)
        if args.specs == ["all"]:
            args.specs = ALL_SPECS
        with ThreadPoolExecutor(max_workers=min(args.jobs, 2)) as pool:
            for line in pool.map(lambda s: compile_one(compiler, s, args.out, args.seed), args.specs):
                print(line, flush=True)
        return 0
    if args.command == "corpus-source":
        sys.stdout.write(corpus_source())
        return 0
    if args.command == "corpus":
        compiler = Compiler(args.compiler, args.root)
        with ThreadPoolExecutor(max_workers=2) as pool:
            for line in pool.map(lambda s: build_corpus(compiler, s, args.out), args.specs):
                print(line, flush=True)
        return 0
    return check(args.paths, args.model, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
