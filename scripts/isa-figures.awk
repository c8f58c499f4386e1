# The derived figures of a kernel's `isa` object (docs/isa.md "What the machine code
# shows"), read from llvm-objdump text, with any POSIX awk (mawk, gawk):
#
#   llvm-objdump-22 -d -z --disassemble-symbols=KERNEL --stop-address=END k.co \
#     | awk -v Q='s[8:11]' -f scripts/isa-figures.awk
#
# Q: the quads holding the private segment buffer on MUBUF targets (GFX8, GFX9
# to gfx90a, GFX10: s[0:3] or the copy the entry block makes, `private_segment_buffer`
# in the oracle), space-separated; leave it empty on scratch_* targets.  Prints one `name value`
# line per figure, then `mix.CLASS count` per instruction-mix class (spillway.isa.mix).
# tests/oracle/test_isa_figures_awk.py runs it on the fixtures and compares with
# tests/data/isa/expected.json.

function hex(s,    i, v) {
  s = tolower(s); v = 0
  for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
  return v
}
function width(m,    t, n, i) {          # bytes a scratch mnemonic names (0: none)
  n = split(m, t, "_")
  for (i = 3; i <= n; i++) if (t[i] == "format" || t[i] == "block") return 0
  for (i = 3; i <= n; i++) {
    if (t[i] == "dword" || t[i] == "b32") return 4
    if (t[i] == "dwordx2" || t[i] == "b64") return 8
    if (t[i] == "dwordx3" || t[i] == "b96") return 12
    if (t[i] == "dwordx4" || t[i] == "b128") return 16
    if (t[i] ~ /^(short|ushort|sshort|b16|u16|i16)$/) return 2
    if (t[i] ~ /^(byte|ubyte|sbyte|b8|u8|i8)$/) return 1
  }
  return 0
}
function agprs(op, list,    r, k) {     # "a5" / "a[0:15]" into list[first..last]; count
  if (op ~ /^a[0-9]+$/) { list[1] = substr(op, 2) + 0; list[2] = list[1]; return 1 }
  if (op ~ /^a\[[0-9]+:[0-9]+\]$/) { split(substr(op, 3, length(op) - 3), r, ":"); list[1] = r[1] + 0; list[2] = r[2] + 0; return 1 }
  return 0
}
function mixclass(m, scratch) {        # the instruction-mix class (spillway.isa.mix's rule)
  if (scratch) return "scratch"
  if (m ~ /^v_(mfma|smfmac|wmma|swmmac)/) return "matrix"
  if (m ~ /^v_accvgpr_/) return "agpr_copy"
  if (m ~ /^v_/) return "valu"
  if (m ~ /^(ds|lds)_/) return "lds"
  if (m ~ /^(buffer|tbuffer|global|flat|scratch|image|cluster|tensor)_/) return "vmem"
  if (m ~ /^(exp|export|s_nop|s_trap|s_clause|s_delay_alu|s_code_end|s_icache_inv|s_inst_prefetch|s_set_inst_prefetch_distance|s_sethalt|s_setkill|s_incperflevel|s_decperflevel|s_monitor_sleep|s_singleuse_vdst|s_version)$/ || m !~ /^s_/) return "other"
  if (m ~ /^s_(load_|buffer_|store_|scratch_|atomic_|dcache_|memtime|memrealtime|atc_probe|prefetch_|gl1_inv|get_waveid_in_workgroup)/) return "smem"
  if (m ~ /^s_(branch|cbranch_|setpc_|set_pc_|swappc_|swap_pc_|call_|rfe_|subvector_loop_)/) return "branch"
  if (m ~ /^s_(waitcnt|wait_)/) return "waitcnt"
  if (m ~ /^s_(endpgm|barrier|sendmsg|sleep|wakeup|setprio|ttracedata)/) return "other"
  return "salu"
}
BEGIN { split(Q, qs, " "); for (i in qs) quad[qs[i]] = 1
        nclasses = split("valu salu vmem smem lds matrix scratch agpr_copy branch waitcnt other", classes, " ") }
