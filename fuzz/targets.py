"""Fuzz targets, one per parser family.

Each family has: ``seeds()`` (inputs built from the committed fixtures in
fuzz/seeds/), ``build(data)`` (the fuzz input -> the bytes spillway reads, with
the outer layers rebuilt valid), ``run(built)`` (what spillway does with them)
and ``mutate(data, rng, raw, max_size)`` (the structure-aware mutator).

Families that wrap inner data take a control byte first: it picks the layout
(CCOB version and method, OffloadBinary version, how many copies, whether to
corrupt the outer header on purpose so the outer parser is fuzzed too).

Invariants checked for every input (fuzz.py): only spillway's own error type
(SpillwayError) escapes, CPU time stays under 0.5 s + 1 s per MB of what was
read, and the process stays under libFuzzer's -rss_limit_mb.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import layers
import mutators

SEEDS = Path(__file__).resolve().parent / "seeds"
MAX_DECOMPRESSED = 32 << 20
SCRATCH = f"/dev/shm/spillway-fuzz-{os.getpid()}" if os.path.isdir("/dev/shm") else f"/tmp/spillway-fuzz-{os.getpid()}"


def _options():
    from spillway.report.reader import ReadOptions
    return ReadOptions(max_decompressed=MAX_DECOMPRESSED)


def code_objects() -> list[bytes]:
    return [p.read_bytes() for p in sorted(SEEDS.glob("*.co"))]


def host_objects() -> list[bytes]:
    return [p.read_bytes() for p in sorted(SEEDS.glob("*.o"))]


def _seed_bundle(cos: list[bytes]) -> bytes:
    entries = [(layers.HOST_ENTRY, b"")]
    for co, target in zip(cos, ("gfx1100", "gfx90a", "gfx942")):
        entries.append((f"hipv4-amdgcn-amd-amdhsa--{target}", co))
    return layers.bundle(entries)


def _write_scratch(data: bytes, suffix: str) -> str:
    path = SCRATCH + suffix
    with open(path, "wb") as out:
        out.write(data)
    return path


def _corrupt(data: bytes, control: int, where: int) -> bytes:
    """Control bit 0x20: overwrite one byte of the first 64 (the outer headers)."""
    if not control & 0x20 or not data:
        return data
    out = bytearray(data)
    out[where % min(64, len(out))] = (out[where % min(64, len(out))] + 1 + (control >> 6)) & 0xFF
    return bytes(out)


# -- the families ----------------------------------------------------------------

def run_metadata(data: bytes) -> None:
    from spillway.formats import metadata
    metadata.read_fast(data)
    document = metadata.decode_resources(data)
    metadata.kernels_from(document)
    metadata.target_of(document)


def run_code_object(data: bytes) -> None:
    from spillway.formats import codeobject
    from spillway.report.reader import kernel_record
    code = codeobject.parse(data)
    for kernel in code.kernels[:64]:
        kernel_record(kernel, code, "fuzz", None)


def run_read_buffer(data: bytes) -> None:
    from spillway.report.reader import read_buffer
    read_buffer(data, "fuzz", _options())


def build_ccob(data: bytes) -> bytes:
    """control, then an uncompressed bundle stream; every bundle in it is
    compressed (copies: control bits 3-4) with the chosen version/method."""
    if len(data) < 2:
        return data
    control, where, inner = data[0], data[1], data[2:]
    version = (control & 3) or 3
    method = (control >> 2) & 1
    copies = 1 + ((control >> 3) & 3)
    parts, position = [], 0
    while position < len(inner):
        parsed = layers.bundle_entries(inner[position:])
        if parsed is None:
            parts.append(inner[position:])
            break
        _, end = parsed
        parts.append(layers.ccob(inner[position:position + end], version, method))
        position += end
        position += len(inner[position:]) - len(inner[position:].lstrip(b"\0"))
    stream = layers.stream(parts * copies, padding=8 if version == 1 else 0)
    return _corrupt(stream, control, where)


def build_offload(data: bytes) -> bytes:
    """control, then a code object; an OffloadBinary record (v1-v3, one or
    two images) in a host ELF's .llvm.offloading section."""
    if len(data) < 2:
        return data
    control, where, image = data[0], data[1], data[2:]
    version = 1 + (control & 3) % 3
    strings = {"triple": "amdgcn-amd-amdhsa", "arch": "gfx1100", "kind": "hip"}
    images = [(1, strings, image)]
    if control & 4:
        images.append((2, dict(strings, arch="gfx90a"), b"BC\xc0\xde" + image[:64]))
    if control & 8:
        images.append((1, {"triple": "x86_64-unknown-linux-gnu", "arch": ""}, image[:32]))
    record = layers.offload_record(version, images)
    record = _corrupt(record, control, where)
    records = record + b"\0" * (-len(record) % 8) + (record if control & 16 else b"")
    return layers.host_elf([(".llvm.offloading", layers.SHT_LLVM_OFFLOADING, records)])


