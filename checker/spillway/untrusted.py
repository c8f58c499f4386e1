"""Text from the binaries spillway reads, made safe for each place it is shown.

Kernel names, symbols, target IDs, member names inside wheels, ar archives
and folders, kpack keys and recorded command lines are written by whoever
built the binary: in CI, a third party.  Each sink has its own rule, here
once (docs/untrusted.md, "Running on untrusted binaries"):

- ``visible``: one line of a log or a terminal.  Every control character
  (C0 with tab, newline and carriage return, DEL, C1), the bidirectional
  overrides, isolates and marks, and the line and paragraph separators are
  shown as escapes (``\\n``, ``\\x1b``, ``\\u202e``); a byte of a file name that
  is not UTF-8 (surrogateescape, PEP 383) as ``\\xNN``.  GitHub's runner reads
  a workflow command at the start of a line (after any white space:
  ``::error::``) and the legacy ``##[error]`` anywhere in one, so the ``#``
  that starts ``##[`` is written ``\\x23`` and a ``::`` that starts the text
  (after blanks) as ``\\x3a:``.  A backslash is left as it is (names never
  hold one; shell-quoted commands would break).
- ``shown``: a line output (a terminal, GitHub's log and job summary,
  Markdown, JUnit's text) shows at most LINE_STRING_LIMIT characters of any
  one string from a binary, cut with a visible marker (``cut``); JSON, SARIF
  and HTML keep it whole.  The renderers of line outputs hand ``shown`` (or a
  function over it: ``markdown_code``) to the wordings of gate/ as their
  ``quote``: the models and their wordings carry the raw text.
- ``markdown_code``: a code span that nothing in it can close (a fence longer
  than any run of backticks in it), with ``|`` escaped for a GitHub table and
  the text ``visible`` first (no line break, no HTML, link or image can come
  out of a code span).  Names in Markdown are never outside code spans.
- ``annotation_data`` / ``annotation_property``: the runner's own escapes
  (``%``, CR, LF; ``:`` and ``,`` in properties) over ``visible`` text, cut to
  GitHub's limits (ANNOTATION_MESSAGE_LIMIT, ANNOTATION_TITLE_LIMIT).
- ``json_log_safe``: JSON bytes (JSON, SARIF, baselines) keep every name
  exact, but a document printed to a log carries no ``##[`` and no raw C1,
  DEL, bidirectional control or line separator: those become ``\\u0023`` (the
  first ``#`` of ``##[``) and ``\\uXXXX``, which parse back to the same text.
- ``LogStream``: standard output and error while a command runs
  (``install``): whatever reaches them as text is held to ``visible``'s rules
  line by line (a name that reached a line unescaped still cannot command
  the runner or the terminal), and under GitHub Actions
  (``GITHUB_ACTIONS=true``, the stream not a regular file) the text is
  bracketed by ``::stop-commands::TOKEN`` ... ``::TOKEN::`` with a fresh random
  token, as GitHub documents, so the runner runs no command until spillway's
  own.  spillway's own workflow commands go through ``command`` only, outside
  any bracket.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import stat
import sys
from itertools import repeat
from typing import IO, Collection

# -- one line of a log or a terminal -------------------------------------------------------

# C0 and C1 controls, DEL; U+061C ARABIC LETTER MARK, U+200E/F LRM/RLM, U+2028/9 LINE/PARAGRAPH
# SEPARATOR, U+202A-E embeddings and overrides, U+2066-9 isolates; lone surrogates.
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# The legacy workflow command: the first "#" of any "##[".
_LEGACY = re.compile(r"#(?=#\[)")
# A workflow command at the start of the text: blanks (the runner trims .NET white space), then "::".
_LEADING_COMMAND = re.compile(r"\A(\s*):(?=:)")


def _escape(match: re.Match) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:          # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` as one line of a log or a terminal: see the module's docstring.
    Ordinary text (printable, no ``##[``, not starting with ``::``) is returned
    as it is."""
    if not text.isprintable():      # (False for every character escaped: Cc, Cf, Zl, Zp, Cs)
        text = _HIDDEN.sub(_escape, text)
    if "##[" in text:
        text = _LEGACY.sub(r"\\x23", text)
    if text.lstrip().startswith("::"):
        text = _LEADING_COMMAND.sub(r"\1\\x3a", text, count=1)
    return text


def each_visible(texts: Collection[str]) -> bool:
    """Whether ``visible`` returns each of ``texts`` as it is (every one printable,
    none holding ``##[`` or starting with ``::`` after blanks: visible's three tests),
    asked of them all at once: a column of a large document (TSV: 178,610 names and
    as many keys) is tested in C over the column joined, not by a call of visible per
    cell.  False: some may change (or ``##[`` spans two of them), so each goes through
    ``visible``."""
    joined = "".join(texts)
    if joined.isascii():
        # An ASCII character is printable unless a control (str.isprintable: Cc), and the
        # bytes are tested by a table at a fraction of isprintable's cost per character.
        if 0 in joined.encode("ascii").translate(_ASCII_PRINTABLE):
            return False
    elif not joined.isprintable():
        return False
    return "##[" not in joined and not any(map(str.startswith, map(str.lstrip, texts), repeat("::")))


