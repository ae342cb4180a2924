#!/usr/bin/env bash
# Run one battlelab analysis on a Slurm cluster: N shards as one job array, then a merge
# job that starts once every shard has succeeded and writes the report folder.
#
#   deploy/slurm/submit.sh [--wait] ANALYSIS N [REPORT_DIR] [-- SBATCH_OPTION...]
#
# ANALYSIS    the analysis file, relative to the current directory (the jobs run here too)
# N           how many shards (array tasks), 1 to the cluster's MaxArraySize - 1
# REPORT_DIR  the report folder to write [reports/<analysis file stem>]
# --wait      stay until the merge job has finished; exit 0 only if it succeeded
# -- ...      options for both sbatch calls, e.g. -- --partition=short --time=2:00:00
#
# Environment: BATTLELAB (the binary [battlelab]), SHARDS_DIR ([REPORT_DIR.shards]),
# TRIALS and SEED (--trials / --seed for every shard), THREADS (per shard [the CPUs Slurm
# gives it]), CPUS_PER_SHARD (sbatch --cpus-per-task for each array task). Slurm's own
# SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ... apply to both jobs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() {
    sed -n '5,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

die() {
    echo "submit.sh: $*" >&2
    exit 2
}

wait_for_merge=0
positional=()
sbatch_extra=()
while (($# > 0)); do
    case "$1" in
    --wait) wait_for_merge=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    --)
        shift
        sbatch_extra=("$@")
        break
        ;;
    -*) die "unknown option '$1' (sbatch options go after --); try --help" ;;
    *) positional+=("$1") ;;
    esac
    shift
done
((${#positional[@]} >= 2 && ${#positional[@]} <= 3)) || {
    usage >&2
    exit 2
}

ANALYSIS="${positional[0]}"
N="${positional[1]}"
[[ -f "$ANALYSIS" ]] || die "no analysis file '$ANALYSIS' (paths are relative to $PWD)"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "N must be a positive number of shards, not '$N'"
stem="$(basename "$ANALYSIS")"
stem="${stem%.toml}"
REPORT_DIR="${positional[2]:-reports/$stem}"
SHARDS_DIR="${SHARDS_DIR:-$REPORT_DIR.shards}"
BATTLELAB="${BATTLELAB:-battlelab}"
command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm login node"
if ! command -v "$BATTLELAB" >/dev/null; then
    echo "submit.sh: warning: '$BATTLELAB' is not found here; the jobs need it on the compute nodes (set BATTLELAB)" >&2
fi

# Shards left by an earlier submission would be mixed into this one: refuse, delete nothing.
for old in "$SHARDS_DIR"/shard-*; do
    [[ -e "$old" ]] || continue
    die "$SHARDS_DIR already holds shards of an earlier submission; remove them (rm -r '$SHARDS_DIR'/shard-*) or set SHARDS_DIR"
done
logs="$SHARDS_DIR/logs"
mkdir -p "$logs"

# The jobs get this environment (sbatch exports it) and run in this directory, so ANALYSIS
# reaches battlelab exactly as typed: the report records the path it was given.
export ANALYSIS BATTLELAB REPORT_DIR SHARDS_DIR
export SHARD_COUNT="$N"

common=(--parsable --export=ALL --chdir="$PWD")
array_opts=(--array="1-$N" --job-name="battlelab-$stem" --output="$logs/shard-%a.out")
[[ -z "${CPUS_PER_SHARD:-}" ]] || array_opts+=(--cpus-per-task="$CPUS_PER_SHARD")

# The user's options come last, so they win over these defaults.
array_id="$(sbatch "${common[@]}" "${array_opts[@]}" ${sbatch_extra[@]+"${sbatch_extra[@]}"} \
    "$here/battlelab-array.sbatch")"
array_id="${array_id%%;*}" # --parsable prints "id" or "id;cluster"
echo "array job: $array_id ($N shard(s) of $ANALYSIS -> $SHARDS_DIR/shard-K)"

merge_opts=(--dependency="afterok:$array_id" --kill-on-invalid-dep=yes
    --job-name="battlelab-$stem-merge" --output="$logs/merge-%j.out")
merge_id="$(sbatch "${common[@]}" "${merge_opts[@]}" ${sbatch_extra[@]+"${sbatch_extra[@]}"} \
    "$here/battlelab-merge.sbatch")"
merge_id="${merge_id%%;*}"
echo "merge job: $merge_id (after every shard succeeds -> $REPORT_DIR)"
if ((wait_for_merge == 0)); then
    echo "follow with: squeue -j $array_id,$merge_id    logs: $logs/"
    exit 0
fi

# --wait: poll the merge job until it ends (sbatch --wait would do, but it polls at 2, 10, 42 s
# and exits 0 for a merge cancelled because a shard failed). Ctrl-C stops only the waiting.
trap 'echo; echo "submit.sh: stopped waiting; the jobs go on: squeue -j $array_id,$merge_id" >&2; exit 130' INT
delay=1
seen=""
while :; do
    if info="$(scontrol show job -o "$merge_id" 2>&1)"; then
        state="$(grep -o 'JobState=[A-Z_]*' <<<"$info" || true)"
        state="${state#JobState=}"
        reason="$(grep -o 'Reason=[^ ]*' <<<"$info" || true)"
        reason="${reason#Reason=}"
    elif grep -qi 'invalid job id' <<<"$info"; then
        # Slurm forgets a finished job after MinJobAge; accounting, if any, still knows.
        state="$(sacct -n -X -P -j "$merge_id" -o State 2>/dev/null | head -n 1 || true)"
        state="${state%% *}"
        reason=""
        break
    else
        state="?"
        reason="${info//$'\n'/ }"
    fi
    case "$state" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | PREEMPTED | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) break ;;
    esac
    if [[ "$state $reason" != "$seen" ]]; then
        echo "  $(date +%T) merge job $merge_id: $state${reason:+ ($reason)}"
        seen="$state $reason"
    fi
    sleep "$delay"
    delay=$((delay * 2 > 10 ? 10 : delay * 2))
done
if [[ "$state" == COMPLETED ]]; then
    echo "done: report in $REPORT_DIR (logs in $logs/)"
    exit 0
fi
echo "submit.sh: merge job $merge_id ended ${state:-in a state Slurm no longer knows}${reason:+ ($reason)}: a shard or the merge failed; see $logs/" >&2
exit 1
