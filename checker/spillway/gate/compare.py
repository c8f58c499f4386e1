"""Comparing two builds kernel by kernel: classification, the summary
sentence and the JSON document -- the model every rendering of ``spillway
compare`` reads (gate.markdown, gate.table, gate.tsv, gate.github).

A kernel present on both sides (same target and stable key) is *worse* when
it needs more scratch (or starts using a dynamic stack), spills more
registers, or reaches lower occupancy; *better* for the reverse; *mixed* when
both happen (clang-22's ``topk<32>`` trades 272 B of scratch for 136 VGPRs
and less occupancy); *same* when scratch, spills and occupancy are equal
(VGPR counts may still differ).

With ``--isa`` (both sides read with their machine code: binaries decoded,
or report JSON written with --isa) each kernel on both sides also says
whether its code is identical (the same SHA-256 of every instance), or has
the same figures but changed code, and for changed code the scratch bytes,
scratch in loops and AGPR copies before and after ("spills moved into a
loop" when none were in a loop before).

With ``--pressure`` (both sides' isa objects holding report --pressure's
live registers) each kernel on both sides also says where its VGPR peak
moved and by how much, with the largest group held at the new peak
(KernelDiff.peak_shift, gate.code_change.PeakShift).

Against a baseline written without --record-all (the default: it records
only the kernels its gate finds non-zero), a kernel of NEW that the baseline
does not record, on a target it was written from, is *not in the baseline*,
never "added": it is held to zero in the criteria that baseline gates
(scratch, spills), as ``check`` holds it, and is worse where it is over zero.
A build compared with its own default baseline thus shows nothing added.

Rows show the new side's next step ("VGPRs 104 -> 112, 6 waves; 96 or fewer
for 7") from its report records' ``occupancy_next``, computed by the reader
under the one model both sides are read with; a baseline side has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal, Mapping, Optional, Sequence

from spillway import __version__
from spillway.gate.code_change import (ONLY_SPILL_AND_ALU, ONLY_SPILL_TRAFFIC, LinesChange, MixChange, PeakShift,
                                       lines_change, mix_change)
from spillway.gate.kernels import CodeFigures, Kernel, KernelUsage, Resources
from spillway.gate.totals import Totals, totals
from spillway.json_codec import document_chunks
from spillway.resources.occupancy import DEFAULT_MODEL

COMPARE_SCHEMA: Final = "spillway.compare/6"   # version 5 and the peak's loop and origin changes
Status = Literal["worse", "mixed", "better", "same"]
STATUS_ORDER = {"worse": 0, "mixed": 1, "better": 2, "same": 3}
# What --isa says of a kernel's code on both sides.
CodeVerdict = Literal["identical code", "same figures, code changed", "code changed", "code not read"]
CODE_VERDICTS: Final = ("identical code", "same figures, code changed", "code changed", "code not read")


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
    # Each side's machine code (None: not read on that side: a baseline, a report without --isa).
    old_code: Optional[CodeFigures] = None
    new_code: Optional[CodeFigures] = None

    @property
    def code_verdict(self) -> CodeVerdict:
        old, new = self.old_code, self.new_code
        if old is None or new is None or not old.read or not new.read:
            return "code not read"      # (two unread codes are not identical: nothing was compared)
        if old.code_sha256 == new.code_sha256:
            return "identical code"
        return "same figures, code changed" if self.status == "same" else "code changed"

    def code_notes(self) -> list[str]:
        """What moved between the sides' code: spills into or out of loops."""
        old, new = self.old_code, self.new_code
        if old is None or new is None or self.code_verdict in ("identical code", "code not read"):
            return []
        if old.scratch_in_loops == 0 < new.scratch_in_loops:
            return ["spills moved into a loop"]
        if new.scratch_in_loops == 0 < old.scratch_in_loops:
            return ["spills moved out of the loops"]
        return []

    def mix_change(self) -> Optional[MixChange]:
        """What changed in the instruction mix (None: a side has none: not
        read, a report older than version 4, instances that differ)."""
        old, new = self.old_code, self.new_code
        if old is None or new is None or not old.read or not new.read or old.mix is None or new.mix is None:
            return None
        return mix_change(old.mix, new.mix)

    def lines_change(self) -> Optional[LinesChange]:
        """Which source lines gained or lost scratch bytes in loops (None: a
        side has no line table)."""
        old, new = self.old_code, self.new_code
        if old is None or new is None or not old.read or not new.read:
            return None
        return lines_change(old.loop_lines, old.lines_complete, new.loop_lines, new.lines_complete)

    def peak_shift(self) -> Optional[PeakShift]:
        """Each side's live registers (compare --pressure; None: a side has
        none: read without --pressure, a baseline, code not read)."""
        old, new = self.old_code, self.new_code
        if old is None or new is None or old.pressure is None or new.pressure is None:
            return None
        return PeakShift(old.pressure, new.pressure)

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


