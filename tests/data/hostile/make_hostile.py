#!/usr/bin/env python3
"""Hostile inputs: AMDGPU code objects whose kernel names, target ID,
.comment and recorded command line hold what a third party's binary may hold
to command a CI log, a job summary or a terminal (issue 30), in a raw code
object, a wheel, an ar archive and a folder whose member and file names are
hostile too.

    python3 tests/data/hostile/make_hostile.py OUT_FOLDER

writes OUT_FOLDER/old/ and OUT_FOLDER/new/ (two builds of the same kernels:
new uses more scratch, and each side has a kernel the other lacks, so check
fails and compare finds every kind of row), OUT_FOLDER/long.co (one kernel
named with 4 MiB) and OUT_FOLDER/not-utf8.co (a kernel name in the metadata
that is not UTF-8).  Nothing is committed: the tests write these into a
temporary folder (tests/unit/test_hostile_outputs.py).

Every code object is clang-22's fuzz/seeds/second-gfx1100.co (built by
fuzz/seeds/build.sh from tests/data/second_tu.hip; kernel ``axpy``) rebuilt:
its metadata note replaced by one listing the hostile kernels, its symbol
tables given a function symbol and a kernel descriptor symbol for each (at
axpy's code and descriptor, so ``spillway code`` and ``--isa`` decode them),
its .comment replaced and a .GCC.command.line section added.  The sections
and the new section header table are appended; every other byte stays.
"""

from __future__ import annotations

import io
import os
import struct
import sys
import zipfile
from pathlib import Path

import msgpack

REPO = Path(__file__).resolve().parents[3]
SEED = REPO / "fuzz" / "seeds" / "second-gfx1100.co"
SEED_KERNEL = "axpy"

# The kernel names: each what a name must not do in some sink.
NAMES: dict[str, str] = {
    "newline": "hostile_newline\n::error title=forged::a newline starts a forged annotation",
    "carriage_return": "hostile_cr\r::warning::a carriage return starts a line too",
    "command": "::error::hostile command at the start",
    "indented_command": "  \u3000::notice::hostile command after blanks",
    "stop_commands": "::stop-commands::hostiletoken",
    "add_mask": "::add-mask::spillway",
    "legacy": "hostile ##[error]legacy command anywhere in a line",
    "legacy_mask": "hostile ##[add-mask]spillway",
    "one_backtick": "hostile`one backtick",
    "three_backticks": "hostile```three backticks",
    "comment": "hostile<!-- an HTML comment that hides what follows",
    "html_image": "hostile<img src=\"https://evil.example/x.png\">",
    "html_block": "<div>hostile html block</div>",
    "link": "hostile[a link](https://evil.example)",
    "image": "hostile![an image](https://evil.example/y.png)",
    "autolink": "hostile<https://evil.example/autolink> www.evil.example",
    "pipes": "hostile|cell|split",
    "clear_screen": "hostile\x1b[2J\x1b[Hclear screen",
    "window_title": "hostile\x1b]0;window title\x07",
    "hyperlink": "hostile\x1b]8;;https://evil.example\x1b\\OSC 8 link\x1b]8;;\x1b\\",
    "c1": "hostile\x9b2J C1 CSI \x9d0;title\x9c \x85next line",
    "bidi": "hostile\u202eevil\u202c \u2066isolate\u2069 \u200fmark \u061c",
    "separators": "hostile\u2028line\u2029paragraph",
    "delete": "hostile\x7fdelete\x08backspace\ttab\x00nul",
    "emoji_code": "hostile:warning: :x: emoji codes",
    "markup": "hostile[bold red]rich markup[/]",
}
# A kernel only in the old build, one only in the new (added with scratch).
ONLY_OLD = "hostile_removed\n::error::removed"
ONLY_NEW = "hostile_added ##[error]added \x1b]0;added\x07"
TARGET = "amdgcn-amd-amdhsa--gfx1100"
HOSTILE_TARGET = "amdgcn-amd-amdhsa--gfx1100\n::error::target ##[error]target\x1b]0;target\x07\u202e"
COMMENT = "clang version 22 ##[error]comment\x1b]0;comment\x07\n::error::comment"
COMMAND_LINES = {"old": "/usr/bin/clang++ -O3 -c second_tu.hip",
                 "new": "/usr/bin/clang++ -O3 -DHOSTILE=##[error]flag -DT=\x1b]0;flag\x07 -D\u202eX -c second_tu.hip"}
