"""``spillway cmake-dir``: the folder holding SpillwayKernelResources.cmake,
shipped inside the package (as ``python -m pybind11 --cmakedir`` prints
pybind11's), for ``list(APPEND CMAKE_MODULE_PATH ...)``."""

from __future__ import annotations

import os
from pathlib import Path

MODULE = "SpillwayKernelResources.cmake"


def cmake_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "cmake"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "cmake-dir", help="print the folder holding SpillwayKernelResources.cmake (for CMAKE_MODULE_PATH)",
        description="Print the folder of the CMake module shipped with spillway: "
                    "list(APPEND CMAKE_MODULE_PATH <it>) then include(SpillwayKernelResources).")
    parser.set_defaults(run=run)


def run(args) -> int:
    folder = cmake_dir()
    if not (folder / MODULE).is_file():
        from spillway.errors import InputError
        raise InputError(f"{folder / MODULE} is missing from this installation of spillway")
    # A path for $(spillway cmake-dir): written as it is, never bracketed (cli.output.write).
    from spillway.cli.output import write
    write(None, os.fsencode(folder) + b"\n")
    return 0
