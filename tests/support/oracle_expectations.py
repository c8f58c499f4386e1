"""The committed oracle expectations (tests/data/oracle/*.json.gz) and the
multiset comparison of kernel records.

A document holds what the LLVM-tools pipeline (support.llvm_pipeline) found
in one Debian package, keyed by the package file's SHA-256:

    {"schema": "spillway-oracle/1", "package", "version", "suite", "sha256",
     "tools", "pipeline_seconds", "fields": [...KERNEL_FIELDS],
     "strings": [...], "files": [{"path", "kind", "bundles", "code_objects", "kernels"}],
     "kernels": [[value per field], ...]}

String-valued fields (file, target, compiler, symbol) are indices into
``strings``: rocSPARSE repeats each symbol for 14 targets, so this keeps the
files at a few MB.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Iterable

from .llvm_pipeline import KERNEL_FIELDS, FileResult

SCHEMA = "spillway-oracle/1"
STRING_FIELDS = ("file", "target", "compiler", "symbol")


def expectation_path(out_dir: Path, package: str, sha256: str) -> Path:
    return out_dir / f"{package}-{sha256[:16]}.json.gz"


def encode(files: list[FileResult], **about) -> dict:
    strings: dict[str, int] = {}

    def ref(text: str) -> int:
        return strings.setdefault(text, len(strings))

    rows = []
    for found in files:
        for record in found.records:
            rows.append([ref(record[f]) if f in STRING_FIELDS else record[f] for f in KERNEL_FIELDS])
    return {"schema": SCHEMA, **about, "fields": list(KERNEL_FIELDS), "strings": list(strings),
            "files": [{"path": f.path, "kind": f.kind, "bundles": f.bundles, "code_objects": f.code_objects,
                       "kernels": f.kernels} for f in files],
            "kernels": rows}


def load(path: Path) -> dict:
    with gzip.open(path, "rb") as handle:
        document = json.loads(handle.read())
    if document.get("schema") != SCHEMA or tuple(document["fields"]) != KERNEL_FIELDS:
        raise ValueError(f"{path}: not a {SCHEMA} document with fields {KERNEL_FIELDS}")
    return document


def rows(document: dict) -> list[tuple]:
    """Every kernel record of a document as a tuple in KERNEL_FIELDS order."""
    strings = document["strings"]
    positions = {KERNEL_FIELDS.index(f) for f in STRING_FIELDS}
    return [tuple(strings[v] if i in positions else v for i, v in enumerate(row))
            for row in document["kernels"]]


def as_row(record: dict) -> tuple:
    """A kernel record (spillway's or the pipeline's) as a comparable tuple.
    Code objects v4 have no .workgroup_processor_mode key: spillway reads
    the kernel descriptor instead, the metadata has nothing to compare, so
    that one field is left out (None) for them on both sides."""
    values = [record[f] for f in KERNEL_FIELDS]
    if record["code_object_version"] < 5:
        values[KERNEL_FIELDS.index("workgroup_processor_mode")] = None
    return tuple(values)


def describe(row: tuple, fields=KERNEL_FIELDS) -> str:
    return ", ".join(f"{f}={v!r}" for f, v in zip(fields, row))


def assert_same_kernels(got: Iterable[tuple], want: Iterable[tuple], *, what: str = "spillway",
                        oracle: str = "LLVM tools", show: int = 5, fields=KERNEL_FIELDS) -> None:
    """Equal multisets of kernel records: the same records, each as many
    times, every field equal.  Fails with the count difference and a few
    records on each side."""
    got_count, want_count = Counter(got), Counter(want)
    if got_count == want_count:
        return
    extra = got_count - want_count
    missing = want_count - got_count
    lines = [f"{what}: {sum(got_count.values())} kernel records, {oracle}: {sum(want_count.values())}; "
             f"{sum(extra.values())} only in {what}, {sum(missing.values())} only in {oracle}"]
    for label, side in ((f"only in {what}", extra), (f"only in {oracle}", missing)):
        for row, times in list(side.items())[:show]:
            lines.append(f"  {label} (x{times}): {describe(row, fields)}")
    raise AssertionError("\n".join(lines))


# -- spillway's side: its JSON report, read as a stream ------------------------------

def run_report(paths: list[Path], out: Path) -> None:
    """`spillway report --all --json -o OUT PATHS` (the CLI, as users run it)."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", "--json", "-o", str(out),
                           *map(str, paths)], capture_output=True, text=True)
    assert done.returncode == 0, f"spillway report exited {done.returncode}: {done.stderr[-2000:]}"


