"""The command line's output surface (issue 12): no command writes over an
input, one way to ask for a format, filters, failures that say how to
accept them, tables that fit, GitHub output and v2 documents.

Real binaries come from tests/data/formats.hip built by clang-22 (the
report CLI's fixture); checks and comparisons run on synthetic report JSON
documents, which spillway reads like binaries, so numbers are exact."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from spillway.cli import main
from spillway.resources.names import elide_templates, name_matches, table_name
from spillway.schemas import SCHEMAS, schema_for
from support.cli_fixtures import kernel, report
from support.formats_fixtures import FORMATS, SECOND

TOPK = "_Z4topkILi32EEvPKfiPfPi"            # void topk<32>(float const*, int, float*, int*)
NORM = "_Z7rmsnormILi256EEvPKfPfi"          # void rmsnorm<256>(float const*, float*, int)
SCALE = "_Z5scaleILi64EEvPff"               # void scale<64>(float*, float)


@pytest.fixture(scope="module")
def library(builder):
    objects = [builder.hip(22, FORMATS, ["gfx90a", "gfx1151"]), builder.hip(22, SECOND, ["gfx90a", "gfx1151"])]
    return builder.link(22, objects, "libengine.so", "-shared")


def run(capsys, *args) -> tuple[int, str, str]:
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:       # argparse
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(result, *fragments) -> None:
    status, out, err = result
    assert status == 2, (status, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture()
def gate(tmp_path, capsys):
    """old.json: topk without scratch; new.json: topk with 272 B of scratch."""
    old = report(tmp_path / "old.json", [kernel(TOPK), kernel(NORM), kernel(SCALE)])
    new = report(tmp_path / "new.json", [kernel(TOPK, scratch=272, vgprs=136, occupancy=8), kernel(NORM),
                                         kernel(SCALE)])
    baseline = tmp_path / "baseline.json"
    assert run(capsys, "baseline", "write", old, "-o", baseline, "--note", "old")[0] == 0
    return old, new, baseline


# -- (1) never write over an input --------------------------------------------------------

def test_report_json_flag_never_takes_a_binary_as_its_output(capsys, library, tmp_path):
    first, second = tmp_path / "a.so", tmp_path / "b.so"
    first.write_bytes(library.read_bytes())
    second.write_bytes(library.read_bytes())
    status, out, _ = run(capsys, "report", "--json", first, second)
    assert status == 0
    assert first.read_bytes() == second.read_bytes() == library.read_bytes()
    document = json.loads(out)
    assert {k["file"] for k in document["kernels"]} == {str(first), str(second)}
    # `report --json lib.so`: lib.so is the input, not a missing PATH.
    status, out, err = run(capsys, "report", "--json", first)
    assert status == 0 and json.loads(out)["kernels"], err


def test_old_style_json_file_gets_a_hint(capsys, library, tmp_path):
    target = tmp_path / "out.json"
    one_line_error(run(capsys, "report", "--json", target, library), f"--json -o {target}")
    assert not target.exists()
    one_line_error(run(capsys, "report", f"--json={target}", library), f"--json -o {target}")
    # An earlier spillway output named after --json is not read as an input either.
    assert run(capsys, "report", "--json", "-o", target, library)[0] == 0
    one_line_error(run(capsys, "report", "--json", target, library), "--json -o")


def test_check_and_compare_refuse_to_write_over_inputs(capsys, gate, tmp_path):
    old, new, baseline = gate
    before = {p: p.read_bytes() for p in (old, new, baseline)}
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "--json", baseline), "--json")
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "--json", "-o", baseline),
                   f"-o {baseline}: is the input")
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "--junit", new), f"--junit {new}: is the input")
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "-o", new), "is the input")
    one_line_error(run(capsys, "compare", new, "--against", old, "-o", old), f"-o {old}: is the input")
    one_line_error(run(capsys, "compare", new, "--against", old, "--format", "markdown", "-o", new),
                   "is the input")
    one_line_error(run(capsys, "baseline", "write", new, "-o", new), "is the input")
    # Inside an input directory.
    one_line_error(run(capsys, "compare", tmp_path, "--against", old, "-o", baseline), "is inside the input")
    # Twice in one run.
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "-o", tmp_path / "x.xml",
                       "--junit", tmp_path / "x.xml"), "already written by -o")
    assert {p: p.read_bytes() for p in (old, new, baseline)} == before


def test_existing_files_are_replaced_only_when_spillway_wrote_them(capsys, gate, tmp_path):
    old, new, baseline = gate
    for fmt, suffix in (("json", "json"), ("markdown", "md"), ("junit", "xml"), ("tsv", "tsv"),
                        ("table", "txt")):
        output = tmp_path / f"check.{suffix}"
        output.write_text("the user's own notes\n")
        one_line_error(run(capsys, "check", new, "--baseline", baseline, "--format", fmt, "-o", output),
                       "was not written by spillway", "--force")
        assert output.read_text() == "the user's own notes\n"
        assert run(capsys, "check", new, "--baseline", baseline, "--format", fmt, "-o", output, "--force")[0] == 1
        written = output.read_bytes()
        # Now spillway's: a second run replaces it without --force.
        output.write_bytes(written + b"\n")
        assert run(capsys, "check", new, "--baseline", baseline, "--format", fmt, "-o", output)[0] == 1
        assert output.read_bytes() == written
    # No temporary files left behind by the atomic writes.
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".spillway-")]


def test_baseline_write_rewrites_its_baseline_but_nothing_else(capsys, gate, tmp_path):
    old, new, baseline = gate
    assert run(capsys, "baseline", "write", old, "-o", baseline)[0] == 0      # routine
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    one_line_error(run(capsys, "baseline", "write", old, "-o", notes, "--note", "n"), "not a spillway baseline",
                   "--force")
    assert notes.read_text() == "mine"
    assert run(capsys, "baseline", "write", old, "-o", notes, "--note", "n", "--force")[0] == 0
    assert json.loads(notes.read_text())["schema"].startswith("spillway.baseline/")


# -- (2) one way to ask for a format --------------------------------------------------------

def test_json_flag_anywhere_equals_format_json(capsys, gate):
    old, new, baseline = gate
    flag_first = run(capsys, "compare", "--json", new, "--against", old)
    flag_last = run(capsys, "compare", new, "--against", old, "--json")
    by_name = run(capsys, "compare", new, "--against", old, "--format", "json")
    assert flag_first[1] == flag_last[1] == by_name[1]
    assert json.loads(by_name[1])["schema"] == "spillway.compare/6"
    one_line_error(run(capsys, "compare", new, "--against", old, "--json", "--format", "markdown"),
                   "two formats")


def test_every_subcommand_words_its_output_options_the_same(capsys):
    from spillway.cli import build_parser

    parser = build_parser()
    helps = {}
    for action in parser._subparsers._group_actions[0].choices.items():
        name, sub = action
        nested = [a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction"]
        parsers = nested[0].choices.items() if nested else [("", sub)]
        for inner, p in parsers:
            options = {o: a.help for a in p._actions for o in a.option_strings}
            helps[f"{name} {inner}".strip()] = options
    printing = ["report", "check", "compare", "schema", "matrix list", "matrix compare", "matrix run"]
    for option in ("--format", "--json", "--force"):
        texts = {helps[c].get(option, "").split(" (default")[0].split(": ")[0] for c in printing
                 if option in helps[c]}
        assert len(texts) == 1, (option, texts)
    for command in printing:
        assert "-o" in helps[command] and "--output" in helps[command], command
    for option in ("--names", "--limit"):
        assert len({helps[c][option] for c in ("report", "check", "compare")}) == 1


# -- (3) filters ------------------------------------------------------------------------------

def test_filters_match_short_names_and_misses_are_errors(capsys, library):
    assert name_matches("rms*", "void rmsnorm<256>(float const*, float*, int)")
    assert name_matches("RMSNORM<256>", "void rmsnorm<256>(float const*, float*, int)")
    assert not name_matches("rms", "void scale<64>(float*, float)")
    status, out, _ = run(capsys, "report", "--all", library, "scal*")
    assert status == 0 and "scale<64>" in out and "axpy" not in out
    # Matching kernels exist, but none uses scratch: not an error, the filter matched.
    assert run(capsys, "report", library, "scale")[0] == 0
    one_line_error(run(capsys, "report", "--all", library, "no_such_kernel"), "no kernel matches 'no_such_kernel'")
    one_line_error(run(capsys, "report", library, "missing/lib.so"), "missing/lib.so: no such file")
    one_line_error(run(capsys, "report", library, "libnothere.so"), "libnothere.so: no such file")


# -- (4) failures end with the command that accepts them ----------------------------------------

def test_check_failures_end_with_the_accepting_command_and_it_works(capsys, gate, tmp_path):
    old, new, baseline = gate
    status, out, _ = run(capsys, "check", new, "--baseline", baseline)
    assert status == 1
    (line,) = [l for l in out.splitlines() if l.startswith("over baseline: ")]
    assert line.startswith("over baseline: topk<32> [gfx1100]: scratch 272 B/lane, allowed at most 0 B/lane")
    command = line.split("accept with: ", 1)[1]
    assert command.endswith("--allow-key _Z4topkILi32EEvPKfiPfPi --reason TEXT")
    words = shlex.split(command.replace("TEXT", "'topk trades scratch for occupancy'"))
    assert words[:3] == ["spillway", "baseline", "write"]
    assert run(capsys, *words[1:])[0] == 0
    assert run(capsys, "check", new, "--baseline", baseline)[0] == 0


def test_missing_baseline_says_how_to_write_it(capsys, gate, tmp_path, monkeypatch):
    old, new, _ = gate
    missing = tmp_path / "checks" / "new.json"
    result = run(capsys, "check", new, "--baseline", missing)
    one_line_error(result, f"write it with: spillway baseline write {new} -o {missing} --note TEXT")
    monkeypatch.setenv("SPILLWAY_WRITE_BASELINE", "cmake --build build --target kernel_resources_test_baseline")
    one_line_error(run(capsys, "check", new, "--baseline", missing),
                   "(or: cmake --build build --target kernel_resources_test_baseline)")


# -- (5) tables that fit ----------------------------------------------------------------------------

def test_short_names():
    long_name = ("void rocprim::ROCPRIM_300400_NS::detail::scan_kernel<rocprim::detail::config<256u, 8u>, "
                 "float*, int>(float*, int)")
    assert table_name(long_name) == "rocprim::detail::scan_kernel<rocprim::detail::config<…>, float*, int>"
    assert table_name(long_name, "full") == long_name
    assert table_name("void rmsnorm<256>(float const*, float*, int)") == "rmsnorm<256>"
    assert elide_templates("a<b<c<d>>>", 2) == "a<b<c<…>>>"
    assert elide_templates("a<b<c<d>>, e>") == "a<b<…>, e>"
    assert elide_templates("operator<<(int)") == "operator<<(int)"


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_report_table_follows_columns_one_line_per_kernel(library, columns, tmp_path):
    env = dict(os.environ, COLUMNS=str(columns))
    copies = [tmp_path / "one" / "libengine.so", tmp_path / "two" / "libengine.so"]
    for copy in copies:
        copy.parent.mkdir()
        copy.write_bytes(library.read_bytes())
    result = subprocess.run([sys.executable, "-m", "spillway", "report", "--all", *map(str, copies)],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= columns for line in lines), [l for l in lines if len(l) > columns]
    rows = [l for l in lines if "gfx" in l]
    assert len(rows) == 16                          # 8 kernels, twice: one line each
    header = next(line for line in lines if " kernel " in line)   # (a folded header's first line above it)
    assert header.split()[0] == "file"              # several inputs: a file column
    assert {row.split()[0] for row in rows} == {"one/libengine.so", "two/libengine.so"}
    assert "\x1b[" not in result.stdout and "│" not in result.stdout


def test_limit_names_and_tsv(capsys, library):
    status, out, _ = run(capsys, "report", "--all", "--limit", "3", library)
    assert len([l for l in out.splitlines() if "gfx" in l]) == 3 and "(3 shown; --limit 0 shows all)" in out
    status, out, _ = run(capsys, "report", "--all", "--names", "full", "--limit", "0", library)
    assert "void scale<64>(float*, float)" in out
    status, out, _ = run(capsys, "report", "--all", "--format", "tsv", "--limit", "1", library)
    lines = out.splitlines()
    header = lines[0].split("\t")
    assert header[:4] == ["file", "bundle_index", "target", "name"] and len(lines) == 9   # TSV is complete
    assert all(len(l.split("\t")) == len(header) for l in lines)


# -- (6) GitHub ----------------------------------------------------------------------------------

def test_github_annotations_at_most_ten_and_a_job_summary(capsys, tmp_path, monkeypatch):
    symbols = [f"_Z8kernel{i:02d}v" for i in range(12)]
    old = report(tmp_path / "old.json", [kernel(s) for s in symbols])
    new = report(tmp_path / "new.json", [kernel(s, scratch=16 * (i + 1), spills=1) for i, s in enumerate(symbols)])
    baseline = tmp_path / "b.json"
    assert run(capsys, "baseline", "write", old, "-o", baseline, "--note", "n", "--gate", "scratch,spills")[0] == 0
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    status, out, _ = run(capsys, "check", new, "--baseline", baseline)        # github without asking
    assert status == 1
    annotations = [l for l in out.splitlines() if l.startswith("::error ")]
    assert len(annotations) == 10
    assert f"file={baseline}".replace(":", "%3A") in annotations[0]
    assert "title=spillway check%3A kernel00 [gfx1100] over baseline (scratch)::" in annotations[0]
    assert annotations[0].endswith("--reason TEXT")
    assert "14 more failing kernel metrics not annotated" in out                  # 24 failures - 10
    text = summary.read_text()
    assert text.startswith("earlier step\n**spillway check**") and "| `kernel11` |" in text
    # An explicit format wins over GITHUB_ACTIONS.
    status, out, _ = run(capsys, "check", new, "--baseline", baseline, "--format", "table")
    assert "::error" not in out


# -- (7) schema v2 documents -----------------------------------------------------------------------

def test_check_and_compare_documents_v2(capsys, tmp_path):
    old = report(tmp_path / "old16.json", [kernel(s, scratch=16) for s in (TOPK, NORM, SCALE)])
    baseline = tmp_path / "b16.json"       # every kernel recorded: a kernel absent from it is news
    assert run(capsys, "baseline", "write", old, "-o", baseline, "--note", "old", "--record-all")[0] == 0
    extra = report(tmp_path / "extra.json", [kernel(TOPK, scratch=272), kernel("_Z5fresh_v", scratch=8)])
    status, out, _ = run(capsys, "check", extra, "--baseline", baseline, "--json")
    document = json.loads(out)
    jsonschema.validate(document, schema_for("check"))
    assert document["schema"] == "spillway.check/4"      # version 2 with the removed targets (issue 31)
    assert document["summary"] == {"kernels": 2, "failed_kernels": 2, "failures": 2, "by_metric": {"scratch": 2},
                                   "added": 1, "removed": 2, "removed_targets": 0}
    assert document["sentence"].startswith("FAIL: 2 of 2 kernels")
    assert [k["name"] for k in document["added"]] == ["fresh_()"] or len(document["added"]) == 1
    assert len(document["removed"]) == 2
    status, out, _ = run(capsys, "compare", extra, "--against", old, "--json")
    document = json.loads(out)
    jsonschema.validate(document, schema_for("compare"))
    assert document["summary"]["added"] == 1 and document["summary"]["removed"] == 2
    assert len(document["added"]) == 1 and len(document["removed"]) == 2
    assert "only_new" not in document and "only_old" not in document


def test_schema_lists_every_document(capsys):
    status, out, _ = run(capsys, "schema")
    assert status == 0
    listed = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert set(listed) == set(SCHEMAS) >= {"report", "baseline", "check", "compare", "matrix-list",
                                           "matrix-summary"}
    assert listed["matrix-summary"] == "spillway.matrix-summary/2"


def test_metric_names_of_the_help_are_the_gates():
    from spillway import constants
    from spillway.gate.metrics import DEFAULT_GATE, METRICS, metrics_help

    assert constants.METRIC_NAMES == tuple(METRICS)
    assert constants.DEFAULT_GATE_NAMES == DEFAULT_GATE
    assert constants.metrics_help() == metrics_help()


def test_github_format_writes_the_summary_to_o_file(capsys, gate, tmp_path):
    old, new, baseline = gate
    output = tmp_path / "summary.md"
    status, out, _ = run(capsys, "check", new, "--baseline", baseline, "--format", "github", "-o", output)
    assert status == 1 and out.startswith("::error ")
    text = output.read_text()
    assert text.startswith("<!-- spillway check") and "| `topk<32>` | `gfx1100` | scratch | 0 | 272 |" in text


def test_matrix_list_document_matches_its_schema(capsys):
    status, out, _ = run(capsys, "matrix", "list", "--json")
    assert status == 0
    document = json.loads(out)
    jsonschema.validate(document, schema_for("matrix-list"))
    assert document["schema"] == "spillway.matrix-list/2"
    assert document["summary"]["cells"] == len(document["cells"])


def test_compare_tsv_is_complete_and_check_tsv_has_every_finding(capsys, gate, tmp_path):
    old, new, baseline = gate
    step = {"waves": 9, "needs": [{"resource": "vgpr", "at_most": 128}]}
    extra = report(tmp_path / "extra.json", [dict(kernel(TOPK, scratch=272, vgprs=136, occupancy=8),
                                                  occupancy_next=step), kernel(NORM),
                                             dict(kernel("_Z5freshv", scratch=8), occupancy_next=step)])
    status, out, _ = run(capsys, "compare", extra, "--against", old, "--format", "tsv", "--all", "--limit", "1")
    lines = [line.split("\t") for line in out.splitlines()]
    header = lines[0]
    rows = {(r[0], r[2]): dict(zip(header, r)) for r in lines[1:]}
    assert all(len(r) == len(header) for r in lines)
    topk = rows[("worse", "void topk<32>(float const*, int, float*, int*)")]
    assert (topk["old_scratch"], topk["new_scratch"], topk["old_vgprs"], topk["new_vgprs"]) == ("0", "272", "32", "136")
    assert rows[("added", "fresh()")]["new_scratch"] == "8" and rows[("added", "fresh()")]["old_scratch"] == ""
    assert rows[("removed", "void scale<64>(float*, float)")]["old_vgprs"] == "32"
    assert ("same", "void rmsnorm<256>(float const*, float*, int)") in rows
    assert header[-1] == "next_step"            # the new side's, in report's words
    assert topk["next_step"] == rows[("added", "fresh()")]["next_step"] == "128 or fewer VGPRs for 9"
    assert rows[("removed", "void scale<64>(float*, float)")]["next_step"] == ""
    status, out, _ = run(capsys, "check", extra, "--baseline", baseline, "--format", "tsv", "--limit", "1")
    lines = out.splitlines()
    assert status == 1 and lines[0].split("\t")[:4] == ["target", "name", "key", "metric"]
    assert len(lines) == 1 + 3                 # every kernel and metric, whatever --limit says


def test_links_to_inputs_are_inputs(capsys, gate, tmp_path):
    old, new, baseline = gate
    before = baseline.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(baseline)
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "--json", "-o", link), "is the input")
    hard = tmp_path / "hard.json"
    os.link(baseline, hard)
    one_line_error(run(capsys, "check", new, "--baseline", baseline, "--json", "-o", hard), "is the input")
    assert baseline.read_bytes() == before


def test_compare_and_check_tables_fit_piped_columns(gate, tmp_path):
    old, new, baseline = gate
    long = "_ZN7rocprim6detail11scan_kernelINS0_6configILj256ELj8EEEPfiEEvT0_T1_"
    wide = report(tmp_path / "wide.json", [kernel(long, scratch=64), kernel(TOPK, scratch=272)])
    env = dict(os.environ, COLUMNS="80")
    result = subprocess.run([sys.executable, "-m", "spillway", "compare", str(wide), "--against", str(old)],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if "gfx1100" in line and not line.startswith("  largest")]
    assert len(table) == 4 and len(table[0]) <= 80, result.stdout     # the table row, then the one-sided lists
    assert table[1].startswith("  rocprim::detail::scan_kernel<rocprim::detail::config<…>, float*, int> [gfx1100]")
    # Piped, check prints one line per failure (never wrapped), each ending with its command.
    result = subprocess.run([sys.executable, "-m", "spillway", "check", str(wide), "--baseline", str(baseline)],
                            capture_output=True, text=True, env=env)
    failures = [line for line in result.stdout.splitlines() if line.startswith("over baseline: ")]
    assert result.returncode == 1 and len(failures) == 2
    assert all(line.endswith(" --reason TEXT") for line in failures)


def test_old_markdown_option_gets_a_hint(capsys):
    one_line_error(run(capsys, "matrix", "run", "--markdown", "build/summary.md"),
                   "--markdown FILE is now --format markdown -o build/summary.md")
