#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser family (Atheris + libFuzzer).
#
#   fuzz/run.sh --minutes N [--family F[,F...]] [--merge]    long run: N minutes shared by
#                                                            the families, resuming fuzz/corpus/
#                                                            (--merge: minimize each corpus first)
#   fuzz/run.sh --smoke [--runs R]                           CI smoke: R inputs per family
#                                                            (default 1500, at most 2 minutes each),
#                                                            fixed seed, fresh corpus
#
# Runs at nice 19, one libFuzzer process at a time, in-process (no fork or worker
# processes).  Per family: the corpus in fuzz/corpus/<family>/ (seeded from
# fuzz/seeds/ when empty; not committed), libFuzzer's log in fuzz/logs/<family>.log
# (logs/smoke-<family>.log for --smoke), crashes in fuzz/artifacts/<family>/, and one
# line appended to fuzz/logs/totals.tsv (logs/smoke-totals.tsv for --smoke): date,
# family, seconds, inputs run, coverage edges, features, corpus size, crashes.
# python3 fuzz/totals.py turns totals.tsv into fuzz/TOTALS.md (committed).
#
# Input length: the families that run the whole read pipeline on a container
# (every code object inside it parsed, named and given occupancy) are capped at
# 64 KiB (-max_len), which holds four copies of the largest seed bundle; the
# others at 256 KiB.  --merge minimizes a corpus (libFuzzer -merge=1: the
# smallest inputs that keep every feature) before the family runs.
# Exit 1 when any family crashed.
set -uo pipefail
cd "$(dirname "$0")"
FAMILIES=(metadata codeobject bundle ccob offload host_elf ar ar_in_zip zip kpack kpack_meta embedded report_json baseline_json names isa isa_codeobject any)
minutes=""
smoke=0
merge=0
runs=1500
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --family) only="$2"; shift 2 ;;
    --merge) merge=1; shift ;;
    *) echo "usage: fuzz/run.sh --minutes N [--family F,...] | --smoke [--runs R]" >&2; exit 2 ;;
  esac
done
if [ -n "$only" ]; then IFS=, read -r -a FAMILIES <<< "$only"; fi
if [ -z "$minutes" ] && [ "$smoke" = 0 ]; then
  echo "usage: fuzz/run.sh --minutes N [--family F,...] | --smoke [--runs R]" >&2; exit 2
fi
python3 -c "import atheris" 2>/dev/null || { echo "fuzz/run.sh: atheris is not installed (pip install atheris)" >&2; exit 2; }

max_len_of() {
  case "$1" in
    bundle|ccob|offload|host_elf|ar|ar_in_zip|zip|kpack|any) echo 65536 ;;
    isa|isa_codeobject) echo 16384 ;;   # the plain-Python decoder: ~15 us an instruction
    *) echo 262144 ;;
  esac
}

mkdir -p logs artifacts
totals=logs/totals.tsv
[ "$smoke" = 1 ] && totals=logs/smoke-totals.tsv
status=0
for family in "${FAMILIES[@]}"; do
  if [ "$smoke" = 1 ]; then
    corpus=$(mktemp -d)
  else
    corpus="corpus/$family"
    seconds=$(( minutes * 60 / ${#FAMILIES[@]} ))
    [ "$seconds" -lt 10 ] && seconds=10
  fi
  mkdir -p "$corpus" "artifacts/$family"
  if [ -z "$(ls -A "$corpus")" ]; then
    python3 fuzz.py --write-seeds "$corpus" "$family" >/dev/null || { status=1; continue; }
  fi
  log="logs/$family.log"
  [ "$smoke" = 1 ] && log="logs/smoke-$family.log"
  : >"$log"
  max_len=$(max_len_of "$family")
  if [ "$merge" = 1 ] && [ "$smoke" = 0 ]; then
    merged="corpus/.merge-$family"
    rm -rf "$merged"; mkdir -p "$merged"
    if nice -n 19 python3 fuzz.py "$family" -merge=1 -max_len="$max_len" -timeout=20 -rss_limit_mb=2048 \
        "$merged" "$corpus" >"$log.merge" 2>&1 && [ -n "$(ls -A "$merged")" ]; then
      echo "merge: $(ls "$corpus" | wc -l) inputs ($(du -sk "$corpus" | cut -f1) KiB) -> $(ls "$merged" | wc -l) ($(du -sk "$merged" | cut -f1) KiB)" >>"$log"
      rm -rf "$corpus" && mv "$merged" "$corpus"
    else
      echo "merge failed (corpus kept): $(tail -3 "$log.merge")" >>"$log"
      rm -rf "$merged"
    fi
    rm -f "$log.merge"
  fi
  before=$(ls "artifacts/$family" | wc -l)
  started=$(date +%s)
  executed=0
  code=0
  # libFuzzer stops at the first crash: a long run starts it again (from the
  # grown corpus) until the family's time is used, at most 25 times.
  for attempt in $(seq 25); do
    if [ "$smoke" = 1 ]; then
      limit=(-runs="$runs" -seed=1 -max_total_time=120)
    else
      left=$(( seconds - ($(date +%s) - started) ))
      [ "$left" -lt 5 ] && break
      limit=(-max_total_time="$left")
    fi
    # Long runs yield the machine; the smoke is a CI test like the others (at
    # nice 19 beside busy test workers it waited out its 2-minute limits: 24 min).
    niceness=19
    [ "$smoke" = 1 ] && niceness=0
    nice -n "$niceness" python3 fuzz.py "$family" "$corpus" "${limit[@]}" -max_len="$max_len" -timeout=20 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="artifacts/$family/" >"$log.part" 2>&1
    code=$?
    cat "$log.part" >>"$log"
    ran=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log.part" | grep -o '[0-9]*$' | tail -1)
    if [ -z "$ran" ]; then   # crashed: count the inputs it reported before the crash
      ran=$(grep -ao '^#[0-9]*' "$log.part" | tail -1 | tr -d '#')
    fi
    executed=$(( executed + ${ran:-0} ))
    [ "$smoke" = 1 ] && break
    [ "$code" = 0 ] && break
  done
  rm -f "$log.part"
  elapsed=$(( $(date +%s) - started ))
  cov=$(grep -ao 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  ft=$(grep -ao 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  size=$(ls "$corpus" | wc -l)
  crashes=$(( $(ls "artifacts/$family" | wc -l) - before ))
  [ "$smoke" = 1 ] && rm -rf "$corpus"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$family" "$elapsed" "${executed:-?}" \
      "${cov:-?}" "${ft:-?}" "$size" "$crashes" | tee -a "$totals"
  if [ "$code" != 0 ] || [ "$crashes" != 0 ]; then
    status=1
    echo "fuzz/run.sh: $family: exit $code, $crashes new crash inputs in fuzz/artifacts/$family/ (log $log)" >&2
    grep -a -m1 -A12 -E 'Traceback|==ERROR|SlowInput' "$log" >&2
  fi
done
exit $status
