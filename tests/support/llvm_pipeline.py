"""The LLVM-tools pipeline: an oracle that does not use spillway's walker.

For every regular file under a path (symlinks are not followed, as spillway
does not follow them either):

* a host ELF: ``llvm-readelf -S`` gives the file offset and size of its
  ``.hip_fatbin`` section; the section is cut into its bundles from the
  bundle headers' own size fields (an uncompressed
  ``__CLANG_OFFLOAD_BUNDLE__`` bundle ends where the furthest entry of its
  entry table ends; a ``CCOB`` v2/v3 bundle carries its total size; a v1
  one runs up to the next magic), with alignment padding (zero bytes)
  between bundles;
* a file that is itself a bundle (Tensile's ``.co`` files are compressed
  bundles): one bundle, the whole file;
* an AMDGPU code object (``.hsaco``): read directly.

Each bundle is written to a file and unbundled with
``clang-offload-bundler-22 --list`` / ``--unbundle`` (LLVM 22 decompresses
CCOB v3 itself); each code object is read with
``llvm-readelf-22 -h -p .comment --notes`` and EVERY ``NT_AMDGPU_METADATA``
document it prints is parsed as YAML (Tensile code objects hold one
document per kernel).  Only byte-level framing is hand-written here (the
bundle headers' size fields and magic numbers); everything about the code
objects comes from LLVM's own tools.

Kernel records use spillway's report field names (the AMDGPU metadata keys
without the dot) so the two can be compared field by field.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import yaml

from .toolchains import require

TOOLS_VERSION = 22
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
OFFLOAD_SECTION = ".hip_fatbin"
COV_FROM_ABI = {1: 3, 2: 4, 3: 5, 4: 6}
READELF_BATCH = 64          # code objects per llvm-readelf process
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Report field -> metadata key, for the fields the metadata holds directly.
DIRECT_FIELDS = {
    "vgpr_count": ".vgpr_count", "agpr_count": ".agpr_count", "sgpr_count": ".sgpr_count",
    "vgpr_spill_count": ".vgpr_spill_count", "sgpr_spill_count": ".sgpr_spill_count",
    "private_segment_fixed_size": ".private_segment_fixed_size",
    "uses_dynamic_stack": ".uses_dynamic_stack",
    "group_segment_fixed_size": ".group_segment_fixed_size", "wavefront_size": ".wavefront_size",
    "max_flat_workgroup_size": ".max_flat_workgroup_size",
    "workgroup_processor_mode": ".workgroup_processor_mode",
}
# Keys LLVM leaves out when they are zero/false.
ABSENT_MEANS = {"vgpr_spill_count": 0, "sgpr_spill_count": 0, "uses_dynamic_stack": False}
# Every field of a kernel record the LLVM tools show, in a fixed order.
KERNEL_FIELDS = ("file", "bundle_index", "target", "code_object_version", "compiler", "symbol",
                 *DIRECT_FIELDS)


class OracleError(Exception):
    """The pipeline met something it cannot frame (the oracle's own error)."""


def tool(name: str) -> str:
    return require(f"{name}-{TOOLS_VERSION}")


# -- framing: where each bundle starts and ends ------------------------------------------

@dataclass(frozen=True)
class Bundle:
    index: int          # position in the offload section
    offset: int         # offset in the section
    size: int           # bytes
    format: str         # "plain" or "ccob-v1/2/3"


def _next_magic(data, start: int) -> int:
    found = [i for i in (data.find(BUNDLE_MAGIC, start), data.find(CCOB_MAGIC, start)) if i >= 0]
    return min(found) if found else len(data)


def bundle_size(data, pos: int) -> tuple[int, str]:
    """Size of the bundle at ``pos`` from its own header."""
    if data[pos:pos + len(BUNDLE_MAGIC)] == BUNDLE_MAGIC:
        (entries,) = struct.unpack_from("<Q", data, pos + 24)
        cursor, end = pos + 32, pos + 32
        for _ in range(entries):
            offset, size, id_size = struct.unpack_from("<QQQ", data, cursor)
            cursor += 24 + id_size
            end = max(end, pos + offset + size)
        return max(end, cursor) - pos, "plain"
    if data[pos:pos + 4] == CCOB_MAGIC:
        (version,) = struct.unpack_from("<H", data, pos + 4)
        if version == 1:
            return _next_magic(data, pos + 4) - pos, "ccob-v1"
        if version == 2:
            return struct.unpack_from("<I", data, pos + 8)[0], "ccob-v2"
        if version == 3:
            return struct.unpack_from("<Q", data, pos + 8)[0], "ccob-v3"
        raise OracleError(f"CCOB version {version} at offset {pos}")
    raise OracleError(f"no bundle magic at offset {pos}: {bytes(data[pos:pos + 8])!r}")


def cut_bundles(data) -> list[Bundle]:
    """Every bundle of an offload section, in order."""
    out, pos = [], 0
    while pos < len(data):
        size, fmt = bundle_size(data, pos)
        if size <= 0 or pos + size > len(data):
            raise OracleError(f"bundle at offset {pos} claims {size} bytes, section has {len(data) - pos}")
        out.append(Bundle(len(out), pos, size, fmt))
        pos += size
        while pos < len(data) and data[pos] == 0:       # alignment padding
            pos += 1
    return out


def cut_bundles_prefix(data) -> Bundle:
    """The first bundle of a section, from a prefix of it that holds it."""
    size, fmt = bundle_size(data, 0)
    if size <= 0 or size > len(data):
        raise OracleError(f"first bundle claims {size} bytes, {len(data)} given")
    return Bundle(0, 0, size, fmt)


_SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s", re.M)


def offload_sections(path: Path) -> list[tuple[int, int]]:
    """(file offset, size) of each .hip_fatbin section, from llvm-readelf -S."""
    text = subprocess.run([tool("llvm-readelf"), "-S", "--wide", str(path)], check=True,
                          capture_output=True, text=True).stdout
    return [(int(off, 16), int(size, 16)) for name, kind, off, size in _SECTION.findall(text)
            if name == OFFLOAD_SECTION and kind != "NOBITS"]


# -- LLVM's tools ----------------------------------------------------------------------

def unbundle(bundle_file: Path, out_dir: Path, bundler: str | None = None) -> list[tuple[str, Path]]:
    """Device entries of one bundle file as (entry id, code object file);
    ``bundler``: another clang-offload-bundler than LLVM 22's."""
    bundler = bundler or tool("clang-offload-bundler")
    listed = subprocess.run([bundler, "--list", "--type=o", f"--input={bundle_file}"],
                            check=True, capture_output=True, text=True).stdout.split()
    device = [entry for entry in listed if not entry.startswith("host-")]
    if not device:
        return []
    outputs = [out_dir / f"{bundle_file.stem}.{n}.co" for n in range(len(device))]
    subprocess.run([bundler, "--unbundle", "--type=o", f"--input={bundle_file}",
                    f"--targets={','.join(device)}", *[f"--output={o}" for o in outputs]],
                   check=True, capture_output=True)
    return list(zip(device, outputs))


def library_code_objects(library: Path, work: Path,
                         unbundle_one: Callable[[Path, Path], list[tuple[str, Path]]] = unbundle) -> list[Path]:
    """The device code objects of a host library, bundle by bundle of each
    offload section, cut into ``work`` by LLVM's tools (``unbundle_one``: how
    one bundle file is unbundled; empty entries left out)."""
    work.mkdir(parents=True, exist_ok=True)
    data = library.read_bytes()
    found = []
    for offset, size in offload_sections(library):
        section = data[offset:offset + size]
        for bundle in cut_bundles(section):
            bundle_file = work / f"{offset:x}-{bundle.index}.bundle"
            bundle_file.write_bytes(section[bundle.offset:bundle.offset + bundle.size])
            found += [path for _entry, path in unbundle_one(bundle_file, work) if path.stat().st_size]
    return found


@dataclass
class CodeObjectView:
    """What llvm-readelf shows of one code object."""
    abi_version: int
    flags_target: str
    comments: list[str]
    documents: list[dict] = field(default_factory=list)

    @property
    def compiler(self) -> str:
        return "; ".join(dict.fromkeys(c for c in self.comments if c and not c.startswith("Linker:")))

    def target(self) -> str:
        targets = {d["amdhsa.target"] for d in self.documents if d.get("amdhsa.target")}
        if len(targets) > 1:
            raise OracleError(f"metadata documents disagree on the target: {sorted(targets)}")
        target = targets.pop() if targets else ""
        # Non-clang producers (Mojo) write a triple without "--": the ELF flags decide.
        return target.split("--", 1)[1] if "--" in target else self.flags_target


_ABI = re.compile(r"^\s*ABI Version:\s+(\d+)", re.M)
_FLAGS = re.compile(r"^\s*Flags:\s+(.*)$", re.M)
_COMMENT = re.compile(r"^\[\s*[0-9a-f]+\]\s+(.*)$", re.M)
_DOCUMENT = re.compile(r"^\s*---\n(.*?)^\.\.\.$", re.M | re.S)


def target_from_flags(line: str, abi: int) -> str:
    """The target ID spelled from llvm-readelf's ``Flags:`` value."""
    tokens = [t.strip() for t in line.split(",")][1:]
    processor, features = tokens[0], []
    for token in tokens[1:]:
        if token in ("xnack", "sramecc"):          # V3: the bit means on; V4+: "any", no feature
            if abi == 1:
                features.append(token + "+")
        elif token.endswith(("+", "-")):
            features.append(token)
    return ":".join([processor, *sorted(features)])


def parse_readelf(text: str, *, full_yaml: bool = False) -> CodeObjectView:
    """One code object's part of ``llvm-readelf -h -p .comment --notes``."""
    abi = _ABI.search(text)
    flags = _FLAGS.search(text)
    if not abi or not flags:
        raise OracleError("llvm-readelf printed no ELF header")
    comment_part = ""
    if "String dump of section '.comment':" in text:
        comment_part = text.split("String dump of section '.comment':", 1)[1].split("Displaying notes", 1)[0]
    view = CodeObjectView(int(abi.group(1)), target_from_flags(flags.group(1), int(abi.group(1))),
                          [m.strip() for m in _COMMENT.findall(comment_part)])
    notes = text.split("Displaying notes found in:", 1)[1] if "Displaying notes found in:" in text else ""
    parse = yaml_document if full_yaml else scalar_document
    for match in _DOCUMENT.finditer(notes):
        view.documents.append(parse(match.group(1)))
    return view


def yaml_document(text: str) -> dict:
    """A metadata document parsed by PyYAML (libyaml): the reference, but
    about 1 MB/s, an hour for a ROCm library."""
    return yaml.load(text, Loader=_LOADER) or {}


_PLAIN_INT = re.compile(r"-?[0-9]+")
_TOP = re.compile(r"([A-Za-z0-9_.]+):(?: +(.*))?")
_KERNEL_KEY = re.compile(r"(  - |    )(\.[A-Za-z0-9_]+):(?: +(.*))?")


def _scalar(text: str):
    if _PLAIN_INT.fullmatch(text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return yaml.load(text, Loader=_LOADER)   # quoted or unusual scalars: let libyaml decide


def scalar_document(text: str) -> dict:
    """The scalar keys of a metadata document (top level and per kernel;
    nested lists such as .args are left out), read line by line from the
    block layout LLVM's YAML writer prints.  Hand-written for speed (50x
    PyYAML); tests/oracle/test_llvm_pipeline.py checks it against
    yaml_document on real documents."""
    document: dict = {}
    kernels = None
    for line in text.splitlines():
        if not line or line[0] != " ":
            match = _TOP.fullmatch(line)
            if not match:
                raise OracleError(f"unexpected metadata line {line[:80]!r}")
            key, value = match.groups()
            if key == "amdhsa.kernels":
                kernels = document[key] = []
            elif value is not None and value[0] not in "[{":
                document[key] = _scalar(value)
            continue
        match = _KERNEL_KEY.fullmatch(line)
        if match is None or kernels is None:
            continue                                   # nested: deeper indentation
        lead, key, value = match.groups()
        if lead == "  - ":
            kernels.append({})
        if value is not None and value[0] not in "[{":      # flow collections (".args: []") are not scalars
            kernels[-1][key] = _scalar(value)
    return document


def readelf(code_objects: list[Path]) -> list[CodeObjectView]:
    """Views of several code objects from one llvm-readelf process."""
    if not code_objects:
        return []
    done = subprocess.run([tool("llvm-readelf"), "-h", "-p", ".comment", "--notes",
                           *[str(p) for p in code_objects]], capture_output=True, text=True)
    text = done.stdout
    if len(code_objects) == 1:
        parts = [text]
    else:
        parts = re.split(r"^File: .*$", text, flags=re.M)[1:]
    if len(parts) != len(code_objects):
        raise OracleError(f"llvm-readelf printed {len(parts)} files for {len(code_objects)}: {done.stderr[:500]}")
    return [parse_readelf(part) for part in parts]


def kernel_records(view: CodeObjectView, file: str, bundle_index: int | None) -> list[dict]:
    """One record per kernel of every metadata document, in report terms."""
    target = view.target()
    out = []
    for document in view.documents:
        for kernel in document.get("amdhsa.kernels") or []:
            record = {"file": file, "bundle_index": bundle_index, "target": target,
                      "code_object_version": COV_FROM_ABI[view.abi_version], "compiler": view.compiler,
                      "symbol": kernel[".name"]}
            for name, key in DIRECT_FIELDS.items():
                value = kernel.get(key, ABSENT_MEANS.get(name))
                if name in ("workgroup_processor_mode", "uses_dynamic_stack") and value is not None:
                    value = bool(value)
                record[name] = value
            out.append(record)
    return out


# -- whole files -----------------------------------------------------------------------

@dataclass
class FileResult:
    path: str                   # as given to the records (relative to the walked root)
    kind: str                   # "host", "bundle", "code object"
    bundles: int = 0
    code_objects: int = 0
    records: list[dict] = field(default_factory=list)

    @property
    def kernels(self) -> int:
        return len(self.records)


def classify(path: Path) -> str | None:
    with open(path, "rb") as handle:
        head = handle.read(24)
    if head.startswith(ELF_MAGIC) and len(head) >= 20:
        if struct.unpack_from("<H", head, 18)[0] == EM_AMDGPU:
            return "code object"
        return "host"
    if head.startswith(BUNDLE_MAGIC) or head.startswith(CCOB_MAGIC):
        return "bundle"
    return None


def _read_code_objects(objects: list[tuple[Path, int | None]], display: str) -> list[dict]:
    records = []
    for start in range(0, len(objects), READELF_BATCH):
        batch = objects[start:start + READELF_BATCH]
        for (path, bundle_index), view in zip(batch, readelf([p for p, _ in batch])):
            records.extend(kernel_records(view, display, bundle_index))
    return records


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == ELF_MAGIC


def read_bundles(data, bundles: Iterable[Bundle], display: str, work: Path, *,
                 bundle_index_of=lambda b: b.index, jobs: int = 1) -> tuple[int, list[dict]]:
    """Unbundle and read the given bundles of ``data``: (code objects, records)."""
    def one(bundle: Bundle) -> tuple[int, list[dict]]:
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            bundle_file = Path(tmp) / f"bundle{bundle.index}.bin"
            bundle_file.write_bytes(data[bundle.offset:bundle.offset + bundle.size])
            entries = [(p, bundle_index_of(bundle)) for _, p in unbundle(bundle_file, Path(tmp))
                       if p.stat().st_size and _is_elf(p)]
            return len(entries), _read_code_objects(entries, display)
    work.mkdir(parents=True, exist_ok=True)
    code_objects, records = 0, []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for count, found in pool.map(one, list(bundles)):
            code_objects += count
            records.extend(found)
    return code_objects, records


def read_file(path: Path, display: str, work: Path, *, every: int = 1, jobs: int = 1) -> FileResult | None:
    """Everything the LLVM tools find in one file; ``every`` > 1 keeps only
    bundles whose index is a multiple of it (a sample)."""
    kind = classify(path)
    if kind is None:
        return None
    result = FileResult(display, kind)
    if kind == "code object":
        result.code_objects = 1
        result.records = _read_code_objects([(path, None)], display)
        return result
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if kind == "bundle":
            bundles = [Bundle(0, 0, len(data), "file")]
        else:
            bundles = []
            for offset, size in offload_sections(path):
                section = memoryview(data)[offset:offset + size]
                first = len(bundles)
                bundles += [Bundle(first + b.index, offset + b.offset, b.size, b.format)
                            for b in cut_bundles(section)]
                section.release()
            if not bundles:
                return None
        result.bundles = len(bundles)
        chosen = [b for b in bundles if b.index % every == 0]
        result.code_objects, result.records = read_bundles(data, chosen, display, work, jobs=jobs)
    return result


def walk(root: Path) -> Iterator[tuple[Path, str]]:
    """Regular files under ``root`` (or ``root`` itself), sorted, as (path,
    name relative to ``root``); symlinks are not followed."""
    if root.is_file():
        yield root, root.name
        return
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(directory) / name
            if path.is_symlink() or not path.is_file():
                continue
            yield path, str(path.relative_to(root))


def read_tree(root: Path, work: Path, *, every: int = 1, jobs: int = 1,
              only=lambda display: True) -> list[FileResult]:
    """FileResults for every file with device code under ``root``."""
    out = []
    for path, display in walk(root):
        if not only(display):
            continue
        found = read_file(path, display, work, every=every, jobs=jobs)
        if found is not None and (found.bundles or found.code_objects):
            out.append(found)
    return out
