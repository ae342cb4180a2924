#!/usr/bin/env bash
# End-to-end test of the Slurm recipe on a one-node Slurm cluster started on this machine.
#
#   deploy/slurm/test-local-cluster.sh [ANALYSIS [N]]
#
# As root: installs slurm-wlm and munge with apt-get if slurmctld is missing, starts a
# private munged, slurmctld and slurmd (config, key, state and logs in one temp folder,
# ports 16817/16818 or the next free pair), checks that a 3-task array and a job that
# depends on it run, then runs the analysis twice:
#   plain:   $BATTLELAB run ANALYSIS --out PLAIN
#   sharded: deploy/slurm/submit.sh --wait ANALYSIS N REPORT   (N array tasks + merge)
# and compares every file of the two report folders byte for byte, except run_info.json.
# Prints PASS/FAIL lines; exits non-zero on any failure. On exit it always stops the
# daemons it started (by PID) and removes the temp folder.
#
# Environment:
#   BATTLELAB  the binary [target/release/battlelab, relative to the repository root]
#   ANALYSIS   the analysis file, relative to the repository root [analyses/field_combat.toml]
#   N          how many shards [3]
#   TRIALS     --trials for every run, small so the test takes seconds [2000]; empty: the file's
#   SEED       --seed for every run [the file's]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