# Each byte to 1, the ASCII controls (U+0000-U+001F, U+007F: all ASCII isprintable refuses) to 0.
_ASCII_PRINTABLE = bytes(0 if code < 0x20 or code == 0x7F else 1 for code in range(256))


_UNDECODABLE = re.compile("[\udc80-\udcff]")


def utf8_shown(text: str) -> bytes:
    """``text`` as UTF-8 for a text document (Markdown, a table written with -o): a path's
    undecodable bytes (surrogateescape) shown as ``\\xNN``, as visible shows them."""
    try:
        return text.encode("utf-8")     # no surrogate at all: nothing to show (a document of 100 MB: one pass)
    except UnicodeEncodeError:
        pass
    if not text.isprintable():
        text = _UNDECODABLE.sub(_escape, text)
    return text.encode("utf-8", "backslashreplace")


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters plus a visible marker saying
    how many were left out (``… (+4,194,290 characters)``)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit:,} characters)"


# A line output shows at most this many characters of one string from a binary (a 4 MiB kernel
# name made check print 4 to 12 MiB; a pull-request comment holds 64 KiB).
LINE_STRING_LIMIT = 512


# A sentence that holds such strings whole (a matrix cell's reason, which a downloaded artifact
# may carry: spillway's words around paths, targets, a compiler's error) shows at most this many.
SENTENCE_LIMIT = 4 * LINE_STRING_LIMIT


# A word of a command spillway prints (a kernel's key after --allow-key) stays pasteable: whole up
# to this many characters (long mangled template names pass), cut only past it (a 4 MiB name).
COMMAND_WORD_LIMIT = 4096


def command_word(text: str) -> str:
    """A word of a printed command as a line output shows it (``cut`` past COMMAND_WORD_LIMIT)."""
    return cut(text, COMMAND_WORD_LIMIT)


def shown(text: str, limit: int = LINE_STRING_LIMIT) -> str:
    """A string from a binary as a line output shows it: at most ``limit``
    characters, then a visible marker (``cut``).  Raw otherwise: the sink
    escapes the whole line once."""
    return cut(text, limit)


# -- Markdown -----------------------------------------------------------------------------

# A name in Markdown (the job summary, a pull-request comment) shows at most this many characters.
MARKDOWN_NAME_LIMIT = LINE_STRING_LIMIT
_BACKTICKS = re.compile("`+")


def markdown_code(text: str, limit: int = MARKDOWN_NAME_LIMIT) -> str:
    """``text`` as a code span that survives a GitHub table: one line
    (``visible``), pipes escaped, fenced by more backticks than any run in it,
    cut at ``limit`` characters (``cut``)."""
    text = visible(cut(text, limit)).replace("|", "\\|")
    if "`" not in text:
        return f"`{text}`" if text else "` `"
    fence = "`" * (max(len(run) for run in _BACKTICKS.findall(text)) + 1)
    return f"{fence} {text} {fence}"


_WORD = re.compile(r"[A-Za-z0-9_.:+-]+")
# Running text Markdown reads nothing in: letters, digits, spaces and this punctuation.
_INERT = re.compile(r"[^\W_]+|[ ,.;:()+/=%?'-]+")


def markdown_text(text: str, limit: int = MARKDOWN_NAME_LIMIT) -> str:
    """Running text of spillway's own words: as it is when Markdown reads
    nothing in it (``_INERT`` characters only, no ``::``), else as
    ``markdown_code``.  Text from a binary is never passed here: the
    wordings quote it with ``markdown_code`` themselves."""
    stripped = text.strip()
    inert = (stripped == text and not text.startswith(("-", "+")) and "::" not in text
             and _INERT.sub("", text) == "")
    return text if inert else markdown_code(text, limit)


def markdown_word(text: str) -> str:
    """A target ID or a name made of letters, digits and ``_.:+-`` as it is
    (nothing Markdown reads in it); anything else as ``markdown_code``."""
    return text if _WORD.fullmatch(text) and not text.startswith("::") else markdown_code(text)


# -- GitHub workflow commands -----------------------------------------------------------------

# The runner cuts an annotation's message at 4,096 characters (actions/runner,
# src/Runner.Worker/ExecutionContext.cs, _maxIssueMessageLength); what it cuts
# is what GitHub shows, so spillway cuts first, visibly.
ANNOTATION_MESSAGE_LIMIT = 4096
# An annotation's title: at most 255 characters (GitHub REST API, check runs,
# annotations[].title: "The maximum size is 255 characters").
ANNOTATION_TITLE_LIMIT = 255
_MARKER_ROOM = 40       # "… (+N characters)"


