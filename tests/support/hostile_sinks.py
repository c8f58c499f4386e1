"""How the places spillway's output goes read it, for the hostile-input tests
(issue 30): GitHub's runner, a Markdown renderer, a terminal.  Each reader
returns what it found that came from the data (an empty list: nothing).

- ``RunnerLog``: a model of the Actions runner's command processing, written
  from actions/runner's own source (src/Runner.Common/ActionCommand.cs:
  TryParseV2 and TryParse; src/Runner.Worker/ActionCommandManager.cs:
  TryProcessCommand, the stop-commands token, the registered commands and
  the extensions, add-mask):
  - the process's output is read line by line by .NET's StreamReader.ReadLine,
    which ends a line at LF, CR or CR LF;
  - ``::cmd props::data`` counts after leading white space (string.TrimStart:
    char.IsWhiteSpace, Unicode spaces included); the command name is what
    comes before the first space, matched ignoring case against the
    registered commands; properties are comma-separated ``k=v``;
  - the legacy ``##[cmd props]data``: the first ``##[`` anywhere in the line,
    up to the next ``]``; properties separated by ``;``;
  - a line that parses is a command, else output; while commands are stopped
    (``::stop-commands::TOKEN``) only ``::TOKEN::`` (either form, any case)
    is processed, and resumes; ``add-mask`` adds its data as a mask.
- ``markdown_findings``: markdown-it-py (CommonMark with GFM's tables, the
  renderer rich itself depends on): a link, an image, raw HTML (a comment is
  HTML), a backtick outside a code span (an unclosed or broken span), and
  text of the data outside code (what GitHub's extended autolinks and
  emphasis would read).
- ``terminal_findings``: any C0 control but newline and tab, DEL, C1, a
  bidirectional control or mark, a line or paragraph separator, a lone
  surrogate; on a terminal (``styles``) SGR sequences (rich's colours) pass.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# ActionCommandManager registers "stop-commands" and one command per extension
# (internal-set-repo-path only while a plugin runs).
EXTENSIONS = ("set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher", "remove-matcher",
              "debug", "warning", "error", "notice", "group", "endgroup", "echo")
STOP = "stop-commands"


def runner_lines(text: str) -> list[str]:
    """StreamReader.ReadLine: a line ends at LF, CR, or CR LF."""
    return re.split(r"\r\n|\r|\n", text[:-1] if text.endswith("\n") else text) if text else []


def _dotnet_space(char: str) -> bool:
    """char.IsWhiteSpace: Zs, Zl, Zp, U+0009-U+000D, U+0085, U+00A0."""
    return char in "\t\n\x0b\x0c\r\x85\xa0" or unicodedata.category(char) in ("Zs", "Zl", "Zp")


def _trim_start(text: str) -> str:
    at = 0
    while at < len(text) and _dotnet_space(text[at]):
        at += 1
    return text[at:]


@dataclass
class Command:
    name: str
    properties: dict[str, str]
    data: str
    line: str


def _unescape(text: str, mappings: tuple[tuple[str, str], ...]) -> str:
    for token, replacement in mappings:
        text = text.replace(replacement, token)
    return text


# ActionCommand's escape mappings, in its order (the unescaping replaces each in turn).
_DATA = (("\r", "%0D"), ("\n", "%0A"), ("%", "%25"))
_PROPERTY = (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25"))
_LEGACY = ((";", "%3B"), ("\r", "%0D"), ("\n", "%0A"), ("]", "%5D"), ("%", "%25"))


def parse_v2(message: str, registered: set[str]) -> Command | None:
    message = _trim_start(message)
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if name.lower() not in registered:
        return None
    properties = {}
    if space > 0:
        for pair in info[space + 1:].strip().split(","):
            if not pair:
                continue
            key, _, value = pair.partition("=")
            if key and value:
                properties[key] = _unescape(value, _PROPERTY)
    return Command(name, properties, _unescape(message[end + 2:], _DATA), message)


def parse_legacy(message: str, registered: set[str]) -> Command | None:
    at = message.find("##[")
    if at < 0:
        return None
    bracket = message.find("]", at)
    if bracket < 0:
        return None
    info = message[at + 3:bracket]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if name.lower() not in registered:
        return None
    properties = {}
    if space > 0:
        for pair in info[space + 1:].split(";"):
            if not pair:
                continue
            key, _, value = pair.partition("=")
            if key and value:
                properties[key] = _unescape(value, _LEGACY)
    return Command(name, properties, _unescape(message[bracket + 1:], _LEGACY), message)


@dataclass
class RunnerLog:
    """The runner's state over one step's output, fed line by line."""

    registered: set[str] = field(default_factory=lambda: {STOP, *EXTENSIONS})
    stopped: bool = False
    token: str | None = None
    commands: list[Command] = field(default_factory=list)     # processed (stop and resume included)
    masks: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)            # lines shown as text

    def feed(self, text: str) -> "RunnerLog":
        for line in runner_lines(text):
            self.line(line)
        return self

    def line(self, line: str) -> None:
        command = parse_v2(line, self.registered) or parse_legacy(line, self.registered)
        if command is None:
            self.output.append(line)
            return
        if self.stopped:
            if self.token and command.name.lower() == self.token.lower():
                self.commands.append(command)
                self.registered.discard(self.token.lower())
                self.stopped, self.token = False, None
            else:
                self.output.append(line)
            return
        self.commands.append(command)
        if command.name.lower() == STOP:
            self.stopped, self.token = True, command.data
            self.registered.add(command.data.lower())
        elif command.name.lower() == "add-mask":
            self.masks.append(command.data)


# spillway's own: a bracket of 32 hexadecimal digits, annotations that start a line.
_TOKEN = re.compile(r"[0-9a-f]{32}")
_BRACKET_LINE = re.compile(r"^::(stop-commands::)?[0-9a-f]{32}(::)?\n", re.M)


def without_brackets(text: str) -> str:
    """``text`` without spillway's stop-commands lines (``::stop-commands::TOKEN``,
    ``::TOKEN::``): what a run under GitHub Actions prints besides them."""
    return _BRACKET_LINE.sub("", text)


def runner_findings(text: str, own_annotation_prefixes: tuple[str, ...] = ()) -> list[str]:
    """What the runner would do with ``text`` that spillway did not mean:
    any command but spillway's stop-commands brackets (fresh hexadecimal
    tokens, each resumed) and its annotations (lines starting with one of
    ``own_annotation_prefixes``, e.g. ``::error file=out/base.json,title=spillway``),
    any mask; commands left stopped at the end."""
    log = RunnerLog().feed(text)
    found = []
    for command in log.commands:
        name = command.name.lower()
        if name == STOP and _TOKEN.fullmatch(command.data) and command.line == f"::{STOP}::{command.data}":
            continue
        if _TOKEN.fullmatch(command.name) and command.line == f"::{command.name}::":
            continue
        if name in ("error", "warning", "notice") and any(command.line.startswith(p) for p in own_annotation_prefixes):
            continue
        found.append(f"command {command.name!r} from {command.line[:160]!r}")
    found += [f"mask {mask[:80]!r}" for mask in log.masks]
    if log.stopped:
        found.append(f"commands still stopped at the end (token {log.token!r})")
    return found


def annotations(text: str) -> list[Command]:
    """The annotations (error, warning, notice) the runner makes of ``text``."""
    return [c for c in RunnerLog().feed(text).commands if c.name.lower() in ("error", "warning", "notice")]


# -- a terminal -----------------------------------------------------------------------------

_SGR = re.compile(r"\x1b\[[0-9;]*m")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def terminal_findings(text: str, styles: bool = False) -> list[str]:
    """Characters a terminal would act on or reorder (module docstring)."""
    if styles:
        text = _SGR.sub("", text)
    return [f"{match.group()!r} at {match.start()}: {text[max(0, match.start() - 30):match.start() + 10]!r}"
            for match in _CONTROL.finditer(text)][:20]


# -- Markdown -------------------------------------------------------------------------------

def markdown_tokens(text: str):
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").parse(text)


def _walk(tokens):
    for token in tokens:
        yield token
        if token.children:
            yield from _walk(token.children)


def markdown_findings(text: str, data_marks: tuple[str, ...] = ("hostile", "evil.example")) -> list[str]:
    """What a Markdown renderer would make of ``text`` that the data asked
    for: links, images, raw HTML (comments too), a backtick outside code (a
    code span left open or broken), text holding ``data_marks`` outside code
    (the data must stay in code spans: GitHub links bare URLs in text).
    spillway's own HTML (``<details>``, ``<summary>``, its marker comment) is
    allowed on lines of their own."""
    own_html = re.compile(r"\A(<details><summary>[^<>]*</summary>|</details>|<!-- spillway [^<>]*-->)\s*\Z")
    found = []
    for token in _walk(markdown_tokens(text)):
        kind = token.type
        if kind in ("link_open", "image"):
            found.append(f"{kind}: {token.attrs}")
        elif kind == "html_block":
            if not all(own_html.match(line) for line in token.content.strip().splitlines()):
                found.append(f"html_block: {token.content[:120]!r}")
        elif kind == "html_inline":
            found.append(f"html_inline: {token.content[:120]!r}")
        elif kind == "text":
            if "`" in token.content:
                found.append(f"backtick outside code: {token.content[:120]!r}")
            if "<!--" in token.content:      # (CommonMark leaves an unclosed one as text; not every renderer does)
                found.append(f"comment opening outside code: {token.content[:120]!r}")
            for mark in data_marks:
                if mark in token.content:
                    found.append(f"data outside code: {token.content[:120]!r}")
    return found
