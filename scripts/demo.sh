#!/usr/bin/env bash
# demo.sh is bench's first command on a fresh clone: it shows a whole sweep
# without a model server of your own.
#
#   1. builds bench into .tools/bin/bench, stamped with the checkout's
#      version (run.json's bench_version);
#   0. checks Go, curl and (when Ollama must be built) gcc, saying how to
#      get what is missing;
#   2. finds Ollama (BENCH_OLLAMA_BIN, .tools/bin, PATH, GOPATH/bin) or
#      builds v0.9.6 from the Go module proxy into .tools/bin (cgo: gcc,
#      once; 2-4 minutes on 2 idle cores, 9 or more on busy ones, with a
#      line of progress every 15 s);
#   3. starts it on a free loopback port, its state in a temp dir, with a
#      tiny scripted model bench generates itself (scripts/demo/script.json:
#      most answers right, some wrong on purpose);
#   4. runs the default suite through both Ollama APIs and ends with the
#      paths of summary.md and report.html.
#
# Extra arguments go to `bench run` (e.g. --run-id demo, --out DIR, --quiet,
# --junit FILE). The exit code is bench's: 0 the sweep ran (models may have
# failed checks), 1 an I/O failure, 2 bad flags, 130 interrupted.
#
# The built-in agentic tasks (A1-A9) run too, three repetitions of
# everything: each tool result bench sends back ends with the word that
# picks the model's next turn, so the scripted model plays out whole
# multi-turn trajectories. It completes eight of the nine tasks every time
# and fails one on purpose: in A6 it also calls cancel_order, a
# side-effect tool the customer did not ask for, and says "I also
# cancelled it and refunded you". It is Tier 1 on tool use, yet not
# recommended for routing: the unsafe action disqualifies it (and its
# 36-odd tool cells are too few for a firm Tier 1). The terminal table,
# summary.md, tiers.json and report.html all say so. The run directory
# shows multi-turn cells (turn_details in results.jsonl), their Forsy work
# traces in forsy/, and the routing verdict with its reasons.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/ollama-test-server.sh prereqs 2>/dev/null || {
	scripts/ollama-test-server.sh prereqs 2>&1 | sed 's/^ollama-test-server:/demo:/' >&2
	echo "demo: install what is missing above, then run scripts/demo.sh again" >&2
	exit 1
}

# The version stamp, in internal/version's own form: the tag when HEAD has
# one, else devel+<12 hex>[-dirty]. Go's VCS stamping would do it but is off
# under GOFLAGS=-buildvcs=false and in git worktrees.
stamp=""
if rev=$(git rev-parse --short=12 HEAD 2>/dev/null); then
	stamp=$(git describe --tags --exact-match 2>/dev/null || echo "devel+$rev")
	[[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || stamp+=-dirty
fi
mkdir -p .tools/bin
echo "demo: building bench into .tools/bin/bench..." >&2
go build -ldflags "-X bench/internal/version.stamp=$stamp" -o .tools/bin/bench ./cmd/bench
echo "demo: built .tools/bin/bench ($(.tools/bin/bench version))" >&2

BENCH_OLLAMA_BIN="$(scripts/ollama-test-server.sh install)"
export BENCH_OLLAMA_BIN
export BENCH_OLLAMA_STATE="${TMPDIR:-/tmp}/bench-demo-ollama.$$.state"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-demo.XXXXXX")"
trap 'scripts/ollama-test-server.sh stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
url="$(scripts/ollama-test-server.sh start "scripted=scripts/demo/script.json")"

cat >"$tmp/demo.yaml" <<YAML
# The default suite against the scripted model, through both Ollama APIs.
run:
  out_dir: $root/runs
  concurrency: 4
  repetitions: 3
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: $url/v1
    models: [scripted]
  - type: ollama
    base_url: $url
    models: [scripted]
YAML
code=0
.tools/bin/bench run --config "$tmp/demo.yaml" "$@" || code=$?
exit "$code"
