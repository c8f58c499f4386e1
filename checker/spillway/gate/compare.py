"""Comparing two builds kernel by kernel: classification, the summary
sentence, and terminal / markdown / JSON rendering.

A kernel present on both sides (same target and stable key) is *worse* when
it needs more scratch (or starts using a dynamic stack), spills more
registers, or reaches lower occupancy; *better* for the reverse; *mixed* when
both happen (clang-22's ``topk<32>`` trades 272 B of scratch for 136 VGPRs
and less occupancy); *same* when scratch, spills and occupancy are equal
(VGPR counts may still differ).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from spillway import __version__
from spillway.gate.check import Kernel, KernelUsage, Resources

COMPARE_SCHEMA = "spillway.compare/1"
Status = Literal["worse", "mixed", "better", "same"]
STATUS_ORDER = {"worse": 0, "mixed": 1, "better": 2, "same": 3}
CRITERIA = ("scratch", "spills", "occupancy")


@dataclass
class KernelDiff:
    target: str
    key: str
    name: str
    old: Resources
    new: Resources
    worse: list[str] = field(default_factory=list)     # criteria that got worse
    better: list[str] = field(default_factory=list)

    @property
    def status(self) -> Status:
        if self.worse:
            return "mixed" if self.better else "worse"
        return "better" if self.better else "same"

    def sort_key(self):
        old, new = self.old, self.new
        occupancy = abs((new.occupancy or 0) - (old.occupancy or 0))
        return (STATUS_ORDER[self.status], -abs(new.scratch - old.scratch), -abs(new.spills - old.spills),
                -occupancy, self.name, self.target)


def classify(old: Resources, new: Resources) -> tuple[list[str], list[str]]:
    """(criteria that got worse, criteria that got better)."""
    worse, better = [], []
    old_scratch = (old.scratch, old.dynamic_stack)
    new_scratch = (new.scratch, new.dynamic_stack)
    if new.scratch > old.scratch or (new.dynamic_stack and not old.dynamic_stack):
        worse.append("scratch")
    elif new_scratch != old_scratch:
        better.append("scratch")
    if new.spills > old.spills:
        worse.append("spills")
    elif new.spills < old.spills:
        better.append("spills")
    if old.occupancy is not None and new.occupancy is not None:
        if new.occupancy < old.occupancy:
            worse.append("occupancy")
        elif new.occupancy > old.occupancy:
            better.append("occupancy")
    return worse, better


def uses_scratch(resources: Resources) -> bool:
    return resources.scratch > 0 or resources.spills > 0 or resources.dynamic_stack


@dataclass
class Comparison:
    new_sources: list[str]
    old_sources: list[str]
    kernels: list[KernelDiff]                 # present on both sides, worst first
    only_new: list[KernelUsage]
    only_old: list[KernelUsage]

    def count(self) -> dict[str, int]:
        statuses = [k.status for k in self.kernels]
        return {
            "compared": len(self.kernels),
            "spills_or_scratch_worse": sum(1 for k in self.kernels
                                           if "scratch" in k.worse or "spills" in k.worse),
            "occupancy_worse": sum(1 for k in self.kernels if "occupancy" in k.worse),
            "worse": statuses.count("worse"),
            "mixed": statuses.count("mixed"),
            "better": statuses.count("better"),
            "same": statuses.count("same"),
            "only_new": len(self.only_new),
            "only_old": len(self.only_old),
            "only_new_using_scratch": sum(1 for k in self.only_new if uses_scratch(k.resources)),
        }

    @property
    def has_worse(self) -> bool:
        """What --fail-on-worse fails on: any worse or mixed kernel, or a
        kernel new in NEW that arrives with scratch or spills (as the gate
        holds new kernels to zero)."""
        counts = self.count()
        return bool(counts["worse"] or counts["mixed"] or counts["only_new_using_scratch"])

    def sentence(self) -> str:
        c = self.count()
        parts = [f"{kernels(c['spills_or_scratch_worse'])} {have(c['spills_or_scratch_worse'])} new or larger "
                 f"spills or scratch",
                 f"{kernels(c['occupancy_worse'])} {have(c['occupancy_worse'])} less occupancy",
                 f"{kernels(c['better'])} {are(c['better'])} better"]
        if c["mixed"]:
            parts.append(f"{c['mixed']} {are(c['mixed'])} mixed (better in one way, worse in another)")
        parts.append(f"{c['same']} unchanged")
        if c["only_new"]:
            extra = f" ({c['only_new_using_scratch']} using scratch)" if c["only_new_using_scratch"] else ""
            parts.append(f"{c['only_new']} only in the new build{extra}")
        if c["only_old"]:
            parts.append(f"{c['only_old']} only in the old build")
        return ", ".join(parts) + "."

    def to_json(self, everything: bool = True) -> dict:
        rows = self.kernels if everything else [k for k in self.kernels if k.status != "same"]
        return {
            "schema": COMPARE_SCHEMA,
            "spillway_version": __version__,
            "new": self.new_sources,
            "old": self.old_sources,
            "summary": self.count(),
            "sentence": self.sentence(),
            "kernels": [{"target": k.target, "key": k.key, "name": k.name, "status": k.status,
                         "worse": k.worse, "better": k.better, "old": k.old.as_dict(), "new": k.new.as_dict()}
                        for k in rows],
            "only_new": [_usage_json(u) for u in self.only_new],
            "only_old": [_usage_json(u) for u in self.only_old],
        }


def _usage_json(usage: KernelUsage) -> dict:
    return {"target": usage.target, "key": usage.key, "name": usage.name, "resources": usage.resources.as_dict()}


def kernels(n: int) -> str:
    return f"{n} kernel" + ("" if n == 1 else "s")


def have(n: int) -> str:
    return "has" if n == 1 else "have"


def are(n: int) -> str:
    return "is" if n == 1 else "are"


def compare(new: dict[Kernel, KernelUsage], old: dict[Kernel, KernelUsage],
            new_sources: list[str] = (), old_sources: list[str] = ()) -> Comparison:
    diffs = []
    for ident in new.keys() & old.keys():
        a, b = old[ident], new[ident]
        worse, better = classify(a.resources, b.resources)
        diffs.append(KernelDiff(b.target, b.key, b.name, a.resources, b.resources, worse, better))
    diffs.sort(key=KernelDiff.sort_key)
    only_new = sorted((new[i] for i in new.keys() - old.keys()), key=lambda u: (u.name, u.target))
    only_old = sorted((old[i] for i in old.keys() - new.keys()), key=lambda u: (u.name, u.target))
    return Comparison(list(new_sources), list(old_sources), diffs, only_new, only_old)


# -- cells -----------------------------------------------------------------------

def _arrow(old, new, arrow: str) -> str:
    old_text = "?" if old is None else str(old)
    new_text = "?" if new is None else str(new)
    return new_text if old == new else f"{old_text}{arrow}{new_text}"


def _scratch(r: Resources) -> str:
    return f"{r.scratch}+dyn" if r.dynamic_stack else str(r.scratch)


def _spilled(r: Resources) -> str:
    return f"{r.vgpr_spills} (+{r.sgpr_spills} SGPR)" if r.sgpr_spills else str(r.vgpr_spills)


def cells(diff: KernelDiff, arrow: str = " -> ") -> tuple[str, str, str, str]:
    """VGPRs, spilled VGPRs, scratch, occupancy: ``old -> new`` where they differ."""
    old, new = diff.old, diff.new
    return (_arrow(old.vgprs, new.vgprs, arrow), _arrow(_spilled(old), _spilled(new), arrow),
            _arrow(_scratch(old), _scratch(new), arrow), _arrow(old.occupancy, new.occupancy, arrow))


def selected(comparison: Comparison, everything: bool, limit: int) -> tuple[list[KernelDiff], int]:
    rows = comparison.kernels if everything else [k for k in comparison.kernels if k.status != "same"]
    if limit > 0 and len(rows) > limit:
        return rows[:limit], len(rows) - limit
    return rows, 0


# -- markdown ----------------------------------------------------------------------

def md_code(text: str) -> str:
    """A code span that survives a GitHub table: pipes escaped, backticks fenced."""
    text = text.replace("|", "\\|")
    if "`" not in text:
        return f"`{text}`"
    fence = "``" if "``" not in text else "```"
    return f"{fence} {text} {fence}"


def markdown(comparison: Comparison, everything: bool = False, limit: int = 0) -> str:
    rows, hidden = selected(comparison, everything, limit)
    new = ", ".join(md_code(s) for s in comparison.new_sources) or "new"
    old = ", ".join(md_code(s) for s in comparison.old_sources) or "old"
    out = [f"**spillway compare**: {new} against {old}", "", comparison.sentence(), ""]
    if rows:
        out.append("| | kernel | target | VGPRs | spilled VGPRs | scratch B/lane | occupancy |")
        out.append("|---|---|---|--:|--:|--:|--:|")
        for diff in rows:
            vgprs, spilled, scratch, occupancy = cells(diff)
            out.append(f"| {diff.status} | {md_code(diff.name)} | {md_code(diff.target)} | {vgprs} | {spilled} "
                       f"| {scratch} | {occupancy} |")
        if hidden:
            out.append("")
            out.append(f"... and {hidden} more (--limit).")
        out.append("")
    for title, group in (("only in the new build", comparison.only_new), ("only in the old build",
                                                                         comparison.only_old)):
        if not group:
            continue
        out.append(f"<details><summary>{kernels(len(group))} {title}</summary>")
        out.append("")
        for usage in group:
            r = usage.resources
            out.append(f"- {md_code(usage.name)} ({md_code(usage.target)}): {r.vgprs} VGPRs, "
                       f"{_spilled(r)} spilled VGPRs, {_scratch(r)} B/lane scratch, "
                       f"occupancy {'?' if r.occupancy is None else r.occupancy}")
        out.append("")
        out.append("</details>")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# -- terminal ------------------------------------------------------------------------

def table(comparison: Comparison, everything: bool = False, limit: int = 0):
    from rich.markup import escape
    from rich.table import Table

    rows, hidden = selected(comparison, everything, limit)
    grid = Table(show_lines=False)
    grid.add_column("", no_wrap=True)
    grid.add_column("kernel", overflow="fold", ratio=1)
    grid.add_column("target")
    grid.add_column("VGPRs", justify="right")
    grid.add_column("spilled VGPRs", justify="right")
    grid.add_column("scratch B/lane", justify="right")
    grid.add_column("waves/SIMD", justify="right")
    style = {"worse": "red", "mixed": "yellow", "better": "green", "same": ""}
    for diff in rows:
        grid.add_row(f"[{style[diff.status]}]{diff.status}[/]" if style[diff.status] else diff.status,
                     escape(diff.name), escape(diff.target), *cells(diff, " → "))
    return grid, len(rows), hidden


# -- published schema of `spillway compare --format json` ----------------------------

def json_schema() -> dict:
    """The JSON schema of ``compare --format json``.  The pydantic models are
    built here, on demand, so that every run of the CLI does not pay for
    importing pydantic."""
    from pydantic import BaseModel, ConfigDict, Field

    class ResourcesModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        scratch: int
        dynamic_stack: bool
        vgpr_spills: int
        sgpr_spills: int
        vgprs: int
        agprs: Optional[int]
        sgprs: int
        lds: int
        occupancy: Optional[int]


    class DiffModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str
        status: Status
        worse: list[Literal["scratch", "spills", "occupancy"]]
        better: list[Literal["scratch", "spills", "occupancy"]]
        old: ResourcesModel
        new: ResourcesModel


    class OneSideModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str
        resources: ResourcesModel


    class SummaryModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        compared: int = Field(description="Kernels (target, key) on both sides")
        spills_or_scratch_worse: int
        occupancy_worse: int
        worse: int
        mixed: int
        better: int
        same: int
        only_new: int
        only_old: int
        only_new_using_scratch: int


    class CompareDocument(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.compare/1"] = Field(COMPARE_SCHEMA, alias="schema")
        spillway_version: str
        new: list[str]
        old: list[str]
        summary: SummaryModel
        sentence: str
        kernels: list[DiffModel] = Field(description="Kernels on both sides, worst first")
        only_new: list[OneSideModel]
        only_old: list[OneSideModel]

    schema = CompareDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/compare-1.json"
    return schema