def _fit(text: str, limit: int) -> str:
    return cut(text, limit - _MARKER_ROOM) if len(text) > limit else text


def annotation_data(text: str, limit: int = ANNOTATION_MESSAGE_LIMIT) -> str:
    """A workflow command's data (after ``::``): one visible line the runner
    decodes back (``%25``, ``%0D``, ``%0A``), at most ``limit`` characters decoded."""
    return visible(_fit(text, limit)).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation_property(text: str, limit: int | None = None) -> str:
    """A workflow command's property value (``file=``, ``title=``)."""
    text = visible(_fit(text, limit) if limit else text)
    return (text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            .replace(":", "%3A").replace(",", "%2C"))


def annotation(level: str, message: str, *, file: str = "", title: str = "") -> str:
    """``::error file=F,title=T::MESSAGE`` (``level``: error, warning, notice)."""
    properties = []
    if file:
        properties.append(f"file={annotation_property(file)}")
    if title:
        properties.append(f"title={annotation_property(title, ANNOTATION_TITLE_LIMIT)}")
    return f"::{level}{' ' + ','.join(properties) if properties else ''}::{annotation_data(message)}"


# -- JSON bytes ------------------------------------------------------------------------------

# In UTF-8: DEL, C1 (U+0080-U+009F), U+061C, U+200E/F, U+2028-U+202E, U+2066-U+2069; and "#" before "#[".
_JSON_HIDDEN = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
                          rb"|#(?=#\[)")


def _json_escape(match: re.Match) -> bytes:
    return b"\\u%04x" % ord(match.group().decode("utf-8"))


def json_log_safe(data: bytes) -> bytes:
    """JSON text (UTF-8) with ``##[`` and the characters ``visible`` escapes
    that JSON writers leave raw written as ``\\uXXXX`` escapes: the same
    document once parsed.  Every such character is inside a string (JSON has
    no ``#`` or non-ASCII byte outside one), so the text stays valid;
    ``data`` must hold whole strings (a document, a line, a record).  Ordinary
    documents are returned as they are, after a few scans."""
    if data.isascii() and b"\x7f" not in data and (b"#" not in data or b"##[" not in data):
        return data         # (one byte is found with memchr: most names hold no "#" at all)
    return _JSON_HIDDEN.sub(_json_escape, data)


# -- standard output and error -----------------------------------------------------------------

