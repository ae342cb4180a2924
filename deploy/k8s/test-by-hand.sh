#!/usr/bin/env bash
# Tests the Kubernetes recipe without a cluster: parses both manifests, checks what an
# Indexed Job needs, then runs each container's own command by hand, once per index with
# JOB_COMPLETION_INDEX set as Kubernetes sets it, and the merge's after them, in a temp
# folder standing in for the shared volume; the merged report must have the bytes of a
# plain `battlelab run` (run_info.json aside).
#
#   deploy/k8s/test-by-hand.sh            # BATTLELAB=target/release/battlelab, TRIALS=3000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
battlelab=$(realpath "${BATTLELAB:-$root/target/release/battlelab}")
trials=${TRIALS:-3000}
[ -x "$battlelab" ] || { echo "no battlelab binary at $battlelab (cargo build --release, or set BATTLELAB)" >&2; exit 2; }
# A Python that can read YAML: python3 if it has PyYAML, else the system's /usr/bin/python3,
# else (as root) the distribution's python3-yaml; never pip into a system Python.
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import yaml' 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing python3-yaml (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-yaml >/dev/null
    python=/usr/bin/python3
    "$python" -c 'import yaml' || { echo "installed python3-yaml, but $python still cannot import yaml" >&2; exit 2; }
  else
    echo "no python3 with PyYAML: install python3-yaml (sudo apt-get install python3-yaml) and run this again" >&2
    exit 2
  fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/data/analyses"
# The image's `battlelab`, with the test's trial count (the pods use the file's).
cat > "$tmp/bin/battlelab" <<SH
#!/bin/sh
case "\$1" in run) cmd=\$1; shift; exec "$battlelab" "\$cmd" --trials $trials "\$@";; esac
exec "$battlelab" "\$@"
SH
chmod +x "$tmp/bin/battlelab"

# What each job's container runs, and its environment, with /data → the temp volume.
"$python" - "$here" "$tmp" <<'PY'
import sys, yaml, json
here, tmp = sys.argv[1], sys.argv[2]
def job(name):
    docs = list(yaml.safe_load_all(open(f"{here}/{name}")))
    assert len(docs) == 1 and docs[0]["kind"] == "Job" and docs[0]["apiVersion"] == "batch/v1", name
    return docs[0]
shards, merge = job("shards-job.yaml"), job("merge-job.yaml")
spec = shards["spec"]
assert spec["completionMode"] == "Indexed", "the shards job must be Indexed"
c = spec["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert int(env["SHARDS"]) == spec["completions"], "SHARDS must equal completions"
assert spec["parallelism"] <= spec["completions"]
assert spec["template"]["spec"]["restartPolicy"] == "Never"
m = merge["spec"]["template"]["spec"]["containers"][0]
menv = {e["name"]: e["value"] for e in m["env"]}
assert menv["SHARDS_DIR"] == env["SHARDS_DIR"], "the merge reads the shards' folder"
def local(v): return v.replace("/data", f"{tmp}/data")
out = {
  "shards": spec["completions"],
  "analysis": local(env["ANALYSIS"]),
  "shard_env": {k: local(v) for k, v in env.items()},
  "shard_cmd": c["command"] + c["args"],
  "merge_env": {k: local(v) for k, v in menv.items()},
  "merge_cmd": m["command"] + m["args"],
}
json.dump(out, open(f"{tmp}/plan.json", "w"))
PY
get() { "$python" -c "import json,sys; print(json.load(open('$tmp/plan.json'))[sys.argv[1]])" "$1"; }
n=$(get shards)
analysis=$(get analysis)
cp "$root/analyses/$(basename "$analysis")" "$analysis"
run_container() { # $1 = shard_ or merge_, then extra env
  local kind=$1; shift
  "$python" - "$tmp/plan.json" "$kind" "$tmp/bin" "$@" <<'PY'
import json, os, subprocess, sys
plan, kind, bindir = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], **plan[kind + "env"])
for extra in sys.argv[4:]:
    k, v = extra.split("=", 1); env[k] = v
sys.exit(subprocess.run(plan[kind + "cmd"], env=env).returncode)
PY
}
for ((i = 0; i < n; i++)); do
  run_container shard_ "JOB_COMPLETION_INDEX=$i"
done
run_container merge_
report=$("$python" -c "import json; print(json.load(open('$tmp/plan.json'))['merge_env']['REPORT_DIR'])")
"$tmp/bin/battlelab" run "$analysis" --out "$tmp/plain" --quiet
fail=0
if [ "$(cd "$tmp/plain" && ls)" != "$(cd "$report" && ls)" ]; then echo "FAIL file names differ"; fail=1; fi
for f in "$tmp/plain"/*; do
  name=$(basename "$f")
  [ "$name" = run_info.json ] && continue
  if cmp -s "$f" "$report/$name"; then :; else echo "FAIL $name differs"; fail=1; fi
done
if [ $fail = 0 ]; then
  echo "k8s recipe: $n indexed pods by hand + merge = the plain run, byte for byte"
else
  exit 1
fi