# Member and file names (bytes: a folder's may be anything but "/" and NUL).
FOLDER_FILES = [b"hostile\n::error::file name.co", b"hostile\xff\xfe not UTF-8.co", b"##[error]file.co",
                b"\x1b]0;file title\x07.co", b"\xe2\x80\xaebidi.co"]
AR_MEMBERS = [b"##[error]member.co", b"esc\x1b[2Jmember.co", b"not\xffutf8 member.co", b"\xe2\x80\xaebidi.co"]
ZIP_MEMBERS = ["pkg/hostile\n::error::member.co", "pkg/##[error]member.co", "pkg/\x1b]0;zip\x07.co",
               "pkg/\u202ebidi.co"]
LONG_NAME_BYTES = 4 << 20
NOT_UTF8_NAME = b"hostile\xff\xfe\n::error::not utf8"


def figures(build: str) -> dict:
    """The metadata of one kernel of a build: the new build uses more."""
    old = build == "old"
    return {".vgpr_count": 32 if old else 64, ".sgpr_count": 16, ".agpr_count": 0,
            ".vgpr_spill_count": 2 if old else 6, ".sgpr_spill_count": 0,
            ".private_segment_fixed_size": 16 if old else 64, ".group_segment_fixed_size": 0,
            ".wavefront_size": 32, ".max_flat_workgroup_size": 256, ".uses_dynamic_stack": False,
            ".workgroup_processor_mode": True}


def metadata(names: list[bytes | str], build: str, target: str = TARGET) -> bytes:
    """NT_AMDGPU_METADATA's msgpack: one kernel per name (a bytes name is
    written as a msgpack string holding those bytes, UTF-8 or not)."""
    kernels = []
    for name in names:
        raw = name if isinstance(name, bytes) else name.encode()
        kernels.append({".name": raw, ".symbol": raw + b".kd", **figures(build)})
    document = {"amdhsa.version": [1, 2], "amdhsa.target": target, "amdhsa.kernels": kernels}
    return msgpack.packb(document, use_bin_type=False)


def _note(name: bytes, kind: int, desc: bytes) -> bytes:
    named = name + b"\0"
    return (struct.pack("<III", len(named), len(desc), kind) + named + b"\0" * (-len(named) % 4)
            + desc + b"\0" * (-len(desc) % 4))


def code_object(names: list[bytes | str], build: str = "old", *, target: str = TARGET,
                comment: str | None = COMMENT, command_line: str | None = None) -> bytes:
    """The seed rebuilt with these kernels (module docstring)."""
    elf = bytearray(SEED.read_bytes())
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", elf, 0x3C)
    headers = [list(struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * 64)) for i in range(shnum)]
    shstr = bytes(elf[headers[shstrndx][4]:headers[shstrndx][4] + headers[shstrndx][5]])

    def named(index: int) -> str:
        at = headers[index][0]
        return shstr[at:shstr.index(b"\0", at)].decode()

    by_name = {named(i): i for i in range(shnum)}
    raw_names = [n if isinstance(n, bytes) else n.encode() for n in names]

    def append(content: bytes, align: int = 8) -> int:
        elf.extend(b"\0" * (-len(elf) % align))
        at = len(elf)
        elf.extend(content)
        return at

    def replace(index: int, content: bytes) -> None:
        headers[index][4], headers[index][5] = append(content), len(content)

    replace(by_name[".note"], _note(b"AMDGPU", 32, metadata(names, build, target)))
    if comment is not None:
        replace(by_name[".comment"], b"\0" + comment.encode() + b"\0")
    # Symbols: each kernel's function and descriptor, where axpy's are, in .symtab and .dynsym (spillway
    # finds descriptors in the first table that has any: .dynsym comes first in clang's layout).
    for table_name in (".symtab", ".dynsym"):
        symtab = by_name[table_name]
        strtab = headers[symtab][6]
        table = bytes(elf[headers[symtab][4]:headers[symtab][4] + headers[symtab][5]])
        strings = bytearray(elf[headers[strtab][4]:headers[strtab][4] + headers[strtab][5]])
        seed_symbols = {}
        for entry in struct.iter_unpack("<IBBHQQ", table):
            seed_symbols[bytes(strings[entry[0]:strings.index(b"\0", entry[0])])] = entry
        added = bytearray(table)
        for raw in raw_names:
            for suffix, seed in ((b"", SEED_KERNEL.encode()), (b".kd", SEED_KERNEL.encode() + b".kd")):
                _name, info, other, shndx, value, size = seed_symbols[seed]
                added += struct.pack("<IBBHQQ", len(strings), info, other, shndx, value, size)
                strings += raw + suffix + b"\0"
        replace(symtab, bytes(added))
        replace(strtab, bytes(strings))
    # A recorded command line: a section of its own (SHF_MERGE | SHF_STRINGS), named in a new .shstrtab.
    if command_line is not None:
        at = append(b"\0" + command_line.encode() + b"\0", 1)
        headers.append([len(shstr), 1, 0x30, 0, at, len(command_line.encode()) + 2, 0, 0, 1, 1])
        shstr += b".GCC.command.line\0"
        replace(shstrndx, shstr)
    table_at = append(b"".join(struct.pack("<IIQQQQIIQQ", *h) for h in headers))
    struct.pack_into("<Q", elf, 0x28, table_at)
    struct.pack_into("<H", elf, 0x3C, len(headers))
    return bytes(elf)