def github_log(stream: IO | None = None) -> bool:
    """Is text written to ``stream`` read by GitHub's runner as a step's log:
    under GitHub Actions and not a regular file (a redirection to a file is
    no log)."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return False
    if stream is None:
        return True
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return True      # captured (tests) or unknown: treat as the log


# Rich's own escape sequences on a terminal: Select Graphic Rendition (colours, bold) only.
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_LINE_START_COMMAND = re.compile(r"^([^\S\n]*):(?=:)", re.MULTILINE)


def _guarded(text: str, styles: bool) -> str:
    """``text`` (whole lines but maybe the last) held to ``visible``'s rules
    line by line; ``styles``: SGR sequences pass (rich colours a terminal)."""
    if not text.isprintable():
        if styles and "\x1b" in text:
            parts = _SGR.split(text)
            sequences = _SGR.findall(text)
            text = "".join(_HIDDEN_BUT_NEWLINE.sub(_escape, part) + (sequences[i] if i < len(sequences) else "")
                           for i, part in enumerate(parts))
        else:
            text = _HIDDEN_BUT_NEWLINE.sub(_escape, text)
    if "##[" in text:
        text = _LEGACY.sub(r"\\x23", text)
    if "::" in text:
        text = _LINE_START_COMMAND.sub(r"\1\\x3a", text)
    return text


# (A tab and a newline pass: spillway's own text has them; a name's were escaped by ``visible``.)
_HIDDEN_BUT_NEWLINE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                                 "\ud800-\udfff]")


class LogStream(io.TextIOBase):
    """A text stream over standard output or error (``raw``) that writes
    nothing a log or a terminal would take as a command (``_guarded``), and,
    when ``bracket``, brackets what it writes with stop-commands: ``block``
    opens a bracket at the first text and keeps it open until ``close_bracket``
    (standard output: one bracket around the verdict, the table...);
    otherwise each line is bracketed on its own, in one write (standard
    error's messages, so that no bracket stays open on one stream while the
    other prints spillway's annotations)."""

    def __init__(self, raw: IO[str], *, bracket: bool, block: bool):
        super().__init__()
        self.raw = raw
        self.bracket = bracket
        self.block = block
        self.token: str | None = None       # the open bracket's
        self.at_line_start = True
        self.tail = ""                      # the current line's last characters ("#", "##")
        self.pending = ""                   # a line-bracketed stream's unfinished line
        try:
            self.styles = raw.isatty()
        except (AttributeError, ValueError):
            self.styles = False

    # -- io.TextIOBase
    @property
    def encoding(self):            # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8")

    @property
    def errors(self):              # type: ignore[override]
        return getattr(self.raw, "errors", "strict")

    @property
    def buffer(self):
        """The binary stream beneath: documents are written there (they carry
        their own escapes); an open bracket is closed first."""
        self.close_bracket()
        return self.raw.buffer

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        if not self.block and self.pending:
            self._emit_lines(self.pending)
            self.pending = ""
        self.raw.flush()

    def write(self, text: str) -> int:
        if not text:
            return 0
        safe = self._guard(text)
        if not self.bracket:
            self.raw.write(safe)
        elif self.block:
            if self.token is None:
                self.token = _open(self.raw, self.at_line_start)
            self.raw.write(safe)
        else:
            self.pending += safe
            if "\n" in self.pending:
                whole, _, self.pending = self.pending.rpartition("\n")
                self._emit_lines(whole + "\n")
        self.at_line_start = safe.endswith("\n")
        return len(text)

    def _emit_lines(self, text: str) -> None:
        for _name, other in _installed:      # (standard output's bracket: closed before these lines)
            if other is not self:
                other.close_bracket()
        token = secrets.token_hex(16)
        ending = "" if text.endswith("\n") else "\n"
        self.raw.write(f"::stop-commands::{token}\n{text}{ending}::{token}::\n")
        self.raw.flush()

    def _guard(self, text: str) -> str:
        """``text`` held to ``_guarded``'s rules, also where it continues the
        line the last write began ("##" then "[", ":" then ":")."""
        tail = self.tail
        if text.startswith("[") and tail.endswith("##"):
            text = "\\x5b" + text[1:]
        elif text.startswith("#[") and tail.endswith("#"):
            text = "\\x23" + text[1:]
        elif text.startswith(":") and tail.strip() == ":":
            text = "\\x3a" + text[1:]
        safe = _guarded(text, self.styles)
        if "\n" in safe:
            self.tail = safe.rsplit("\n", 1)[1][-64:]
        else:
            self.tail = (tail + safe)[-64:]
        return safe

    def close_bracket(self) -> None:
        """End the open bracket (before spillway's own command, a document, the end)."""
        if self.block and self.token is not None:
            self.raw.write(("" if self.at_line_start else "\n") + f"::{self.token}::\n")
            self.token = None
            self.at_line_start = True
            self.tail = ""
        self.flush()

    def command(self, line: str) -> None:
        """One of spillway's own workflow commands (an annotation), outside any bracket."""
        self.close_bracket()
        self.raw.write(line + "\n")
        self.raw.flush()


def _open(raw: IO[str], at_line_start: bool) -> str:
    token = secrets.token_hex(16)
    raw.write(("" if at_line_start else "\n") + f"::stop-commands::{token}\n")
    return token


_installed: list[tuple[str, LogStream]] = []


def install() -> None:
    """Put LogStreams over ``sys.stdout`` and ``sys.stderr`` (the command
    line does it for each run; ``uninstall`` puts the streams back)."""
    for name, block in (("stdout", True), ("stderr", False)):
        raw = getattr(sys, name)
        if raw is None or isinstance(raw, LogStream):
            continue
        stream = LogStream(raw, bracket=github_log(raw), block=block)
        setattr(sys, name, stream)
        _installed.append((name, stream))


def close_brackets() -> None:
    """Close the brackets open on standard output and error (before a
    document is written to them, before spillway's annotations, at the end)."""
    for name in ("stderr", "stdout"):
        stream = getattr(sys, name)
        if isinstance(stream, LogStream):
            stream.close_bracket()


def command(line: str) -> None:
    """Print one of spillway's own workflow commands on standard output,
    after closing every bracket."""
    close_brackets()
    stream = sys.stdout
    if isinstance(stream, LogStream):
        stream.command(line)
    else:
        print(line, flush=True)


def uninstall() -> None:
    """Close the brackets and put the streams back (at the end of a run, also
    one whose standard output went away: a closed pipe is not an error here)."""
    try:
        close_brackets()
    except (OSError, ValueError):
        pass
    while _installed:
        name, stream = _installed.pop()
        if getattr(sys, name) is stream:
            setattr(sys, name, stream.raw)


def unguarded(stream: IO[str]) -> IO[str]:
    """The stream beneath a LogStream (a progress bar's cursor controls are spillway's own)."""
    return stream.raw if isinstance(stream, LogStream) else stream
