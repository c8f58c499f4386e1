"""Comparing two builds kernel by kernel: classification, the summary
sentence, and terminal / markdown / JSON rendering.

A kernel present on both sides (same target and stable key) is *worse* when
it needs more scratch (or starts using a dynamic stack), spills more
registers, or reaches lower occupancy; *better* for the reverse; *mixed* when
both happen (clang-22's ``topk<32>`` trades 272 B of scratch for 136 VGPRs
and less occupancy); *same* when scratch, spills and occupancy are equal
(VGPR counts may still differ).

Rows show the new side's next step ("VGPRs 104 -> 112, 6 waves; 96 or fewer
for 7") from its report records' ``occupancy_next``, computed by the reader
under the one model both sides are read with; a baseline side has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Final, Literal, Optional, Sequence

from spillway import __version__
from spillway.gate.kernels import Kernel, KernelUsage, Resources
from spillway.paths import document_chunks
from spillway.resources.occupancy import DEFAULT_MODEL, next_step_text

COMPARE_SCHEMA: Final = "spillway.compare/2"
Status = Literal["worse", "mixed", "better", "same"]
STATUS_ORDER = {"worse": 0, "mixed": 1, "better": 2, "same": 3}
CRITERIA = ("scratch", "spills", "occupancy")


@dataclass(slots=True)
class KernelDiff:
    target: str
    key: str
    name: str
    old: Resources
    new: Resources
    worse: list[str] = field(default_factory=list)     # criteria that got worse
    better: list[str] = field(default_factory=list)
    # The new side's occupancy_next (KernelUsage.occupancy_next): None at the cap,
    # when nothing raises it, or when the new side is a baseline.
    occupancy_next: Optional[dict] = None

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
    # The one model both sides were read with (--occupancy-model; a baseline's figures stay as recorded).
    occupancy_model: str = DEFAULT_MODEL

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
        return dict(self._json_head(), **{name: list(records) for name, records in self._json_lists(everything)})

    def json_chunks(self, everything: bool = True):
        """``to_json`` as JSON pieces, one kernel per line, made as they are
        written: a ROCm library's comparison has hundreds of thousands of rows."""
        return document_chunks(self._json_head(), dict(self._json_lists(everything)))

    def _json_head(self) -> dict:
        return {
            "schema": COMPARE_SCHEMA,
            "spillway_version": __version__,
            "occupancy_model": self.occupancy_model,
            "new": self.new_sources,
            "old": self.old_sources,
            "summary": {V2_COUNT_NAMES.get(name, name): value for name, value in self.count().items()},
            "sentence": self.sentence(),
        }

    def _json_lists(self, everything: bool):
        rows = (k for k in self.kernels if everything or k.status != "same")
        yield "kernels", ({"target": k.target, "key": k.key, "name": k.name, "status": k.status,
                           "worse": k.worse, "better": k.better, "old": k.old.as_dict(), "new": k.new.as_dict(),
                           "occupancy_next": k.occupancy_next} for k in rows)
        yield "added", (_usage_json(u) for u in self.only_new)
        yield "removed", (_usage_json(u) for u in self.only_old)


# Document names (schema v2) of the counts: kernels on one side only are
# "added" (only in NEW) and "removed" (only in OLD), as in check and baseline.
V2_COUNT_NAMES = {"only_new": "added", "only_old": "removed", "only_new_using_scratch": "added_using_scratch"}


def _usage_json(usage: KernelUsage) -> dict:
    return {"target": usage.target, "key": usage.key, "name": usage.name, "resources": usage.resources.as_dict(),
            "occupancy_next": usage.occupancy_next}


def kernels(n: int) -> str:
    return f"{n} kernel" + ("" if n == 1 else "s")


def have(n: int) -> str:
    return "has" if n == 1 else "have"


def are(n: int) -> str:
    return "is" if n == 1 else "are"


def _worst_first(usages: list[KernelUsage]) -> list[KernelUsage]:
    """Kernels on one side only, sorted: the ones that use scratch or spill first,
    then by occupancy, name and target.  Names are ranked once and compared as
    ranks: a library's kernels on one side (210,000 on librocsparse1 7.2.4 against
    6.4.3) have few distinct names (17,000), long ones that share long template
    prefixes, and comparing them in the sort took 1.7 s of 2.6."""
    name_rank = {name: rank for rank, name in enumerate(sorted({u.name for u in usages}))}
    target_rank = {target: rank for rank, target in enumerate(sorted({u.target for u in usages}))}

    def key(usage: KernelUsage):
        r = usage.resources
        return (-r.scratch, -(r.vgpr_spills + r.sgpr_spills), not r.dynamic_stack,
                r.occupancy if r.occupancy is not None else 99, name_rank[usage.name], target_rank[usage.target])

    usages.sort(key=key)
    return usages