# What a default baseline holds the kernels it does not record to: zero, in the criteria it gates.
HELD_TO_ZERO: Final = ("scratch", "spills")


@dataclass(slots=True)
class Unrecorded:
    """A kernel of NEW that a baseline on the OLD side does not record (it was
    written without --record-all): held to zero in ``held`` (the criteria the
    baseline gates, of HELD_TO_ZERO), as check holds it."""

    usage: KernelUsage
    held: tuple[str, ...]
    worse: list[str]                          # the criteria of ``held`` it is over zero in

    @property
    def status(self) -> Literal["worse", "same"]:
        return "worse" if self.worse else "same"


def over_zero(resources: Resources, held: Sequence[str]) -> list[str]:
    """The criteria of ``held`` a kernel not in a baseline is over zero in
    (gate.metrics' new-kernel allowances: scratch 0 and no dynamic stack, spills 0)."""
    worse = []
    if "scratch" in held and (resources.scratch > 0 or resources.dynamic_stack):
        worse.append("scratch")
    if "spills" in held and resources.spills > 0:
        worse.append("spills")
    return worse


@dataclass
class Comparison:
    new_sources: list[str]
    old_sources: list[str]
    kernels: list[KernelDiff]                 # present on both sides, worst first
    only_new: list[KernelUsage]
    only_old: list[KernelUsage]
    # Kernels of NEW a default baseline on the OLD side does not record, worst first.
    not_in_baseline: list[Unrecorded] = field(default_factory=list)
    # The one model both sides were read with (--occupancy-model; a baseline's figures stay as recorded).
    occupancy_model: str = DEFAULT_MODEL
    # --isa: the renderings say what each kernel's code did (KernelDiff.code_verdict).
    code: bool = False
    _totals: Optional[Totals] = field(default=None, repr=False, compare=False)

    def code_count(self) -> dict[str, int]:
        """Kernels on both sides per code verdict (--isa), in CODE_VERDICTS order."""
        verdicts = [k.code_verdict for k in self.kernels]
        return {verdict: verdicts.count(verdict) for verdict in CODE_VERDICTS}

    def count(self) -> dict[str, int]:
        statuses = [k.status for k in self.kernels]
        return {
            "compared": len(self.kernels),
            # (a kernel not in the baseline over its zero has new spills or scratch too)
            "spills_or_scratch_worse": sum(1 for k in self.kernels
                                           if "scratch" in k.worse or "spills" in k.worse)
            + sum(1 for k in self.not_in_baseline if k.worse),
            "occupancy_worse": sum(1 for k in self.kernels if "occupancy" in k.worse),
            "worse": statuses.count("worse"),
            "mixed": statuses.count("mixed"),
            "better": statuses.count("better"),
            "same": statuses.count("same"),
            "only_new": len(self.only_new),
            "only_old": len(self.only_old),
            "only_new_using_scratch": sum(1 for k in self.only_new if uses_scratch(k.resources)),
            "not_in_baseline": len(self.not_in_baseline),
            "not_in_baseline_worse": sum(1 for k in self.not_in_baseline if k.worse),
        }

    def totals(self) -> Totals:
        """Sums per metric over the matched kernels, per side for the others, the top changes (gate.totals)."""
        if self._totals is None:
            self._totals = totals(self.kernels, self.only_new, self.only_old,
                                  [k.usage for k in self.not_in_baseline])
        return self._totals

    @property
    def has_worse(self) -> bool:
        """What --fail-on-worse fails on: any worse or mixed kernel, or a
        kernel new in NEW that arrives with scratch or spills (as the gate
        holds new kernels to zero), or one a default baseline does not record
        that is over its zero."""
        counts = self.count()
        return bool(counts["worse"] or counts["mixed"] or counts["only_new_using_scratch"]
                    or counts["not_in_baseline_worse"])

    def sentence(self) -> str:
        c = self.count()
        parts = [f"{kernels(c['spills_or_scratch_worse'])} {have(c['spills_or_scratch_worse'])} new or larger "
                 f"spills or scratch",
                 f"{kernels(c['occupancy_worse'])} {have(c['occupancy_worse'])} less occupancy",
                 f"{kernels(c['better'])} {are(c['better'])} better"]
        if c["mixed"]:
            parts.append(f"{c['mixed']} {are(c['mixed'])} mixed (better in one way, worse in another)")
        parts.append(f"{c['same']} unchanged")
        if c["not_in_baseline"]:
            held = " and ".join(c for c in HELD_TO_ZERO if any(c in k.held for k in self.not_in_baseline))
            over = c["not_in_baseline_worse"]
            parts.append(f"{c['not_in_baseline']} not in the baseline (held to zero {held}: "
                         + (f"{over} over it)" if over else "all within)"))
        if c["only_new"]:
            extra = f" ({c['only_new_using_scratch']} using scratch)" if c["only_new_using_scratch"] else ""
            parts.append(f"{c['only_new']} only in the new build{extra}")
        if c["only_old"]:
            parts.append(f"{c['only_old']} only in the old build")
        sentence = ", ".join(parts) + "."
        if self.code:
            code = self.code_count()
            said = [f"{code['identical code']} identical", f"{code['same figures, code changed']} with the same "
                    f"figures but changed code", f"{code['code changed']} changed"]
            if code["code not read"]:
                said.append(f"{code['code not read']} not read on both sides")
            moved = sum(1 for k in self.kernels if "spills moved into a loop" in k.code_notes())
            if moved:
                said.append(f"{kernels(moved)} with spills moved into a loop")
            verdicts = [found.verdict for k in self.kernels
                        if k.code_verdict in ("same figures, code changed", "code changed")
                        and (found := k.mix_change()) is not None]
            if verdicts.count(ONLY_SPILL_TRAFFIC):
                said.append(f"{kernels(verdicts.count(ONLY_SPILL_TRAFFIC))} with the same arithmetic and only "
                            f"spill traffic changed")
            if verdicts.count(ONLY_SPILL_AND_ALU):
                said.append(f"{kernels(verdicts.count(ONLY_SPILL_AND_ALU))} with the same matrix and memory work "
                            f"and only spill traffic and ALU changed")
            peaks = [shift.vgpr_change for k in self.kernels if (shift := k.peak_shift()) is not None]
            if peaks:
                moved_peaks = sum(1 for change in peaks if change)
                said.append(f"{kernels(moved_peaks)} with another VGPR peak ({sum(1 for c in peaks if c > 0)} "
                            f"higher)")
            sentence += " Code: " + ", ".join(said) + "."
        return sentence

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
            "summary": {V2_COUNT_NAMES.get(name, name): value for name, value in self.count().items()}
            | ({"code": {CODE_COUNT_NAMES[name]: value for name, value in self.code_count().items()}}
               if self.code else {}),
            "sentence": self.sentence(),
            "totals": self.totals().to_json(),
        }

    def _json_lists(self, everything: bool):
        rows = (k for k in self.kernels if everything or k.status != "same")
        if self.code:
            yield "kernels", ({"target": k.target, "key": k.key, "name": k.name, "status": k.status,
                               "worse": k.worse, "better": k.better, "old": k.old.as_dict(), "new": k.new.as_dict(),
                               "occupancy_next": k.occupancy_next, "code": _code_json(k)} for k in rows)
        else:
            yield "kernels", ({"target": k.target, "key": k.key, "name": k.name, "status": k.status,
                               "worse": k.worse, "better": k.better, "old": k.old.as_dict(),
                               "new": k.new.as_dict(), "occupancy_next": k.occupancy_next} for k in rows)
        yield "added", (_usage_json(u) for u in self.only_new)
        yield "removed", (_usage_json(u) for u in self.only_old)
        yield "not_in_baseline", (dict(_usage_json(k.usage), status=k.status, held_to_zero=list(k.held),
                                       worse=k.worse) for k in self.not_in_baseline
                                  if everything or k.worse)


