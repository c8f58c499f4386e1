"""spillway.untrusted, sink by sink, on the hostile names of
tests/data/hostile/make_hostile.py; and the readers of tests/support/
hostile_sinks.py (the runner, Markdown, a terminal) shown to flag a bad
sample first, so that their silence on spillway's output means something."""

from __future__ import annotations

import importlib.util
import io
import json

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from spillway import untrusted
from spillway.render.github import capped_summary
from support.hostile_sinks import (RunnerLog, annotations, markdown_findings, markdown_tokens, runner_findings,
                                   runner_lines, terminal_findings)

from conftest import DATA

_spec = importlib.util.spec_from_file_location("make_hostile", DATA / "hostile" / "make_hostile.py")
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)
NAMES = {**hostile.NAMES, "target": hostile.HOSTILE_TARGET, "comment": hostile.COMMENT,
         "not_utf8_path": "tree/hostile\udcff\udcfe.co"}


# -- the readers flag what they must -------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("x\n::error::forged", ["error"]),
    ("x\r::warning title=t::forged", ["warning"]),                  # CR ends a line too
    ("x\r\n  ::notice::forged", ["notice"]),                        # leading blanks
    ("\u3000\xa0::error::forged", ["error"]),                        # TrimStart's Unicode white space
    ("::ERROR::forged", ["ERROR"]),                                  # names ignore case
    ("some text ##[error]legacy anywhere", ["error"]),
    ("::add-mask::secret", ["add-mask"]),
    ("::stop-commands::evil", ["stop-commands"]),
    ("::error no-separator", []),
    ("::unknown::x", []),
    ("text :: error::x", []),
])
def test_the_runner_model_reads_commands_as_the_runner_does(text, expected):
    assert [c.name for c in RunnerLog().feed(text).commands] == expected


def test_the_runner_model_stops_and_resumes_as_the_runner_does():
    log = RunnerLog().feed("::stop-commands::tok\n::error::ignored\n##[warning]ignored\n::TOK::\n::error::seen\n")
    assert [c.name for c in log.commands] == ["stop-commands", "TOK", "error"]
    assert log.output == ["::error::ignored", "##[warning]ignored"]
    assert RunnerLog().feed("::add-mask::secret\n").masks == ["secret"]
    assert runner_lines("a\r\nb\rc\nd") == ["a", "b", "c", "d"]


def test_runner_findings_flag_forged_commands_and_pass_spillways_own():
    own = ("::error file=b.json,title=spillway",)
    assert runner_findings("x\n::error::forged", own)
    assert runner_findings("::add-mask::spillway", own)
    assert runner_findings("::stop-commands::0123456789abcdef0123456789abcdef\nno resume\n", own)
    assert runner_findings("a ##[error]b", own)
    token = "0123456789abcdef0123456789abcdef"
    assert runner_findings(f"::stop-commands::{token}\n::error::hidden\n::{token}::\n"
                           f"::error file=b.json,title=spillway check::ok\n", own) == []


@pytest.mark.parametrize("markdown", [
    "| `a` | [link](https://evil.example) |", "![image](https://evil.example/x.png)", "<img src=x>",
    "x <!-- hides the rest", "<!--\nhidden\n-->", "`unclosed code", "a ``` b ``` c ``` d",
    "hostile outside code", "see www.evil.example",
])
def test_the_markdown_reader_flags_links_images_html_and_text_out_of_code(markdown):
    assert markdown_findings(markdown)


def test_the_markdown_reader_passes_code_and_spillways_own_html():
    text = ("<!-- spillway check: written by spillway; safe to overwrite with spillway -->\n**spillway check**\n\n"
            "| kernel |\n|---|\n| `hostile<img src=x>[a](https://evil.example)` |\n\n"
            "<details><summary>3 kernels</summary>\n\n- `hostile`\n\n</details>\n")
    assert markdown_findings(text) == []


@pytest.mark.parametrize("text", ["\x1b[2J", "\x1b]0;title\x07", "a\x9bb", "\u202e", "\u2066", "\x7f", "\u2028",
                                  "\x00", "\r", "\udcff"])
def test_the_terminal_reader_flags_controls(text):
    assert terminal_findings(f"ok {text} ok")
    assert terminal_findings(f"\x1b[1mok\x1b[0m {text}", styles=True)


def test_the_terminal_reader_passes_lines_tabs_and_colours_on_a_terminal():
    assert terminal_findings("a\tb\nc") == []
    assert terminal_findings("\x1b[1;31mred\x1b[0m", styles=True) == []
    assert terminal_findings("\x1b[1;31mred\x1b[0m")


# -- one line of a log or a terminal --------------------------------------------------------------

@pytest.mark.parametrize("label", sorted(NAMES))
def test_a_hostile_name_is_one_inert_visible_line(label):
    name = NAMES[label]
    bad = runner_findings(name) + terminal_findings(name)
    shown = untrusted.visible(name)
    assert runner_findings(shown) == [] and terminal_findings(shown) == []
    assert "\n" not in shown and "\r" not in shown and "##[" not in shown
    assert untrusted.visible(shown) == shown          # once is enough: escaping twice changes nothing
    if bad:       # (the reader saw the raw name: the escaping is what made it inert)
        assert shown != name


