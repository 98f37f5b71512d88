#!/usr/bin/env bash
# A real Ollama server with scripted models, for demos and manual tests.
#
#   scripts/ollama-test-server.sh start [--thinking] [NAME=]SCRIPT.json ...
#       Installs Ollama (go install github.com/ollama/ollama@v0.9.6 into
#       .tools/bin) if none is found, starts `ollama serve` on a free 127.0.0.1 port with HOME and
#       OLLAMA_MODELS in a new temp dir, and creates one scripted model per
#       argument (NAME defaults to "scripted"). A script maps trigger words (the
#       prompt's last word) to reply pieces, e.g. {"OK": ["OK"]}; see
#       internal/testpeer/testmodel. Prints the base URL (append /v1 for the
#       OpenAI-compatible API) and writes it, the pid and the dir to the state
#       file.
#   scripts/ollama-test-server.sh url      prints the base URL of the running server
#   scripts/ollama-test-server.sh stop     kills it (and its model runners), removes the dir
#   scripts/ollama-test-server.sh install  only installs the binary
#   scripts/ollama-test-server.sh prereqs  checks Go, curl and (when Ollama
#       must be built) gcc, one line each on how to get what is missing
#
# Building Ollama prints what it is compiling and the time so far every
# BENCH_PROGRESS_EVERY seconds (15). Environment: BENCH_OLLAMA_BIN (binary
# to use), BENCH_OLLAMA_STATE (state file, default
# ${TMPDIR:-/tmp}/bench-ollama-test-server.state).
set -euo pipefail

OLLAMA_VERSION=v0.9.6
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${BENCH_OLLAMA_STATE:-${TMPDIR:-/tmp}/bench-ollama-test-server.state}

die() { echo "ollama-test-server: $*" >&2; exit 1; }

find_bin() {
	if [[ -n ${BENCH_OLLAMA_BIN:-} ]]; then
		[[ -x $BENCH_OLLAMA_BIN ]] || die "BENCH_OLLAMA_BIN=$BENCH_OLLAMA_BIN is not executable"
		echo "$BENCH_OLLAMA_BIN"; return
	fi
	# The one this script built before, kept with the checkout.
	if [[ -x $ROOT/.tools/bin/ollama ]]; then echo "$ROOT/.tools/bin/ollama"; return; fi
	if command -v ollama >/dev/null 2>&1; then command -v ollama; return; fi
	local gobin
	gobin=$(go env GOPATH)/bin/ollama
	if [[ -x $gobin ]]; then echo "$gobin"; return; fi
	return 1
}

# BUILD_ESTIMATE is what building Ollama takes, measured on 2 cores (see
# docs/scripted-models.md#how-long-the-first-run-takes).
BUILD_ESTIMATE="2-4 minutes on 2 idle cores, 9 or more on busy ones, an hour at load 25"

