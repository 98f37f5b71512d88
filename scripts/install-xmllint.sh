#!/usr/bin/env bash
# install-xmllint.sh installs Debian's libxml2-utils when xmllint is missing
# and prints its path on stdout. The JUnit tests validate junit.xml against
# the Jenkins JUnit schema with it. apt-get's output goes to stderr.
#
# Usage: scripts/install-xmllint.sh        (prints e.g. /usr/bin/xmllint)
# Env:   BENCH_XMLLINT_BIN, when set to an executable, is used as it is.
set -euo pipefail

if [ -n "${BENCH_XMLLINT_BIN:-}" ] && [ -x "$BENCH_XMLLINT_BIN" ]; then
	echo "$BENCH_XMLLINT_BIN"
	exit 0
fi
if ! command -v xmllint >/dev/null; then
	command -v apt-get >/dev/null || { echo "install-xmllint: no xmllint and no apt-get; install libxml2's xmllint and set BENCH_XMLLINT_BIN" >&2; exit 1; }
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "install-xmllint: need root (or sudo) to apt-get install libxml2-utils" >&2; exit 1; }
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq --no-install-recommends libxml2-utils >&2
fi
command -v xmllint