def test_visible_shows_what_it_escapes():
    assert untrusted.visible("a\nb\rc\td\x1b\x7f\x9b\u202e\u2028") == "a\\nb\\rc\\td\\x1b\\x7f\\x9b\\u202e\\u2028"
    assert untrusted.visible("x\udcff.co") == "x\\xff.co"                     # a byte that was not UTF-8
    assert untrusted.visible("a ##[error]b ###[") == "a \\x23#[error]b #\\x23#["
    assert untrusted.visible(" \u3000::error::x") == " \u3000\\x3a:error::x"
    assert untrusted.visible("ns::error::kernel") == "ns::error::kernel"    # "::" inside a C++ name stays
    for ordinary in ("void ns::k<int, 3>(float*)", "gfx90a:sramecc+:xnack-", "librocsparse.so (bundle 2)", "é 𝔘"):
        assert untrusted.visible(ordinary) is ordinary


# Text each_visible is asked about: ASCII (its fast path: a byte table), the characters visible
# escapes, the blanks and marks a workflow command hides behind, and the rest of Unicode.
_COLUMN_TEXT = st.text(st.one_of(st.sampled_from("ab:#[ \t\n\r\x00\x1b\x7f\x9b\xa0\u3000\u202e\u2028\udcff"),
                                 st.characters()), max_size=12)


@given(st.lists(_COLUMN_TEXT, max_size=6))
def test_each_visible_says_yes_only_when_visible_changes_nothing(texts):
    """A TSV column skips visible's call per cell when each_visible says so: it may say
    no for a column visible leaves alone (then every cell goes through visible), never
    yes for one it changes."""
    unchanged = all(untrusted.visible(text) == text for text in texts)
    assert not untrusted.each_visible(texts) or unchanged
    # (no only for what isprintable refuses, "##[" or a leading "::" in some text, or a "##[" across two)
    expected = (all(t.isprintable() and "##[" not in t and not t.lstrip().startswith("::") for t in texts)
                and "##[" not in "".join(texts))
    assert untrusted.each_visible(texts) == expected


@pytest.mark.parametrize("label", sorted(NAMES))
def test_a_column_holding_a_hostile_name_is_made_visible(label):
    """One hostile name among ordinary ones: the TSV column (render.grid.tsv_column)
    is each cell's tsv_cell, the hostile one escaped."""
    from spillway.render.grid import tsv_cell, tsv_column

    column = ("void k<int>(float*)", NAMES[label], "ns::k()", NAMES[label])
    made = tsv_column(column, set())
    assert list(made) == [tsv_cell(text) for text in column]
    assert list(tsv_column((column[0], column[2]), set())) == [column[0], column[2]]     # (as they are)


def test_every_ascii_character_but_the_controls_is_printable():
    """each_visible's ASCII path: isprintable refuses exactly U+0000-U+001F and U+007F."""
    assert [c for c in range(128) if not chr(c).isprintable()] == [*range(32), 127]
    for code in range(128):
        assert untrusted.each_visible([f"a{chr(code)}b"]) == (chr(code).isprintable())


def test_a_name_is_cut_with_a_marker():
    assert untrusted.cut("x" * 10, 4) == "xxxx… (+6 characters)"
    assert untrusted.cut("short", 10) == "short"


# -- Markdown ------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", sorted(NAMES))
def test_a_hostile_name_is_one_closed_code_span_in_a_table(label):
    name = NAMES[label]
    cell = untrusted.markdown_code(name)
    table = f"| kernel | target |\n|---|---|\n| {cell} | gfx1100 |\n"
    assert markdown_findings(table) == []
    (code,) = [c for t in markdown_tokens(table) if t.type == "inline" for c in t.children
               if c.type == "code_inline"]
    assert code.content == untrusted.visible(name)            # the whole name, one line, as a log shows it


def test_bad_markdown_from_the_old_code_span_is_flagged():
    """spillway's code spans before issue 30: at most three backticks, the text as it is."""
    def old_code(text):
        text = text.replace("|", "\\|")
        fence = "``" if "``" not in text else "```"
        return f"`{text}`" if "`" not in text else f"{fence} {text} {fence}"

    for label in ("three_backticks", "newline", "comment"):
        text = f"| k |\n|---|\n| {old_code(NAMES[label])} |\n\nafter\n"
        assert markdown_findings(text) or runner_findings(text), label


def test_a_long_name_in_markdown_is_cut_visibly():
    cell = untrusted.markdown_code("k" * (4 << 20))
    assert len(cell) < untrusted.MARKDOWN_NAME_LIMIT + 100 and "(+4,193,792 characters)" in cell
    assert untrusted.MARKDOWN_NAME_LIMIT == untrusted.LINE_STRING_LIMIT == 512     # (issue 38: every line output)


