"""Golden outputs: what every command prints and writes, in every format it
has, on a fixed set of inputs, recorded once (scripts/record-golden.py) and
compared byte for byte by tests/unit/test_golden_outputs.py (committed
fixtures) and tests/oracle/test_golden_large_outputs.py (the ROCm libraries and the
matrix's builds).  Written for issue 24: the gate's restructuring must keep
every output byte-identical.

Each scenario runs its steps in order in one working folder, each step a
``python -m spillway`` process (this checkout's package) with a fixed
environment: SOURCE_DATE_EPOCH set, COLUMNS 80 or 120, no GITHUB_* variables
unless the step asks for the github format (then GITHUB_STEP_SUMMARY names a
file of the folder, recorded too).  A step that writes into the folder runs
alone; the steps between two such only read it, and run two at a time
(SPILLWAY_GOLDEN_JOBS=1: one at a time).  Inputs are named by paths relative to the
working folder (copies of the committed fixtures under ``in/``, links to the
unpacked ROCm packages), so no output carries this machine's paths.  A step
records its exit status, its standard output and error, and the files it
names (-o, --junit, baselines): the text itself when it is short, else its
SHA-256 and size.

An HTML page (``--format html``) is recorded twice: its bytes (a digest,
as any long output) and, as ``page_data``, the model the page carries
(``spillway.render.html.read_page_data``) as canonical JSON text (sorted
keys, one member a line), so a failing comparison shows which figure of the
model changed (the page's model is gzip-compressed inside it: its bytes alone
say only that something did).

Three things are masked before outputs are compared: the elapsed time of
``spillway matrix run`` ("matrix run: 12.3 s"), which no two runs share;
the random token of a GitHub ``::stop-commands::TOKEN`` line and of the
``::TOKEN::`` line that resumes the commands (issue 30: fresh in every run),
written ``<token-1>``, ``<token-2>``... in order of appearance; and the
checkout's absolute path, which the matrix's JUnit files carry (their
baseline property) and is written ``<checkout>``.  Any other output naming
the working folder fails the recording.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
RECORDS = DATA / "golden"
EPOCH = "1700000000"
# Outputs up to this size are recorded as text (a diff shows what changed), larger as digests.
TEXT_LIMIT = 4096
# A page's model is recorded as text up to this size (larger, as a digest).
PAGE_TEXT_LIMIT = 65536
# Masked: the only figure that changes from run to run.
_ELAPSED = re.compile(rb"^(matrix run: )[0-9]+\.[0-9] s$", re.MULTILINE)
# Masked: GitHub's stop-commands token (random in every run), on its line and on the line
# resuming the commands; leading blanks as the runner accepts them.
_STOP_COMMANDS = re.compile(rb"^[ \t]*::stop-commands::([0-9A-Za-z_-]{32,})[ \t]*\r?$", re.MULTILINE)


@dataclass
class Step:
    name: str
    argv: list[str]
    columns: int = 120
    files: tuple[str, ...] = ()                   # outputs to record, relative to the working folder
    github: bool = False                          # GITHUB_ACTIONS=true and a job summary file
    cwd: Optional[str] = None                     # relative to the working folder (default: it)
    prepare: Optional[Callable[[Path], None]] = None   # run first, in the working folder
    page: Optional[str] = None                    # an HTML page to read the model of: "-" (stdout) or a file


@dataclass
class Scenario:
    name: str
    tier: str                                     # fast (committed fixtures), rocm, matrix
    setup: Callable[[Path], None]
    steps: list[Step] = field(default_factory=list)


# -- recording an output -------------------------------------------------------------

def mask_stop_commands(data: bytes) -> bytes:
    """Each ``::stop-commands::TOKEN`` line's token, and the ``::TOKEN::`` line
    that ends it, as ``<token-N>`` (N: the order of the stop-commands lines)."""
    for number, token in enumerate(dict.fromkeys(_STOP_COMMANDS.findall(data)), 1):
        mask = b"<token-%d>" % number
        data = re.sub(rb"(?m)^([ \t]*::stop-commands::)" + re.escape(token) + rb"(?=[ \t]*\r?$)",
                      lambda m: m.group(1) + mask, data)
        data = re.sub(rb"(?m)^([ \t]*::)" + re.escape(token) + rb"(::)", lambda m: m.group(1) + mask + m.group(2),
                      data)
    return data


def _entry(data: bytes, work: Path, checkout: Path = REPO, limit: int = TEXT_LIMIT) -> dict:
    """``checkout``: the folder shown as ``<checkout>`` (the repository, or the copy a run was made in)."""
    data = _ELAPSED.sub(rb"\1<seconds> s", data)
    data = mask_stop_commands(data)
    for root in dict.fromkeys((str(checkout), str(checkout.resolve()), str(REPO))):
        data = data.replace(root.encode(), b"<checkout>")
    for folder in {str(work), str(work.resolve())}:
        # An output with this machine's paths would differ in another checkout: not a golden output.
        assert folder.encode() not in data, f"an output names {folder}: {data[:300]!r}"
    if len(data) <= limit:
        try:
            return {"text": data.decode("utf-8")}
        except UnicodeDecodeError:
            pass
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def run_step(work: Path, step: Step, checkout: Path = REPO) -> dict:
    if step.prepare is not None:
        step.prepare(work)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GITHUB_") and k not in ("COLUMNS", "SPILLWAY_TRACEBACK", "SPILLWAY_WRITE_BASELINE")}
    env.update(SOURCE_DATE_EPOCH=EPOCH, COLUMNS=str(step.columns), PYTHONPATH=str(REPO / "checker"),
               PYTHONHASHSEED="0", LC_ALL="C.UTF-8")
    # (one file a step: steps that only read the folder run side by side)
    summary = work / "step-summaries" / f"{step.name}.md"
    summary.unlink(missing_ok=True)
    if step.github:
        summary.parent.mkdir(exist_ok=True)
        summary.write_bytes(b"")
        env.update(GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(summary))
    cwd = work / step.cwd if step.cwd else work
    done = subprocess.run([sys.executable, "-m", "spillway", *step.argv], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=1800)
    record = {"argv": step.argv, "columns": step.columns, "status": done.returncode,
              "stdout": _entry(done.stdout, work, checkout), "stderr": _entry(done.stderr, work, checkout)}
    files = {}
    for name in step.files:
        path = cwd / name
        files[name] = _entry(path.read_bytes(), work, checkout) if path.is_file() else None
    if step.github:
        files["$GITHUB_STEP_SUMMARY"] = _entry(summary.read_bytes(), work, checkout)
    if files:
        record["files"] = files
    if step.page is not None:
        page: Optional[bytes] = done.stdout
        if step.page != "-":
            page = (cwd / step.page).read_bytes() if (cwd / step.page).is_file() else None
        record["page_data"] = None if page is None else _entry(page_data(page), work, checkout, PAGE_TEXT_LIMIT)
    return record


def page_data(page: bytes) -> bytes:
    """The model an HTML page carries, as canonical JSON text (the form a diff reads)."""
    from spillway.render.html import read_page_data

    model = read_page_data(page.decode("utf-8"))
    return (json.dumps(model, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def changes_folder(step: Step) -> bool:
    """A step that writes into the working folder, or prepares it: it runs
    alone, after every step before it."""
    writes = ("-o", "--output", "--junit", "--junit-dir")
    return (step.prepare is not None or step.argv[0] in ("baseline", "matrix")
            or any(arg in writes or arg.startswith(tuple(f"{w}=" for w in writes)) for arg in step.argv))


def _jobs() -> int:
    """Steps at once (each a process of its own): 2 where there are 2 cores, as CI has."""
    return int(os.environ.get("SPILLWAY_GOLDEN_JOBS") or min(2, os.cpu_count() or 1))


def run_scenario(scenario: Scenario, work: Path, checkout: Path = REPO) -> dict[str, dict]:
    """Every step in order; the steps between two that change the folder only
    read it (and print), so they run ``_jobs()`` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    work.mkdir(parents=True, exist_ok=True)
    scenario.setup(work)
    names = [step.name for step in scenario.steps]
    twice = sorted({name for name in names if names.count(name) > 1})
    assert not twice, f"{scenario.name}: steps named twice: {twice}"
    out: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=_jobs()) as pool:
        readers: list[Step] = []
        for step in [*scenario.steps, None]:
            if step is not None and not changes_folder(step):
                readers.append(step)
                continue
            for reader, record in zip(readers, pool.map(lambda s: run_step(work, s, checkout), readers)):
                out[reader.name] = record
            readers = []
            if step is not None:
                out[step.name] = run_step(work, step, checkout)
    return out


