"""The ISA-evidence oracle on Debian's ROCm libraries (issue 23): a fixed
sample of their code objects, read by support.isa_oracle, committed as
per-function rows keyed by the package's SHA-256
(tests/data/isa/libraries/<package>-<sha256[:16]>.json.gz, written by
scripts/generate-isa-library-oracle.py).

The sample (deterministic, the same on every machine):
  * a host library's ``.hip_fatbin``: the bundles whose index is a multiple
    of ``EVERY`` (cut by support.llvm_pipeline from the bundle headers'
    own sizes), every code object of each (clang-offload-bundler-22);
  * rocBLAS's Tensile folder: the files named in ``TENSILE_FILES`` (a
    plain code object per GFX generation and a few compressed bundles).

Measured on this machine kind (2 cores, shared), December 2026:
  * the samples: librocsparse1 7.2.4, 70 code objects, 5,460 functions,
    3.53 M instructions, LLVM tools 31 CPU-s, 2.3 min wall with the Python
    reading; librocblas5 7.2.4, 40 code objects, 6,208 functions, 5.21 M
    instructions, 51 CPU-s, 3.5 min;
  * ``llvm-objdump-22 -d -z`` alone, every 16th bundle: librocsparse.so.1.0
    28 CPU-s for 280 code objects (126 MB), so about 450 CPU-s for the whole
    library; librocblas.so.5.2 17 CPU-s for 70 code objects (61 MB), about
    280 CPU-s (Tensile's 1,897 files not measured whole);
  * Tensile's assembly kernels (the ``.co`` bundles) have STT_FUNC symbols of
    size 0: all 557 functions of the 4 sampled .co files are "size 0", so the
    issue's range [st_value, st_value + st_size) holds no code for them.

Document (gzip'd JSON):
    {"schema", "package", "sha256", "every", "tensile_files" (those it has),
     "llvm_seconds": {file: CPU seconds of the LLVM tools (objdump -d -z, readelf -h) on its sample},
     "fields": [...ROW_FIELDS], "strings": [...], "rows": [[...], ...]}
String fields (file, entry, target, symbol, status) are indices into
``strings``; ``entry`` is the bundle entry ID ("" for a plain code object).
``boundaries`` and ``classes`` are isa_oracle.sequence_digests.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
import resource
from dataclasses import dataclass
from pathlib import Path

from . import isa_oracle, llvm_pipeline

SCHEMA = "spillway-isa-library-oracle/2"
EVERY = 64
TENSILE_FILES = (
    "Kernels.so-000-gfx803.hsaco", "Kernels.so-000-gfx906.hsaco", "Kernels.so-000-gfx90a-xnack-.hsaco",
    "Kernels.so-000-gfx942.hsaco", "Kernels.so-000-gfx1030.hsaco", "Kernels.so-000-gfx1100.hsaco",
    "Kernels.so-000-gfx1201.hsaco",
    "TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx803.co",
    "TensileLibrary_Type_SS_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx1100.co",
    # MFMA GEMMs (AGPR accumulators): gfx90a, gfx942 (fp16, fp8)
    "TensileLibrary_Type_HH_HPA_Fp16Alt_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a-xnack-.hsaco",
    "TensileLibrary_Type_HH_HPA_Contraction_l_Alik_Bljk_Cijk_Dijk_CU80_XPU_gfx942.co",
    "TensileLibrary_Type_F8H_HPA_Contraction_l_Alik_Bjlk_Cijk_Dijk_gfx942.co",
)
ROW_FIELDS = ("file", "bundle_index", "entry", "target", "symbol", "kind", "address", "code_bytes", "code_sha256",
              "instructions", "status", "scratch_loads", "scratch_stores", "scratch_load_bytes",
              "scratch_store_bytes", "flat_ops", "agpr_writes", "agpr_reads", "matrix_ops", "lds_ops", "loops",
              "scratch_in_loops", "calls", "boundaries", "classes",
              "scratch_slot_load_bytes", "scratch_slot_store_bytes", "scratch_addressed_load_bytes",
              "scratch_addressed_store_bytes", "agpr_spill_copies", "agpr_accumulator_moves", "innermost_loops",
              "scratch_in_innermost_loops", "loop_depth_max")
STRING_FIELDS = ("file", "entry", "target", "symbol", "status")
EXPECTATIONS = Path(__file__).resolve().parents[1] / "data" / "isa" / "libraries"


def expectation_path(package: str, sha256: str) -> Path:
    return EXPECTATIONS / f"{package}-{sha256[:16]}.json.gz"


@dataclass(frozen=True)
class SampledObject:
    file: str                   # relative to the package root
    bundle_index: int | None    # None: the file is the code object
    entry: str                  # the bundle entry ID ("" for a plain code object file)
    path: Path                  # the extracted code object


def sample(root: Path, work: Path) -> list[SampledObject]:
    """Extract the sample's code objects of an unpacked package under ``work``."""
    out: list[SampledObject] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        display = str(path.relative_to(root))
        if path.name in TENSILE_FILES:
            if path.suffix == ".hsaco":
                out.append(SampledObject(display, None, "", path))
            else:
                target = work / path.name.replace(".", "_")
                target.mkdir(parents=True, exist_ok=True)
                for entry, code_object in llvm_pipeline.unbundle(path, target):
                    out.append(SampledObject(display, 0, entry, code_object))
            continue
        if llvm_pipeline.classify(path) != "host":
            continue
        sections = llvm_pipeline.offload_sections(path)
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            for offset, size in sections:
                data = memoryview(mapped)[offset:offset + size]
                for bundle in llvm_pipeline.cut_bundles(data):
                    if bundle.index % EVERY:
                        continue
                    folder = work / f"{path.name}.{bundle.index}"
                    folder.mkdir(parents=True, exist_ok=True)
                    bundle_file = folder / "bundle.bin"
                    bundle_file.write_bytes(data[bundle.offset:bundle.offset + bundle.size])
                    for entry, code_object in llvm_pipeline.unbundle(bundle_file, folder):
                        out.append(SampledObject(display, bundle.index, entry, code_object))
                del data
    return out