def build_host_elf(data: bytes) -> bytes:
    """control 0xFF: a whole host ELF follows (real objects, raw and section
    table mutations); else a bundle stream put in .hip_fatbin (control bit 0:
    also an RDC __CLANG_OFFLOAD_BUNDLE__ section holding the first entry)."""
    if len(data) < 1:
        return data
    control, inner = data[0], data[1:]
    if control == 0xFF:
        return inner
    sections = [(".text", 1, b"\xc3"), (".hip_fatbin", 1, inner)]
    if control & 1:
        parsed = layers.bundle_entries(inner)
        if parsed and parsed[0]:
            entry_id, payload = parsed[0][-1]
            sections.append((f"__CLANG_OFFLOAD_BUNDLE__{entry_id}", 1, payload))
    if control & 2:
        sections.append((".hip_fatbin", 1, inner))
    return layers.host_elf(sections)


def build_ar(data: bytes) -> bytes:
    """control, where, then framed members; rebuilt as an ar archive.  control
    bit 0: BSD names (#1/N) instead of GNU's // table; bits 1-3: 0 keeps every
    header true, 1-7 writes layers.AR_VALUES[n - 1] (negative, signed, spaced,
    underscore, zero, just past the end, huge) into one field; bit 4: that
    field is the name's number (BSD length, GNU long-name index), not the
    member size; bits 5-6: which negative number (layers.AR_NEGATIVE: minus
    the true one, -60, -61, -1); ``where`` picks the header."""
    if len(data) < 2:
        return layers.ar_archive([])
    control, where = data[0], data[1]
    value = (control >> 1) & 7
    corrupt = (layers.AR_FIELDS[(control >> 4) & 1], layers.AR_VALUES[value - 1], where) if value else None
    return layers.ar_archive(layers.unpack_members(data[2:]), bsd=bool(control & 1), corrupt=corrupt,
                             variant=(control >> 5) & 3)


def build_ar_in_zip(data: bytes) -> bytes:
    """As build_ar, the archive then stored (control bit 7: deflated) in a wheel."""
    deflate = bool(data[:1] and data[0] & 0x80)
    return layers.zip_file([("pkg/lib/libk.a", build_ar(data))], deflate=deflate)


def run_wheel(built: bytes) -> None:
    from spillway.report.reader import read_path
    read_path(_write_scratch(built, ".whl"), _options())


def run_zip(data: bytes) -> None:
    from spillway.report.reader import read_path
    if len(data) < 1:
        return
    control, members = data[0], layers.unpack_members(data[1:])
    built = layers.zip_file(members, deflate=bool(control & 1))
    built = _corrupt(built, control, control >> 1)
    read_path(_write_scratch(built, ".whl"), _options())


def run_report_json(data: bytes) -> None:
    from spillway.gate.reading import read_sources
    path = _write_scratch(data, ".json")
    read_sources([path], _options(), allow_baseline=True)


def run_baseline_json(data: bytes) -> None:
    from spillway.gate.baseline import load_baseline
    from spillway.gate.check import check
    path = _write_scratch(data, ".json")
    baseline = load_baseline(path)
    check({}, baseline, baseline.gate)