def ar_archive(members: list[tuple[bytes, bytes]]) -> bytes:
    """A GNU ar archive (``//`` long-name table) with these member names, as bytes."""
    long_names = b"".join(name + b"/\n" for name, _ in members)
    out = bytearray(b"!<arch>\n")

    def add(raw: bytes, data: bytes) -> None:
        out.extend(raw.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8)
                   + str(len(data)).encode().ljust(10) + b"`\n" + data)
        if len(out) % 2:
            out.extend(b"\n")

    add(b"//", long_names)
    at = 0
    for name, data in members:
        add(b"/%d" % at, data)
        at += len(name) + 2
    return bytes(out)


def zip_archive(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


def kernel_names(build: str) -> list[str]:
    """The kernels of the raw code object of a build."""
    return list(NAMES.values()) + [ONLY_OLD if build == "old" else ONLY_NEW]


def write_build(folder: Path, build: str) -> list[Path]:
    """A build's inputs in ``folder``: a raw code object with every hostile
    kernel, one with the hostile target, a wheel, an ar archive and a folder
    of code objects under hostile names (each holding axpy and one hostile
    kernel); the paths to give spillway."""
    folder.mkdir(parents=True, exist_ok=True)
    line = COMMAND_LINES[build]
    raw = folder / "hostile.co"
    raw.write_bytes(code_object(kernel_names(build), build, command_line=line))
    target = folder / "target.co"
    target.write_bytes(code_object([SEED_KERNEL], build, target=HOSTILE_TARGET, command_line=line))
    names = list(NAMES.values())
    members = [code_object([SEED_KERNEL, names[i]], build, command_line=line) for i in range(4)]
    wheel = folder / "hostile.whl"
    wheel.write_bytes(zip_archive([(ZIP_MEMBERS[i], members[i]) for i in range(4)]))
    archive = folder / "hostile.a"
    archive.write_bytes(ar_archive([(AR_MEMBERS[i], members[i]) for i in range(4)]))
    tree = folder / "tree"
    tree.mkdir(exist_ok=True)
    for i, name in enumerate(FOLDER_FILES):
        path = os.path.join(os.fsencode(tree), name)
        with open(path, "wb") as handle:
            handle.write(code_object([SEED_KERNEL, names[(i + 4) % len(names)]], build, command_line=line))
    return [raw, target, wheel, archive, tree]


def write_long(folder: Path) -> Path:
    """One kernel named with LONG_NAME_BYTES characters, hostile ones among them."""
    name = ("hostile_long ##[error]x\x1b]0;t\x07 " + "L" * LONG_NAME_BYTES)[:LONG_NAME_BYTES]
    path = folder / "long.co"
    path.write_bytes(code_object([name, SEED_KERNEL], "new", comment=None))
    return path


def write_not_utf8(folder: Path) -> Path:
    """A kernel whose metadata name is not UTF-8 (spillway refuses the code object, in one line)."""
    path = folder / "not-utf8.co"
    path.write_bytes(code_object([NOT_UTF8_NAME], "new"))
    return path


def write_all(out: Path) -> dict[str, list[Path]]:
    return {"old": write_build(out / "old", "old"), "new": write_build(out / "new", "new"),
            "long": [write_long(out)], "not_utf8": [write_not_utf8(out)]}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUT_FOLDER")
    for kind, paths in write_all(Path(sys.argv[1])).items():
        print(kind, *[os.fsdecode(p) for p in paths])