def rows_of(sampled: SampledObject) -> tuple[list[list], float]:
    """Rows (ROW_FIELDS order, strings not yet indexed) of one code object,
    and the CPU seconds the LLVM tools took on it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = isa_oracle.read_code_object(sampled.path)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = []
    for e in found.functions:
        boundaries, classes = isa_oracle.sequence_digests(e)
        values = {**e.fields(), "file": sampled.file, "bundle_index": sampled.bundle_index, "entry": sampled.entry,
                  "target": found.target,
                  "symbol": e.symbol, "boundaries": boundaries, "classes": classes}
        rows.append([values[f] for f in ROW_FIELDS])
    return rows, seconds


def tensile_files_in(sampled: list[SampledObject]) -> list[str]:
    """The TENSILE_FILES this package has (what its document records)."""
    return sorted({Path(one.file).name for one in sampled} & set(TENSILE_FILES))


def encode(package: str, sha256: str, rows: list[list], seconds: dict[str, float], tensile: list[str]) -> dict:
    strings: dict[str, int] = {}
    positions = [ROW_FIELDS.index(f) for f in STRING_FIELDS]
    packed = []
    for row in rows:
        row = list(row)
        for i in positions:
            row[i] = strings.setdefault(row[i], len(strings))
        packed.append(row)
    return {"schema": SCHEMA, "package": package, "sha256": sha256, "every": EVERY,
            "tensile_files": tensile, "llvm_seconds": {k: round(v, 2) for k, v in seconds.items()},
            "fields": list(ROW_FIELDS), "strings": list(strings), "rows": packed}


def load(path: Path) -> dict:
    with gzip.open(path, "rb") as handle:
        document = json.loads(handle.read())
    if document.get("schema") != SCHEMA or tuple(document["fields"]) != ROW_FIELDS:
        raise ValueError(f"{path}: not a {SCHEMA} document")
    return document


def rows(document: dict) -> list[dict]:
    strings = document["strings"]
    out = []
    for row in document["rows"]:
        record = dict(zip(ROW_FIELDS, row))
        for f in STRING_FIELDS:
            record[f] = strings[record[f]]
        out.append(record)
    return out


def write(path: Path, document: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with gzip.GzipFile(tmp, "wb", mtime=0) as handle:
        handle.write(json.dumps(document, separators=(",", ":")).encode())
    os.replace(tmp, path)