def run_names(data: bytes) -> None:
    from spillway.resources import names
    text = data.decode("latin-1")
    demangled = names.demangle(text)
    names.stable_key(text)
    names.short_name(demangled)
    names.display_key(demangled)
    names.demangle.cache_clear()
    names.stable_key.cache_clear()


def run_kpack(data: bytes) -> None:
    """control bit 0: zstd-per-kernel; bit 1: a structural edit of the table
    of contents (seeded by the second byte); bit 5: corrupt a header byte."""
    from spillway.formats import codeobject, kpack
    if len(data) < 2:
        return
    control, where = data[0], data[1]
    members = layers.unpack_members(data[2:])

    def edit(toc):
        if control & 2:
            return mutators.mutate_document(toc, random.Random(where))
        return toc
    built = _corrupt(layers.kpack_archive(members, zstd=bool(control & 1), toc_edit=edit), control, where)
    archive = kpack.parse_archive(memoryview(built))
    for entry in archive.entries[:16]:
        image, _ = kpack.code_object(memoryview(built), archive, entry, max_decompressed=MAX_DECOMPRESSED)
        codeobject.parse(image)


def run_kpack_meta(data: bytes) -> None:
    """The msgpack documents of kpack: a host binary's .rocm_kpack_ref marker
    and a .kpm manifest (either may be what the input holds)."""
    from spillway.errors import SpillwayError
    from spillway.formats import kpack
    failure = None
    for parse in (lambda: kpack.parse_reference(memoryview(data), 0), lambda: kpack.parse_manifest(memoryview(data))):
        try:
            parse()
        except SpillwayError as exc:
            failure = exc
    if failure is not None:
        raise failure


def build_embedded(data: bytes) -> bytes:
    """control, then a code object; placed inside a host ELF's .rodata
    between filler bytes (control picks how many copies and the filler)."""
    control, image = (data[0], data[1:]) if data else (0, b"")
    filler = bytes([control]) * (control & 0x3F)
    copies = 1 + (control >> 6)
    rodata = filler + b"".join(image + filler for _ in range(copies))
    return layers.host_elf([(".text", 1, b"\xc3"), (".rodata", 1, rodata)])


def run_embedded(built: bytes) -> None:
    from spillway.formats import codeobject, embedded
    for image in embedded.find_images(memoryview(built))[:8]:
        codeobject.parse(image.payload)


# -- seeds ------------------------------------------------------------------------

def _report_seed() -> bytes:
    import orjson
    from spillway.report.reader import read_buffer
    from spillway import __version__
    from spillway.constants import REPORT_SCHEMA
    file_record, records = read_buffer(_seed_bundle(code_objects()), "seed.hipfb")
    return orjson.dumps({"schema": REPORT_SCHEMA, "spillway_version": __version__,
                         "files": [file_record], "kernels": records})


def _baseline_seed() -> bytes:
    import orjson
    from spillway.gate.baseline import build, render
    from spillway.gate.kernels import Inputs, aggregate
    records = orjson.loads(_report_seed())["kernels"]
    source = _write_scratch(_seed_bundle(code_objects()), ".hipfb")
    inputs = Inputs(sources=[source], usage=aggregate(records))
    return render(build(inputs, note="fuzz seed", gate=("scratch", "spills", "lds")).baseline)


def _ar_seeds() -> list[bytes]:
    """GNU and BSD archives, true and with one header field corrupted
    (build_ar's control byte: a negative size, a signed BSD name length, a
    long-name index past the table, a huge size)."""
    members = [layers.pack_members([("a.o", host_objects()[0]), ("a_long_member_name.o", co)])
               for co in code_objects()]
    controls = (0x00, 0x01, 0x42, 0x13, 0x1C, 0x0C, 0x81)
    return [bytes([control, where]) + body for body in members[:1] for control, where in
            zip(controls, (0, 1, 2, 1, 2, 0, 0))] + [b"\x00\x00" + body for body in members[1:]]


