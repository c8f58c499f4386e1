"""Which release made it worse (``spillway matrix bisect``): a binary search over
AMD's releases between a good and a bad one, building only the kernel's
translation unit and one target per release (spillway.matrix.history's
builder, so every build is reused by a later history or bisect).

The search keeps a pair (last release seen not worse than the good one, first
release seen worse) and builds the release in the middle until they are
neighbours among the releases that built.  A release that does not build is
skipped (as ``git bisect skip``) and reported.  Because only some releases are
built, a figure that goes up and down between them can hide another change: the
result says when the figures it saw are not monotonic, and what it saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from spillway.errors import UsageError
from spillway.json_codec import published_schema
from spillway.matrix.history import FrontendInfo, HistoryBuilder, figure, matches, read_figures, worse
from spillway.matrix.releases import Release

BISECT_SCHEMA: Final = "spillway.bisect/1"


class BisectBuild(BaseModel):
    model_config = ConfigDict(extra="forbid")
    release: str
    llvm_version: str
    commit: str
    value: Optional[int] = Field(description="The metric's figure; null when the release did not build")
    code_sha256: Optional[str] = None
    verdict: str = Field(description="good (not worse than the good release), bad (worse), or skipped "
                                     "(did not build: reason)")
    reason: str = ""
    built: bool = Field(description="Built by this run (false: reused from an earlier one)")


class BisectDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_: Literal["spillway.bisect/1"] = Field(BISECT_SCHEMA, alias="schema")
    kernel: str = Field(description="The kernel's name as the code object names it (untrusted text)")
    symbol: str
    unit: str
    target: str
    metric: str
    frontend: FrontendInfo
    occupancy_model: str
    releases: list[str] = Field(description="The releases between good and bad, both included, in order")
    builds: list[BisectBuild] = Field(description="Each release the search looked at, in the order it did")
    first_bad: Optional[str] = Field(description="The first release whose figure is worse than the good "
                                                 "one's; null when the bad release is not worse")
    last_good: Optional[str] = Field(description="The release before it among those that built")
    monotonic: bool = Field(description="false when the figures seen, in release order, go both ways")
    note: str = Field(description="What the search saw, in one sentence")


def bisect(builder: HistoryBuilder, span: list[Release], kernel: str, target: str, metric: str,
           occupancy_model: str) -> tuple[BisectDocument, Optional[tuple[Path, Path]]]:
    """The search, and the two neighbouring code objects (last good, first bad)."""
    if len(span) < 2:
        raise UsageError("--good and --bad must be two different releases, the good one first")
    units = builder.units_of([kernel], [target])
    if len(units) > 1:
        raise UsageError(f"kernel {kernel!r} is in more than one translation unit ({', '.join(units)}): "
                         f"name it by its symbol")
    unit = units[0]
    builder.front_end(unit, target)
    seen: dict[str, BisectBuild] = {}
    order: list[BisectBuild] = []
    objects: dict[str, Path] = {}
    found: dict[str, str] = {}

    def look(release: Release) -> BisectBuild:
        if release.rocm in seen:
            return seen[release.rocm]
        if release.unusable:
            result = BisectBuild(release=release.rocm, llvm_version=release.llvm_version, commit=release.commit,
                                 value=None, verdict="skipped", reason=release.unusable, built=False)
        else:
            made = builder.back_end(release, unit, target)
            if made.error or made.code_object is None:
                result = BisectBuild(release=release.rocm, llvm_version=release.llvm_version,
                                     commit=release.commit, value=None, verdict="skipped", reason=made.error,
                                     built=made.built)
            else:
                kernels = [(r, f) for r, f in read_figures(made.code_object, occupancy_model) if matches(r, kernel)]
                if not kernels:
                    raise UsageError(f"kernel {kernel!r} is not in {unit}'s code object for {target}")
                record, figures = kernels[0]
                found.setdefault("kernel", record.get("name") or record["symbol"])
                found.setdefault("symbol", record["symbol"])
                objects[release.rocm] = made.code_object
                result = BisectBuild(release=release.rocm, llvm_version=release.llvm_version,
                                     commit=release.commit, value=figure(figures, metric),
                                     code_sha256=figures.code_sha256, verdict="", built=made.built)
        seen[release.rocm] = result
        order.append(result)
        return result

    good, bad = look(span[0]), look(span[-1])
    for end, which in ((good, "--good"), (bad, "--bad")):
        if end.value is None:
            raise UsageError(f"{which} {end.release} did not build: {end.reason}")
    assert good.value is not None and bad.value is not None
    good.verdict = "good"
    reference = good.value

    def verdict(result: BisectBuild) -> None:
        if result.value is not None:
            result.verdict = "bad" if worse(result.value, reference, metric) else "good"

    verdict(bad)
    first_bad: Optional[str] = None
    last_good: Optional[str] = None
    if bad.verdict == "bad":
        low, high = 0, len(span) - 1      # span[low] good, span[high] bad
        candidates = list(range(low + 1, high))
        while True:
            between = [i for i in candidates if low < i < high and seen.get(span[i].rocm) is None]
            if not between:
                break
            middle = between[len(between) // 2]
            result = look(span[middle])
            verdict(result)
            if result.verdict == "bad":
                high = middle
            elif result.verdict == "good":
                low = middle
        first_bad, last_good = span[high].rocm, span[low].rocm

    built = [seen[r.rocm] for r in span if r.rocm in seen and seen[r.rocm].value is not None]
    values = [b.value for b in built if b.value is not None]
    rising = any(b > a for a, b in zip(values, values[1:]))
    falling = any(b < a for a, b in zip(values, values[1:]))
    monotonic = not (rising and falling)
    saw = ", ".join(f"{b.release} {b.value}" for b in built)
    skipped = [b for b in order if b.verdict == "skipped"]
    if first_bad is None:
        note = (f"{metric} at the bad release {bad.release} ({bad.value}) is not worse than at the good release "
                f"{good.release} ({good.value}): nothing to bisect")
    else:
        note = f"{metric} first got worse in ROCm {first_bad}: {seen[last_good].value} at {last_good} " \
               f"-> {seen[first_bad].value} at {first_bad}" if last_good else ""
    if not monotonic:
        note += f"; not monotonic over the releases built ({saw}): another change may hide between them"
    if skipped:
        note += "; skipped (did not build): " + ", ".join(f"{b.release} ({b.reason})" for b in skipped)
    document = BisectDocument(kernel=found.get("kernel", kernel), symbol=found.get("symbol", kernel), unit=unit,
                              target=target, metric=metric, frontend=builder.frontend,
                              occupancy_model=occupancy_model, releases=[r.rocm for r in span], builds=order,
                              first_bad=first_bad, last_good=last_good, monotonic=monotonic, note=note)
    pair = (objects[last_good], objects[first_bad]) if first_bad and last_good else None
    return document, pair


def with_line_tables(builder: HistoryBuilder, document: BisectDocument, pair: tuple[Path, Path],
                     span: list[Release]) -> tuple[tuple[Path, Path], str]:
    """The two neighbours' debug twins (the unit again with line tables) when each
    twin's kernel code is byte-identical to the measured one, so compare --isa can
    name source lines; else the measured code objects, and why."""
    by_name = {r.rocm: r for r in span}
    twins = []
    for release, measured in ((document.last_good, pair[0]), (document.first_bad, pair[1])):
        assert release is not None
        made = builder.back_end(by_name[release], document.unit, document.target, lines=True)
        if made.error or made.code_object is None:
            return pair, f"no source lines: ROCm {release}'s line-table twin did not build: {made.error}"
        codes = [f.code_sha256 for r, f in read_figures(made.code_object, document.occupancy_model)
                 if r["symbol"] == document.symbol]
        expected = next(b.code_sha256 for b in document.builds if b.release == release)
        if codes != [expected]:
            return pair, f"no source lines: with line tables ROCm {release}'s code differs"
        twins.append(made.code_object)
    return (twins[0], twins[1]), "source lines from line-table twins whose code is byte-identical"


def bisect_json_schema() -> dict:
    return published_schema(BisectDocument, "bisect-1.json")
