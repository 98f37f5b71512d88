#!/usr/bin/env bash
# install-claude-cli.sh installs the pinned Claude Code CLI into the project's
# .tools/claude-code (gitignored) unless that version is already there, and
# prints the binary's path on stdout. The provider tests find it there, so CI
# and a fresh checkout test against the same CLI version the fixtures came from.
#
# Usage: scripts/install-claude-cli.sh        (prints e.g. /repo/.tools/claude-code/node_modules/.bin/claude)
# Env:   CLAUDE_CLI_VERSION overrides the pinned version.
set -euo pipefail

version="${CLAUDE_CLI_VERSION:-2.1.330}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/.tools/claude-code"
bin="$dir/node_modules/.bin/claude"

installed() {
	[ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null | awk '{print $1}')" = "$version" ]
}

if ! installed; then
	command -v npm >/dev/null || { echo "install-claude-cli: npm not found; install Node.js 20+ first" >&2; exit 1; }
	mkdir -p "$dir"
	# npm warns about engines and install scripts on Node 20; the package
	# carries a native binary that runs regardless. Its output goes to stderr
	# so stdout is only the path.
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
		"@anthropic-ai/claude-code@$version" >&2
	installed || { echo "install-claude-cli: $bin does not report version $version" >&2; exit 1; }
fi
echo "$bin"
