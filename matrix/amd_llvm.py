#!/usr/bin/env python3
"""AMD's LLVM as a matrix back end: the step of matrix/compile.sh between the
front end's unoptimized device bitcode and ld.lld, run through the LLVM C API of
the library AMD ships in a Python wheel (rocm-llvm-python's librocmllvm.so,
rocm-bindings-compiler's libLLVM.so), loaded with ctypes.

    amd_llvm.py codegen --library LIB [--preload DIR] [--drop-attribute NAME...] --target gfx90a --unit NAME
                IN.ll OUT.o
    amd_llvm.py probe --library LIB [--preload DIR]      one JSON line: version, commit, loads

codegen: parse the front end's device IR (text, .ll: see --drop-attribute; bitcode
is read too), drop the attributes the back end's LLVM does not know (cells.toml
`drop_attributes`), make every definition internal but the kernels and the
globals something uses (what clang's device link does with
-amdgpu-internalize-symbols, so O3 drops what is unused), run "default<O3>", emit
an AMDGPU object (triple amdgcn-amd-amdhsa, CPU and features from the target ID,
O3, PIC).  Prints each step's time on stderr.  A failure is one line,
"amd_llvm: error: UNIT (TARGET): ...", exit status 1.

Why Python and ctypes, not a small C program: neither wheel carries LLVM's C headers
(nor does this machine: no llvm-N-dev), the C API is called by name from a library
found at run time, and the matrix already needs Python (spillway, cells.toml), so
the Nix derivation carries the python3 it has anyway and nothing is compiled.
Standard library only; Python >= 3.10.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import re
import sys
import time

TRIPLE = b"amdgcn-amd-amdhsa"
AMDGPU_KERNEL = 91              # llvm::CallingConv::AMDGPU_KERNEL
INTERNAL_LINKAGE = 8            # LLVMInternalLinkage
PRIVATE_LINKAGE, LOCAL_LINKAGES = 9, (8, 9)
CODEGEN_O3, RELOC_PIC, CODE_MODEL_DEFAULT, OBJECT_FILE = 3, 2, 0, 1
FORWARDERS = ("librocm_sysdeps_z.so.1", "librocm_sysdeps_zstd.so.1")

# The library's own identity: "AMD LLVM version 23.0.0git (8f497e0992fb..." (the
# --version banner, cut by the string merger) and "23.0.0git <40-hex commit>" (the
# revision string, NUL-terminated).
_BANNER = re.compile(rb"AMD LLVM version ([0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9]*) \(([0-9a-f]{12,40})")
_REVISION = re.compile(rb"\x00([0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9]*) ([0-9a-f]{40})\x00")
# Older libraries (rocm-llvm-python 6.x, 7.0, 7.1) name themselves by AMD clang's banner:
# "AMD clang version 19.0.0git (https://github.com/.../llvm-project roc-6.4.3 25224 d366fa84...)".
_CLANG_BANNER = re.compile(rb"AMD clang version ([0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9]*) \([^ ()]* ?roc-([0-9.]+) "
                           rb"[0-9]+ ([0-9a-f]{40})\)")


class Failure(Exception):
    pass


def identity(library: str) -> dict:
    """The AMD LLVM version and commit the library's own strings name (found
    with bytes.find first: a regular expression over 130 MB takes seconds)."""
    with open(library, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = data.find(b"AMD LLVM version ")
        banner = _BANNER.match(data[at:at + 128]) if at >= 0 else None
        if not banner:
            at = data.find(b"AMD clang version ")
            clang = _CLANG_BANNER.match(data[at:at + 256]) if at >= 0 else None
            if clang:
                version = clang.group(1).decode()
                return {"version": version, "major": int(version.split(".")[0]), "commit": clang.group(3).decode(),
                        "release": clang.group(2).decode()}
            raise Failure(f"{library}: no 'AMD LLVM version' string: not AMD's LLVM")
        version, prefix = banner.group(1).decode(), banner.group(2).decode()
        commit = ""
        needle = f"\0{version} {prefix}".encode()
        at = data.find(needle)
        while at >= 0 and not commit:
            match = _REVISION.match(data[at:at + len(version) + 44])
            if match:
                commit = match.group(2).decode()
            at = data.find(needle, at + 1)
    if not commit:
        raise Failure(f"{library}: AMD LLVM {version}: no full commit beside the version string")
    return {"version": version, "major": int(version.split(".")[0]), "commit": commit}


def load(library: str, preload: str | None) -> ctypes.CDLL:
    """The library, after the sysdeps forwarders when it needs them (loaded
    first and globally, their sonames satisfy its DT_NEEDED entries)."""
    if preload:
        for name in FORWARDERS:
            path = os.path.join(preload, name)
            if os.path.exists(path):
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    try:
        llvm = ctypes.CDLL(library, mode=ctypes.RTLD_LOCAL)
    except OSError as exc:
        raise Failure(f"cannot load {library}: {exc} (scripts/install-toolchains.sh builds the forwarder)") \
            from None
    return _declare(llvm)


def _declare(llvm: ctypes.CDLL) -> ctypes.CDLL:
    p, c, u = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint
    pp, cp = ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_char_p)
    signatures = {
        "LLVMContextCreate": ([], p), "LLVMContextDispose": ([p], None),
        "LLVMCreateMemoryBufferWithMemoryRangeCopy": ([c, ctypes.c_size_t, c], p),
        "LLVMParseIRInContext": ([p, p, pp, cp], ctypes.c_int),
        "LLVMDisposeMessage": ([p], None), "LLVMDisposeModule": ([p], None),
        "LLVMGetFirstFunction": ([p], p), "LLVMGetNextFunction": ([p], p),
        "LLVMGetFirstGlobal": ([p], p), "LLVMGetNextGlobal": ([p], p),
        "LLVMIsDeclaration": ([p], ctypes.c_int), "LLVMGetLinkage": ([p], u), "LLVMSetLinkage": ([p, u], None),
        "LLVMGetFunctionCallConv": ([p], u), "LLVMGetFirstUse": ([p], p),
        "LLVMGetValueName2": ([p, ctypes.POINTER(ctypes.c_size_t)], ctypes.c_void_p),
        "LLVMSetVisibility": ([p, u], None),
        "LLVMInitializeAMDGPUTargetInfo": ([], None), "LLVMInitializeAMDGPUTarget": ([], None),
        "LLVMInitializeAMDGPUTargetMC": ([], None), "LLVMInitializeAMDGPUAsmPrinter": ([], None),
        "LLVMGetTargetFromTriple": ([c, pp, cp], ctypes.c_int),
        "LLVMCreateTargetMachine": ([p, c, c, c, u, u, u], p), "LLVMDisposeTargetMachine": ([p], None),
        "LLVMCreatePassBuilderOptions": ([], p), "LLVMDisposePassBuilderOptions": ([p], None),
        "LLVMRunPasses": ([p, c, p, p], p),
        "LLVMGetErrorMessage": ([p], p),
        "LLVMTargetMachineEmitToMemoryBuffer": ([p, p, u, cp, pp], ctypes.c_int),
        "LLVMGetBufferStart": ([p], p), "LLVMGetBufferSize": ([p], ctypes.c_size_t),
        "LLVMDisposeMemoryBuffer": ([p], None),
        "LLVMGetVersion": ([ctypes.POINTER(u)] * 3, None),
    }
    if not hasattr(llvm, "LLVMInitializeAMDGPUTarget"):
        # Older libraries (rocm-llvm-python 6.x-7.1) export only the LLVMInitializeAll*
        # functions; their only target is AMDGPU, so these initialize the same.
        for step, every in (("TargetInfo", "TargetInfos"), ("Target", "Targets"), ("TargetMC", "TargetMCs"),
                            ("AsmPrinter", "AsmPrinters")):
            setattr(llvm, f"LLVMInitializeAMDGPU{step}", getattr(llvm, f"LLVMInitializeAll{every}"))
    for name, (arguments, result) in signatures.items():
        function = getattr(llvm, name)
        function.argtypes = arguments
        function.restype = result
    return llvm


def _message(llvm: ctypes.CDLL, pointer) -> str:
    if not pointer:
        return "(no message)"
    text = ctypes.string_at(pointer).decode("utf-8", "replace").strip()
    llvm.LLVMDisposeMessage(pointer)
    return " ".join(text.split())   # one line


def _name(llvm: ctypes.CDLL, value) -> str:
    length = ctypes.c_size_t()
    pointer = llvm.LLVMGetValueName2(value, ctypes.byref(length))
    return ctypes.string_at(pointer, length.value).decode("utf-8", "replace") if pointer else ""


def _internalize(llvm: ctypes.CDLL, module) -> int:
    """Internal linkage for every definition but kernels and used globals
    (AMDGPU's mustPreserveGV); returns how many were made internal."""
    count = 0
    function = llvm.LLVMGetFirstFunction(module)
    while function:
        if (not llvm.LLVMIsDeclaration(function) and llvm.LLVMGetLinkage(function) not in LOCAL_LINKAGES
                and llvm.LLVMGetFunctionCallConv(function) != AMDGPU_KERNEL
                and not _name(llvm, function).startswith("__asan_")):
            llvm.LLVMSetVisibility(function, 0)
            llvm.LLVMSetLinkage(function, INTERNAL_LINKAGE)
            count += 1
        function = llvm.LLVMGetNextFunction(function)
    variable = llvm.LLVMGetFirstGlobal(module)
    while variable:
        if (not llvm.LLVMIsDeclaration(variable) and llvm.LLVMGetLinkage(variable) not in LOCAL_LINKAGES
                and not llvm.LLVMGetFirstUse(variable) and not _name(llvm, variable).startswith("llvm.")):
            llvm.LLVMSetVisibility(variable, 0)
            llvm.LLVMSetLinkage(variable, INTERNAL_LINKAGE)
            count += 1
        variable = llvm.LLVMGetNextGlobal(variable)
    return count


_ATTRIBUTE_GROUP = re.compile(rb"^attributes #[0-9]+ = \{.*\}$", re.MULTILINE)


def drop_attributes(text: bytes, names: list[str]) -> tuple[bytes, int]:
    """The IR text with the named enum attributes removed from its attribute
    groups (``attributes #N = { ... }``), and how many were removed.  For an
    attribute a newer front end puts on intrinsic declarations that an older
    back end's reader does not know (LLVM 22.1's nocreateundeforpoison, read by
    AMD LLVM 22.0.0git: "Unknown attribute kind (105)"): a hint, so dropping it
    keeps the meaning."""
    if not names:
        return text, 0
    words = re.compile(rb" (?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")(?= )")
    removed = 0

    def clean(match: re.Match) -> bytes:
        nonlocal removed
        result, count = words.subn(b"", match.group(0))
        removed += count
        return result
    return _ATTRIBUTE_GROUP.sub(clean, text), removed


def codegen(llvm: ctypes.CDLL, bitcode: bytes, target: str, unit: str, version: str,
            name: str = "ir") -> tuple[bytes, dict]:
    processor, *features = target.split(":")
    feature_text = ",".join(f[-1] + f[:-1] for f in features).encode()   # xnack- -> -xnack
    where = f"{unit} ({target})"
    times: dict[str, float] = {}
    start = time.monotonic()
    context = llvm.LLVMContextCreate()
    buffer = llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy(bitcode, len(bitcode), os.path.basename(name).encode())
    module, error = ctypes.c_void_p(), ctypes.c_char_p()
    if llvm.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(error)):
        raise Failure(f"{where}: AMD LLVM {version} rejects the front end's IR: "
                      f"{_message(llvm, ctypes.cast(error, ctypes.c_void_p))}")
    times["parse"] = time.monotonic() - start

    start = time.monotonic()
    internal = _internalize(llvm, module)
    times["internalize"] = time.monotonic() - start

    for step in ("TargetInfo", "Target", "TargetMC", "AsmPrinter"):
        getattr(llvm, f"LLVMInitializeAMDGPU{step}")()
    found = ctypes.c_void_p()
    if llvm.LLVMGetTargetFromTriple(TRIPLE, ctypes.byref(found), ctypes.byref(error)):
        raise Failure(f"{where}: AMD LLVM {version} has no AMDGPU target: "
                      f"{_message(llvm, ctypes.cast(error, ctypes.c_void_p))}")
    machine = llvm.LLVMCreateTargetMachine(found, TRIPLE, processor.encode(), feature_text, CODEGEN_O3, RELOC_PIC,
                                           CODE_MODEL_DEFAULT)
    if not machine:
        raise Failure(f"{where}: AMD LLVM {version} makes no target machine for {processor}")
    start = time.monotonic()
    options = llvm.LLVMCreatePassBuilderOptions()
    failed = llvm.LLVMRunPasses(module, b"default<O3>", machine, options)
    llvm.LLVMDisposePassBuilderOptions(options)
    if failed:
        raise Failure(f"{where}: AMD LLVM {version} default<O3> failed: "
                      f"{_message(llvm, llvm.LLVMGetErrorMessage(failed))}")
    times["O3"] = time.monotonic() - start

    start = time.monotonic()
    output = ctypes.c_void_p()
    if llvm.LLVMTargetMachineEmitToMemoryBuffer(machine, module, OBJECT_FILE, ctypes.byref(error),
                                                ctypes.byref(output)):
        raise Failure(f"{where}: AMD LLVM {version} code generation failed: "
                      f"{_message(llvm, ctypes.cast(error, ctypes.c_void_p))}")
    data = ctypes.string_at(llvm.LLVMGetBufferStart(output), llvm.LLVMGetBufferSize(output))
    times["codegen"] = time.monotonic() - start
    llvm.LLVMDisposeMemoryBuffer(output)
    llvm.LLVMDisposeTargetMachine(machine)
    llvm.LLVMDisposeModule(module)
    llvm.LLVMContextDispose(context)
    times["internalized"] = internal
    return data, times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amd_llvm.py", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("codegen", "probe"):
        command = commands.add_parser(name)
        command.add_argument("--library", required=True, help="AMD's LLVM shared library")
        command.add_argument("--preload", help="folder of the sysdeps forwarders (librocm_sysdeps_*.so.1)")
        if name == "codegen":
            command.add_argument("--target", required=True, help="offload target ID (gfx90a, gfx90a:xnack-)")
            command.add_argument("--unit", required=True, help="the translation unit, for messages")
            command.add_argument("--drop-attribute", action="append", default=[], metavar="NAME",
                                 help="an attribute the back end does not know, removed from the IR's "
                                      "attribute groups (text IR only)")
            command.add_argument("input", help="device IR from the front end (.ll, or bitcode)")
            command.add_argument("output", help="AMDGPU relocatable object")
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "probe":
            found = identity(arguments.library)
            load(arguments.library, arguments.preload)
            print(json.dumps(dict(found, library=arguments.library, loads=True)))
            return 0
        llvm = load(arguments.library, arguments.preload)
        numbers = [ctypes.c_uint() for _ in range(3)]
        llvm.LLVMGetVersion(*[ctypes.byref(n) for n in numbers])
        found = {"version": ".".join(str(n.value) for n in numbers)}
        try:
            with open(arguments.input, "rb") as handle:
                bitcode = handle.read()
        except OSError as exc:
            raise Failure(f"{arguments.unit} ({arguments.target}): cannot read {arguments.input}: "
                          f"{exc.strerror}") from None
        if arguments.drop_attribute and bitcode.startswith(b"BC"):
            raise Failure(f"{arguments.unit} ({arguments.target}): --drop-attribute needs text IR (-S -emit-llvm)")
        bitcode, dropped = drop_attributes(bitcode, arguments.drop_attribute)
        data, times = codegen(llvm, bitcode, arguments.target, arguments.unit, found["version"], arguments.input)
        times["dropped"] = dropped
        temporary = arguments.output + ".part"
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, arguments.output)
        steps = ", ".join(f"{k} {v:.2f} s" for k, v in times.items() if k not in ("internalized", "dropped"))
        print(f"amd_llvm: {arguments.unit} ({arguments.target}): AMD LLVM {found['version']}: {steps} "
              f"({times['internalized']} definitions internalized, {times['dropped']} attributes dropped)",
              file=sys.stderr)
        return 0
    except Failure as failure:
        print(f"amd_llvm: error: {failure}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
