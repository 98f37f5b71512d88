#!/usr/bin/env bash
# otelcol.sh builds the OpenTelemetry Collector that bench's trace tests export
# to, with the collector's own builder (ocb) from scripts/otelcol/manifest.yaml:
# the OTLP receiver and the contrib file exporter. The result is cached in the
# project's .tools/otelcol/ (gitignored) and rebuilt only when the manifest or
# the builder version changes, so a second call takes well under a second; a
# cold build takes about 2 minutes on 2 cores. Only the binary's path goes to
# stdout; the build's logs go to stderr.
#
#   scripts/otelcol.sh install   builds if needed, prints e.g. /repo/.tools/otelcol/otelcol-bench
#
# Why GOFLAGS=-e: the builder runs `go mod tidy`, which also resolves the
# imports of the components' own tests, and one test-only dependency of the
# file exporter (contrib's otlpencodingextension at this release) is not
# served by the module proxy. -e makes tidy note that and go on; the collector
# itself never imports it. cmd/go applies a GOFLAGS entry only to the
# commands that know the flag, so `go build` is unaffected.
set -euo pipefail

BUILDER_VERSION=v0.162.0
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MANIFEST=$ROOT/scripts/otelcol/manifest.yaml
DIR=$ROOT/.tools/otelcol
BUILDER=$DIR/bin/builder
# The manifest's dist.name.
NAME=otelcol-bench
BIN=$DIR/$NAME
STAMP=$DIR/$NAME.stamp

die() { echo "otelcol: $*" >&2; exit 1; }

# key identifies what the cached binary was built from.
key() {
	{ echo "builder $BUILDER_VERSION"; cat "$MANIFEST"; } | sha256sum | cut -d' ' -f1
}

cached() {
	[[ -x $BIN && -f $STAMP && $(cat "$STAMP") == "$(key)" ]] && "$BIN" --version >/dev/null 2>&1
}

install_builder() {
	if [[ -x $BUILDER ]] && [[ $("$BUILDER" version 2>/dev/null) == *" $BUILDER_VERSION" ]]; then
		return
	fi
	echo "otelcol: installing the collector builder $BUILDER_VERSION into $DIR/bin" >&2
	GOBIN=$DIR/bin go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION" >&2
}

build() {
	command -v go >/dev/null || die "go not found"
	install_builder
	local work start
	work=$(mktemp -d "$DIR/build.XXXXXX")
	# shellcheck disable=SC2064 # expand $work now: it is local.
	trap "rm -rf '$work'" EXIT
	start=$SECONDS
	echo "otelcol: building the collector from scripts/otelcol/manifest.yaml (about 2 minutes on 2 cores)" >&2
	# The manifest's output_path (./src) is relative to the working directory.
	(cd "$work" && GOFLAGS="$(go env GOFLAGS) -e" "$BUILDER" --config "$MANIFEST") >&2 ||
		die "the collector builder failed (see above)"
	[[ -x $work/src/$NAME ]] || die "the builder made no $work/src/$NAME: is dist.name in $MANIFEST still $NAME?"
	"$work/src/$NAME" --version >&2 || die "the built collector does not run"
	mv -f "$work/src/$NAME" "$BIN"
	key >"$STAMP"
	echo "otelcol: built $BIN in $((SECONDS - start))s" >&2
}

install() {
	[[ -f $MANIFEST ]] || die "$MANIFEST not found"
	if cached; then echo "$BIN"; return; fi
	mkdir -p "$DIR"
	# Two callers at once (two test runs) build once: the second waits and
	# then finds the cache.
	exec 9>"$DIR/lock"
	flock 9
	cached || build
	echo "$BIN"
}

case ${1:-} in
install) install ;;
*) echo "usage: $0 install" >&2; exit 2 ;;
esac
