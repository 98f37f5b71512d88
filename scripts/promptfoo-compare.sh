#!/usr/bin/env bash
# promptfoo-compare.sh runs the same 120-cell sweep with bench and with
# promptfoo against one real Ollama (the test build, a scripted model), in
# alternating rounds, and prints each tool's CPU (user + sys) and peak RSS
# per round: the comparison of docs/benchmarks.md, reproducible.
#
#   scripts/promptfoo-compare.sh [ROUNDS]     (default 3)
#
# 120 cells: 30 prompts x 4 repetitions, one model, 4 at a time, each
# answer checked (bench: a regex validator; promptfoo: a contains
# assertion). promptfoo is installed with npm into .tools/promptfoo (a
# pinned version, the newest that runs on Node 20) if it is not there;
# Ollama is scripts/ollama-test-server.sh's. Not part of the tests: it
# measures; it checks only that each tool recorded its 120 cells.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-3}
version=${PROMPTFOO_VERSION:-0.121.20}
root=$PWD
pf=$root/.tools/promptfoo/node_modules/.bin/promptfoo
if [ ! -x "$pf" ] || [ "$("$pf" --version 2>/dev/null)" != "$version" ]; then
	mkdir -p "$root/.tools/promptfoo"
	npm install --prefix "$root/.tools/promptfoo" --no-audit --no-fund --loglevel=error "promptfoo@$version" >&2
fi
work=$(mktemp -d)
export BENCH_OLLAMA_STATE=$work/ollama.state
trap 'scripts/ollama-test-server.sh stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
echo '{"go": ["ok"]}' >"$work/script.json"
url=$(scripts/ollama-test-server.sh start "cmp=$work/script.json")
go build -o "$work/bench" ./cmd/bench

{
	echo "prompts:"
	for i in $(seq 1 30); do
		printf '  - id: P%02d\n    name: case %d\n    prompt: "Case %d, answer in one word, go"\n    validator: {type: regex_fullmatch, pattern: "(?s).*ok.*"}\n' "$i" "$i" "$i"
	done
} >"$work/prompts.yaml"
cat >"$work/bench.yaml" <<YAML
run: {repetitions: 4, concurrency: 4, timeout: 60s}
prompts: {files: [prompts.yaml]}
providers:
  - type: ollama_openai
    base_url: $url/v1
    models: [cmp]
    concurrency: 4
YAML
{
	cat <<YAML
prompts: ["Case {{n}}, answer in one word, go"]
providers:
  - id: ollama:chat:cmp
    config: {temperature: 0}
tests:
YAML
	for i in $(seq 1 30); do
		printf '  - vars: {n: %d}\n    assert: [{type: contains, value: ok}]\n' "$i"
	done
} >"$work/promptfooconfig.yaml"

export OLLAMA_BASE_URL=$url PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CONFIG_DIR=$work/pfhome
printf '%-6s %-10s %10s %12s\n' round tool cpu-s peak-MiB
for r in $(seq 1 "$rounds"); do
	(cd "$work" && /usr/bin/time -f '%U %S %M' -o "$work/b.time" ./bench run --config bench.yaml --run-id "r$r" --quiet >/dev/null)
	(cd "$work" && /usr/bin/time -f '%U %S %M' -o "$work/p.time" "$pf" eval -c promptfooconfig.yaml --repeat 4 -j 4 --no-cache --no-progress-bar --no-table -o "$work/pf.json" >"$work/pf.log" 2>&1) || true
	n=$(wc -l <"$work/runs/r$r/results.jsonl")
	[ "$n" -eq 120 ] || { echo "bench recorded $n cells, want 120" >&2; exit 1; }
	n=$(jq '.results.results | length' "$work/pf.json" 2>/dev/null || echo 0)
	[ "$n" -eq 120 ] || { echo "promptfoo recorded $n results, want 120:" >&2; tail -20 "$work/pf.log" >&2; exit 1; }
	for t in b p; do
		read -r u s m <"$work/$t.time"
		name=bench
		[ $t = p ] && name=promptfoo
		printf '%-6s %-10s %10.2f %12.1f\n' "$r" "$name" "$(echo "$u + $s" | bc)" "$(echo "$m / 1024" | bc -l)"
	done
done
