"""The accept commands spillway prints (issue 30, point 5) match literally:
run as printed, by bash, with the real spillway, they accept exactly the
failing kernel -- never a sibling its name would match as a glob -- and they
print nothing a terminal or CI log would act on.

Inputs: code objects written by tests/support/synthetic_elf.py with kernel
names no compiler would accept (``*``, ``?``, ``[``, quotes, spaces, a
newline, an escape sequence, a bidi override), read by spillway as any code
object is.  Each case names a sibling the hostile name matches as a glob, so
the old ``--allow NAME`` accepted both.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from spillway.gate.commands import accept_command, shell_word
from support.gate_fixtures import run_cli
from spillway.render.html import read_page_data
from support import synthetic_elf

# (hostile name, sibling it matches as a glob)
CASES = [
    ("*kernel*", "victim_kernel"),
    ("?ictim_kernel", "victim_kernel"),
    ("[uv]ictim_kernel", "victim_kernel"),
    ("it's a \"*\" kernel", "it's a \"victim\" kernel"),
    ("two words *", "two words victim"),
    ("line\n*", "line\nvictim"),
    ("esc\x1b]0;*\x07 \u202e*", "esc\x1b]0;title\x07 \u202evictim"),
]


def _spillway_on_path(tmp_path: Path) -> dict:
    """An environment whose `spillway` is this checkout's (the printed command names it)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    script = folder / "spillway"
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m spillway \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def _build(path: Path, scratch: dict[str, int]) -> Path:
    path.write_bytes(synthetic_elf.code_object(synthetic_elf.kernel_metadata(name, scratch=value)
                                               for name, value in scratch.items()))
    return path


def _sarif_commands(stdout: str) -> dict[str, str]:
    """The accept command of each failing kernel (by key), from check's SARIF."""
    results = json.loads(stdout)["runs"][0]["results"]
    return {r["properties"]["key"]: r["message"]["text"].split("accept with: ", 1)[1] for r in results}


def _entries(baseline: Path) -> dict[str, dict]:
    return {e["key"]: e["targets"][0] for e in json.loads(baseline.read_text())["kernels"]}


def test_the_printed_command_accepts_exactly_the_failing_kernel(tmp_path, capsys):
    """All cases in one build (cheap): each printed command, run by bash, accepts its kernel only;
    the siblings, never named, stay refused to the end."""
    hostiles = [hostile for hostile, _ in CASES]
    siblings = sorted({sibling for _, sibling in CASES})
    for hostile, sibling in CASES:
        assert fnmatch.fnmatchcase(sibling, hostile)           # the old glob form accepted the sibling too
    env = _spillway_on_path(tmp_path)
    old = _build(tmp_path / "old.co", {name: 0 for name in hostiles + siblings})
    new = _build(tmp_path / "new.co", {**{name: 64 for name in hostiles}, **{name: 32 for name in siblings}})
    baseline = tmp_path / "base line's.json"           # a path that needs quoting too
    assert run_cli(capsys, "baseline", "write", old, "-o", baseline, "--note", "n").status == 0

    checked = run_cli(capsys, "check", new, "--baseline", baseline, "--format", "sarif")
    assert checked.status == 1, checked.err
    commands = _sarif_commands(checked.out)
    assert set(commands) == set(hostiles + siblings)
    table = run_cli(capsys, "check", new, "--baseline", baseline).out
    for done, hostile in enumerate(hostiles, 1):
        command = commands[hostile]
        assert command.isprintable() and "--allow-key" in command and "--allow " not in command, command
        assert command in table                              # the table prints the same command
        accepted = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=120)
        # The others still went up without being named: kept, and the exit status says so.
        assert accepted.returncode == 1, accepted.stderr
        assert accepted.stderr.count("spillway: kept ") == len(siblings) + len(hostiles) - done, accepted.stderr
        entries = _entries(baseline)
        assert entries[hostile]["scratch"] == 64 and "allow" not in entries[hostile]
        assert entries[hostile]["reason"] == "TEXT"
        for sibling in siblings:
            assert entries[sibling]["allow"] == {"scratch": 0} and "reason" not in entries[sibling]

    again = run_cli(capsys, "check", new, "--baseline", baseline, "--format", "sarif")
    assert again.status == 1 and set(_sarif_commands(again.out)) == set(siblings)


