"""Independent oracles: LLVM's own tools read the same binaries.

``llvm-objdump --offloading`` extracts every bundle entry of a host file
(including compressed bundles), ``llvm-readelf --notes`` prints the metadata
as YAML, ``llvm-readelf -h`` the ABI version and ``-p .comment`` the producer.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from .llvm_pipeline import COV_FROM_ABI, DIRECT_FIELDS
from .llvm_pipeline import _DOCUMENT as METADATA_DOCUMENT
from .llvm_pipeline import target_from_flags, yaml_document
from .toolchains import require

TOOLS_VERSION = 22


def tool(name: str) -> str:
    return require(f"{name}-{TOOLS_VERSION}")


def extract(host_file: Path, out_dir: Path) -> list[tuple[int, str, Path]]:
    """Every device entry as (bundle index, entry id, file)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    link = out_dir / host_file.name
    if not link.exists():
        link.symlink_to(host_file.resolve())
    subprocess.run([tool("llvm-objdump"), "--offloading", str(link)], cwd=out_dir, check=True,
                   capture_output=True)
    entries = []
    prefix = host_file.name + "."
    for path in sorted(out_dir.iterdir()):
        if not path.name.startswith(prefix) or path == link:
            continue
        index, entry_id = path.name[len(prefix):].split(".", 1)
        if entry_id.startswith("host-"):
            continue
        entries.append((int(index), entry_id, path))
    return entries


def extract_with_bundler(host_object: Path, out_dir: Path) -> list[tuple[int, str, Path]]:
    """Device entries of a single-bundle object via llvm-objcopy and
    clang-offload-bundler (which decompress CCOB bundles themselves).
    llvm-objdump-22 --offloading misreads compressed bundles in linked
    files (it wrote x86 bytes as the gfx1100 entry when tried), so it is not
    the oracle for those."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fatbin = out_dir / "fatbin.bin"
    subprocess.run([tool("llvm-objcopy"), f"--dump-section=.hip_fatbin={fatbin}", str(host_object),
                    str(out_dir / "discard.o")], check=True, capture_output=True)
    listed = subprocess.run([tool("clang-offload-bundler"), "--list", "--type=o", f"--input={fatbin}"],
                            check=True, capture_output=True, text=True).stdout.split()
    entries = []
    for entry_id in listed:
        if entry_id.startswith("host-"):
            continue
        output = out_dir / entry_id.replace(":", "_")
        subprocess.run([tool("clang-offload-bundler"), "--unbundle", "--type=o", f"--input={fatbin}",
                        f"--output={output}", f"--targets={entry_id}"], check=True, capture_output=True)
        entries.append((0, entry_id, output))
    return entries


def readelf_documents(code_object: Path) -> list[dict]:
    """EVERY NT_AMDGPU_METADATA document llvm-readelf prints, in order, parsed
    with PyYAML.  Tensile links one code object per kernel into one file,
    which leaves one metadata note (one document) per kernel."""
    text = subprocess.run([tool("llvm-readelf"), "--notes", str(code_object)], check=True,
                          capture_output=True, text=True).stdout
    documents = [yaml_document(m.group(1)) for m in METADATA_DOCUMENT.finditer(text)]
    assert documents, f"llvm-readelf --notes shows no NT_AMDGPU_METADATA document in {code_object}"
    return documents


def readelf_metadata(code_object: Path) -> dict:
    """All metadata documents of a code object as one: the first document's
    keys, with ``amdhsa.kernels`` holding the kernels of every document."""
    documents = readelf_documents(code_object)
    merged = {k: v for k, v in documents[0].items() if k != "amdhsa.kernels"}
    merged["amdhsa.kernels"] = [k for d in documents for k in d.get("amdhsa.kernels") or []]
    targets = {d.get("amdhsa.target") for d in documents}
    assert len(targets) == 1, f"{code_object}: metadata documents disagree on the target: {targets}"
    return merged


def readelf_header(code_object: Path) -> tuple[int, str]:
    """ABI version and the target ID spelled from llvm-readelf's Flags line."""
    text = subprocess.run([tool("llvm-readelf"), "-h", str(code_object)], check=True,
                          capture_output=True, text=True).stdout
    abi = int(re.search(r"ABI Version:\s+(\d+)", text).group(1))
    return abi, target_from_flags(re.search(r"Flags:\s+(.*)", text).group(1), abi)


def readelf_comment(code_object: Path) -> list[str]:
    text = subprocess.run([tool("llvm-readelf"), "-p", ".comment", str(code_object)],
                          capture_output=True, text=True).stdout
    return [m.group(1).strip() for m in re.finditer(r"\[\s*[0-9a-f]+\]\s+(.*)", text)]


def expected_records(code_object: Path) -> list[dict]:
    """One record per kernel of every metadata document (a multiset: a name
    may repeat), with the fields llvm-readelf shows, in report terms."""
    document = readelf_metadata(code_object)
    abi, flags_target = readelf_header(code_object)
    target = document.get("amdhsa.target", "")
    out = []
    for kernel in document["amdhsa.kernels"]:
        record = {"symbol": kernel[".name"], "code_object_version": COV_FROM_ABI[abi]}
        # Non-clang producers (Mojo) write a four-part triple without "--":
        # the target then comes from the ELF flags, as spillway does.
        record["target"] = target.split("--", 1)[1] if "--" in target else flags_target
        for field, key in DIRECT_FIELDS.items():
            value = kernel.get(key)
            if value is None:
                value = {"vgpr_spill_count": 0, "sgpr_spill_count": 0,
                         "uses_dynamic_stack": False}.get(field)
            if field == "workgroup_processor_mode" and value is not None:
                value = bool(value)
            record[field] = value
        out.append(record)
    return out
