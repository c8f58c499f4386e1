"""GitHub Actions output (``--format github``): workflow-command annotations
and the job summary.

One ``::error file=...,title=...::message`` line per failing kernel and
metric.  GitHub shows at most ten error annotations per step, so at most
MAX_ANNOTATIONS are printed, then one plain line counting the rest.  The
job summary is Markdown appended to the file named by
``$GITHUB_STEP_SUMMARY`` (GitHub's protocol: append, do not replace).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Mapping

MAX_ANNOTATIONS = 10


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    file: str
    title: str
    message: str
    level: str = "error"

    def line(self) -> str:
        props = []
        if self.file:
            props.append(f"file={_property(self.file)}")
        props.append(f"title={_property(self.title)}")
        return f"::{self.level} {','.join(props)}::{_data(self.message)}"


def annotation_lines(annotations: Iterable[Annotation], limit: int = MAX_ANNOTATIONS) -> list[str]:
    items = list(annotations)
    lines = [a.line() for a in items[:limit]]
    rest = len(items) - limit
    if rest > 0:
        lines.append(f"spillway: {rest} more failing kernel metric{'s' if rest != 1 else ''} not annotated "
                     f"(GitHub shows {limit} per step); every one is in the job summary and in --format json")
    return lines


def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Append to $GITHUB_STEP_SUMMARY; the path written, or None when unset."""
    environ = os.environ if environ is None else environ
    path = environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    except OSError as exc:
        from spillway.errors import UsageError
        raise UsageError(f"cannot append to GITHUB_STEP_SUMMARY {path}: {exc.strerror}") from None
    return path