# prereqs checks what the script needs, all at once, one line each on how
# to get what is missing: Go (go.mod's version), curl, and gcc when no
# Ollama binary is there to use (it is built with cgo).
prereqs() {
	local missing=0 want have
	want=$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' "$ROOT/go.mod")
	if ! command -v go >/dev/null 2>&1; then
		echo "ollama-test-server: missing Go $want or newer: https://go.dev/doc/install (or your package manager's golang package)" >&2; missing=1
	else
		have=$(go env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')
		if [[ -n $have && -n $want ]] && ! printf '%s\n%s\n' "$want" "$have" | sort -C -V; then
			echo "ollama-test-server: Go $have is older than go.mod's $want: https://go.dev/doc/install (GOTOOLCHAIN=auto fetches it)" >&2; missing=1
		fi
	fi
	command -v curl >/dev/null 2>&1 || { echo "ollama-test-server: missing curl: apt-get install -y curl (Debian, Ubuntu), dnf install curl, brew install curl" >&2; missing=1; }
	if ! find_bin >/dev/null && ! command -v gcc >/dev/null 2>&1; then
		echo "ollama-test-server: missing gcc (Ollama is built with cgo): apt-get install -y gcc g++ (Debian, Ubuntu), dnf install gcc gcc-c++, xcode-select --install (macOS)" >&2; missing=1
	fi
	return $missing
}

# elapsed is seconds as 1m05s.
elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

install() {
	if bin=$(find_bin); then echo "$bin"; return; fi
	prereqs || die "install what is missing above, then run this again"
	echo "ollama-test-server: building ollama $OLLAMA_VERSION from the Go module proxy into .tools/bin, once ($BUILD_ESTIMATE; most of it is cgo compiling llama.cpp)" >&2
	mkdir -p "$ROOT/.tools/bin"
	local log every=${BENCH_PROGRESS_EVERY:-15} start=$SECONDS last=$SECONDS pid n pkg
	log=$(mktemp "${TMPDIR:-/tmp}/bench-ollama-build.XXXXXX")
	# The version stamp Ollama's own release build sets: without it the server
	# reports 0.0.0, which is what bench would then record as its version.
	# -v names each package as it is done: the progress lines say which.
	GOBIN="$ROOT/.tools/bin" CGO_ENABLED=1 go install -v -ldflags "-X github.com/ollama/ollama/version.Version=${OLLAMA_VERSION#v}" "github.com/ollama/ollama@$OLLAMA_VERSION" >"$log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if ((SECONDS - last >= every)); then
			last=$SECONDS
			n=$(grep -c '^[a-z]' "$log" || true)
			pkg=$(grep '^[a-z]' "$log" | tail -1 || true)
			echo "ollama-test-server: building ollama $OLLAMA_VERSION: $(elapsed $((SECONDS - start))) so far, $n packages done${pkg:+, last $pkg}" >&2
		fi
	done
	if ! wait "$pid"; then
		tail -30 "$log" >&2
		rm -f "$log"; trap - EXIT
		die "go install github.com/ollama/ollama@$OLLAMA_VERSION failed (the lines above say why)"
	fi
	rm -f "$log"; trap - EXIT
	echo "ollama-test-server: built ollama $OLLAMA_VERSION in $(elapsed $((SECONDS - start)))" >&2
	find_bin || die "go install finished but no ollama binary was found"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null && return
	# No python: pick a random high port that nothing listens on.
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
	done
	die "no free port found"
}

state_get() { sed -n "s/^$1=//p" "$STATE" 2>/dev/null; }

alive() { local pid; pid=$(state_get pid); [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; }

stop() {
	if [[ ! -f $STATE ]]; then echo "ollama-test-server: not running"; return; fi
	local pid dir
	pid=$(state_get pid); dir=$(state_get dir)
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		# The server leads its own process group; the group holds the runners.
		kill -TERM -- "-$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$pid" 2>/dev/null || true
	fi
	[[ -n $dir && -d $dir && $dir == */bench-ollama.* ]] && rm -rf "$dir"
	rm -f "$STATE"
	echo "ollama-test-server: stopped"
}

start() {
	local thinking=() specs=()
	for a in "$@"; do
		case $a in
		--thinking) thinking=(-thinking) ;;
		-*) die "unknown flag $a" ;;
		*) specs+=("$a") ;;
		esac
	done
	((${#specs[@]})) || die "usage: $0 start [--thinking] [NAME=]SCRIPT.json ..."
	if alive; then die "already running at $(state_get url) (run: $0 stop)"; fi
	rm -f "$STATE"

	local bin dir port host url pid
	prereqs || die "install what is missing above, then run this again"
	bin=$(install)
	dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-ollama.XXXXXX")
	mkdir -p "$dir/models"
	(cd "$ROOT" && go build -o "$dir/scriptedgguf" ./internal/testpeer/testmodel/cmd/scriptedgguf) || die "build scriptedgguf"

	# The caller's own OLLAMA_* settings must not leak into the test server.
	local unset=()
	for v in $(compgen -e | grep '^OLLAMA_' || true); do unset+=(-u "$v"); done
	for attempt in 1 2 3; do
		port=$(free_port); host=127.0.0.1:$port; url=http://$host
		# setsid: the server leads a new process group, so stop can kill it
		# together with the model runners it spawns.
		env "${unset[@]}" HOME="$dir" OLLAMA_HOST="$host" OLLAMA_MODELS="$dir/models" \
			OLLAMA_KEEP_ALIVE=1h OLLAMA_NUM_PARALLEL=4 OLLAMA_MAX_LOADED_MODELS=8 OLLAMA_NOPRUNE=1 \
			setsid "$bin" serve >>"$dir/ollama.log" 2>&1 </dev/null &
		pid=$!
		printf 'url=%s\npid=%s\ndir=%s\nlog=%s\n' "$url" "$pid" "$dir" "$dir/ollama.log" >"$STATE"
		for _ in $(seq 300); do
			curl -fsS "$url/api/version" >/dev/null 2>&1 && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		curl -fsS "$url/api/version" >/dev/null 2>&1 && break
		kill -KILL -- "-$pid" 2>/dev/null || true
		[[ $attempt == 3 ]] && { tail -20 "$dir/ollama.log" >&2; rm -f "$STATE"; die "ollama serve did not become ready"; }
	done

	for spec in "${specs[@]}"; do
		local name=scripted file=$spec
		if [[ $spec == *=* ]]; then name=${spec%%=*}; file=${spec#*=}; fi
		[[ -f $file ]] || { stop >/dev/null; die "script $file not found"; }
		"$dir/scriptedgguf" -modelfile "$dir/$name.Modelfile" "${thinking[@]}" "$file" "$dir/$name.gguf" ||
			{ stop >/dev/null; die "bad script $file"; }
		OLLAMA_HOST=$host "$bin" create "$name" -f "$dir/$name.Modelfile" >>"$dir/ollama.log" 2>&1 ||
			{ tail -5 "$dir/ollama.log" >&2; stop >/dev/null; die "ollama create $name failed"; }
		echo "ollama-test-server: model $name from $file" >&2
	done
	echo "$url"
}

case ${1:-} in
start) shift; start "$@" ;;
stop) stop ;;
url) alive || die "not running"; state_get url ;;
install) install ;;
prereqs) prereqs && echo "ollama-test-server: Go, curl$(find_bin >/dev/null || echo ' and gcc') are there" >&2 ;;
*) echo "usage: $0 start [--thinking] [NAME=]SCRIPT.json ... | url | stop | install | prereqs" >&2; exit 2 ;;
esac
