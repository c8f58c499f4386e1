"""Every command in every format on binaries built to attack what reads
spillway's output (issue 30; tests/data/hostile/make_hostile.py writes them:
kernel names, a target ID, a .comment and a recorded command line, member
and file names, in a raw code object, a wheel, an ar archive and a folder).

Each run's standard output and error (interleaved as written) and the files
it writes are read as GitHub's runner reads a step's log (no command but
spillway's own annotations and stop-commands brackets, no mask, no bracket
left open), as a terminal shows them (no control character, no
bidirectional control), and, where they are Markdown, as a renderer reads
them (no link, image, HTML or comment; the data only in code spans)
(tests/support/hostile_sinks.py: each reader is shown to flag a bad sample
in tests/unit/test_untrusted.py).  JSON, SARIF, JUnit and baselines are
parsed, and the names in them are the names in the binaries, exactly.

Runs are in-process (a few tens of milliseconds each), once without and once
with GITHUB_ACTIONS=true: the escaping alone must hold, the brackets too."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from spillway import untrusted
from spillway.cli import main as spillway_main
from spillway.json_codec import loads as json_loads
from support.hostile_sinks import annotations, markdown_findings, runner_findings, terminal_findings

from conftest import DATA

_spec = importlib.util.spec_from_file_location("make_hostile", DATA / "hostile" / "make_hostile.py")
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)


@dataclass
class Inputs:
    root: Path
    old: list[str]
    new: list[str]
    long: str
    not_utf8: str


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Inputs:
    root = tmp_path_factory.mktemp("hostile")
    written = hostile.write_all(root)
    relative = {kind: [os.path.relpath(os.fsdecode(p), root) for p in paths] for kind, paths in written.items()}
    return Inputs(root, relative["old"], relative["new"], relative["long"][0], relative["not_utf8"][0])


class _Binary:
    def __init__(self, events: list, stream: str):
        self.events, self.stream = events, stream

    def write(self, data) -> int:
        self.events.append((self.stream, bytes(data)))
        return len(data)

    def flush(self) -> None:
        pass


class _Stream(io.TextIOBase):
    """Standard output or error of a run: both into one list, in the order written
    (as one pipe would hold them); no file descriptor (documents come as pieces)."""

    def __init__(self, events: list, stream: str, terminal: bool = False):
        super().__init__()
        self.events, self.stream, self.terminal = events, stream, terminal
        self.buffer = _Binary(events, stream)

    @property
    def encoding(self):           # type: ignore[override]
        return "utf-8"

    def write(self, text: str) -> int:
        self.events.append((self.stream, text.encode("utf-8", "surrogateescape")))
        return len(text)

    def isatty(self) -> bool:
        return self.terminal


@dataclass
class Run:
    status: int
    out: bytes
    err: bytes
    both: bytes

    @property
    def text(self) -> str:
        return self.both.decode("utf-8", "surrogateescape")


def run(monkeypatch, root: Path, *argv: str, github: bool = False, terminal: bool = False) -> Run:
    events: list[tuple[str, bytes]] = []
    monkeypatch.chdir(root)
    monkeypatch.setattr("sys.stdout", _Stream(events, "out", terminal))
    monkeypatch.setattr("sys.stderr", _Stream(events, "err", terminal))
    if terminal:
        monkeypatch.setenv("TERM", "xterm-256color")
        monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    if github:
        summary = root / "summary.md"
        summary.write_bytes(b"")
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    try:
        status = spillway_main(list(argv))
    except SystemExit as exc:
        status = exc.code
    finally:
        monkeypatch.undo()
    pick = lambda name: b"".join(data for stream, data in events if stream == name)  # noqa: E731
    return Run(status, pick("out"), pick("err"), b"".join(data for _, data in events))


# The annotations spillway means to print start so (the baseline or the first NEW path, a spillway title).
OWN = ("::error file=base.json,title=spillway ", "::warning file=new/hostile.co,title=spillway ",
       "::error file=new/hostile.co,title=spillway ", "::error file=base-long.json,title=spillway ",
       "::error file=base-gone.json,title=spillway ",
       "::error file=checks/baselines/clang-19.json,title=spillway matrix")


def assert_safe(result: Run, status: int, *, markdown: bytes | None = None, files: tuple[Path, ...] = ()) -> None:
    """The run's output as the runner, a terminal and (``markdown``) a renderer read it."""
    text = result.text
    assert result.status == status, text[-3000:]
    assert "internal error" not in text and "Traceback" not in text, text[-3000:]
    assert runner_findings(text, OWN) == [], runner_findings(text, OWN)
    assert terminal_findings(text) == [], terminal_findings(text)
    for note in annotations(text):
        assert len(note.data) <= untrusted.ANNOTATION_MESSAGE_LIMIT
        assert terminal_findings(note.data) == [] and runner_findings(note.data) == []
    if markdown is not None:
        assert markdown_findings(markdown.decode("utf-8")) == [], markdown_findings(markdown.decode("utf-8"))
    for path in files:
        data = path.read_text("utf-8", "surrogateescape")
        assert runner_findings(data) == [] and terminal_findings(data) == [], (path, runner_findings(data))


