"""The command line a compiler recorded in a code object: clang's
``-frecord-command-line`` writes it into a ``.GCC.command.line`` section
(SHF_MERGE|SHF_STRINGS: NUL-terminated strings, the first one empty), the
driver's arguments joined by spaces, with spaces and backslashes inside an
argument escaped by a backslash.  Pure functions over the section's bytes;
elf.ElfImage finds the section.

``code_generation_flags`` turns recorded command lines into the flags that
decide what a kernel becomes, the ones ``check`` compares with a baseline's:
everything but the compiler's path, inputs and outputs, include folders,
dependency-file options and the offload target (a report line and a baseline
entry are per target already)."""

from __future__ import annotations

from typing import Iterable

SECTION = ".GCC.command.line"

# Options whose value is the next argument.  Those in _PLACES say where files are,
# not how code is generated, and are dropped with their value.
_PLACES_WITH_VALUE = frozenset({"-o", "-I", "-isystem", "-iquote", "-idirafter", "-isysroot", "--sysroot",
                                "-MF", "-MT", "-MQ", "-include", "-imacros"})
_WITH_VALUE = frozenset({"-x", "-mllvm", "-Xclang", "-Xlinker", "-Xarch_host", "-Xarch_device",
                         "-Xoffload-linker", "-Xopenmp-target", "-D", "-U", "-target", "-arch", "-std"})
# Dropped alone: the compile-only switch, dependency files, recording the command line.
_PLACES = frozenset({"-c", "-S", "-E", "-MD", "-MMD", "-MP", "-M", "-MM", "-frecord-command-line",
                     "-fno-record-command-line", "-grecord-command-line", "-gno-record-command-line"})
# Dropped with their value attached (-Ipath, -o<file>, --offload-arch=gfx1151, the
# translation unit's id -cuid=..., named after its file...).
_PLACE_PREFIXES = ("-I", "-o", "-MF", "-MT", "-MQ", "--sysroot=", "-isystem", "-iquote", "-idirafter",
                   "--offload-arch=", "-mcpu=", "--cuda-gpu-arch=", "-march=gfx", "--no-offload-arch=",
                   "-cuid=")


def parse_section(data: bytes | memoryview) -> list[str]:
    """The distinct command lines of a ``.GCC.command.line`` section, in the
    order they come (one per translation unit linked into the code object;
    identical ones are merged by the linker, or here).  Bytes that are not
    UTF-8 are replaced (U+FFFD): a command line is text for people and for
    comparing, never a path to open."""
    lines = (chunk.decode("utf-8", "replace").strip() for chunk in bytes(data).split(b"\0"))
    return list(dict.fromkeys(line for line in lines if line))


def split_arguments(command_line: str) -> list[str]:
    """The arguments of a recorded command line: split on spaces, a
    backslash keeping the character after it (a space or a backslash)."""
    arguments: list[str] = []
    current: list[str] = []
    pending = False        # an argument was started (an escaped space alone is one)
    escaped = False
    for char in command_line:
        if escaped:
            current.append(char)
            escaped = False
            pending = True
        elif char == "\\":
            escaped = True
        elif char == " ":
            if pending:
                arguments.append("".join(current))
                current, pending = [], False
        else:
            current.append(char)
            pending = True
    if escaped:            # a trailing backslash: kept as it was
        current.append("\\")
        pending = True
    if pending:
        arguments.append("".join(current))
    return arguments


def code_generation_flags(command_lines: Iterable[str]) -> list[str]:
    """The distinct code-generation flags of recorded command lines, in the
    order first seen (see ``flags_of_arguments``)."""
    flags: dict[str, None] = {}
    for line in command_lines:
        flags.update(dict.fromkeys(flags_of_arguments(split_arguments(line)[1:])))    # [0]: the compiler
    return list(flags)


def flags_of_arguments(arguments: Iterable[str]) -> list[str]:
    """The distinct code-generation flags among a compiler's arguments (without
    the compiler itself), in order.  An option and its separate value stay one
    flag (``-mllvm -amdgpu-num-vgpr=64``, ``-x hip``); inputs (arguments that
    are not options) are dropped."""
    flags: dict[str, None] = {}
    arguments = list(arguments)
    at = 0
    while at < len(arguments):
        argument = arguments[at]
        at += 1
        if argument in _PLACES_WITH_VALUE:
            at += 1
        elif argument in _WITH_VALUE:
            if at < len(arguments):
                flags[f"{argument} {arguments[at]}"] = None
            at += 1
        elif argument in _PLACES or argument.startswith(_PLACE_PREFIXES) or not argument.startswith("-") \
                or argument == "-":
            continue
        else:
            flags[argument] = None
    return list(flags)


def flag_changes(before: Iterable[str], after: Iterable[str]) -> tuple[list[str], list[str]]:
    """(flags added, flags removed) going from ``before`` to ``after``, each in
    its side's order."""
    old, new = list(dict.fromkeys(before)), list(dict.fromkeys(after))
    return [f for f in new if f not in old], [f for f in old if f not in new]