def _names_seeds() -> list[bytes]:
    out = [b"_ZN7rocprim17ROCPRIM_300400_NS6detail11scan_kernelILb1EEEvPfS2_",
           b"_Z4topkILi32EEvPKfPii", b"_ZN12_GLOBAL__N_16kernelEv", b"_Z1fDF16_DF16b",
           b"_NS" + b"ROCPRIM_" * 64, b"void ns::k<(anonymous namespace)::t>(float const*)"]
    from spillway.formats import metadata
    for co in code_objects():
        meta = layers.metadata_of(co)
        if meta:
            for kernel in metadata.kernels_from(metadata.decode_resources(meta)):
                out.append(kernel.name.encode())
    return out


@dataclass(frozen=True)
class Family:
    name: str
    seeds: Callable[[], list[bytes]]
    build: Callable[[bytes], bytes]
    run: Callable[[bytes], None]
    mutate: Callable

    def one(self, data: bytes) -> int:
        """Build and run one input; returns the size of what was read."""
        built = self.build(data)
        self.run(built)
        return len(built)


# Targets the isa family's control byte picks from (one per decoder family, and a generic one).
ISA_TARGETS = ("gfx803", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx942", "gfx950", "gfx1012", "gfx1030",
               "gfx1100", "gfx1151", "gfx1201", "gfx1250", "gfx10-3-generic")