def names_of(build: str) -> set[str]:
    return set(hostile.kernel_names(build)) | {hostile.SEED_KERNEL}


@pytest.fixture(scope="module")
def baseline(inputs, tmp_path_factory) -> Path:
    """The old build's baseline, written once (a module-scoped run; the tests below read it)."""
    mp = pytest.MonkeyPatch()
    done = run(mp, inputs.root, "baseline", "write", *inputs.old, "-o", "base.json", "--note", "old")
    assert_safe(done, 0)
    return inputs.root / "base.json"


# -- report and code ------------------------------------------------------------------------------

@pytest.mark.parametrize("github", [False, True], ids=["plain", "github"])
@pytest.mark.parametrize("options", [(), ("--all", "--limit", "0"), ("--all", "--names", "full", "--limit", "0"),
                                     ("--all", "--isa", "--limit", "0"), ("--sort", "file", "--limit", "0"),
                                     ("--all", "--format", "tsv"), ("--all", "--format", "tsv", "--isa")],
                         ids=["table", "all", "full", "isa", "files", "tsv", "tsv-isa"])
def test_report_tables(inputs, monkeypatch, options, github):
    result = run(monkeypatch, inputs.root, "report", *inputs.new, *options, github=github)
    assert_safe(result, 0)
    if "tsv" in options:
        rows = result.out.decode().splitlines()
        assert len({row.count("\t") for row in rows}) == 1 and len(rows) > len(names_of("new"))


@pytest.mark.parametrize("filtered", [False, True], ids=["whole", "filtered"])
def test_report_json_keeps_every_name_and_file_exact(inputs, monkeypatch, filtered):
    result = run(monkeypatch, inputs.root, "report", *inputs.new, *(["hostile"] if filtered else []), "--json")
    assert_safe(result, 0)
    assert b"##[" not in result.out
    document = json_loads(result.out)
    expected = {n for n in names_of("new") if "hostile" in n or not filtered}
    assert {k["name"] for k in document["kernels"]} >= expected
    assert {k["symbol"] for k in document["kernels"]} >= expected      # (the symbol without .kd)
    if filtered:
        return
    assert hostile.HOSTILE_TARGET.split("--", 1)[1] in {k["target"] for k in document["kernels"]}
    files = {k["file"] for k in document["kernels"]}
    for raw in hostile.FOLDER_FILES:
        assert os.fsdecode(b"new/tree/" + raw) in files
    for member in hostile.ZIP_MEMBERS:
        assert f"new/hostile.whl!{member}" in files
    assert hostile.COMMENT in {k["compiler"] for k in document["kernels"]}


def test_report_html_page(inputs, monkeypatch):
    # (The folder's file that is not UTF-8 is left out: the page's model is the other branch's
    # fix for issue 30, "report --format html" on such a name.)
    readable = [p for p in inputs.new if p != "new/tree"] + ["new/tree/" + os.fsdecode(n) for n in
                                                              hostile.FOLDER_FILES if b"\xff" not in n]
    result = run(monkeypatch, inputs.root, "report", *readable, "--all", "--format", "html")
    assert_safe(result, 0)
    page = result.out.decode()
    assert "##[" not in page and page.startswith("<!DOCTYPE html>\n")


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("label", ["newline", "legacy", "window_title", "bidi", "stop_commands"])
def test_code_listing(inputs, monkeypatch, fmt, label):
    name = hostile.NAMES[label]
    result = run(monkeypatch, inputs.root, "code", "new/hostile.co", name, "--format", fmt, github=True)
    assert_safe(result, 0)
    if fmt == "json":
        assert json_loads(result.out)["kernels"][0]["name"] == name
    else:
        assert f"kernel {untrusted.visible(name)}\n" in result.out.decode()


