"""Renderings of a check result other than the terminal table: Markdown (for a
pull request or the GitHub job summary), TSV and GitHub annotations."""

from __future__ import annotations

from typing import Callable, Optional

from spillway.gate.check import CheckResult, Finding
from spillway.gate.compare import md_code
from spillway.gate.github import Annotation
from spillway.resources.names import table_name

Accept = Callable[[Finding], str]

# In the order of CHECK_TSV_FIELDS (cli/check.py).

def allowed_text(finding: Finding) -> str:
    if finding.allowed is None:
        return "-"
    return f"≥ {finding.allowed}" if finding.metric == "occupancy" else str(finding.allowed)


def actual_text(finding: Finding) -> str:
    text = "?" if finding.actual is None else str(finding.actual)
    return text + ("+dyn" if finding.dynamic_stack else "")


def check_markdown(result: CheckResult, *, limit: int = 0, names: str = "short",
                   accept_all: Optional[str] = None) -> str:
    verdict = "passed" if result.passed else "failed"
    out = [f"**spillway check** against {md_code(result.baseline_path)} {verdict}: {result.summary()}", ""]
    failures = result.failures
    shown = failures[:limit] if limit else failures
    if shown:
        out.append("| kernel | target | metric | allowed | actual | |")
        out.append("|---|---|---|--:|--:|---|")
        for f in shown:
            note = "not in the baseline" if f.new_kernel else ""
            out.append(f"| {md_code(table_name(f.name, names))} | {md_code(f.target)} | {f.metric} | "
                       f"{allowed_text(f)} | {actual_text(f)} | {note} |")
        if len(shown) < len(failures):
            out.append("")
            out.append(f"... and {len(failures) - len(shown)} more (--limit 0 shows all).")
        out.append("")
    if accept_all:
        out.append("Intended? Accept with:")
        out.append("")
        out.append("```sh")
        out.append(accept_all)
        out.append("```")
        out.append("")
    if result.vanished:
        out.append(f"<details><summary>{len(result.vanished)} baseline kernel"
                   f"{'s' if len(result.vanished) != 1 else ''} no longer built (not a failure)</summary>")
        out.append("")
        for target, _key, name in result.vanished[:limit or None]:
            out.append(f"- {md_code(table_name(name, names))} ({md_code(target)})")
        out.append("")
        out.append("</details>")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def check_tsv_rows(result: CheckResult):
    for f in result.findings:
        yield (f.target, f.name, f.key, f.metric, f.allowed, f.actual, f.passed, f.new_kernel, f.dynamic_stack)


def check_annotations(result: CheckResult, file: str, accept: Accept, names: str = "short") -> list[Annotation]:
    out = []
    for f in result.failures:
        title = f"spillway check: {table_name(f.name, names)} [{f.target}] over baseline ({f.metric})"
        out.append(Annotation(file, title, f"{f.message()}. Accept with: {accept(f)}"))
    return out