def assert_same_outputs(recorded: dict[str, dict], produced: dict[str, dict]) -> None:
    """Step by step: exit status, standard output and error, written files."""
    import pytest

    assert sorted(produced) == sorted(recorded), "the steps are not the recorded ones: record them again"
    differing = [name for name in recorded if produced[name] != recorded[name]]
    if differing:
        def readable(name: str) -> bool:    # a text that changed (a digest says only that something did)
            return any(isinstance(was, dict) and "text" in was and was != produced[name].get(part)
                       for part, was in recorded[name].items() if part != "files")

        shown = []
        for name in sorted(differing, key=lambda name: not readable(name))[:4]:
            was, now = recorded[name], produced[name]
            parts = [part for part in ("status", "stdout", "stderr", "files", "page_data")
                     if was.get(part) != now.get(part)]
            shown.append(f"{name} ({' '.join(was['argv'])}), in {', '.join(parts)}:\n"
                         + "\n".join(_difference(part, was.get(part), now.get(part)) for part in parts)[:2500])
        pytest.fail(f"{len(differing)} of {len(recorded)} outputs changed: {', '.join(differing[:20])}"
                    f"{' ...' if len(differing) > 20 else ''}\n\n" + "\n\n".join(shown))


def _difference(part: str, was, now) -> str:
    """Two recorded texts as a unified diff (a page's model, a long output), anything else as both values."""
    if part == "files" and isinstance(was, dict) and isinstance(now, dict):
        return "\n".join(_difference(f"file {name}", was.get(name), now.get(name))
                         for name in sorted(set(was) | set(now)) if was.get(name) != now.get(name))
    if isinstance(was, dict) and isinstance(now, dict) and "text" in was and "text" in now:
        lines = difflib.unified_diff(was["text"].splitlines(keepends=True), now["text"].splitlines(keepends=True),
                                     f"{part} recorded", f"{part} now", n=2)
        return "".join(lines)
    return f"{part}: recorded {was!r}\n{part}: now      {now!r}"


def record_path(tier: str) -> Path:
    return RECORDS / f"{tier}.json"


def load_records(tier: str) -> dict[str, dict[str, dict]]:
    return json.loads(record_path(tier).read_text())