def test_the_summary_is_capped_with_its_blocks_closed():
    rows = [f"| `kernel{i}` | {'x' * 200} |" for i in range(20000)]
    text = "\n".join(["**spillway check**", "", "<details><summary>rows</summary>", "", "| k | v |", "|---|---|",
                      *rows, "", "</details>", "", "```sh", "spillway baseline write " + "y" * 500, "```", ""])
    capped = capped_summary(text, 100_000)
    assert len(capped.encode()) <= 100_000 < len(text)
    assert capped.rstrip().endswith("more lines not shown (GitHub keeps at most 1 MiB of job summary per step; "
                                    "`--format json` lists every kernel).")
    assert "</details>" in capped and markdown_findings(capped) == []
    fenced = capped_summary("a\n\n```sh\n" + "z\n" * 100_000 + "```\n", 10_000)
    assert fenced.count("```") == 2 and len(fenced) <= 10_000


# -- workflow commands ----------------------------------------------------------------------------

@pytest.mark.parametrize("label", sorted(NAMES))
def test_an_annotation_is_one_command_whatever_the_name(label):
    name = NAMES[label]
    line = untrusted.annotation("error", f"{name}: scratch 64 B/lane", file=f"base {name}.json",
                                title=f"spillway check: {name}")
    assert "\n" not in line and "\r" not in line
    (note,) = annotations(line)
    assert note.data == untrusted.visible(f"{name}: scratch 64 B/lane")
    assert note.properties["title"] == untrusted.visible(f"spillway check: {name}")[:untrusted.ANNOTATION_TITLE_LIMIT]
    assert note.properties["file"] == untrusted.visible(f"base {name}.json")
    assert terminal_findings(note.data) == [] and runner_findings(note.data) == []


def test_an_annotation_stays_within_githubs_limits():
    line = untrusted.annotation("error", "m" * (4 << 20), title="t" * 1000)
    (note,) = annotations(line)
    assert len(note.data) <= untrusted.ANNOTATION_MESSAGE_LIMIT and note.data.endswith("characters)")
    assert len(note.properties["title"]) <= untrusted.ANNOTATION_TITLE_LIMIT


def test_the_old_annotation_escapes_let_a_legacy_command_through():
    """Before issue 30: %, CR, LF escaped, nothing else: ##[ in a message was a second command."""
    message = NAMES["legacy_mask"].replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    assert RunnerLog().feed(f"::error title=t::{message}").masks == []      # (v2 parses first: one command)
    assert runner_findings(f"spillway: kernel {NAMES['legacy_mask']}")


# -- JSON bytes -----------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text())
def test_json_log_safe_keeps_every_string_exact(text):
    for data in (orjson.dumps({"name": text, "x": [text, 1]}), json.dumps([text], ensure_ascii=False).encode()):
        safe = untrusted.json_log_safe(data)
        assert json.loads(safe) == json.loads(data)
        assert b"##[" not in safe and terminal_findings(safe.decode()) == []


def test_json_log_safe_leaves_ordinary_documents_alone():
    data = orjson.dumps({"name": "void ns::k<int>(float*) é", "n": 3}, option=orjson.OPT_INDENT_2)
    assert untrusted.json_log_safe(data) is data


# -- standard output and error ---------------------------------------------------------------------

class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_the_log_stream_holds_every_write_to_a_log_lines_rules():
    raw = Pipe()
    stream = untrusted.LogStream(raw, bracket=False, block=True)
    for piece in ("ok ##", "[error]x\n", ":", ":error::y\n", "  ::warning::z\x1b[2J\u202e\n", "a\nb ##[c]\n"):
        stream.write(piece)
    text = raw.getvalue()
    assert runner_findings(text) == [] and terminal_findings(text) == []
    assert text == "ok ##\\x5berror]x\n:\\x3aerror::y\n  \\x3a:warning::z\\x1b[2J\\u202e\na\nb \\x23#[c]\n"


def test_the_log_stream_keeps_colours_on_a_terminal_only():
    class Terminal(Pipe):
        def isatty(self) -> bool:
            return True

    for raw, kept in ((Terminal(), True), (Pipe(), False)):
        untrusted.LogStream(raw, bracket=False, block=True).write("\x1b[1mbold\x1b[0m \x1b]0;t\x07\n")
        assert ("\x1b[1mbold" in raw.getvalue()) == kept and "\x1b]" not in raw.getvalue()


def test_brackets_under_github(monkeypatch):
    out, err = Pipe(), Pipe()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    untrusted.install()
    try:
        print("verdict ::error::x")
        untrusted.command("::error file=b.json,title=spillway check::own")
        print("table line")
        print("spillway: warning: one line", file=__import__("sys").stderr)
        print("last line")
    finally:
        untrusted.uninstall()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("::stop-commands::") and lines[2] == f"::{lines[0].split('::')[2]}::"
    assert lines[3] == "::error file=b.json,title=spillway check::own"
    # stderr's line closed stdout's bracket first (each stream's brackets are whole on their own)
    assert lines[4].startswith("::stop-commands::") and lines[5] == "table line" and lines[6].startswith("::")
    assert err.getvalue().splitlines()[1] == "spillway: warning: one line"
    for text in (out.getvalue(), err.getvalue()):
        assert runner_findings(text, ("::error file=b.json,title=spillway",)) == []
    assert [c.data for c in annotations(out.getvalue())] == ["own"]