def compare(new: dict[Kernel, KernelUsage], old: dict[Kernel, KernelUsage],
            new_sources: Sequence[str] = (), old_sources: Sequence[str] = (), *,
            occupancy_model: str = DEFAULT_MODEL) -> Comparison:
    """``occupancy_model``: the model both sides were read with (the reader's
    default unless the caller read with another)."""
    diffs = []
    only_new = []
    for ident, b in new.items():
        a = old.get(ident)
        if a is None:
            only_new.append(b)
            continue
        worse, better = classify(a.resources, b.resources)
        diffs.append(KernelDiff(b.target, b.key, b.name, a.resources, b.resources, worse, better,
                                b.occupancy_next))
    diffs.sort(key=KernelDiff.sort_key)
    only_old = [u for ident, u in old.items() if ident not in new]
    return Comparison(list(new_sources), list(old_sources), diffs, _worst_first(only_new), _worst_first(only_old),
                      occupancy_model)


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


_FIGURES = {"vgpr": ("VGPRs", lambda r: r.vgprs, ""), "agpr": ("AGPRs", lambda r: r.agprs, ""),
            "sgpr": ("SGPRs", lambda r: r.sgprs, ""), "lds": ("LDS", lambda r: r.lds, " B")}


def next_step(new: Resources, step: Optional[dict], old: Optional[Resources] = None, arrow: str = " -> ") -> str:
    """The next step of a kernel as compare shows it: each limiting resource's
    figure (``old -> new`` where it changed), the waves, and what the limits
    must come down to for one more wave, from the new side's ``occupancy_next``:
    "VGPRs 104 -> 112, 6 waves; 96 or fewer for 7".  "" when there is none (at
    the cap, nothing in the binary raises it, or the side is a baseline, which
    keeps no wave size or work-group bound to compute it from)."""
    if not step or not step.get("needs") or new.occupancy is None:
        return ""
    figures = []
    for need in step["needs"]:
        resource = need["resource"]
        if resource not in _FIGURES:                   # workgroup: the bound is not among the figures
            figures.append("work-group size")
            continue
        label, value, unit = _FIGURES[resource]
        shown = str(value(new)) if old is None else _arrow(value(old), value(new), arrow)
        figures.append(f"{label} {shown}{unit}")
    waves = f"{new.occupancy} wave{'' if new.occupancy == 1 else 's'}"
    needs = step["needs"]
    if len(needs) == 1 and needs[0]["resource"] in ("vgpr", "agpr", "sgpr"):
        wanted = f"{needs[0]['at_most']} or fewer for {step['waves']}"    # the unit was just named
    else:
        wanted = next_step_text(step)
    return f"{', '.join(figures)}, {waves}; {wanted}"


def diff_next_step(diff: KernelDiff, arrow: str = " -> ") -> str:
    return next_step(diff.new, diff.occupancy_next, diff.old, arrow)


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


# A pull-request comment holds at most 65,536 characters (GitHub); the text
# stays under this, whatever the number of kernels (JSON is always complete).
MARKDOWN_BUDGET = 60_000
# Sections longer than this go in <details>.
OPEN_SECTION_ROWS = 20


def markdown(comparison: Comparison, everything: bool = False, limit: int = 0, names: str = "short",
             budget: int = MARKDOWN_BUDGET) -> str:
    """The comparison for a pull request: the sentence, then the changed
    kernels worst first, then the kernels on one side only (worst first),
    long sections folded in <details>; rows stop at ``limit`` per section
    (0: no limit) or when the text would pass ``budget`` characters, with a
    count of what was left out."""
    from spillway.resources.names import table_name

    rows, hidden = selected(comparison, everything, 0)
    new = ", ".join(md_code(s) for s in comparison.new_sources) or "new"
    old = ", ".join(md_code(s) for s in comparison.old_sources) or "old"
    out = [f"**spillway compare**: {new} against {old}", "", comparison.sentence(), ""]
    used = sum(len(line) + 1 for line in out)
    sections: list[tuple[str, list[str], list, Callable]] = []    # (title, head, items, render)

    def diff_line(diff: KernelDiff) -> str:
        vgprs, spilled, scratch, occupancy = cells(diff)
        return (f"| {diff.status} | {md_code(table_name(diff.name, names))} | {md_code(diff.target)} "
                f"| {vgprs} | {spilled} | {scratch} | {occupancy} | {diff_next_step(diff)} |")

    def usage_line(usage: KernelUsage) -> str:
        r = usage.resources
        step = next_step(r, usage.occupancy_next)
        return (f"- {md_code(table_name(usage.name, names))} ({md_code(usage.target)}): {r.vgprs} VGPRs, "
                f"{_spilled(r)} spilled VGPRs, {_scratch(r)} B/lane scratch, "
                f"occupancy {'?' if r.occupancy is None else r.occupancy}" + (f"; {step}" if step else ""))

    if rows:
        what = "changed kernels" if not everything else "kernels on both sides"
        sections.append((f"{kernels(len(rows))}: {what}, worst first",
                         ["| | kernel | target | VGPRs | spilled VGPRs | scratch B/lane | occupancy | next step |",
                          "|---|---|---|--:|--:|--:|--:|---|"], rows, diff_line))
    for title, group in (("only in the new build", comparison.only_new),
                         ("only in the old build", comparison.only_old)):
        if group:
            sections.append((f"{kernels(len(group))} {title}, worst first", [], group, usage_line))
    reserve = 400 * len(sections)            # closing tags and the "left out" line of each section
    for number, (title, head, items, render) in enumerate(sections):
        folded = len(items) > OPEN_SECTION_ROWS
        part = [f"<details><summary>{title}</summary>", ""] if folded else [f"{title}:", ""]
        part += head
        used += sum(len(line) + 1 for line in part)
        # Each section may use its share of what is left (a short one leaves the rest to the next).
        share = used + (budget - reserve - used) // (len(sections) - number)
        shown = 0
        for item in items:                   # lines are made only for the rows that fit
            if limit > 0 and shown >= limit:
                break
            line = render(item)
            if used + len(line) + 1 > share:
                break
            part.append(line)
            used += len(line) + 1
            shown += 1
        left = len(items) - shown
        tail = []
        if left:
            why = "--limit" if limit > 0 and shown >= limit else "to fit a pull-request comment"
            tail += ["", f"... and {left} more not shown ({why}; `--format json` lists every kernel)."]
        tail.append("")
        if folded:
            tail += ["</details>", ""]
        used += sum(len(line) + 1 for line in tail)
        reserve -= 400
        out += part + tail
    return "\n".join(out).rstrip("\n") + "\n"