# Document names (schema v2) of the counts: kernels on one side only are
# "added" (only in NEW) and "removed" (only in OLD), as in check and baseline.
V2_COUNT_NAMES = {"only_new": "added", "only_old": "removed", "only_new_using_scratch": "added_using_scratch"}
# (version 4: not_in_baseline and not_in_baseline_worse, by their own names)
# The summary's code counts (--isa), by verdict.
CODE_COUNT_NAMES = {"identical code": "identical", "same figures, code changed": "same_figures_code_changed",
                    "code changed": "changed", "code not read": "not_read"}


def _code_json(diff: KernelDiff) -> dict:
    mix, lines, peaks = diff.mix_change(), diff.lines_change(), diff.peak_shift()
    return {"verdict": diff.code_verdict, "notes": diff.code_notes(),
            "old": None if diff.old_code is None else diff.old_code.as_dict(),
            "new": None if diff.new_code is None else diff.new_code.as_dict(),
            "mix": None if mix is None else mix.as_dict(), "lines": None if lines is None else lines.as_dict(),
            "pressure": None if peaks is None else peaks.as_dict()}


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
            occupancy_model: str = DEFAULT_MODEL, code: bool = False,
            unrecorded: Optional[Mapping[str, tuple[str, ...]]] = None) -> Comparison:
    """``occupancy_model``: the model both sides were read with (the reader's
    default unless the caller read with another); ``code``: say what each
    kernel's machine code did (--isa); ``unrecorded``: per target, the criteria
    a default baseline on the OLD side holds the kernels it does not record
    to zero in (Inputs.unrecorded_held): such a kernel of NEW is not in the
    baseline, not added."""
    diffs = []
    only_new = []
    not_in_baseline = []
    held_of = (unrecorded or {}).get
    for ident, b in new.items():
        a = old.get(ident)
        if a is None:
            held = held_of(b.target)
            if held is None:
                only_new.append(b)
            else:
                not_in_baseline.append(Unrecorded(b, held, over_zero(b.resources, held)))
            continue
        worse, better = classify(a.resources, b.resources)
        diffs.append(KernelDiff(b.target, b.key, b.name, a.resources, b.resources, worse, better,
                                b.occupancy_next, a.code, b.code))
    diffs.sort(key=KernelDiff.sort_key)
    only_old = [u for ident, u in old.items() if ident not in new]
    order = {id(u): rank for rank, u in enumerate(_worst_first([k.usage for k in not_in_baseline]))}
    not_in_baseline.sort(key=lambda k: (not k.worse, order[id(k.usage)]))
    return Comparison(list(new_sources), list(old_sources), diffs, _worst_first(only_new), _worst_first(only_old),
                      not_in_baseline, occupancy_model, code)


def selected(comparison: Comparison, everything: bool, limit: int) -> tuple[list[KernelDiff], int]:
    rows = comparison.kernels if everything else [k for k in comparison.kernels if k.status != "same"]
    if limit > 0 and len(rows) > limit:
        return rows[:limit], len(rows) - limit
    return rows, 0