/^\t/ {
  at = index($0, "//"); text = substr($0, 2, at - 2); rest = substr($0, at + 2)
  sub(/^ +/, "", rest); addr = hex(substr(rest, 1, index(rest, ":") - 1))
  if (!seen++) start = addr
  m = $1; ops = substr(text, length(m) + 1)
  n = split(ops, op, ","); for (i = 1; i <= n; i++) { gsub(/^ +| +$/, "", op[i]); sub(/ .*/, "", op[i]) }
  if ((m == "s_branch" || m ~ /^s_cbranch_/) && m !~ /_(join|g_fork|i_fork)$/) {
    imm = op[1] + 0; if (imm >= 32768) imm -= 65536; t = addr + 4 + 4 * imm
    if (t >= start && t <= addr) { loops++; lo[loops] = t; hi[loops] = addr }
  }
  kind = ""
  if (m ~ /^scratch_load/) kind = "load"; else if (m ~ /^scratch_store/) kind = "store"
  else if (Q != "" && m ~ /^buffer_(load|store)/) {
    for (i = 2; i <= n; i++) if (op[i] in quad) { kind = (m ~ /^buffer_load/) ? "load" : "store"; vaddr = op[i - 1] }
  }
  if (kind != "") {
    if (m ~ /^scratch_/) vaddr = (kind == "store" || m ~ /^scratch_load_lds/) ? op[1] : op[2]
    accesses++; at_[accesses] = addr
    bytes[(vaddr == "off" ? "slot" : "addressed") "_" kind] += width(m)
  }
  mix[mixclass(m, kind != "")]++
  if (m ~ /^v_(mfma|smfmac)/ && agprs(op[1], r)) for (j = r[1]; j <= r[2]; j++) acc[j] = 1
  if (m ~ /^v_mfma/ && agprs(op[4], r)) for (j = r[1]; j <= r[2]; j++) acc[j] = 1
  if (m ~ /^v_accvgpr_mov/ && agprs(op[1], r) && agprs(op[2], s)) { movs++; mdst[movs] = r[1]; msrc[movs] = s[1] }
  if (m ~ /^v_accvgpr_write/) { copies++; copied[copies] = agprs(op[1], r) ? r[1] : -1 }
  if (m ~ /^v_accvgpr_read/) { copies++; copied[copies] = agprs(op[2], r) ? r[1] : -1 }
}
END {
  do {                                   # accumulators: closed under v_accvgpr_mov
    grown = 0
    for (i = 1; i <= movs; i++) if ((mdst[i] in acc) != (msrc[i] in acc)) { acc[mdst[i]] = acc[msrc[i]] = 1; grown = 1 }
  } while (grown)
  for (i = 1; i <= copies; i++) if (copied[i] in acc) moves++; else spill++
  for (i = 1; i <= loops; i++) {        # innermost: holds no other span; depth: spans holding a span's start
    inner[i] = 1; d = 0
    for (j = 1; j <= loops; j++) {
      if (j != i && lo[i] <= lo[j] && hi[j] <= hi[i]) inner[i] = 0
      if (lo[j] <= lo[i] && lo[i] <= hi[j]) d++
    }
    if (inner[i]) innermost++
    if (d > depth) depth = d
  }
  for (k = 1; k <= accesses; k++) {
    a = b = 0
    for (i = 1; i <= loops; i++) if (lo[i] <= at_[k] && at_[k] <= hi[i]) { a = 1; if (inner[i]) b = 1 }
    inloops += a; ininner += b
  }
  printf "scratch_slot_load_bytes %d\nscratch_slot_store_bytes %d\n", bytes["slot_load"], bytes["slot_store"]
  printf "scratch_addressed_load_bytes %d\nscratch_addressed_store_bytes %d\n", bytes["addressed_load"], bytes["addressed_store"]
  printf "agpr_spill_copies %d\nagpr_accumulator_moves %d\n", spill, moves
  printf "loops %d\ninnermost_loops %d\nloop_depth_max %d\n", loops, innermost, depth
  printf "scratch_in_loops %d\nscratch_in_innermost_loops %d\n", inloops, ininner
  for (i = 1; i <= nclasses; i++) printf "mix.%s %d\n", classes[i], mix[classes[i]]
}