class _Stream:
    """Top-level keys of a large JSON object, with the "kernels" array
    yielded one record at a time (a report of a ROCm library is ~600 MB;
    loading it whole would cost several GB)."""

    CHUNK = 1 << 22

    def __init__(self, handle):
        self.handle, self.buffer, self.pos, self.eof = handle, "", 0, False
        self.decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.handle.read(self.CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buffer = self.buffer[self.pos:] + chunk
        self.pos = 0
        return True

    def skip_space(self) -> str:
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._fill():
                raise ValueError("report ends early")

    def expect(self, char: str) -> None:
        if self.skip_space() != char:
            raise ValueError(f"report: expected {char!r} at {self.buffer[self.pos:self.pos + 40]!r}")
        self.pos += 1

    def value(self):
        self.skip_space()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError:
                if not self._fill():
                    raise
                continue
            if end == len(self.buffer) and not self.eof and self._fill():
                continue            # a number may go on in the next chunk
            self.pos = end
            return value

    def items(self):
        """(key, value) of the top-level object; the value of "kernels" is a
        generator of records, to be consumed before the next item."""
        self.expect("{")
        while True:
            if self.skip_space() == "}":
                return
            key = self.value()
            self.expect(":")
            if key == "kernels":
                yield key, self._array()
            else:
                yield key, self.value()
            if self.skip_space() == ",":
                self.pos += 1

    def _array(self):
        self.expect("[")
        while True:
            if self.skip_space() == "]":
                self.pos += 1
                return
            yield self.value()
            if self.skip_space() == ",":
                self.pos += 1


def report_rows(report: Path, root: Path, names: dict | None = None) -> tuple[dict, list[tuple]]:
    """(the report's other top-level keys, every kernel record as a row with
    its file relative to ``root``).  ``names``, if given, collects the set
    of demangled names spillway gave each symbol."""
    prefix = str(root).rstrip("/") + "/"
    files: dict[str, str] = {}
    out, other = [], {}
    with open(report, encoding="utf-8") as handle:
        for key, value in _Stream(handle).items():
            if key != "kernels":
                other[key] = value
                continue
            for record in value:
                file = record["file"]
                record["file"] = files.get(file) or files.setdefault(file, file.removeprefix(prefix))
                if names is not None:
                    names.setdefault(record["symbol"], set()).add(record["name"])
                out.append(as_row(record))
    return other, out


def demangled(symbols: list[str]) -> dict[str, str]:
    """symbol -> GNU c++filt's (binutils) demangling, from one process; the
    symbol itself when it is not a C++ name.  Not llvm-cxxfilt: LLVM's
    demangler spells lambdas in template arguments its own way ("'lambda'(auto)"
    for "{lambda(auto:1)#1}") and, on 3,601 of librocsparse1 7.2.4's 17,129
    symbols (rocPRIM trampoline kernels), prints a different parameter list,
    so the two cannot be compared; binutils 2.40 reads all 17,129 as spillway
    does, through another implementation (libiberty, not libstdc++'s
    __cxa_demangle with spillway's stand-ins for _Float16/bfloat16)."""
    import shutil
    import subprocess
    from .toolchains import require
    text = subprocess.run([shutil.which("c++filt") or require("c++filt")], input="\n".join(symbols) + "\n",
                          check=True, capture_output=True, text=True).stdout
    names = text.split("\n")[:len(symbols)]
    assert len(names) == len(symbols)
    return dict(zip(symbols, names))


def same_demangling(ours: str, llvm: str) -> bool:
    """Equal up to the one spelling demanglers differ in: "> >" or ">>"."""
    def squeeze(text: str) -> str:
        while "> >" in text:
            text = text.replace("> >", ">>")
        return text
    return squeeze(ours) == squeeze(llvm)
