"""The models the renderers draw: one frozen value per command's output,
carrying everything every format of it needs, so that a renderer reads no
file and asks no question of the command line (issue 33).

``View`` holds how a model is drawn (the table options); the models hold
what is drawn.  The command line builds a model (spillway.cli: options ->
model) and hands it to render.emit.emit with a format and an output.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional

if TYPE_CHECKING:   # the gate imports pydantic: only when a check or a comparison is drawn
    from spillway.gate.baseline import UpdateResult
    from spillway.gate.check import CheckResult
    from spillway.gate.commands import CheckCommands
    from spillway.gate.compare import Comparison
    from spillway.gate.failure_code import FailureCode
    from spillway.matrix.bisect import BisectDocument
    from spillway.matrix.cells import Cell
    from spillway.matrix.history import HistoryDocument
    from spillway.matrix.releases import CacheDocument
    from spillway.matrix.gating import CellCheck
    from spillway.matrix.summary import Summary
    from spillway.report.code_view import ViewedKernel


@dataclass(frozen=True)
class View:
    """How a model is drawn: kernel names (``short`` or ``full``), the rows a
    table shows (``limit``, 0: all), every row (``everything``: --all), only
    the rows where the cells differ (``differing``: the matrix's Markdown)."""

    names: str = "short"
    limit: int = 0
    everything: bool = False
    differing: bool = False


@dataclass(frozen=True)
class ReportModel:
    """``spillway report``: a stream of records the command hands over, read
    when a renderer first asks (``read``: the report document, the kernels the
    table shows, selected and sorted, and with a FILTER every record it
    matches); ``write_json``: with no FILTER, the command's writing of the whole
    JSON document while it is read (a ROCm library's report is half a
    gigabyte: report.reader.write_report_json, to a file descriptor, and the
    same bytes in pieces); ``code_of``: the command's reading of the code of the
    records the table prints (report.kernel_code.printed_rows_evidence: their
    code objects read again, those kernels only), which only the table asks
    for, and only for the rows it prints."""

    read: Callable[[], tuple[dict, list, Optional[list]]]
    pattern: Optional[str]
    isa: bool                        # --isa: every record carries its isa object
    occupancy_model: str             # the model the figures were read with
    code_of: Callable[[list[dict]], list[dict]]
    write_json: Optional[tuple[Callable[[int], None], Callable[[], Iterable[bytes]]]] = None
    pressure: bool = False           # --pressure: every isa object carries the kernel's live registers
    title = "report"

    @cached_property
    def _records(self) -> tuple[dict, list, Optional[list]]:
        return self.read()

    @property
    def document(self) -> dict:
        return self._records[0]

    @property
    def kernels(self) -> list:
        """The records the table shows (selected and sorted)."""
        return self._records[1]

    @property
    def matching(self) -> Optional[list]:
        """With a FILTER: every record it matches (the JSON document's)."""
        return self._records[2]


@dataclass(frozen=True)
class CodeModel:
    """``spillway code``: the named kernels, each with its listing."""

    kernels: tuple["ViewedKernel", ...]
    title = "code"


@dataclass(frozen=True)
class CheckModel:
    """``spillway check``: the result, the commands that accept each failure
    and removal (gate.commands.CheckCommands), the failing kernels' machine
    code by (target, key) where it was decoded, and the baseline file's
    bytes as read once (SARIF locates each kernel at its line)."""

    result: "CheckResult"
    commands: "CheckCommands"
    baseline: bytes
    suite: str                       # the JUnit suite's name
    code: Optional[Mapping[tuple[str, str], "FailureCode"]] = None
    title = "check"


@dataclass(frozen=True)
class CompareModel:
    """``spillway compare``: the comparison, the sides as given, the baseline
    files among the sides with their bytes as read (SARIF locates kernels at
    their lines), and the annotations' level (error with --fail-on-worse)."""

    comparison: "Comparison"
    new: tuple[str, ...]
    against: tuple[str, ...]
    baselines: tuple[tuple[str, bytes], ...] = ()     # (path, bytes): OLD's first, then NEW's
    level: str = "warning"
    title = "compare"


@dataclass(frozen=True)
class MatrixPairModel:
    """``matrix compare OLD NEW``: two cells' comparison."""

    comparison: "Comparison"
    old: "Cell"
    new: "Cell"
    title = "compare"


@dataclass(frozen=True)
class MatrixSummaryModel:
    """``matrix compare`` (several cells) and ``matrix run``: the cells side
    by side, and each cell's verdict on a run (``{"cell", "verdict", "reason"}``)."""

    summary: "Summary"
    verdicts: Optional[tuple[dict, ...]] = None
    title = "matrix summary"


@dataclass(frozen=True)
class MatrixListModel:
    """``matrix list``: the cells file (as shown), and per cell its
    availability here (toolchains.Availability) and whether its baseline exists."""

    cells_file: str
    shown_file: str
    rows: tuple[tuple["Cell", Any, bool], ...]
    title = "matrix list"


@dataclass(frozen=True)
class MatrixRunModel:
    """``matrix run`` and ``matrix collect``: each cell's check, the cells side
    by side (None when no cell was built), each checked cell's baseline file's
    bytes as read, by cell name (SARIF locates each kernel at its line), the
    command's name and when it started (the last line says how long it took)."""

    checks: tuple["CellCheck", ...]
    summary: Optional["Summary"]
    baselines: Mapping[str, bytes]
    command: str
    started: float                   # time.monotonic()
    title = "matrix summary"


@dataclass(frozen=True)
class BaselineWriteModel:
    """``baseline write``: what the write or update did (gate.baseline.UpdateResult:
    the baseline, the allowances tightened, loosened and kept, the kernels and
    targets removed and kept), the file written, and this command's words again
    (``paths``, ``gate``, ``targets`` as given) for the commands that accept what
    it kept."""

    result: "UpdateResult"
    output: str
    paths: tuple[str, ...]
    gate: Optional[str]
    targets: Optional[str]
    title = "baseline"


@dataclass(frozen=True)
class HistoryModel:
    """``matrix history``: the named kernels' figures per ROCm release
    (matrix.history.HistoryDocument)."""

    document: "HistoryDocument"
    title = "matrix history"


@dataclass(frozen=True)
class BisectModel:
    """``matrix bisect``: the builds a bisect made and its verdict
    (matrix.bisect.BisectDocument), and the comparison of the two neighbouring
    releases (``compare --isa``; None: none to make, or --no-compare)."""

    document: "BisectDocument"
    compare: Optional[CompareModel] = None
    compare_heading: str = ""
    title = "matrix bisect"


@dataclass(frozen=True)
class CacheModel:
    """``matrix cache``: what the store of AMD's LLVM releases holds, or what was
    removed from it (matrix.releases.CacheDocument), and where its location was set."""

    document: "CacheDocument"
    location_set: str = ""
    title = "matrix cache"