ANALYSIS="${1:-${ANALYSIS:-analyses/field_combat.toml}}"
N="${2:-${N:-3}}"
TRIALS="${TRIALS-2000}"
SEED="${SEED:-}"
BATTLELAB="${BATTLELAB:-target/release/battlelab}"
[[ "$BATTLELAB" != */* || "$BATTLELAB" == /* ]] || BATTLELAB="$repo/$BATTLELAB"

passed=0
failed=0
pass() {
    echo "PASS $*"
    passed=$((passed + 1))
}
fail() {
    echo "FAIL $*"
    failed=$((failed + 1))
}
die() {
    fail "$*"
    exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

((EUID == 0)) || die "run as root: the test installs packages and starts slurmctld, slurmd and munged"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "N must be a positive number of shards, not '$N'"
[[ -f "$ANALYSIS" ]] || die "no analysis file '$ANALYSIS' (relative to $repo)"
[[ -x "$BATTLELAB" ]] || command -v "$BATTLELAB" >/dev/null ||
    die "no battlelab binary at '$BATTLELAB' (build it with cargo build --release, or set BATTLELAB)"

# Nothing from a surrounding Slurm setup or job may leak into this cluster.
while IFS= read -r var; do
    unset "$var"
done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN|SQUEUE|SINFO|SCONTROL)_' || true)

# --- packages ---------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    echo "== installing slurm-wlm and munge (apt-get)"
    t=$(now)
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
    echo "   installed in $(since "$t")"
fi
echo "== $(slurmctld -V), $(munged -V 2>&1 | head -1)"

# --- temp folder and cleanup ------------------------------------------------------------
tmp=""  # set by mktemp below, before anything is put in it
conf="" # $tmp/slurm.conf
munged_pid=""
slurmctld_pid=""
slurmd_pid=""
child="" # the long command running now (in the background, so a signal is handled at once)

run_child() { # run_child LOG CMD...: run CMD, output to LOG, and wait for it, interruptibly
    # (not `run_child CMD >LOG`: a trap that fires during the wait would write to LOG too)
    local rc=0 log="$1"
    shift
    "$@" >"$log" 2>&1 &
    child=$!
    wait "$child" || rc=$?
    child=""
    return "$rc"
}

stop_pid() { # stop_pid NAME PID: TERM, up to 10 s, then KILL; only a PID this script started
    local name="$1" pid="$2" i
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "   $name (pid $pid) ignored TERM; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local rc=$? pid i
    set +e
    trap - EXIT INT TERM HUP
    echo "== stopping the test cluster"
    stop_pid "test step" "$child"
    if [[ -n "$slurmctld_pid" ]] && kill -0 "$slurmctld_pid" 2>/dev/null; then
        local jobs
        jobs="$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')"
        if [[ -n "${jobs// /}" ]]; then
            echo "   cancelling jobs still queued: $jobs"
            # shellcheck disable=SC2086 # one job id per word
            scancel $jobs
            for ((i = 0; i < 100; i++)); do
                [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
                sleep 0.1
            done
        fi
    fi
    # stop_pid does nothing for a daemon whose PID is not set (it was never started).
    stop_pid slurmd "$slurmd_pid"
    stop_pid slurmctld "$slurmctld_pid"
    stop_pid munged "$munged_pid"
    # slurmd runs each job under a slurmstepd that detaches from it. Anything still alive
    # that carries this cluster's SLURM_CONF in its environment was started by this test
    # (no other process can name this temp folder): stop those, by PID, too. Only the
    # Slurm daemons start such processes, so there are none unless one of them was started.
    unset SLURM_CONF
    if [[ -n "$conf" && -n "$slurmctld_pid$slurmd_pid" ]]; then
        for dir in /proc/[0-9]*; do
            pid="${dir#/proc/}"
            ((pid != $$)) || continue
            if tr '\0' '\n' 2>/dev/null <"$dir/environ" | grep -qxF "SLURM_CONF=$conf"; then
                echo "   stopping leftover $(cat "$dir/comm" 2>/dev/null) (pid $pid)"
                kill -KILL "$pid" 2>/dev/null
            fi
        done
    fi
    [[ -z "$tmp" ]] || rm -rf "$tmp"
    ((rc < 128)) || fail "interrupted (exit $rc)"
    echo "slurm recipe: $passed passed, $failed failed"
    ((failed == 0)) || rc=1
    exit "$rc"
}

# The temp folder, with the cleanup in place at once: any failure from here on (even
# before a daemon starts) stops what was started and removes it.
tmp="$(mktemp -d /tmp/battlelab-slurm.XXXXXX)"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
chmod 755 "$tmp" # munged wants every folder above its socket searchable by all
conf="$tmp/slurm.conf"

show_logs() { # print the tail of every log under the given folders
    local f
    while IFS= read -r f; do
        echo "---- ${f#"$tmp"/} (last 40 lines)"
        tail -n 40 "$f"
    done < <(find "$@" -type f \( -name '*.log' -o -name '*.out' \) 2>/dev/null | sort)
}

# --- munge ------------------------------------------------------------------------------
t_up=$(now)
mkdir -m 700 "$tmp/munge-key"
mkdir -m 755 "$tmp/munge" "$tmp/log"
key="$tmp/munge-key/munge.key"
# A private key for a private munged on its own socket: the host's munge (if any) is left alone.
[[ -s "$key" ]] || (umask 077 && head -c 1024 /dev/urandom >"$key")
sock="$tmp/munge/munge.socket"
munged -F --key-file="$key" --socket="$sock" --pid-file="$tmp/munge/munged.pid" \
    --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" \
    >"$tmp/log/munged.out" 2>&1 &
munged_pid=$!
for ((i = 0; i < 100; i++)); do
    munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1 && break
    kill -0 "$munged_pid" 2>/dev/null || break
    sleep 0.1
done
if ! munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; then
    show_logs "$tmp/log"
    die "munged did not start"
fi
pass "munged is up (pid $munged_pid)"

# --- slurm.conf -------------------------------------------------------------------------
node="$(hostname -s 2>/dev/null || uname -n)"
node="${node%%.*}"
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=16817
while ! port_free "$ctld_port" || ! port_free $((ctld_port + 1)); do
    ctld_port=$((ctld_port + 2))
    ((ctld_port < 16917)) || die "no two free ports from 16817 to 16917"
done
# This host's real CPUs and memory, as slurmd itself sees them (a node that claims more than
# slurmd finds is drained).
hw="$(slurmd -C | head -n 1)"
hw="${hw#NodeName=* }"
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$conf" <<EOF
# One-node test cluster written by deploy/slurm/test-local-cluster.sh
ClusterName=battlelabtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"

# --- slurmctld and slurmd ---------------------------------------------------------------
slurmctld -D -f "$conf" >"$tmp/log/slurmctld.out" 2>&1 &
slurmctld_pid=$!
slurmd -D -N "$node" -f "$conf" >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
state=""
for ((i = 0; i < 600; i++)); do
    state="$(sinfo -h -N -o %t 2>/dev/null || true)"
    [[ "$state" == idle ]] && break
    if ! kill -0 "$slurmctld_pid" 2>/dev/null || ! kill -0 "$slurmd_pid" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
if [[ "$state" != idle ]]; then
    show_logs "$tmp/log"
    die "node $node is not idle after 60 s (state '${state:-none}')"
fi
pass "one-node cluster up in $(since "$t_up"): node $node ($hw) idle, slurmctld pid $slurmctld_pid, slurmd pid $slurmd_pid, port $ctld_port"

# --- the cluster itself: a 3-task array and a job that depends on it ---------------------
smoke="$tmp/smoke"
mkdir -p "$smoke"
t=$(now)
# shellcheck disable=SC2016 # the job expands these, not this script
array_id="$(sbatch --parsable --chdir="$smoke" --output="$smoke/task-%a.out" --array=1-3 \
    --wrap='echo "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" >"index-$SLURM_ARRAY_TASK_ID"; date +%s.%N >"end-$SLURM_ARRAY_TASK_ID"')"
array_id="${array_id%%;*}"
dep_rc=0
run_child "$smoke/sbatch.log" sbatch --parsable --wait --chdir="$smoke" --output="$smoke/after.out" \
    --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
    --wrap='date +%s.%N >start-after; cat index-1 index-2 index-3 >after' || dep_rc=$?
# The dependent job must have seen all three indices and started after the last task ended.
if [[ $dep_rc == 0 && "$(cat "$smoke/after" 2>/dev/null)" == $'1/3\n2/3\n3/3' ]] &&
    cat "$smoke"/end-{1,2,3} "$smoke/start-after" 2>/dev/null |
    awk '{ t[NR] = $1 } END { exit !(NR == 4 && t[4] >= t[1] && t[4] >= t[2] && t[4] >= t[3]) }'; then
    pass "3-task array $array_id and a job that depends on it (afterok) ran in order in $(since "$t")"
else
    fail "3-task array $array_id + dependent job (sbatch exit $dep_rc)"
    show_logs "$smoke" "$tmp/log"
    exit 1
fi

# --- battlelab: one plain run, then the same analysis as N shards and a merge -------------
extra=()
[[ -z "$TRIALS" ]] || extra+=(--trials "$TRIALS")
[[ -z "$SEED" ]] || extra+=(--seed "$SEED")
echo "== $ANALYSIS${TRIALS:+, $TRIALS trials}${SEED:+, seed $SEED}, $N shard(s), binary $BATTLELAB"

t=$(now)
if run_child "$tmp/plain.log" "$BATTLELAB" run "$ANALYSIS" --out "$tmp/plain" ${extra[@]+"${extra[@]}"}; then
    pass "plain run: $BATTLELAB run $ANALYSIS --out PLAIN ${extra[*]} ($(since "$t"))"
else
    fail "plain run: $BATTLELAB run $ANALYSIS --out PLAIN ${extra[*]}"
    tail -n 40 "$tmp/plain.log"
    exit 1
fi

t=$(now)
if BATTLELAB="$BATTLELAB" SHARDS_DIR="$tmp/shards" TRIALS="$TRIALS" SEED="$SEED" \
    run_child "$tmp/submit.log" "$here/submit.sh" --wait "$ANALYSIS" "$N" "$tmp/report"; then
    sed 's/^/   /' "$tmp/submit.log"
    pass "sharded run: submit.sh --wait $ANALYSIS $N REPORT: $N array task(s) and the merge in $(since "$t")"
else
    sed 's/^/   /' "$tmp/submit.log"
    fail "sharded run: submit.sh --wait $ANALYSIS $N REPORT"
    show_logs "$tmp/shards/logs"
    exit 1
fi

# --- compare the two report folders -----------------------------------------------------
list() { (cd "$1" && find . -type f ! -name run_info.json | sed 's|^\./||' | LC_ALL=C sort); }
list "$tmp/plain" >"$tmp/plain.files"
list "$tmp/report" >"$tmp/report.files"
if [[ ! -s "$tmp/plain.files" ]]; then
    fail "the plain run wrote no files to compare"
elif diff -u "$tmp/plain.files" "$tmp/report.files" >"$tmp/files.diff"; then
    pass "same $(wc -l <"$tmp/plain.files") file name(s) in both reports (run_info.json aside)"
else
    fail "the reports hold different files (- plain, + merged):"
    tail -n +3 "$tmp/files.diff" | grep '^[-+]' | sed 's/^/   /'
fi
while IFS= read -r f; do
    [[ -f "$tmp/report/$f" ]] || continue
    if cmp -s "$tmp/plain/$f" "$tmp/report/$f"; then
        pass "same bytes: $f"
    else
        fail "different bytes: $f ($(cmp "$tmp/plain/$f" "$tmp/report/$f" 2>&1 | head -n 1))"
    fi
done <"$tmp/plain.files"

((failed == 0))