def test_an_ambiguous_filter_names_the_kernels_in_one_line(inputs, monkeypatch):
    result = run(monkeypatch, inputs.root, "code", "new/hostile.co", "hostile", github=True)
    assert_safe(result, 2)
    assert sum(1 for line in result.err.decode().splitlines() if not line.startswith("::")) == 1


# -- baseline write, check ----------------------------------------------------------------------

def test_the_baseline_keeps_every_name_exact(inputs, baseline):
    data = baseline.read_bytes()
    assert b"##[" not in data and terminal_findings(data.decode()) == []
    document = json_loads(data)
    names = {k.get("name") for k in document["kernels"]} | {k.get("key") for k in document["kernels"]}
    assert names_of("old") <= names


def test_a_baseline_update_says_what_it_kept_in_lines_of_its_own(inputs, baseline, monkeypatch, tmp_path):
    copy = inputs.root / "update.json"
    copy.write_bytes(baseline.read_bytes())
    result = run(monkeypatch, inputs.root, "baseline", "write", *inputs.new, "-o", "update.json", github=True)
    assert_safe(result, 1)
    kept = result.err.decode().count("spillway: kept scratch allowance of ")
    assert kept >= len(names_of("new") & names_of("old"))         # (axpy twice: two targets)


FORMATS = ("table", "json", "markdown", "junit", "github", "tsv", "sarif", "html")


