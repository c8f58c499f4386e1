"""JUnit XML for ``spillway check --junit FILE`` (and ``--format junit``):
one test case per kernel and metric, so Jenkins, GitLab and CTest dashboards
list failures per kernel.  A baseline kernel no longer built is a failing case
``NAME [built]`` of its target, a target no longer built a failing case
``TARGET [built]`` (issue 31).

The documents validate against the Jenkins xunit plugin's junit-10.xsd
(the schema the tests check them with): ``<testsuites>`` carries name,
tests, failures, errors and time only.  One suite per run, named after the
cell (``spillway matrix``) or the baseline; a cell that could not be checked
gets a file of its own too (one skipped or error case), so a collector sees
every cell.  A comment after the XML declaration marks the file as
spillway's, so a later run may replace it.

A test case's name keeps the kernel's name whole (dashboards key a test's
history on it); the text of a failure, which a CI log shows, shows at most
untrusted.LINE_STRING_LIMIT characters of each string from the binary.
"""

from __future__ import annotations

import re
from itertools import compress
from operator import not_
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, Optional

from spillway.gate.check import CheckResult, Finding, RemovalCommands
from spillway.gate.metrics import METRICS
from spillway.render.models import CheckModel
from spillway.untrusted import command_word, shown, visible

if TYPE_CHECKING:
    from spillway.gate.failure_code import FailureCode

MARKER = b"<!-- spillway junit: written by spillway; safe to overwrite with spillway -->\n"
_HEAD = b'<?xml version="1.0" encoding="utf-8"?>\n' + MARKER

# Test cases per piece of output: the document is written as a stream (a
# library's check is 480,000 cases: as one ElementTree it took 1 GB), in pieces
# of about 256 KB (joined and encoded in the cache, rather than 2 MB each).
_CASES_PER_PIECE = 512


# What XML 1.0 cannot carry: control characters but tab, newline and carriage
# return; lone surrogates (a file name that is not UTF-8); U+FFFE and U+FFFF.
# Shown as visible escapes (``\\x1b``, ``\\xff`` for a byte that was not UTF-8):
# such a name cannot be exact in XML, it can be seen.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# What XML carries but a log must not see raw (spillway.untrusted): DEL, C1 controls,
# bidirectional controls, line and paragraph separators: written as character references,
# exact once parsed; and the legacy workflow command "##[": its first "#" as &#35;.
_REFERENCED = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_LEGACY = re.compile("#(?=#\\[)")


def _shown(match: re.Match) -> str:
    char = match.group()
    return visible(char) if char < "\ufffe" else f"\\u{ord(char):04x}"


def _reference(match: re.Match) -> str:
    return f"&#x{ord(match.group()):x};"


# Escapes, applied in order (``&`` first), with str.replace: a kernel name has
# dozens of < and >, and a substitution with a function per match took 4 of 7 s
# on a library.  An attribute also keeps tab, newline and carriage return as
# references, which a parser keeps (it would turn them into spaces).
_TEXT_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_ATTRIBUTE_ESCAPES = (*_TEXT_ESCAPES, ('"', "&quot;"), ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))
# Text from a binary inside character data: one line (its line breaks as references).
_DATA_ESCAPES = (*_TEXT_ESCAPES, ("\r", "&#13;"), ("\n", "&#10;"))


