"""The fields of a report's kernel records, listed once: every field in the
order the reader makes them (FIELDS), and the subsets the gate reads
(report.report_input checks them in a report read back; gate.kernels folds
them into a kernel's figures)."""

from __future__ import annotations

from typing import Final

FIELDS: Final = ("file", "bundle_index", "target", "code_object_version", "compiler", "symbol", "name", "key",
                 "vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
                 "private_segment_fixed_size", "uses_dynamic_stack", "group_segment_fixed_size",
                 "wavefront_size", "max_flat_workgroup_size", "workgroup_processor_mode",
                 "occupancy", "occupancy_limit", "occupancy_model", "occupancy_next", "scratch_cause",
                 "image_offset", "archive")

# A row of the reader read with its code (report --isa): FIELDS, then the kernel's isa object
# (report.code_evidence).  Rows read without it end at FIELDS.
ROW_FIELDS: Final = (*FIELDS, "isa")

# A kernel's figures the gate holds and compares, in the order of gate.kernels.Resources.
RESOURCE_FIELDS: Final = ("private_segment_fixed_size", "uses_dynamic_stack", "vgpr_spill_count",
                          "sgpr_spill_count", "vgpr_count", "agpr_count", "sgpr_count",
                          "group_segment_fixed_size", "occupancy")

# What every record read back must have: the kernel's identity and its figures.
GATED_FIELDS: Final = ("target", "key", "name", *RESOURCE_FIELDS)

# What check, baseline write and compare read of a kernel row (the reader's workers hand
# over only these fields, not file names, mangled symbols...): the gated fields, the next
# step, and what a baseline records of where its kernels came from.
GATE_ROW_FIELDS: Final = (*GATED_FIELDS, "occupancy_next", "compiler", "code_object_version", "occupancy_model")

# Where a kernel's code is (its code object, and its symbol there): what a command that looks at some
# kernels again (a failing check: their code and source lines) keeps of each row as it reads.
PLACE_FIELDS: Final = ("file", "bundle_index", "image_offset", "archive", "symbol")