def test_every_format_prints_the_exact_form(tmp_path, capsys):
    hostile, sibling = CASES[0]
    old = _build(tmp_path / "old.co", {hostile: 0, sibling: 0})
    new = _build(tmp_path / "new.co", {hostile: 64, sibling: 0})
    baseline = tmp_path / "baseline.json"
    assert run_cli(capsys, "baseline", "write", old, "-o", baseline, "--note", "n").status == 0
    want = accept_command([str(new)], str(baseline), [hostile])
    assert want.endswith("--allow-key '*kernel*' --reason TEXT")
    for fmt in ("table", "markdown", "github", "junit", "sarif", "html"):
        out = tmp_path / f"check.{fmt}"
        result = run_cli(capsys, "check", new, "--baseline", baseline, "--format", fmt, "-o", out)
        assert result.status == 1, (fmt, result.err)
        text = out.read_text()
        if fmt == "junit":
            text = "\n".join(f.get("message") for f in ET.fromstring(text).iter("failure"))
        elif fmt == "sarif":
            text = "\n".join(r["message"]["text"] for r in json.loads(text)["runs"][0]["results"])
        elif fmt == "html":
            text = "\n".join(read_page_data(text)["notes"])
        assert "--allow-key" in text and "--allow " not in text, fmt
        if fmt != "github":                     # (an annotation escapes its own way)
            assert want in text, fmt
    # baseline write's refused update prints it too
    update = run_cli(capsys, "baseline", "write", new, "-o", baseline)
    assert update.status == 1
    assert "accept with: spillway baseline write" in update.err and "--allow-key '*kernel*'" in update.err


# Every character class a shell, terminal or log acts on, and undecodable bytes (surrogateescape).
WORDS = ["plain", "*kernel*", "a b", "it's", 'say "x"', "back\\slash", "$HOME", "`id`", "!!", "semi;colon",
         "new\nline", "cr\rret", "tab\tx", "esc\x1b[31m", "bell\x07", "del\x7f", "c1\x85\x9b", "bidi\u202e\u2066",
         "nbsp\u00a0zw\u200b", "émoji 🙂", "bytes\udcff\udc80", "hex\x1bc", "", "-x"]


def test_shell_word_round_trips_through_bash_and_prints_nothing_raw():
    quoted = [shell_word(word) for word in WORDS]
    for word, text in zip(WORDS, quoted):
        assert text.isprintable(), (word, text)
        assert "\x1b" not in text and "\n" not in text
    script = "printf '%s\\0' " + " ".join(quoted)
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True, timeout=30).stdout
    assert out.split(b"\0")[:-1] == [os.fsencode(word) for word in WORDS]
    # Plain words keep shlex's form (the golden outputs' commands): only the dangerous ones change.
    assert shell_word("*kernel*") == "'*kernel*'" and shell_word("a b") == "'a b'" and shell_word("x") == "x"
    assert shell_word("new\nline") == "$'new\\nline'" and shell_word("it's") == "$'it\\'s'"
    assert shell_word("bidi\u202e") == "$'bidi\\xe2\\x80\\xae'" and shell_word("b\udcff") == "$'b\\xff'"


def test_allow_key_is_exact_and_pairs_with_reasons_in_order(tmp_path, capsys):
    from support.gate_fixtures import assert_one_line_error, record, run_cli, write_report

    report = tmp_path / "r.json"
    write_report(report, [record("*kernel*"), record("victim_kernel"), record("other")])
    out = tmp_path / "b.json"
    assert run_cli(capsys, "baseline", "write", report, "-o", out, "--note", "n").status == 0
    write_report(report, [record("*kernel*", scratch=16), record("victim_kernel", scratch=16),
                          record("other", scratch=16)])
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", out, "--allow-key", "*kern*",
                                  "--reason", "r"), "--allow-key '*kern*' matches no kernel (the stable key, exactly)")
    assert_one_line_error(run_cli(capsys, "baseline", "write", report, "-o", out, "--allow-key", "*kernel*",
                                  "--allow", "oth*", "--reason", "a", "--reason", "b", "--reason", "c"),
                          "2 --allow/--allow-key but 3 --reason")
    run = run_cli(capsys, "baseline", "write", report, "-o", out, "--allow", "oth*", "--allow-key", "*kernel*",
                  "--reason", "for other", "--reason", "for the starred one")
    assert run.status == 1 and run.err.count("spillway: kept ") == 1 and "victim_kernel" in run.err
    reasons = {e["key"]: e["targets"][0].get("reason") for e in json.loads(out.read_text())["kernels"]}
    assert reasons == {"*kernel*": "for the starred one", "other": "for other", "victim_kernel": None}