# -- terminal ------------------------------------------------------------------------

NEXT_STEP = "next step"


def table(comparison: Comparison, everything: bool = False, limit: int = 0, console=None, names: str = "short"):
    """(rich table fitting ``console``, rows shown, rows hidden by ``limit``)."""
    from spillway.report.table import Column, console as make_console, grid
    from spillway.resources.names import table_name

    console = console or make_console()
    rows, hidden = selected(comparison, everything, limit)
    columns = [Column(""), Column("kernel", name=True), Column("target")]
    columns += [Column(h, "right") for h in ("VGPRs", "spilled VGPRs", "scratch B/lane", "waves/SIMD")]
    style = {"worse": "red", "mixed": "yellow", "better": "green", "same": ""}
    cells_ = [[(diff.status, style[diff.status]), table_name(diff.name, names), diff.target, *cells(diff, " → ")]
              for diff in rows]
    steps = [diff_next_step(diff, " → ") for diff in rows]
    if any(steps):
        # Left out first on a narrow output (the CLI then lists the steps of the rows whose occupancy changed).
        columns.append(Column(NEXT_STEP, drop=1))
        for row, step in zip(cells_, steps):
            row.append(step)
    return grid(console, columns, cells_, names=names), len(rows), hidden


# -- published schema of `spillway compare --format json` ----------------------------

def json_schema() -> dict:
    """The JSON schema of ``compare --format json``.  The pydantic models are
    built here, on demand, so that every run of the CLI does not pay for
    importing pydantic."""
    from pydantic import BaseModel, ConfigDict, Field

    from spillway.report.record import OccupancyModelChoice, OccupancyNext

    # The resource record is gate.kernels.Resources itself (one definition, as in baselines), and the
    # next step the report's OccupancyNext.
    next_description = ("The {side}'s occupancy_next, under occupancy_model: null at the hardware cap, when "
                        "nothing in the binary raises the figure, or when that side is a baseline (it keeps no "
                        "wave size or work-group bound)")

    class DiffModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str
        status: Status
        worse: list[Literal["scratch", "spills", "occupancy"]]
        better: list[Literal["scratch", "spills", "occupancy"]]
        old: Resources
        new: Resources
        occupancy_next: Optional[OccupancyNext] = Field(description=next_description.format(side="new side"))


    class OneSideModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        target: str
        key: str
        name: str
        resources: Resources
        occupancy_next: Optional[OccupancyNext] = Field(description=next_description.format(side="kernel"))


    class SummaryModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

        compared: int = Field(description="Kernels (target, key) on both sides")
        spills_or_scratch_worse: int
        occupancy_worse: int
        worse: int
        mixed: int
        better: int
        same: int
        added: int = Field(description="Kernels only in NEW")
        removed: int = Field(description="Kernels only in OLD")
        added_using_scratch: int = Field(description="Kernels only in NEW that use scratch or spill")


    class CompareDocument(BaseModel):
        model_config = ConfigDict(extra="forbid")

        schema_: Literal["spillway.compare/2"] = Field(COMPARE_SCHEMA, alias="schema")
        spillway_version: str
        occupancy_model: OccupancyModelChoice = Field(
            description="The one occupancy model applied to both sides (binaries read with it, report records "
                        "recomputed under it); a baseline's figures stay as recorded")
        new: list[str]
        old: list[str]
        summary: SummaryModel
        sentence: str
        kernels: list[DiffModel] = Field(description="Kernels on both sides, worst first")
        added: list[OneSideModel] = Field(description="Kernels only in NEW")
        removed: list[OneSideModel] = Field(description="Kernels only in OLD")

    schema = CompareDocument.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://spillway.dev/schemas/compare-2.json"
    return schema
