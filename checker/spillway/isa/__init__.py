"""The isa stage: AMDGPU machine code read without LLVM (issue 23).

Stage order: resources, formats, isa, report, gate, matrix, cli; this package
imports resources and formats only.

- ``encodings``: where each encoding and its opcode sit in the first dwords,
  per family; which processors use which family's table.
- ``tables/<family>.json``: opcode -> mnemonic, plain length, what a literal
  or DPP/SDWA/NSA field adds, the next instruction it pairs with (scaled
  MFMA/WMMA), and the assembler's aliases of the rows; written by
  ``scripts/generate-isa-tables.py`` from ``llvm-mc --disassemble``, audited
  against every mnemonic LLVM's assembler knows (facts LLVM states,
  regenerated, not edited).
- ``decoder``: instruction boundaries (the plain-Python reference).
- ``vector``: the same with numpy, every kernel of a code object at once:
  ``boundaries()`` and ``evidence_many()`` (tested equal to ``decoder`` and
  ``evidence()``; about 10x faster).  numpy is a dependency; it is imported
  only by what decodes (report --isa), and without it the reference gives
  the same figures (report.code_evidence).
- ``evidence``: per-kernel figures (``evidence()``, ``KernelCode``) and the
  kernels' ranges in a code object (``kernel_ranges()``).
- ``listing``: one kernel instruction by instruction (``spillway code``).
- ``operands``: the VGPRs, AGPRs and numbered SGPRs one instruction
  defines and uses, from ``tables/operands/<family>.json`` (written by
  ``scripts/generate-isa-operands.py`` from ``llvm-mc -show-inst`` and
  LLVM's instruction descriptors; issue 40).
- ``source_lines``: each instruction's file:line:column from the DWARF line
  tables (formats.dwarf_lines), and per kernel its scratch accesses, AGPR
  copies and loops with their lines and the scratch bytes per source line;
  debug twins (issue 32).
"""

from spillway.isa.evidence import KernelCode, KernelRange, evidence, kernel_ranges

__all__ = ["KernelCode", "KernelRange", "evidence", "kernel_ranges"]
