"""The documentation stays true to the code: the generated references
(docs/cli.md from the argparse definitions, docs/schemas.md from the published
schemas) are what their scripts write now, every relative link of README.md and
docs/ reaches a file (and its anchor), every command has its page, the
README's test command is the one .ci/run runs, and the README stays short (it
is also the package index page: pyproject.toml's readme)."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README = REPO / "README.md"
# About 200 lines (issue 38): the rest belongs on a page of docs/.
README_MAX_LINES = 250


def _script(name: str):
    path = REPO / "scripts" / name
    spec = importlib.util.spec_from_file_location(name.replace("-", "_").removesuffix(".py"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("script, page", [("generate-cli-reference.py", "cli.md"),
                                          ("generate-schema-reference.py", "schemas.md")])
def test_generated_reference_is_current(script, page):
    written = (DOCS / page).read_text()
    assert written == _script(script).render(), \
        f"docs/{page} is stale: run scripts/{script} and commit docs/{page}"


def test_cli_reference_would_notice_a_new_option(monkeypatch):
    """The comparison above can fail: an option added to a parser changes the page."""
    from spillway.cli import report
    module = _script("generate-cli-reference.py")
    before = module.render()
    register = report.register

    def with_extra(subparsers):
        register(subparsers)
        subparsers.choices["report"].add_argument("--an-option-for-this-test", help="only in this test")

    monkeypatch.setattr(report, "register", with_extra)
    after = module.render()
    assert before != after and "--an-option-for-this-test" in after and "only in this test" in after


def test_schema_reference_covers_every_published_schema():
    text = (DOCS / "schemas.md").read_text()
    for path in sorted((DOCS / "schemas").glob("*.json")):
        assert f"(schemas/{path.name})" in text, path.name


# --- links --------------------------------------------------------------------------------------

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)


def _without_code(text: str) -> str:
    text = _FENCE.sub("", text)
    return _CODE_SPAN.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, Markdown and punctuation dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)    # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text())
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    found.update(_HTML_ANCHOR.findall(text))
    return found


def links(path: Path) -> list[str]:
    text = _without_code(path.read_text())
    return _LINK.findall(text) + _HTML_LINK.findall(text)


def broken_links(path: Path) -> list[str]:
    broken = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):     # https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading or anchor #{anchor} there")
    return broken


@pytest.mark.parametrize("page", _pages(), ids=lambda page: str(page.relative_to(REPO)))
def test_relative_links_reach_a_file_and_anchor(page):
    assert broken_links(page) == []


def test_link_check_finds_a_broken_link(tmp_path):
    """The checker itself: a missing file, a missing anchor and a link in code (ignored)."""
    (tmp_path / "other.md").write_text("# A heading (`with code`)\n\n<a id=\"kept\"></a>\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-heading-with-code) [ok](other.md#kept) [ok](#here)\n\n## Here\n\n"
                    "[gone](missing.md) [no anchor](other.md#nowhere) `[in code](missing-too.md)`\n"
                    "![picture](missing.png)\n")
    assert broken_links(page) == ["missing.md: no such file", "other.md#nowhere: no heading or anchor #nowhere there",
                                  "missing.png: no such file"]


def test_slugs_are_githubs():
    assert slug("What the machine code shows (`--isa`)") == "what-the-machine-code-shows---isa"
    assert slug("One kernel's code (`spillway code`)") == "one-kernels-code-spillway-code"
    assert slug("`spillway matrix list`") == "spillway-matrix-list"
    assert slug("Source lines: `clang-22-lines` and debug twins") == "source-lines-clang-22-lines-and-debug-twins"


# --- the README and the pages -----------------------------------------------------------------

def test_every_command_has_a_page_the_readme_links():
    from spillway.cli import SUBCOMMANDS
    readme_links = set(links(README))
    for module in SUBCOMMANDS:
        name = module.replace("_", "-")
        assert (DOCS / f"{name}.md").is_file(), f"spillway {name} has no page docs/{name}.md"
        assert f"docs/{name}.md" in readme_links, f"README.md does not link docs/{name}.md"
    index = set(links(DOCS / "index.md"))
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "index.md":
            assert page.name in index, f"docs/index.md does not link {page.name}"


def test_readme_test_command_is_ci_run():
    """.ci/run runs the README's test command (with pytest options of its own after it)."""
    ci = [shlex.split(line) for line in (REPO / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    commands = [words for words in ci if "scripts/run-tests.sh" in words]
    assert len(commands) == 1, ci
    readme = README.read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    in_readme = [shlex.split(line, comments=True) for line in quick_start.splitlines()
                 if "scripts/run-tests.sh" in line]
    assert in_readme, "the README's Quick start names no test command"
    for words in in_readme:
        assert commands[0][:len(words)] == words, (words, commands[0])


def test_readme_is_short():
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, \
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move the detail to a page of docs/"


# --- the README's examples are real output ------------------------------------------------------

# Their output depends on the machine: which toolchains are installed, where spillway is.
_MACHINE_DEPENDENT = ("spillway matrix list", "spillway cmake-dir")
_EXAMPLE_COLUMNS = "100"


def readme_examples() -> list[tuple[str, list[str]]]:
    """Each ``$ spillway ...`` block of the README: the command and the output shown ("..." marks
    lines left out)."""
    examples = []
    for block in re.findall(r"^```\n(\$ spillway .*?)^```$", README.read_text(), re.MULTILINE | re.DOTALL):
        command, *shown = block.rstrip("\n").split("\n")
        examples.append((command[2:], shown))
    return examples


def _shown_in(shown: list[str], printed: list[str]) -> bool:
    """The shown lines are the printed ones, each run between "..." in order (a run that opens the
    block is the output's start, one that closes it its end)."""
    runs: list[list[str]] = [[]]
    for line in shown:
        if line == "...":
            runs.append([])
        else:
            runs[-1].append(line)
    position = 0
    for index, run in enumerate(runs):
        anchored_start = index == 0
        anchored_end = index == len(runs) - 1
        found = None
        for start in ([0] if anchored_start else range(position, len(printed) - len(run) + 1)):
            if printed[start:start + len(run)] == run and (not anchored_end or start + len(run) == len(printed)):
                found = start
                break
        if found is None:
            return False
        position = found + len(run)
    return True


def test_readme_examples_show_what_the_commands_print(tmp_path):
    import os
    import subprocess
    import sys

    if os.environ.get("NIX_BUILD_TOP"):
        # The flake's checks.tests runs the suite on the Nix-built package with the build's inputs
        # only; the README's examples are a checkout's (its matrix, its tools), held in .ci/run.
        pytest.skip("the README's examples run in a checkout (.ci/run), not inside a Nix build")
    examples = readme_examples()
    assert {command.split()[1] for command, _ in examples} >= {"report", "code", "baseline", "check", "compare",
                                                               "matrix", "schema", "cmake-dir"}
    # The examples name tests/data/isa/co/... and write build/...: run them in a folder of their own.
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "isa").symlink_to(REPO / "tests" / "data" / "isa")
    (tmp_path / "build").mkdir()
    for folder in ("matrix", "checks"):                  # the matrix's cells file and baselines
        (tmp_path / folder).symlink_to(REPO / folder)
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    environment.update(COLUMNS=_EXAMPLE_COLUMNS, PYTHONPATH=os.pathsep.join(
        [str(REPO / "checker"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    for command, shown in examples:             # in order: the check reads the baseline written before it
        words = shlex.split(command)
        run = subprocess.run([sys.executable, "-m", "spillway", *words[1:]], cwd=tmp_path, env=environment,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        printed = [line.rstrip() for line in run.stdout.rstrip("\n").split("\n")]
        if command.startswith(_MACHINE_DEPENDENT):
            assert run.returncode == 0 and printed[0].split("/")[-1] == shown[0].split("/")[-1], (command, run.stdout)
            continue
        assert _shown_in(shown, printed), f"README.md's example `{command}` is not what it prints now:\n" + \
            "\n".join(printed)


def test_example_matching_sees_a_changed_line():
    printed = ["a", "b", "c", "d"]
    assert _shown_in(["a", "b", "c", "d"], printed)
    assert _shown_in(["a", "..."], printed) and _shown_in(["...", "c", "d"], printed)
    assert _shown_in(["a", "...", "c", "d"], printed)
    assert not _shown_in(["a", "b"], printed)                 # the rest is not marked as left out
    assert not _shown_in(["a", "x", "..."], printed)
    assert not _shown_in(["...", "b", "c"], printed)          # not the end