def _escaped(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    """``text`` with what XML 1.0 cannot carry shown as escapes (one regular
    expression: with a character-by-character pass, check --format junit on
    librocsparse1 6.4.3 took 16.2 s, not 9.6; nothing XML cannot carry is
    printable, so most text skips it), ``escapes`` applied, and what a log must
    not see raw as references."""
    printable = text.isprintable()
    text = text if printable else _NOT_XML.sub(_shown, text)
    for special, reference in escapes:
        if special in text:
            text = text.replace(special, reference)
    if not printable:
        text = _REFERENCED.sub(_reference, text)
    if "##[" in text:
        text = _LEGACY.sub("&#35;", text)
    return text


def _text(text: str) -> str:
    """Character data, escaped."""
    return _escaped(text, _TEXT_ESCAPES)


def _data(text: str) -> str:
    """Character data from a binary (a name, a target): escaped, on one line."""
    return _escaped(text, _DATA_ESCAPES)


def _attribute(text: str) -> str:
    """A quoted attribute value."""
    return f'"{_escaped(text, _ATTRIBUTE_ESCAPES)}"'


def _tag(name: str, attributes: dict[str, str], close: str = " />") -> str:
    """``<name a="1" b="2" />`` (or ``>`` with ``close=">"``), attributes in order."""
    return f"<{name} " + " ".join(f"{key}={_attribute(value)}" for key, value in attributes.items()) + close


def _document(suite: str, tests: int, failures: int, errors: int, skipped: int,
              properties: dict[str, str], pieces: Iterable[str]) -> Iterator[bytes]:
    """The whole file, indented two spaces a level: one <testsuites> holding one
    <testsuite>, its properties, then ``pieces`` (each whole test cases, lines
    four spaces in, a few hundred at once), each encoded on its own."""
    head = [_tag("testsuites", {"name": "spillway", "tests": str(tests), "failures": str(failures),
                                "errors": str(errors), "time": "0"}, ">"),
            "  " + _tag("testsuite", {"name": suite, "tests": str(tests), "failures": str(failures),
                                      "errors": str(errors), "skipped": str(skipped), "time": "0"}, ">")]
    if properties:
        head.append("    <properties>")
        head += ["      " + _tag("property", {"name": name, "value": value}) for name, value in properties.items()]
        head.append("    </properties>")
    yield _HEAD + ("\n".join(head) + "\n").encode("utf-8")
    for piece in pieces:
        yield piece.encode("utf-8")
    yield b"  </testsuite>\n</testsuites>\n"


def _case(classname: str, name: str, inner: str = "") -> str:
    """One <testcase>, with ``inner`` (one element, or none) inside; ``classname``
    and ``name`` quoted already (_attribute)."""
    if not inner:
        return f'    <testcase classname={classname} name={name} time="0" />\n'
    return f'    <testcase classname={classname} name={name} time="0">\n      {inner}\n    </testcase>\n'


# What the quoted names may hold, in characters: all of a library's names, as a
# name recurs once per target (librocsparse1 7.2.4: 17,129 names of 239,806
# kernels, 15 MB), but never more, however many there are.
_QUOTED_CHARACTERS = 32 << 20


class _Opened(dict):
    """Attribute values quoted once each, without the closing quote (a kernel's
    name is followed by its metric: ``"NAME [scratch]"``; a second or later
    target's kernels are written in 0.65 s rather than 1.2 s on librocsparse1
    7.2.4); emptied when full."""

    held = 0

    def __missing__(self, text: str) -> str:
        opened = _attribute(text)[:-1]
        if self.held + len(opened) > _QUOTED_CHARACTERS:
            self.clear()
            self.held = 0
        self[text] = opened
        self.held += len(opened)
        return opened


def suite_name_for(baseline_path: str) -> str:
    """Default suite name: the baseline's file name without .json (a matrix
    cell's baseline is checks/baselines/<cell>.json)."""
    import os

    name = os.path.basename(baseline_path)
    return name[:-5] if name.endswith(".json") else name or "spillway"


def document_chunks(result: CheckResult, suite: Optional[str] = None,
                    accept: Optional[Callable[[Finding], str]] = None,
                    removals: Optional[RemovalCommands] = None,
                    code: Optional[Mapping[tuple[str, str], FailureCode]] = None) -> Iterator[bytes]:
    """The check's JUnit document, piece by piece.  ``accept(finding)``: the
    command that accepts a failure, appended to its message (``removals``: those
    that accept a kernel or target no longer built).  ``code``: the failing
    kernels' machine code by (target, key) (gate.failure_code), a line of each
    failure's text (the line the table shows; the message stays the finding's)."""
    suite = suite or suite_name_for(result.baseline_path)
    gone = len(result.vanished) + len(result.removed_targets)
    failures = len(result.failures) + gone
    tests = len(result.findings) + gone     # (len: of the rows, no Finding made)

    def failure_case(classname: str, row: tuple) -> str:
        finding = Finding(*row)
        message = finding.message()
        if accept is not None:
            message += f"; accept with: {accept(finding)}"
        text = (f"kernel: {_data(shown(finding.name))}\nkey: {_data(shown(finding.key))}\n"
                f"target: {_data(shown(finding.target))}\n"
                f"{_text(METRICS[finding.metric].description)}\n{_data(message)}\n")
        figures = code.get((finding.target, finding.key)) if code else None
        if figures is not None:
            text += f"{_data(figures.text(quote=shown))}\n"
        return _case(classname, f'{opened[finding.name]} [{finding.metric}]"',
                     _tag("failure", {"type": finding.metric, "message": message}, ">") + text + "</failure>")

    opened = _Opened()

    def cases() -> Iterator[str]:
        # The findings a column per field (CheckResult.finding_columns): a passing one, most of a
        # library's, is one line of three parts (its target's, its quoted name, its metric's), made
        # _CASES_PER_PIECE at a time by slices, map and join, without a Python step per case (one
        # took 0.3 CPU-s of check --format junit on librocsparse1 6.4.3); a failure is worded
        # on its own, in its place.
        columns = result.finding_columns()
        targets, names, metrics, passed = columns[0], columns[2], columns[3], columns[6]
        classnames = {target: opened[f"{suite}.{target}"] + '"' for target in sorted(set(targets))}
        heads = {target: f"    <testcase classname={classname} name=" for target, classname in classnames.items()}
        # (A metric's name needs no escaping: the kernel's name is quoted once for every metric.)
        tails = {metric: f' [{metric}]" time="0" />\n' for metric in set(metrics)}
        for start in range(0, len(targets), _CASES_PER_PIECE):
            stop = min(start + _CASES_PER_PIECE, len(targets))
            parts: list = [""] * (3 * (stop - start))
            parts[0::3] = map(heads.__getitem__, targets[start:stop])
            parts[1::3] = map(opened.__getitem__, names[start:stop])
            parts[2::3] = map(tails.__getitem__, metrics[start:stop])
            for index in compress(range(start, stop), map(not_, passed[start:stop])):
                at = 3 * (index - start)
                parts[at:at + 3] = (failure_case(classnames[targets[index]], tuple(c[index] for c in columns)), "",
                                    "")
            yield "".join(parts)
        gone = []
        for target in result.removed_targets:
            message = target.line(shown) + (f"; accept with: {removals.target(target)}" if removals else "")
            gone.append(_case(opened[f"{suite}.{target.target}"] + '"', f'{opened[target.target]} [built]"',
                              _tag("failure", {"type": "removed-target", "message": message}, ">")
                              + f"target: {_data(shown(target.target))}\n{_data(message)}\n" + "</failure>"))
        for target_id, key, name in result.vanished:
            message = "in the baseline, no longer built" + (f"; accept with: {removals.kernel(key)}" if removals
                                                            else "")
            gone.append(_case(opened[f"{suite}.{target_id}"] + '"', f'{opened[name]} [built]"',
                              _tag("failure", {"type": "removed", "message": message}, ">")
                              + f"kernel: {_data(shown(name))}\nkey: {_data(shown(key))}\n"
                                f"target: {_data(shown(target_id))}\n{_data(message)}\n"
                              + "</failure>"))
            if len(gone) == _CASES_PER_PIECE:
                yield "".join(gone)
                gone = []
        if gone:
            yield "".join(gone)

    properties = {"baseline": result.baseline_path, "gate": ",".join(result.gate),
                  "occupancy_model": result.occupancy_model}
    return _document(suite, tests, failures, 0, 0, properties, cases())


def document(result: CheckResult, suite: Optional[str] = None,
             accept: Optional[Callable[[Finding], str]] = None, removals: Optional[RemovalCommands] = None,
             code: Optional[Mapping[tuple[str, str], FailureCode]] = None) -> bytes:
    return b"".join(document_chunks(result, suite, accept, removals, code))


def unchecked_document(suite: str, verdict: str, reason: str) -> bytes:
    """A cell that was not checked: one skipped (toolchain missing) or error
    (build failed, no baseline) case, so the cell still has its file."""
    error = verdict != "skipped"
    inner = _tag("error", {"type": "spillway", "message": reason}) if error else _tag("skipped", {"message": reason})
    case = _case(_attribute(suite), _attribute(f"{suite} [check]"), inner)
    return b"".join(_document(suite, 1, 0, int(error), 0 if error else 1, {}, iter([case])))


def document_of(model: CheckModel) -> Iterator[bytes]:
    """A check's JUnit document (render.emit: --format junit, and check --junit FILE)."""
    commands = model.commands.shown_by(command_word)
    return document_chunks(model.result, model.suite, commands.accept, commands.removals(), model.code)