@pytest.mark.parametrize("github", [False, True], ids=["plain", "github"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_check_fails_in_every_format(inputs, baseline, monkeypatch, fmt, github):
    result = run(monkeypatch, inputs.root, "check", *inputs.new, "--baseline", "base.json", "--format", fmt,
                 "--limit", "0", github=github or fmt == "github")
    summary = (inputs.root / "summary.md").read_bytes() if fmt == "github" else None
    assert_safe(result, 1, markdown=result.out if fmt == "markdown" else summary)
    if fmt == "json":
        document = json_loads(result.out)
        assert {f["name"] for f in document["failures"]} == names_of("new")
        assert {k["name"] for k in document["removed"]} == {hostile.ONLY_OLD}
    elif fmt == "sarif":
        (run_,) = json.loads(result.out)["runs"]
        assert {r["properties"]["kernel"] for r in run_["results"]} >= names_of("new") - {hostile.SEED_KERNEL}
    elif fmt == "junit":
        cases = ET.fromstring(result.out).findall("testsuite/testcase")
        xml_names = {c.get("name").rsplit(" [", 1)[0] for c in cases}
        for name in names_of("new"):
            exact = all(ch in "\t\n\r" or ord(ch) >= 0x20 for ch in name)
            assert (name if exact else name.translate({c: untrusted.visible(chr(c)) for c in range(0x20)
                                                       if chr(c) not in "\t\n\r"})) in xml_names
    elif fmt == "table":
        # rich shows markup and emoji codes as they are written: nothing of a name is re-read
        full = run(monkeypatch, inputs.root, "check", *inputs.new, "--baseline", "base.json", "--names", "full",
                   "--limit", "0", github=github)
        assert_safe(full, 1)
        for label in ("markup", "emoji_code"):
            assert f"over baseline: {hostile.NAMES[label]} [gfx1100]" in full.text
    elif fmt == "github":
        notes = annotations(result.text)
        assert len(notes) == 10 and all(n.properties["title"].startswith("spillway check: ") for n in notes)
        assert "more failing kernel metrics not annotated (GitHub shows 10 per step)" in result.text


@pytest.mark.parametrize("fmt", ["table", "github"])
def test_check_passes(inputs, baseline, monkeypatch, fmt):
    result = run(monkeypatch, inputs.root, "check", *inputs.old, "--baseline", "base.json", "--format", fmt,
                 github=fmt == "github")
    assert_safe(result, 0, markdown=(inputs.root / "summary.md").read_bytes() if fmt == "github" else None)


def test_check_writes_its_documents_to_files_and_prints_the_verdict(inputs, baseline, monkeypatch):
    result = run(monkeypatch, inputs.root, "check", *inputs.new, "--baseline", "base.json", "--format", "github",
                 "-o", "check.md", "--junit", "check.xml", github=True)
    assert_safe(result, 1, markdown=(inputs.root / "check.md").read_bytes(),
                files=(inputs.root / "check.md", inputs.root / "check.xml"))
    for fmt, name in (("markdown", "check-plain.md"), ("table", "check.txt"), ("json", "check.json")):
        result = run(monkeypatch, inputs.root, "check", *inputs.new, "--baseline", "base.json", "--format", fmt,
                     "-o", name)
        assert_safe(result, 1, files=(inputs.root / name,))


# -- compare ------------------------------------------------------------------------------------

@pytest.mark.parametrize("github", [False, True], ids=["plain", "github"])
@pytest.mark.parametrize("fmt", ("table", "json", "markdown", "github", "tsv", "sarif", "html"))
def test_compare_in_every_format(inputs, monkeypatch, fmt, github):
    result = run(monkeypatch, inputs.root, "compare", *inputs.new, "--against", *inputs.old, "--format", fmt,
                 "--limit", "0", "--all", github=github or fmt == "github")
    summary = (inputs.root / "summary.md").read_bytes() if fmt == "github" else None
    assert_safe(result, 0, markdown=result.out if fmt == "markdown" else summary)
    if fmt == "json":
        document = json_loads(result.out)
        names = {k["name"] for k in document["kernels"]} | {k["name"] for k in document["added"]} | \
            {k["name"] for k in document["removed"]}
        assert names >= names_of("new") | names_of("old")
    elif fmt == "sarif":
        (run_,) = json.loads(result.out)["runs"]
        assert {r["properties"]["kernel"] for r in run_["results"]} >= {hostile.ONLY_NEW, hostile.NAMES["legacy"]}


def test_compare_with_the_code(inputs, monkeypatch):
    result = run(monkeypatch, inputs.root, "compare", "new/hostile.co", "--against", "old/hostile.co", "--isa",
                 "--format", "markdown", github=True)
    assert_safe(result, 0, markdown=result.out)


# -- a terminal ------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["report", "check", "compare"])
def test_on_a_terminal_only_colours_reach_it(inputs, baseline, monkeypatch, command):
    """Standard output a terminal: rich colours it (SGR sequences, and check draws its table), and
    nothing else of a control sequence gets through."""
    extra = {"report": ("--all", "--limit", "0"), "check": ("--baseline", "base.json", "--limit", "0"),
             "compare": ("--against", *inputs.old, "--all", "--limit", "0")}[command]
    result = run(monkeypatch, inputs.root, command, *inputs.new, *extra, terminal=True)
    text = result.text
    assert result.status == (1 if command == "check" else 0), text[-2000:]
    assert "\x1b[" in text and terminal_findings(text) and terminal_findings(text, styles=True) == []
    assert runner_findings(text, OWN) == []
    if command == "check":
        assert "over baseline" in text.splitlines()[0]          # the table's title: drawn on a terminal only


# -- the limits: a 4 MiB name, a name that is not UTF-8 ----------------------------------------------

def test_a_4_mib_name_stays_within_githubs_limits(inputs, monkeypatch):
    done = run(monkeypatch, inputs.root, "baseline", "write", "old/hostile.co", "-o", "base-long.json", "--note", "n")
    assert_safe(done, 0)
    result = run(monkeypatch, inputs.root, "check", inputs.long, "--baseline", "base-long.json", "--format",
                 "github", github=True)
    summary = (inputs.root / "summary.md").read_bytes()
    assert_safe(result, 1, markdown=summary)
    assert len(summary) < 1 << 20 and "characters)`" in summary.decode()
    notes = annotations(result.text)
    assert notes and all(len(n.data) <= untrusted.ANNOTATION_MESSAGE_LIMIT for n in notes)
    assert all(len(n.properties["title"]) <= untrusted.ANNOTATION_TITLE_LIMIT for n in notes)
    document = run(monkeypatch, inputs.root, "report", inputs.long, "--json")
    assert_safe(document, 0)
    assert max(len(k["name"]) for k in json_loads(document.out)["kernels"]) == hostile.LONG_NAME_BYTES


def test_a_kernel_name_that_is_not_utf8_is_shown_replaced(inputs, monkeypatch):
    """(The metadata reader decodes names with U+FFFD for what is not UTF-8.)"""
    result = run(monkeypatch, inputs.root, "report", inputs.not_utf8, "--all", github=True)
    assert_safe(result, 0)
    result = run(monkeypatch, inputs.root, "report", inputs.not_utf8, "--json")
    assert_safe(result, 0)
    (kernel,) = json_loads(result.out)["kernels"]
    assert kernel["name"] == hostile.NOT_UTF8_NAME.decode("utf-8", "replace")


# -- the matrix's renderings (its cells are built from this repository's sources; a cell's
# failures are a check document's, so they carry the names of whatever the cell built) -----------

def test_the_matrix_verdicts_and_job_summary(inputs, monkeypatch):

    import time

    from spillway.cli.matrix import _imports
    from spillway.render import table as check_render
    from spillway.render.emit import emit
    from spillway.render.models import MatrixRunModel, View
    from spillway.matrix.cells import Cell
    from spillway.matrix.gating import CellCheck
    from spillway.render.grid import console as make_console

    cell = Cell(name="clang-22", source="debian", compiler="clang", clang="22", cxx="clang++-22", packages=["clang-22"],
                targets=["gfx1100"], baseline="checks/baselines/clang-22.json")
    failures = [{"target": hostile.HOSTILE_TARGET.split("--", 1)[1] if i == 0 else "gfx1100", "key": name,
                 "name": name, "metric": "scratch", "allowed": 16, "actual": 64, "new_kernel": False,
                 "dynamic_stack": False} for i, name in enumerate(hostile.NAMES.values())]
    checks = [CellCheck(cell, "fail", "FAIL: 26 kernels over their baseline", failures,
                        flags_warning=f"code-generation flags differ: added {hostile.COMMAND_LINES['new']}")]

    _imports()        # (what a matrix command binds first)

    def render():
        check_render.print_checks(make_console(), checks)
        emit(MatrixRunModel(tuple(checks), None, {}, "run", time.monotonic()), "github", None, View())

    events: list[tuple[str, bytes]] = []
    summary = inputs.root / "matrix-summary.md"
    summary.write_bytes(b"")
    monkeypatch.setattr("sys.stdout", _Stream(events, "out"))
    monkeypatch.setattr("sys.stderr", _Stream(events, "err"))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    untrusted.install()
    try:
        render()
    finally:
        untrusted.uninstall()
        monkeypatch.undo()
    text = b"".join(data for _, data in events).decode()
    own = ("::error file=checks/baselines/clang-22.json,title=spillway matrix",)
    assert runner_findings(text, own) == [] and terminal_findings(text) == []
    assert len(annotations(text)) == 10
    assert markdown_findings(summary.read_text()) == []


# -- every command in every format, from the command line's own definition (issue 38) -------------------
#
# The commands and their formats are read from the argparse tree, so a new command or a new format
# that has no hostile run below fails test_every_output_path_has_a_hostile_run: each output path is
# shown to go through its sink.  A command without --format has one output (its text: "text").

def command_formats() -> list[tuple[tuple[str, ...], str]]:
    import argparse

    from spillway.cli import build_parser

    found = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subcommands:
            for name, sub in action.choices.items():
                walk(sub, path + (name,))
        if subcommands:
            return
        fmt = next((a for a in parser._actions if "--format" in a.option_strings), None)
        found.extend((path, f) for f in (fmt.choices if fmt is not None else ("text",)))

    walk(build_parser(), ())
    return found


# A failed cell's artifact as a CI job uploads it (build.json), its reason written by the attacker.
HOSTILE_REASON = ("compile prim_scan.hip: error\n::error title=FORGED-PWN-REASON::reason "
                  "<img src=https://attacker.invalid/PWN-REASON.png alt=PWN> [bold]PWN[/bold] ##[error]r "
                  "\x1b]0;reason\x07\u202e " + "R" * 3000)
# A target the baseline was written from and the build no longer has.
REMOVED_TARGET = hostile.TARGET + "\n::error title=FORGED-PWN-TARGET::t\x1b[2J[bold]PWN[/bold]"


@pytest.fixture(scope="module")
def removed_target(inputs) -> Path:
    """gone/keep.co (axpy on gfx1100) and gone/gone.co (axpy on REMOVED_TARGET), and a baseline of
    both: checking keep.co alone finds REMOVED_TARGET no longer built."""
    folder = inputs.root / "gone"
    folder.mkdir(exist_ok=True)
    (folder / "keep.co").write_bytes(hostile.code_object([hostile.SEED_KERNEL], "old"))
    (folder / "gone.co").write_bytes(hostile.code_object([hostile.SEED_KERNEL], "old", target=REMOVED_TARGET))
    done = run(pytest.MonkeyPatch(), inputs.root, "baseline", "write", "gone/keep.co", "gone/gone.co", "-o",
               "base-gone.json", "--note", "both targets")
    assert_safe(done, 0)
    return inputs.root / "base-gone.json"


@pytest.fixture(scope="module")
def artifacts(inputs) -> Path:
    """A cells file of one cell (clang-19) and the folder its job's artifact was downloaded into:
    a failed build whose reason is HOSTILE_REASON."""
    import tomllib

    from support.matrix_fixtures import cell_table

    cell = tomllib.loads((REPO / "matrix" / "cells.toml").read_text())["cells"]["clang-19"]
    (inputs.root / "cells.toml").write_text("\n".join([
        'schema = "1"', "", "[engine]", 'library = "libengine.so"', 'sources = ["kernels/prim_scan.hip"]',
        'headers = ["kernels/include", "kernels/engine"]', 'recipe = "matrix/compile.sh"', "",
        cell_table("clang-19", **cell)]))
    folder = inputs.root / "artifacts" / "spillway-cell-clang-19" / "clang-19"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "build.json").write_text(json.dumps({"cell": "clang-19", "status": "failed", "reason": HOSTILE_REASON}))
    return inputs.root / "artifacts"


REPO = DATA.parents[1]
# Each command's hostile run: (argv, exit status) for the inputs; a format is added as --format F.
RUNS = {
    ("report",): lambda i: (["report", *i.new, "--all", "--limit", "0"], 0),
    ("code",): lambda i: (["code", "new/hostile.co", hostile.NAMES["newline"]], 0),
    ("check",): lambda i: (["check", *i.new, "--baseline", "base.json", "--limit", "0"], 1),
    ("baseline", "write"): lambda i: (["baseline", "write", *i.new, "-o", "update.json"], 1),
    ("compare",): lambda i: (["compare", *i.new, "--against", *i.old, "--all", "--limit", "0"], 0),
    ("matrix", "collect"): lambda i: (["matrix", "collect", "artifacts", "--cells", "cells.toml", "--root",
                                       str(REPO), "--build-dir", "matrix-build", "--junit-dir", "junit"], 1),
}
# Output paths no hostile run reaches, and why.
EXEMPT = {
    ("matrix", "list"): "shows the cells file (the repository's own), no binary",
    ("matrix", "build"): "builds with the compilers (tests/unit/matrix); its lines are the cells file's and the "
                         "recipe's",
    ("matrix", "check"): "builds with the compilers first; its verdicts are collect's (render.table.print_checks)",
    ("matrix", "baseline"): "builds with the compilers first; writes each cell's baseline as baseline write does",
    ("matrix", "run"): "builds with the compilers first; its outputs are collect's (the same run_run, one emit)",
    ("matrix", "compare"): "reads built cells (tests/unit/matrix); their names are the ones check's runs show",
    ("matrix", "history"): "builds the repository's own kernels with AMD's LLVM releases (tests/unit/matrix/"
                          "test_history.py); its kernel names pass through untrusted.visible in render/history.py",
    ("matrix", "bisect"): "builds as history does; the comparison it ends with is compare's model, drawn by "
                         "compare's table",
    ("matrix", "cache"): "lists the store of wheels and libraries spillway downloaded itself, no binary read",
    ("schema",): "prints the published schemas, nothing read",
    ("cmake-dir",): "prints a folder of the package",
}
HOSTILE_RUNS = [(command, fmt) for command, fmt in command_formats() if command in RUNS]


def test_every_output_path_has_a_hostile_run():
    tree = command_formats()
    assert len(tree) > 25 and (("check",), "markdown") in tree and (("matrix", "collect"), "github") in tree
    missing = sorted({command for command, _ in tree} - set(RUNS) - set(EXEMPT))
    assert not missing, f"commands with no hostile run (add one to RUNS, or say why in EXEMPT): {missing}"
    assert not set(EXEMPT) & set(RUNS) and set(RUNS) <= {command for command, _ in tree}


@pytest.mark.parametrize("github", [False, True], ids=["plain", "github"])
@pytest.mark.parametrize("command, fmt", HOSTILE_RUNS, ids=[f"{' '.join(c)}-{f}" for c, f in HOSTILE_RUNS])
def test_every_command_in_every_format(inputs, baseline, artifacts, monkeypatch, command, fmt, github):
    argv, status = RUNS[command](inputs)
    if command == ("baseline", "write"):
        (inputs.root / "update.json").write_bytes(baseline.read_bytes())
    if fmt != "text":
        argv += ["--format", fmt]
    result = run(monkeypatch, inputs.root, *argv, github=github or fmt == "github")
    summary = (inputs.root / "summary.md").read_bytes() if github or fmt == "github" else None
    markdown = result.out if fmt == "markdown" else summary
    junit = sorted((inputs.root / "junit").glob("*.xml")) if command == ("matrix", "collect") else []
    assert_safe(result, status, markdown=markdown, files=tuple(junit))
    for path in junit:
        assert ET.parse(path).getroot().find("testsuite") is not None
    if command == ("matrix", "collect") and fmt == "json" and result.out:
        (verdict,) = json_loads(result.out)["verdicts"]
        assert verdict["reason"].endswith(HOSTILE_REASON)        # (the document keeps it whole)


@pytest.mark.parametrize("github", [False, True], ids=["plain", "github"])
@pytest.mark.parametrize("fmt", [f for c, f in command_formats() if c == ("check",)])
def test_check_of_a_build_without_a_hostile_target_of_its_baseline(inputs, removed_target, monkeypatch, fmt,
                                                                    github):
    result = run(monkeypatch, inputs.root, "check", "gone/keep.co", "--baseline", "base-gone.json", "--format", fmt,
                 github=github or fmt == "github")
    summary = (inputs.root / "summary.md").read_bytes() if github or fmt == "github" else None
    markdown = result.out if fmt == "markdown" else summary
    assert_safe(result, 1, markdown=markdown)
    if fmt in ("markdown", "github"):
        assert "FORGED" in markdown.decode()          # (shown, in a code span)
    if fmt == "json":
        (removed,) = json_loads(result.out)["removed_targets"]
        assert removed["target"] == REMOVED_TARGET.split("--", 1)[1]


# Line outputs show at most LINE_STRING_LIMIT characters of a string from a binary; documents keep it whole
# (JUnit: its text is cut, a test case's name is whole).
LINE_FORMATS = ("table", "markdown", "github")


@pytest.mark.parametrize("fmt", [f for c, f in command_formats() if c == ("check",)])
def test_a_4_mib_name_is_cut_in_line_outputs_and_whole_in_documents(inputs, monkeypatch, fmt):
    if not (inputs.root / "base-long.json").exists():
        assert_safe(run(monkeypatch, inputs.root, "baseline", "write", "old/hostile.co", "-o", "base-long.json",
                        "--note", "n"), 0)
    result = run(monkeypatch, inputs.root, "check", inputs.long, "--baseline", "base-long.json", "--format", fmt,
                 github=fmt == "github")
    summary = (inputs.root / "summary.md").read_bytes() if fmt == "github" else b""
    assert result.status == 1, result.text[-2000:]
    written = len(result.both) + len(summary)
    if fmt in LINE_FORMATS:
        assert written < 64 << 10, (fmt, written)
        assert "characters)" in (result.text + summary.decode())
    elif fmt != "html":           # (the page carries its model compressed)
        assert written > hostile.LONG_NAME_BYTES, (fmt, written)
    if fmt == "junit":
        failure = next(f for f in ET.fromstring(result.out).iter("failure") if "hostile_long" in (f.text or ""))
        # (the name and key cut at 512, the accept command's key at COMMAND_WORD_LIMIT)
        assert len(failure.text) < 3 * untrusted.LINE_STRING_LIMIT + 2 * untrusted.COMMAND_WORD_LIMIT
        assert "characters)" in failure.text
