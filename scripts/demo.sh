#!/usr/bin/env bash
# demo.sh runs the default sweep end to end without an Ollama of your own: it
# starts a real Ollama (installed with `go install` on first use) on a free
# loopback port, serves a tiny scripted model whose answers to the built-in
# prompts are fixed (scripts/demo/script.json: most right, some wrong on
# purpose), sweeps it through both Ollama APIs and leaves a complete run
# directory under runs/. Extra arguments go to `bench run` (e.g. --run-id demo).
#
# The built-in agentic tasks (A1-A7) run too: each tool result bench sends
# back ends with the word that picks the model's next turn, so the scripted
# model plays out whole multi-turn trajectories. It completes five of them
# and fails two on purpose (A3 retries the failed call but misreads the
# amount; A6 also calls the cancel_order distractor): Tier 1 on tool use,
# yet not routing-ready. The run directory shows multi-turn cells
# (turn_details in results.jsonl), their Forsy work traces in forsy/, and
# the agentic table and routing verdict in summary.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

export BENCH_OLLAMA_STATE="${TMPDIR:-/tmp}/bench-demo-ollama.state"
scripts/ollama-test-server.sh stop >/dev/null 2>&1 || true
url="$(scripts/ollama-test-server.sh start "scripted=scripts/demo/script.json")"
trap 'scripts/ollama-test-server.sh stop >/dev/null 2>&1 || true' EXIT

cfg="$(mktemp -d)/demo.yaml"
cat >"$cfg" <<YAML
# The default suite against the scripted model, through both Ollama APIs.
run:
  out_dir: $root/runs
  concurrency: 4
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: $url/v1
    models: [scripted]
  - type: ollama
    base_url: $url
    models: [scripted]
YAML
go run ./cmd/bench run --config "$cfg" "$@"
