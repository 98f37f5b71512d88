#!/usr/bin/env bash
# install-chromium.sh installs Debian's chromium package when it is missing
# and prints the browser's path on stdout. The report tests load report.html
# in it headless, so CI (root on a fresh Debian machine) gets the same real
# browser a developer has. apt-get's output goes to stderr so stdout is only
# the path.
#
# Usage: scripts/install-chromium.sh        (prints e.g. /usr/bin/chromium)
# Env:   BENCH_CHROMIUM_BIN, when set to an executable, is used as it is.
set -euo pipefail

if [ -n "${BENCH_CHROMIUM_BIN:-}" ] && [ -x "$BENCH_CHROMIUM_BIN" ]; then
	echo "$BENCH_CHROMIUM_BIN"
	exit 0
fi

bin=/usr/bin/chromium
if [ ! -x "$bin" ]; then
	command -v apt-get >/dev/null || { echo "install-chromium: $bin missing and no apt-get; install Chromium and set BENCH_CHROMIUM_BIN" >&2; exit 1; }
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "install-chromium: need root (or sudo) to apt-get install chromium" >&2; exit 1; }
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	# A fresh machine has no package lists yet; a stale one may lack the
	# current chromium version, so update before installing.
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
	[ -x "$bin" ] || { echo "install-chromium: apt-get finished but $bin is missing" >&2; exit 1; }
fi
# Debian's launcher script prints a harmless shell warning on some
# machines; keep only the version line.
version="$("$bin" --version 2>/dev/null)" || { echo "install-chromium: $bin does not run" >&2; exit 1; }
echo "install-chromium: $version" >&2
echo "$bin"