def run_isa(data: bytes) -> None:
    """control (bits 0-6: target, bit 7: private segment buffer), then machine
    code: the evidence of all of it, of an inner cut and of a range running
    past the end (a status, never an exception)."""
    from spillway.isa import evidence
    if not data:
        return
    control, code = data[0], data[1:]
    target = ISA_TARGETS[(control & 0x7F) % len(ISA_TARGETS)]
    psb = bool(control & 0x80)
    evidence(code, 0, len(code), target, psb)
    if len(code) > 8:
        evidence(code, 4, len(code) - 8, target, psb)
    evidence(code, len(code) // 2, len(code), target, psb)


def run_isa_code_object(data: bytes) -> None:
    """A code object: every kernel's range and evidence."""
    from spillway.isa import evidence, kernel_ranges
    from spillway.resources.targets import target_id_from_flags
    code, kernels = kernel_ranges(data)
    target = target_id_from_flags(int.from_bytes(data[48:52], "little"), 5) if len(data) >= 52 else "gfx900"
    for kernel in kernels:
        evidence(code, kernel.start, kernel.size, target, bool(kernel.private_segment_buffer))


def _isa_seeds() -> list[bytes]:
    from spillway.isa import kernel_ranges
    out = []
    for co in code_objects():
        code, _kernels = kernel_ranges(co)
        for control in (0, 0x81, 3, 0x89, 12):
            out.append(bytes([control]) + bytes(code[:16384]))
    return out


def _identity(data: bytes) -> bytes:
    return data


def _with_control(inner_mutator):
    def mutate(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
        if len(data) < 2 or rng.random() < 0.1:
            head = bytes([rng.randrange(256), rng.randrange(256)])
            return head + (data[2:] if len(data) >= 2 else data)
        return data[:2] + inner_mutator(data[2:], rng, raw, max_size - 2)
    return mutate


def _host_mutate(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    if not data:
        return raw(data, max_size)
    if data[0] == 0xFF:
        return data[:1] + mutators.mutate_payload(data[1:], rng, raw, max_size - 1)
    if rng.random() < 0.05:
        return bytes([rng.randrange(4)]) + data[1:]
    return data[:1] + mutators.mutate_bundle(data[1:], rng, raw, max_size - 1)


def _members_with_control(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    if len(data) < 1 or rng.random() < 0.05:
        return bytes([rng.randrange(256)]) + data[1:]
    return data[:1] + mutators.mutate_members(data[1:], rng, raw, max_size - 1)


def _raw_any(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    return raw(data, max_size)


def _code_object_seeds() -> list[bytes]:
    out = []
    for co in code_objects():
        meta = layers.metadata_of(co)
        out.append(co)
        out.append(layers.code_object_with_metadata(co, meta, extra_notes=2))
        out.append(layers.code_object_with_metadata(co, meta, extra_notes=1, metadata_first=True))
    return out


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("metadata", lambda: [layers.metadata_of(co) for co in code_objects()], _identity, run_metadata,
           mutators.mutate_msgpack),
    Family("codeobject", _code_object_seeds, _identity, run_code_object, mutators.mutate_code_object),
    Family("bundle", lambda: [_seed_bundle(code_objects()),
                              _seed_bundle(code_objects()) + b"\0" * 8 + _seed_bundle(code_objects()[:1])],
           _identity, run_read_buffer, mutators.mutate_bundle),
    Family("ccob", lambda: [bytes([c, 0]) + _seed_bundle(code_objects()) for c in (1, 2, 3, 7, 0x0B)],
           build_ccob, run_read_buffer, _with_control(mutators.mutate_bundle)),
    Family("offload", lambda: [bytes([c, 0]) + co for co in code_objects() for c in (1, 2, 6, 0x1D)],
           build_offload, run_read_buffer, _with_control(mutators.mutate_code_object)),
    Family("host_elf", lambda: [b"\xff" + o for o in host_objects()]
           + [bytes([c]) + _seed_bundle(code_objects()) for c in (0, 1, 2)],
           build_host_elf, run_read_buffer, _host_mutate),
    Family("ar", _ar_seeds, build_ar, run_read_buffer, _with_control(mutators.mutate_members)),
    Family("ar_in_zip", _ar_seeds, build_ar_in_zip, run_wheel, _with_control(mutators.mutate_members)),
    Family("zip", lambda: [bytes([c]) + layers.pack_members([("pkg/lib.so", host_objects()[0]),
                                                             ("pkg/k.co", code_objects()[0])]) for c in (0, 1)],
           _identity, run_zip, _members_with_control),
    Family("report_json", lambda: [_report_seed()], _identity, run_report_json, mutators.mutate_json),
    Family("baseline_json", lambda: [_baseline_seed()], _identity, run_baseline_json, mutators.mutate_json),
    Family("names", _names_seeds, _identity, run_names, _raw_any),
    Family("kpack", lambda: [bytes([c, 0]) + layers.pack_members([(a, co) for a, co in
                                                                   zip(("gfx1100", "gfx90a"), code_objects())])
                             for c in (0, 1, 2, 3)], _identity, run_kpack, _with_control(mutators.mutate_members)),
    Family("kpack_meta", lambda: [__import__("msgpack").packb(d) for d in (
        {"kernel_name": "lib/libx.so", "kpack_search_paths": ["../kpack/x_@GFXARCH@.kpack"]},
        {"format_version": 1, "component_name": "x", "prefix": "lib",
         "kpack_files": {"gfx1100": {"file": "x_gfx1100.kpack", "size": 4096, "kernel_count": 3}}})],
           _identity, run_kpack_meta, mutators.mutate_msgpack),
    Family("embedded", lambda: [bytes([c]) + co for co in code_objects() for c in (0, 7, 0x41)],
           build_embedded, run_embedded,
           lambda d, rng, raw, n: d[:1] + mutators.mutate_code_object(d[1:], rng, raw, n - 1)),
    Family("isa", _isa_seeds, _identity, run_isa,
           lambda d, rng, raw, n: d[:1] + raw(d[1:], n - 1)),
    Family("isa_codeobject", code_objects, _identity, run_isa_code_object, mutators.mutate_code_object),
    Family("any", lambda: host_objects() + code_objects() + [_seed_bundle(code_objects()), b"!<arch>\n"],
           _identity, run_read_buffer, _raw_any),
)}


def write_seeds(family: Family, directory: Path) -> int:
    import hashlib
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for seed in family.seeds():
        (directory / ("seed-" + hashlib.sha1(seed).hexdigest()[:16])).write_bytes(seed)
        count += 1
    return count
