#!/usr/bin/env python3
"""Coverage-guided fuzzing of one parser family with Atheris (libFuzzer).

    python3 fuzz/fuzz.py FAMILY [libFuzzer options] [CORPUS_DIR...]
    python3 fuzz/fuzz.py --write-seeds DIR FAMILY
    python3 fuzz/fuzz.py --replay FAMILY FILE...     # run inputs once, no fuzzing (regressions)

fuzz/run.sh drives it for every family.  spillway's modules are instrumented
for coverage; an exception other than SpillwayError, an input that takes more
CPU than 0.5 s + 1 s per MB read, or an RSS above -rss_limit_mb is a crash and
libFuzzer writes the input to the artifact directory.
"""

from __future__ import annotations

import os
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


class SlowInput(Exception):
    """An input took more CPU time than the per-MB budget."""


def budget_seconds(size: int) -> float:
    return 0.5 + size / (1 << 20)


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[1] == "--write-seeds":
        import targets
        count = targets.write_seeds(targets.FAMILIES[argv[3]], Path(argv[2]))
        print(f"{argv[3]}: {count} seeds in {argv[2]}")
        return 0
    if len(argv) >= 3 and argv[1] == "--replay":
        return replay(argv[2], argv[3:])

    import atheris
    # libFuzzer's -merge (and -fork) re-run argv[0] with libFuzzer's flags
    # only: this script, executable, finds its family in the environment.
    if argv[1].startswith("-") and os.environ.get("SPILLWAY_FUZZ_FAMILY"):
        argv = [argv[0], os.environ["SPILLWAY_FUZZ_FAMILY"], *argv[1:]]
    family_name = argv[1]
    os.environ["SPILLWAY_FUZZ_FAMILY"] = family_name
    with atheris.instrument_imports(include=["spillway"]):
        import spillway.cli  # noqa: F401  (imports every subcommand module)
        import spillway.formats.bundles, spillway.formats.codeobject, spillway.formats.containers  # noqa
        import spillway.formats.metadata, spillway.formats.offload_binary  # noqa
        import spillway.gate.baseline, spillway.gate.check, spillway.gate.reading, spillway.report.reader  # noqa
        import spillway.resources.names, spillway.resources.occupancy  # noqa
        import spillway.isa.decoder, spillway.isa.evidence  # noqa
    from spillway.errors import SpillwayError
    import targets

    family = targets.FAMILIES[family_name]

    def test_one(data: bytes) -> None:
        started = time.process_time()
        try:
            size = family.one(data)
        except SpillwayError:
            size = len(data)
        spent = time.process_time() - started
        if spent > budget_seconds(max(size, len(data))):
            raise SlowInput(f"{spent:.2f} s of CPU for {size} bytes")

    def mutate(data: bytes, max_size: int, seed: int) -> bytes:
        rng = random.Random(seed)
        try:
            out = family.mutate(data, rng, atheris.Mutate, max_size)
        except Exception:  # a mutator bug must not end the run: fall back to bytes
            out = atheris.Mutate(data, max_size)
        return out[:max_size]

    atheris.Setup([str(Path(__file__).resolve()), *argv[2:]], test_one, custom_mutator=mutate)
    atheris.Fuzz()
    return 0


def replay(family_name: str, files: list[str]) -> int:
    """Run saved inputs once; print one line per input; exit 1 on a failure.
    SPILLWAY_REPLAY_SLACK multiplies the CPU budget (a loaded CI machine)."""
    from spillway.errors import SpillwayError
    import targets
    family = targets.FAMILIES[family_name]
    slack = float(os.environ.get("SPILLWAY_REPLAY_SLACK", "1"))
    failed = 0
    for name in files:
        data = Path(name).read_bytes()
        started = time.process_time()
        try:
            size = family.one(data)
            outcome = "ok"
        except SpillwayError as exc:
            size, outcome = len(data), f"SpillwayError: {exc}"
        except Exception as exc:  # the point of replaying
            size, outcome = len(data), f"CRASH {type(exc).__name__}: {exc}"
            failed += 1
        spent = time.process_time() - started
        if spent > budget_seconds(size) * slack:
            outcome += f" SLOW {spent:.2f} s"
            failed += 1
        print(f"{name}: {outcome[:300]}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(f"replayed {len(files)} inputs, {failed} failures, peak RSS {peak} MB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
