"""JUnit XML for ``spillway check --junit FILE`` (and ``--format junit``):
one test case per kernel and metric, so Jenkins, GitLab and CTest dashboards
list failures per kernel.  Baseline kernels that are no longer built appear
as skipped cases.

The documents validate against the Jenkins xunit plugin's junit-10.xsd
(the schema the tests check them with): ``<testsuites>`` carries name,
tests, failures, errors and time only.  One suite per run, named after the
cell (``spillway matrix``) or the baseline; a cell that could not be checked
gets a file of its own too (one skipped or error case), so a collector sees
every cell.  A comment after the XML declaration marks the file as
spillway's, so a later run may replace it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Callable, Optional

from spillway import atomic
from spillway.errors import UsageError
from spillway.gate.check import METRICS, CheckResult, Finding

MARKER = b"<!-- spillway junit: written by spillway; safe to overwrite with spillway -->\n"


# What XML 1.0 cannot carry: control characters but tab, newline and carriage
# return; lone surrogates (a file name that is not UTF-8); U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    """``text`` without what XML 1.0 cannot carry (one regular expression: with a
    character-by-character pass, check --format junit on librocsparse1 6.4.3
    took 16.2 s, not 9.6)."""
    return _NOT_XML.sub("", text)


def _serialize(root: ET.Element) -> bytes:
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + MARKER + body.encode("utf-8") + b"\n"


def suite_name_for(baseline_path: str) -> str:
    """Default suite name: the baseline's file name without .json (a matrix
    cell's baseline is checks/baselines/<cell>.json)."""
    import os

    name = os.path.basename(baseline_path)
    return name[:-5] if name.endswith(".json") else name or "spillway"


def document(result: CheckResult, suite: Optional[str] = None,
             accept: Optional[Callable[[Finding], str]] = None) -> bytes:
    """``accept(finding)``: the command that accepts a failure, appended to its message."""
    suite = suite or suite_name_for(result.baseline_path)
    failures = result.failures
    skipped = len(result.vanished) * len(result.gate)
    tests = len(result.findings) + skipped
    root = ET.Element("testsuites", name="spillway", tests=str(tests), failures=str(len(failures)),
                      errors="0", time="0")
    element = ET.SubElement(root, "testsuite", name=_clean(suite), tests=str(tests),
                            failures=str(len(failures)), errors="0", skipped=str(skipped), time="0")
    properties = ET.SubElement(element, "properties")
    ET.SubElement(properties, "property", name="baseline", value=_clean(result.baseline_path))
    ET.SubElement(properties, "property", name="gate", value=",".join(result.gate))
    ET.SubElement(properties, "property", name="occupancy_model", value=result.occupancy_model)
    for finding in result.findings:
        case = ET.SubElement(element, "testcase", classname=_clean(f"{suite}.{finding.target}"),
                             name=_clean(f"{finding.name} [{finding.metric}]"), time="0")
        if not finding.passed:
            message = finding.message()
            if accept is not None:
                message += f"; accept with: {accept(finding)}"
            failure = ET.SubElement(case, "failure", type=finding.metric, message=_clean(message))
            failure.text = _clean(f"kernel: {finding.name}\nkey: {finding.key}\ntarget: {finding.target}\n"
                                  f"{METRICS[finding.metric].description}\n{message}\n")
    for target, _key, name in result.vanished:
        for metric in result.gate:
            case = ET.SubElement(element, "testcase", classname=_clean(f"{suite}.{target}"),
                                 name=_clean(f"{name} [{metric}]"), time="0")
            ET.SubElement(case, "skipped", message="in the baseline but no longer built")
    return _serialize(root)


def unchecked_document(suite: str, verdict: str, reason: str) -> bytes:
    """A cell that was not checked: one skipped (toolchain missing) or error
    (build failed, no baseline) case, so the cell still has its file."""
    error = verdict != "skipped"
    root = ET.Element("testsuites", name="spillway", tests="1", failures="0", errors="1" if error else "0",
                      time="0")
    element = ET.SubElement(root, "testsuite", name=_clean(suite), tests="1", failures="0",
                            errors="1" if error else "0", skipped="0" if error else "1", time="0")
    case = ET.SubElement(element, "testcase", classname=_clean(suite), name=_clean(f"{suite} [check]"), time="0")
    if error:
        ET.SubElement(case, "error", type="spillway", message=_clean(reason))
    else:
        ET.SubElement(case, "skipped", message=_clean(reason))
    return _serialize(root)


def write(path: str, result: CheckResult, suite: Optional[str] = None,
          accept: Optional[Callable[[Finding], str]] = None) -> None:
    write_bytes(path, document(result, suite, accept))


def write_bytes(path: str, data: bytes) -> None:
    try:
        atomic.write_bytes(path, data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