def dump_records(tier: str, records: dict[str, dict[str, dict]]) -> None:
    RECORDS.mkdir(parents=True, exist_ok=True)
    record_path(tier).write_text(json.dumps(records, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


# -- inputs ------------------------------------------------------------------------------

# Committed fixtures, copied to in/<name> (small: kilobytes each).
FIXTURES = {
    "tensile_bundle.co": "tensile/tensile_bundle.co",             # the multi-note fixture
    "tensile_gfx90a.hsaco": "tensile/tensile_gfx90a.hsaco",
    "tensile_gfx1100.hsaco": "tensile/tensile_gfx1100.hsaco",
    "c23/gfx90a.ccob": "occupancy/clang-23/gfx90a.ccob",
    "c23/gfx1100-wave64.ccob": "occupancy/clang-23/gfx1100-wave64.ccob",
    "c23/gfx942.ccob": "occupancy/clang-23/gfx942.ccob",
    "c24/gfx90a.ccob": "occupancy/clang-24/gfx90a.ccob",
    "c24/gfx1100-wave64.ccob": "occupancy/clang-24/gfx1100-wave64.ccob",
    "c24/gfx942.ccob": "occupancy/clang-24/gfx942.ccob",
    "linked-24.so": "containers/offload_binary/linked-24.so",
    "host.so": "containers/embedded/host.so",
    "libspw.so": "containers/kpack/unsplit/libspw.so",
    "huge-vgpr.co": "regressions/codeobject/next-step-over-a-huge-vgpr-count",
}


def copy_fixtures(work: Path) -> None:
    for name, source in FIXTURES.items():
        target = work / "in" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA / source, target)
    (work / "out").mkdir(exist_ok=True)


C23 = ["in/c23/gfx90a.ccob", "in/c23/gfx1100-wave64.ccob", "in/c23/gfx942.ccob"]
C24 = ["in/c24/gfx90a.ccob", "in/c24/gfx1100-wave64.ccob", "in/c24/gfx942.ccob"]
TENSILE = ["in/tensile_bundle.co", "in/tensile_gfx90a.hsaco", "in/tensile_gfx1100.hsaco"]
ALL_GATES = "scratch,spills,occupancy,vgprs,lds"


def _rewrite_kernel_lines(work: Path, source: str, target: str, indexes: Callable[[int], range],
                          edit: Callable[[dict], None]) -> None:
    """``source``'s kernel lines (one JSON object a line, as spillway writes
    them) at ``indexes(count)`` edited in place, the rest of the file as it
    was, written to ``target``."""
    text = (work / source).read_text()
    head, _, rest = text.partition('  "kernels": [\n')
    body, _, tail = rest.rpartition("\n  ]")
    lines = body.split(",\n")
    for index in indexes(len(lines)):
        line = json.loads(lines[index])
        edit(line)
        lines[index] = "    " + json.dumps(line, separators=(",", ":"))
    (work / target).write_text(head + '  "kernels": [\n' + ",\n".join(lines) + "\n  ]" + tail)


def tighten(source: str, target: str, every: int = 3, count: int = 0) -> Callable[[Path], None]:
    """A baseline with lower figures than the build has: every ``every``-th
    kernel line of ``source`` (version 3) with one VGPR fewer and one wave more
    on each target, and its scratch and spills at zero, written to ``target``; the build
    then fails its check (with the commands that accept it).  ``count``: at
    most that many lines (0: no limit)."""
    def edit(line: dict) -> None:
        if "targets" not in line:           # versions 1 and 2: one target a line, its allowances
            for name in ("scratch", "spills", "vgprs"):
                if name in line["allow"]:
                    line["allow"][name] = 0
            return
        for figures in line["targets"]:
            figures["vgprs"] = max(0, figures["vgprs"] - 1)
            if figures.get("occupancy") is not None:
                figures["occupancy"] += 1
            for name in ("scratch", "dynamic_stack", "vgpr_spills", "sgpr_spills"):
                figures.pop(name, None)

    def prepare(work: Path) -> None:
        _rewrite_kernel_lines(work, source, target, lambda lines: range(0, lines, every)[:count or None], edit)
    return prepare


def tighten_code(source: str, target: str) -> Callable[[Path], None]:
    """A baseline gating the machine code with lower figures than the build
    has: every kernel line of ``source`` (version 4, written with ``--gate
    ...,loop_scratch,agpr_copies``) with one scratch access in loops and one
    AGPR copy fewer where it has any, written to ``target``; the build then
    fails its check on those two metrics only."""
    def edit(line: dict) -> None:
        for figures in line["targets"]:
            for name in ("loop_scratch", "agpr_copies"):
                if figures.get(name):
                    figures[name] -= 1

    def prepare(work: Path) -> None:
        _rewrite_kernel_lines(work, source, target, range, edit)
    return prepare


def copy_file(source: str, target: str) -> Callable[[Path], None]:
    def prepare(work: Path) -> None:
        shutil.copyfile(work / source, work / target)
    return prepare


def _formats(name: str, command: list[str], formats: tuple[str, ...], *, output: Optional[str] = None,
             widths: tuple[int, ...] = (80, 120)) -> list[Step]:
    """One step per format (the table at each width); ``output``: also each
    format written to out/<name>.<format> with -o."""
    steps = []
    for fmt in formats:
        if fmt == "table":
            steps += [Step(f"{name}.table.{w}", command, columns=w) for w in widths]
        elif fmt == "github":
            steps.append(Step(f"{name}.github", [*command, "--format", "github"], github=True))
        else:
            steps.append(Step(f"{name}.{fmt}", [*command, "--format", fmt], page="-" if fmt == "html" else None))
        if output:
            path = f"out/{name}.{fmt}"
            # (an HTML page's model is read from the printed page's step; the file's digest is recorded)
            steps.append(Step(f"{name}.{fmt}.file", [*command, "--format", fmt, "-o", path], columns=80,
                              files=(path,), github=fmt == "github"))
    return steps


# -- the scenarios on committed fixtures ---------------------------------------------------

def _report_steps() -> list[Step]:
    steps = []
    steps += _formats("report.bundle", ["report", "in/tensile_bundle.co", "--all"], ("table", "json", "tsv", "html"),
                      output="report.bundle")
    steps += _formats("report.tensile", ["report", *TENSILE], ("table", "json", "tsv"))
    steps += _formats("report.tensile.all", ["report", *TENSILE, "--all", "--sort", "vgprs"], ("table", "tsv"))
    steps += _formats("report.tensile.full", ["report", *TENSILE, "--all", "--names", "full", "--limit", "5"],
                      ("table",))
    steps += _formats("report.c23", ["report", *C23, "--all"], ("table", "json", "tsv", "html"))
    steps += _formats("report.c23.llvm22", ["report", *C23, "--all", "--occupancy-model", "llvm22",
                                            "--sort", "occupancy"], ("table", "json"))
    steps += _formats("report.c24.filter", ["report", "--all", *C24, "occ_l4*"], ("table", "json"))
    steps += _formats("report.containers", ["report", "in/linked-24.so", "in/libspw.so", "in/host.so",
                                            "--scan-embedded", "--all", "--sort", "file"], ("table", "json", "tsv"))
    steps += _formats("report.huge", ["report", "in/huge-vgpr.co", "--all"], ("table", "json"))
    steps += [Step("report.nothing", ["report", "in/tensile_bundle.co", "no_such_kernel"]),
              Step("report.target", ["report", *TENSILE, "--target", "gfx90a", "--all"], columns=80),
              Step("report.to_json", ["report", *C23, "--json", "-o", "out/c23.report.json"],
                   files=("out/c23.report.json",))]
    return steps


def _gate_steps() -> list[Step]:
    steps = [
        Step("baseline.write", ["baseline", "write", *C23, "-o", "out/base.json", "--note", "clang-23"],
             files=("out/base.json",)),
        Step("baseline.write.again", ["baseline", "write", *C23, "-o", "out/base.json"], files=("out/base.json",)),
        Step("baseline.write.all", ["baseline", "write", *C23, "-o", "out/all.json", "--note", "clang-23 all",
                                    "--gate", ALL_GATES], files=("out/all.json",)),
        Step("baseline.write.spills", ["baseline", "write", *TENSILE, "-o", "out/tensile.json", "--note",
                                       "tensile", "--gate", "scratch,spills", "--record-all"],
             files=("out/tensile.json",)),
        Step("baseline.write.tensile.default", ["baseline", "write", *TENSILE, "-o", "out/tensile-default.json",
                                                "--note", "tensile"], files=("out/tensile-default.json",)),
        Step("baseline.write.allow.new", ["baseline", "write", *TENSILE, "-o", "out/tensile-allow.json",
                                          "--note", "tensile", "--allow", "*", "--reason", "all of them"],
             files=("out/tensile-allow.json",)),
        Step("baseline.write.no_note", ["baseline", "write", *C23, "-o", "out/none.json"]),
        Step("baseline.write.from_report", ["baseline", "write", "out/c23.report.json", "-o", "out/from-report.json",
                                            "--note", "from a report", "--gate", ALL_GATES],
             files=("out/from-report.json",)),
    ]
    tight = tighten("out/all.json", "out/tight.json")
    steps.append(Step("check.tight.prepare", ["check", *C23, "--baseline", "out/tight.json", "--format", "json"],
                      prepare=tight, files=("out/tight.json",)))
    check = ["check", *C23, "--baseline", "out/tight.json"]
    steps += _formats("check.fail", check, ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html"),
                      output="check.fail")
    steps += [Step("check.fail.limit", [*check, "--limit", "2", "--names", "full"], columns=80),
              Step("check.fail.markdown.limit", [*check, "--format", "markdown", "--limit", "3"]),
              Step("check.fail.junit.side", [*check, "--junit", "out/side.xml", "--suite", "golden"],
                   files=("out/side.xml",)),
              Step("check.fail.gate", [*check, "--gate", "vgprs"]),
              Step("check.fail.target", [*check, "--target", "gfx90a"]),
              Step("check.fail.model", [*check, "--occupancy-model", "llvm24", "--format", "json"])]
    steps += _formats("check.pass", ["check", *C23, "--baseline", "out/all.json"],
                      ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html"))
    steps += _formats("check.default", ["check", *C24, "--baseline", "out/base.json"],
                      ("table", "json", "markdown"))
    steps += _formats("check.tensile", ["check", *TENSILE, "--baseline", "out/tensile-default.json"],
                      ("table", "json"))
    tensile = tighten("out/tensile.json", "out/tensile-tight.json", every=1)
    steps.append(Step("check.tensile.tight.prepare", ["check", *TENSILE, "--baseline", "out/tensile-tight.json"],
                      prepare=tensile, files=("out/tensile-tight.json",)))
    steps += _formats("check.tensile.fail", ["check", *TENSILE, "--baseline", "out/tensile-tight.json"],
                      ("table", "json", "markdown", "junit", "github", "tsv"), output="check.tensile.fail")
    steps += _formats("check.tensile.fail", ["check", *TENSILE, "--baseline", "out/tensile-tight.json"], ("sarif",))
    steps += [Step("check.tensile.fail.target", ["check", *TENSILE, "--baseline", "out/tensile-tight.json",
                                                 "--target", "gfx90a", "--format", "markdown"]),
              Step("check.tensile.fail.gate", ["check", *TENSILE, "--baseline", "out/tensile-tight.json",
                                               "--gate", "spills"], columns=80)]
    steps += [Step("check.partial", ["check", *C23, "--baseline", "out/base.json", "--gate", "scratch,spills"]),
              Step("check.missing", ["check", *C23, "--baseline", "out/missing.json"]),
              Step("check.vanished", ["check", "in/c23/gfx90a.ccob", "--baseline", "out/all.json"]),
              Step("check.report_json", ["check", "out/c23.report.json", "--baseline", "out/tight.json",
                                         "--format", "json"]),
              Step("check.not_a_build", ["check", "out/all.json", "--baseline", "out/all.json"])]
    # Updates: refused (kept, with the command that accepts each), loosened with --allow, other targets kept.
    steps += [
        Step("baseline.update.refused", ["baseline", "write", *C23, "-o", "out/upd.json"],
             prepare=copy_file("out/tight.json", "out/upd.json"), files=("out/upd.json",)),
        Step("baseline.update.refused.gate", ["baseline", "write", *C23, "-o", "out/upd2.json", "--gate",
                                              "vgprs,occupancy", "--target", "gfx90a,gfx942"],
             prepare=copy_file("out/tight.json", "out/upd2.json"), files=("out/upd2.json",)),
        Step("baseline.update.allow", ["baseline", "write", *C23, "-o", "out/upd3.json", "--allow", "occ_l12288*",
                                       "--allow", "occ_l4096_w64", "--reason", "golden"],
             prepare=copy_file("out/tight.json", "out/upd3.json"), files=("out/upd3.json",)),
        Step("baseline.update.target", ["baseline", "write", "in/c23/gfx90a.ccob", "-o", "out/upd4.json",
                                        "--target", "gfx90a"],
             prepare=copy_file("out/tight.json", "out/upd4.json"), files=("out/upd4.json",)),
        Step("baseline.update.removed", ["baseline", "write", "in/c23/gfx90a.ccob", "-o", "out/upd5.json"],
             prepare=copy_file("out/all.json", "out/upd5.json"), files=("out/upd5.json",)),
        Step("baseline.update.tensile", ["baseline", "write", *TENSILE, "-o", "out/upd7.json"],
             prepare=copy_file("out/tensile-tight.json", "out/upd7.json"), files=("out/upd7.json",)),
        Step("baseline.update.tensile.allow", ["baseline", "write", *TENSILE, "-o", "out/upd8.json", "--allow",
                                               "tensile_pre*", "--reason", "it's fine: \"measured\""],
             prepare=copy_file("out/tensile-tight.json", "out/upd8.json"), files=("out/upd8.json",)),
        Step("baseline.update.tensile.target", ["baseline", "write", "in/tensile_gfx90a.hsaco", "-o", "out/upd9.json",
                                                "--target", "gfx90a", "--gate", "scratch,spills"],
             prepare=copy_file("out/tensile-tight.json", "out/upd9.json"), files=("out/upd9.json",)),
        Step("baseline.update.c24", ["baseline", "write", *C24, "-o", "out/upd6.json"],
             prepare=copy_file("out/all.json", "out/upd6.json"), files=("out/upd6.json",)),
    ]
    # Targets no longer built (issue 31): the check's other formats, and the update that accepts their removal.
    vanished = ["check", "in/c23/gfx90a.ccob", "--baseline", "out/all.json"]
    steps += [Step(f"check.vanished.{fmt}", [*vanished, "--format", fmt], github=fmt == "github")
              for fmt in ("json", "markdown", "junit", "github", "tsv", "sarif")]
    steps += [Step("baseline.update.removed.accept", ["baseline", "write", "in/c23/gfx90a.ccob", "-o", "out/upd10.json",
                                                      "--allow-removed-target", "gfx1100", "--allow-removed-target",
                                                      "gfx942", "--reason", "golden: gfx90a only"],
                   prepare=copy_file("out/all.json", "out/upd10.json"), files=("out/upd10.json",)),
              Step("check.removed.accepted", ["check", "in/c23/gfx90a.ccob", "--baseline", "out/upd10.json"])]
    return steps


def _compare_steps() -> list[Step]:
    steps = []
    compare = ["compare", *C24, "--against", *C23]
    steps += _formats("compare.c24", compare, ("table", "json", "markdown", "github", "tsv"), output="compare.c24")
    steps += _formats("compare.c24", compare, ("sarif", "html"))
    steps += _formats("compare.c24.all", [*compare, "--all", "--fail-on-worse"], ("table", "markdown", "tsv"))
    steps += [Step("compare.c24.limit", [*compare, "--limit", "3", "--names", "full"], columns=80),
              Step("compare.c24.github.fail", [*compare, "--fail-on-worse", "--format", "github"], github=True),
              Step("compare.c24.llvm22", [*compare, "--occupancy-model", "llvm22", "--format", "json"])]
    steps += _formats("compare.tensile", ["compare", *TENSILE, "--against", *C23], ("table", "json", "markdown",
                                                                                   "tsv"))
    steps += _formats("compare.baseline", ["compare", *C24, "--against", "out/all.json"], ("table", "json",
                                                                                         "markdown"))
    steps += _formats("compare.worse", ["compare", *C23, "--against", "out/tight.json"],
                      ("table", "json", "markdown", "github", "tsv"))
    # (SARIF: each worse kernel located at its line of the baseline given as the old side)
    steps += _formats("compare.worse", ["compare", *C23, "--against", "out/tight.json"], ("sarif", "html"),
                      output="compare.worse")
    steps += _formats("compare.tensile.worse", ["compare", *TENSILE, "--against", "out/tensile-tight.json",
                                                "--fail-on-worse"], ("table", "json", "markdown", "github", "tsv"))
    steps += [Step("compare.worse.limit", ["compare", *C23, "--against", "out/tight.json", "--limit", "4", "--all"],
                   columns=80)]
    steps += [Step("compare.report_json", ["compare", *C24, "--against", "out/c23.report.json", "--format", "json"]),
              Step("compare.same", ["compare", *C23, "--against", *C23]),
              Step("compare.same.all", ["compare", *C23, "--against", *C23, "--all"], columns=80)]
    return steps


def _fast_setup(work: Path) -> None:
    copy_fixtures(work)


# -- the machine code: report --isa, compare --isa, check's code gates, spillway code -------

# A few of the code objects tests/data/isa/build.sh compiles from tests/data/isa/kernels.cpp
# (every kernel there has scratch, loops, AGPR copies or matrix ops on some target), copied
# to in/isa/<name>: gfx90a (MUBUF scratch, AGPRs, MFMA) and gfx1201 (scratch_*, WMMA) from
# two compilers each, to compare; GFX8 (no AGPRs), gfx1100 (wave32) and gfx1250 to report.
ISA_FIXTURES = ("gfx90a.clang22.co", "gfx90a.clang19.co", "gfx1201.clang24.co", "gfx1201.clang22.co",
                "gfx803.clang22.co", "gfx1100.clang22.co", "gfx1250.clang24.co")
ISA_NEW = ["in/isa/gfx90a.clang22.co", "in/isa/gfx1201.clang24.co"]
ISA_OLD = ["in/isa/gfx90a.clang19.co", "in/isa/gfx1201.clang22.co"]
ISA_REPORT = [*ISA_NEW, "in/isa/gfx803.clang22.co", "in/isa/gfx1100.clang22.co", "in/isa/gfx1250.clang24.co"]
CODE_GATES = "scratch,loop_scratch,agpr_copies"


def _isa_setup(work: Path) -> None:
    (work / "in" / "isa").mkdir(parents=True, exist_ok=True)
    for name in ISA_FIXTURES:
        shutil.copyfile(DATA / "isa" / "co" / name, work / "in" / "isa" / name)
    (work / "out").mkdir(exist_ok=True)


def _isa_report_steps() -> list[Step]:
    report = ["report", *ISA_REPORT, "--all", "--isa"]
    steps = _formats("report.isa", report, ("table", "json", "tsv", "html"))
    steps += [Step("report.isa.target", ["report", *ISA_REPORT, "*spill*", "--isa", "--target", "gfx90a,gfx1250",
                                         "--sort", "spills"], columns=120)]
    # Without --isa: the table decodes the rows it prints (those using scratch).
    steps += _formats("report.isa.printed", ["report", *ISA_REPORT], ("table",))
    # --pressure: the live registers of every kernel (issue 40 item 3), the VGPR peak's group (issue 41 item 4).
    steps += _formats("report.pressure", ["report", *ISA_REPORT, "--all", "--pressure"], ("table", "json", "tsv"))
    steps += [Step("report.isa.new.json", ["report", *ISA_NEW, "--isa", "--json", "-o", "out/new.isa.report.json"],
                   files=("out/new.isa.report.json",)),
              Step("report.isa.old.json", ["report", *ISA_OLD, "--isa", "--json", "-o", "out/old.isa.report.json"],
                   files=("out/old.isa.report.json",)),
              Step("report.isa.old.plain", ["report", *ISA_OLD, "--json", "-o", "out/old.report.json"],
                   files=("out/old.report.json",))]
    return steps


def _isa_compare_steps() -> list[Step]:
    compare = ["compare", *ISA_NEW, "--against", *ISA_OLD, "--isa"]
    steps = _formats("compare.isa", compare, ("table", "json", "markdown", "github", "tsv", "sarif", "html"))
    steps += _formats("compare.isa.all", [*compare, "--all", "--fail-on-worse"], ("table",), widths=(120,))
    steps += [Step("compare.isa.reports", ["compare", "out/new.isa.report.json", "--against", "out/old.isa.report.json",
                                           "--isa", "--format", "json"]),
              Step("compare.isa.report_without_isa", ["compare", *ISA_NEW, "--against", "out/old.report.json",
                                                      "--isa"]),
              Step("compare.isa.baseline", ["compare", *ISA_NEW, "--against", "out/code-base.json", "--isa"])]
    # --pressure: where each kernel's VGPR peak moved (issue 41 item 5); a side without live registers: null.
    pressure = ["compare", *ISA_NEW, "--against", *ISA_OLD, "--pressure"]
    steps += _formats("compare.pressure", pressure, ("table", "json", "markdown"))
    steps += [Step("compare.pressure.report_without_pressure", ["compare", *ISA_NEW, "--against",
                                                                "out/old.isa.report.json", "--pressure", "--format",
                                                                "json"])]
    return steps


def _isa_check_steps() -> list[Step]:
    steps = [Step("baseline.write.code", ["baseline", "write", *ISA_NEW, "-o", "out/code-base.json", "--note",
                                          "isa fixtures", "--gate", CODE_GATES], files=("out/code-base.json",)),
             Step("baseline.write.plain", ["baseline", "write", *ISA_OLD, "-o", "out/plain-base.json", "--note",
                                           "isa fixtures, default gate"]),
             Step("check.code.tight.prepare", ["check", *ISA_NEW, "--baseline", "out/code-tight.json", "--format",
                                               "json"], prepare=tighten_code("out/code-base.json",
                                                                             "out/code-tight.json"),
                  files=("out/code-tight.json",))]
    check = ["check", *ISA_NEW, "--baseline", "out/code-tight.json"]
    # (check draws its table on a terminal only: piped, the table format prints the verdict lines at any width)
    steps += _formats("check.code.fail", check, ("table", "json", "markdown", "junit", "github", "tsv", "sarif",
                                                 "html"), widths=(120,))
    steps += [Step("check.code.fail.gate", [*check, "--gate", "agpr_copies"], columns=80),
              Step("check.code.fail.report", ["check", "out/new.isa.report.json", "--baseline", "out/code-tight.json",
                                              "--format", "json"]),
              Step("check.code.report_without_isa", ["check", "out/old.report.json", "--baseline",
                                                     "out/code-base.json"]),
              Step("check.code.gate_not_recorded", ["check", *ISA_OLD, "--baseline", "out/plain-base.json", "--gate",
                                                    "loop_scratch"])]
    return steps


def _code_steps() -> list[Step]:
    mfma = ["code", "in/isa/gfx90a.clang22.co", "mfma_spill"]
    loop = ["code", *ISA_NEW, "spill_in_loop"]
    return [Step("code.mfma", mfma), Step("code.mfma.json", [*mfma, "--json"]),
            Step("code.loop.target", [*loop, "--target", "gfx1201"]),
            Step("code.loop.all.json", [*loop, "--all", "--json", "-o", "out/code.json"], files=("out/code.json",)),
            Step("code.gfx1250", ["code", "in/isa/gfx1250.clang24.co", "spill_in_loop"]),
            Step("code.no_match", ["code", *ISA_NEW, "no_such_kernel"]),
            Step("code.several_kernels", ["code", "in/isa/gfx90a.clang22.co", "spill"]),
            Step("code.several_targets", loop)]


SCENARIOS: list[Scenario] = [
    Scenario("fixtures", "fast", _fast_setup, _report_steps() + _gate_steps() + _compare_steps()),
    Scenario("isa", "fast", _isa_setup,
             _isa_report_steps() + _isa_check_steps() + _isa_compare_steps() + _code_steps()),
]


# -- the ROCm libraries (librocsparse1 7.2.4 against 6.4.3) ---------------------------------

def rocm_setup(new: Path, old: Path) -> Callable[[Path], None]:
    def setup(work: Path) -> None:
        (work / "in").mkdir(parents=True, exist_ok=True)
        (work / "out").mkdir(exist_ok=True)
        for name, path in (("new.so", new), ("old.so", old)):
            link = work / "in" / name
            link.unlink(missing_ok=True)
            link.symlink_to(path)
    return setup


def rocm_scenario(new: Path, old: Path) -> Scenario:
    steps = [Step("report.new.json", ["report", "in/new.so", "--json", "-o", "out/new.report.json"],
                  files=("out/new.report.json",)),
             Step("report.old.json", ["report", "in/old.so", "--json", "-o", "out/old.report.json"],
                  files=("out/old.report.json",))]
    steps += _formats("report.new", ["report", "in/new.so"], ("table", "tsv"))
    steps += [Step("report.new.all", ["report", "in/new.so", "--all", "--sort", "vgprs"], columns=120)]
    steps += [Step("baseline.write.new", ["baseline", "write", "in/new.so", "-o", "out/base.json", "--note",
                                          "librocsparse1 7.2.4"], files=("out/base.json",)),
              Step("baseline.write.new.all", ["baseline", "write", "out/new.report.json", "-o", "out/all.json",
                                              "--note", "librocsparse1 7.2.4", "--gate", ALL_GATES],
                   files=("out/all.json",)),
              Step("baseline.update.old", ["baseline", "write", "in/old.so", "-o", "out/upd.json"],
                   prepare=copy_file("out/base.json", "out/upd.json"), files=("out/upd.json",))]
    # 6.4.3 held to 7.2.4's baseline: fails; the binary for the table, its report for the other formats.
    steps += _formats("check.old.binary", ["check", "in/old.so", "--baseline", "out/base.json"], ("table", "json"))
    steps += _formats("check.old", ["check", "out/old.report.json", "--baseline", "out/base.json"],
                      ("table", "json", "markdown", "junit", "github", "tsv"))
    steps += _formats("check.old.all", ["check", "out/old.report.json", "--baseline", "out/all.json"],
                      ("table", "json", "markdown", "tsv"))
    steps += _formats("compare.binary", ["compare", "in/new.so", "--against", "in/old.so"], ("table", "json"))
    steps += _formats("compare", ["compare", "out/new.report.json", "--against", "out/old.report.json"],
                      ("table", "json", "markdown", "github", "tsv"))
    steps += [Step("compare.baseline", ["compare", "out/old.report.json", "--against", "out/all.json",
                                        "--format", "markdown"])]
    # HTML and SARIF (the report's page: the 5,544 kernels using scratch; compare's: 21,490 rows).
    steps += _formats("report.new", ["report", "in/new.so"], ("html",))
    steps += _formats("check.old", ["check", "out/old.report.json", "--baseline", "out/base.json"], ("sarif", "html"))
    steps += _formats("compare", ["compare", "out/new.report.json", "--against", "out/old.report.json"],
                      ("sarif", "html"))
    steps += _rocm_isa_steps()
    return Scenario("librocsparse1", "rocm", rocm_setup(new, old), steps)


def _rocm_isa_steps() -> list[Step]:
    """The machine code, bounded: decoding all of 7.2.4 costs about 35 CPU-s, one
    target (gfx90a, in both versions: 17,855 and 18,402 kernels) about 5 (a
    FILTER alone still decodes every kernel); compare and check then read the
    reports' JSON (about 1.3 CPU-s a step)."""
    target = ["--target", "gfx90a"]
    steps = [Step("report.new.isa.gfx90a", ["report", "in/new.so", "--isa", *target, "--json", "-o",
                                          "out/new.isa.report.json"], files=("out/new.isa.report.json",)),
             Step("report.old.isa.gfx90a", ["report", "in/old.so", "--isa", *target, "--json", "-o",
                                          "out/old.isa.report.json"], files=("out/old.isa.report.json",))]
    # (its JSON is the file above; a FILTER keeps the table and the page's model short enough to read)
    steps += _formats("report.new.isa", ["report", "in/new.so", "bsrilu0", "--isa", *target], ("table", "html"))
    compare = ["compare", "out/new.isa.report.json", "--against", "out/old.isa.report.json", "--isa"]
    steps += _formats("compare.isa", compare, ("table", "json", "markdown", "github", "tsv", "sarif", "html"))
    steps += [Step("compare.isa.binary", ["compare", "in/new.so", "--against", "in/old.so", "--isa", *target])]
    steps += [Step("baseline.write.code", ["baseline", "write", "out/new.isa.report.json", "-o", "out/code-base.json",
                                           "--note", "librocsparse1 7.2.4 gfx90a", "--gate", CODE_GATES],
                   files=("out/code-base.json",))]
    steps += _formats("check.code", ["check", "out/old.isa.report.json", "--baseline", "out/code-base.json"],
                      ("table", "json", "markdown", "github", "sarif", "html"), widths=(120,))
    return steps


# -- the matrix's builds --------------------------------------------------------------------

# The matrix runs with its own root under build/ (a copy of matrix/cells.toml and
# checks/baselines/, one baseline tightened) and the builds of build/: paths it prints are
# relative to the folder it runs in, so the same bytes come from any checkout.
MATRIX_WORK = "build/golden-matrix"


def matrix_setup(work: Path) -> None:
    (work / "matrix").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "matrix" / "cells.toml", work / "matrix" / "cells.toml")
    baselines = work / "checks" / "baselines"
    if baselines.exists():
        shutil.rmtree(baselines)
    shutil.copytree(REPO / "checks" / "baselines", baselines)


def built_cells(build: Path) -> list[str]:
    return sorted(p.parent.name for p in build.glob("*/libengine.so"))


def matrix_scenario(cells: list[str]) -> Scenario:
    """``cells``: the cells built under build/ (the first three clang ones are compared)."""
    common = ["--build-dir", "..", "--root", "."]
    steps = [Step("check", ["matrix", "check", "--no-build", *common, *cells]),
             Step("check.junit", ["matrix", "check", "--no-build", *common, "--junit-dir", "out/junit", *cells[:2]],
                  files=tuple(f"out/junit/{c}.xml" for c in cells[:2])),
             Step("check.gate", ["matrix", "check", "--no-build", *common, "--gate", "vgprs", *cells[:1]])]
    steps += _formats("summary", ["matrix", "compare", *common], ("table", "json", "markdown"),
                      output="summary")
    steps += _formats("summary.differing", ["matrix", "compare", *common, "--differing"], ("table", "markdown"))
    pair = cells[:2]
    steps += _formats("pair", ["matrix", "compare", *common, *pair], ("table", "json", "markdown"), output="pair")
    steps += [Step("pair.all", ["matrix", "compare", *common, *pair, "--all"]),
              Step("pair.fail", ["matrix", "compare", *common, *pair, "--fail-on-worse", "--format", "json"])]
    steps += _formats("run", ["matrix", "run", "--no-build", *common, *cells], ("table", "json", "markdown",
                                                                                 "github"), output="run")
    steps += [Step("run.differing", ["matrix", "run", "--no-build", *common, "--differing", *cells])]
    # HTML (the kernels x cells page, the pair's compare page) and SARIF (one run per cell).
    steps += _formats("summary", ["matrix", "compare", *common], ("html",), output="summary")
    steps += _formats("pair", ["matrix", "compare", *common, *pair], ("html",))
    steps += _formats("run", ["matrix", "run", "--no-build", *common, *cells], ("sarif", "html"), output="run")
    # One cell's baseline tightened: its check fails, with the command that accepts it.
    failing = cells[0]
    # (At most 20 failures: the matrix names its check.json, an absolute path, past 20.)
    tight = tighten(f"checks/baselines/{failing}.json", f"checks/baselines/{failing}.json", every=1, count=3)
    steps += [Step("check.fail", ["matrix", "check", "--no-build", *common, failing], prepare=tight),
              Step("run.fail", ["matrix", "run", "--no-build", *common, failing, "--format", "github"], github=True),
              Step("run.fail.table", ["matrix", "run", "--no-build", *common, failing], columns=80)]
    steps += _formats("run.fail", ["matrix", "run", "--no-build", *common, failing], ("sarif", "html"))
    return Scenario("matrix", "matrix", matrix_setup, steps)
