"""JUnit XML for ``spillway check --junit FILE``: one test case per kernel and
metric, so Jenkins, GitLab and CTest dashboards list failures per kernel.
Baseline kernels that are no longer built appear as skipped cases."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from spillway import atomic
from spillway.errors import UsageError
from spillway.gate.check import METRICS, CheckResult

SUITE = "spillway.check"


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters: drop them."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)


def document(result: CheckResult) -> bytes:
    failures = result.failures
    skipped = len(result.vanished) * len(result.gate)
    tests = len(result.findings) + skipped
    root = ET.Element("testsuites", name="spillway", tests=str(tests), failures=str(len(failures)),
                      errors="0", skipped=str(skipped))
    suite = ET.SubElement(root, "testsuite", name=SUITE, tests=str(tests), failures=str(len(failures)),
                          errors="0", skipped=str(skipped), time="0")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="baseline", value=_clean(result.baseline_path))
    ET.SubElement(properties, "property", name="gate", value=",".join(result.gate))
    for finding in result.findings:
        case = ET.SubElement(suite, "testcase", classname=_clean(f"{SUITE}.{finding.target}"),
                             name=_clean(f"{finding.name} [{finding.metric}]"), time="0")
        if not finding.passed:
            failure = ET.SubElement(case, "failure", type=finding.metric,
                                    message=_clean(finding.message()))
            failure.text = _clean(f"kernel: {finding.name}\nkey: {finding.key}\ntarget: {finding.target}\n"
                                  f"{METRICS[finding.metric].description}\n{finding.message()}\n")
    for target, key, name in result.vanished:
        for metric in result.gate:
            case = ET.SubElement(suite, "testcase", classname=_clean(f"{SUITE}.{target}"),
                                 name=_clean(f"{name} [{metric}]"), time="0")
            ET.SubElement(case, "skipped", message="in the baseline but no longer built")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write(path: str, result: CheckResult) -> None:
    try:
        atomic.write_bytes(path, document(result))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
