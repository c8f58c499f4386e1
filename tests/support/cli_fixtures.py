"""Synthetic report documents for the command-line tests: spillway reads a
report JSON like a binary, so checks and comparisons get exact numbers."""

from __future__ import annotations

import json
from pathlib import Path

from spillway.resources.names import demangle, stable_key


def kernel(symbol: str, *, target: str = "gfx1100", scratch: int = 0, spills: int = 0, vgprs: int = 32,
           occupancy: int = 16, file: str = "lib.so") -> dict:
    return {"file": file, "bundle_index": 0, "target": target, "code_object_version": 6,
            "compiler": "clang version 22", "symbol": symbol, "name": demangle(symbol), "key": stable_key(symbol),
            "vgpr_count": vgprs, "agpr_count": None, "sgpr_count": 16, "vgpr_spill_count": spills,
            "sgpr_spill_count": 0, "private_segment_fixed_size": scratch, "uses_dynamic_stack": False,
            "group_segment_fixed_size": 0, "wavefront_size": 32, "max_flat_workgroup_size": 256,
            "workgroup_processor_mode": True, "occupancy": occupancy, "occupancy_limit": "hardware",
            "scratch_cause": "spill" if spills else "private" if scratch else "none"}


def report(path: Path, kernels: list[dict]) -> Path:
    from spillway.constants import REPORT_SCHEMA

    files = sorted({k["file"] for k in kernels})
    path.write_text(json.dumps({"schema": REPORT_SCHEMA, "spillway_version": "0", "kernels": kernels,
                                "files": [{"path": f, "kind": "ELF", "bundles": 1, "code_objects": 1,
                                           "kernels": 1, "bitcode_only": [], "skipped_without_device_code": 0,
                                           "spirv_entries": 0} for f in files]}))
    return path
