"""spillway: per-kernel register, spill, scratch, LDS and occupancy figures
read statically from AMD HIP binaries, gated against per-compiler baselines."""

__version__ = "0.1.0"
