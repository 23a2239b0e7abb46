#!/usr/bin/env bash
# End-to-end test of the packaged extension in real VS Code: code-server (from npm) serves
# VS Code 1.100 to Debian's headless Chromium, driven by playwright-core. It opens
# examples/paper.md and checks that the extension started the server (status bar), that the
# Problems panel lists the example's citation diagnostics, that a hover on a citation shows
# the reference card, that a palette command runs, and that a broken citelsp.server.path
# restarts into one notification (and a fixed one back into a running server). Screenshots go to test/screenshots/ (git-ignored); timings are
# printed at the end.
#
# citelsp is installed as a writer would: `pip install` of this checkout into a virtual
# environment of its own (test/.e2e/venv), whose bin folder is put first on the PATH of the
# shell that starts code-server; every other PATH folder holding a `citelsp` is left out, so
# the extension can only find the venv's.
#
# Needs root (apt-get) the first time, the npm and PyPI registries and Debian's packages;
# nothing else from the network. Every source's base URL points at a closed loopback port, so
# lookups come out "unreachable" (P2) beside the example's local finding (NO_LOCATOR).
#
#   bash editors/vscode/test/e2e.sh
#
# CITELSP_E2E_DIR keeps the code-server install and the venv between runs (default test/.e2e/).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
EXTENSION="$(dirname "$HERE")"
REPO="$(cd "$EXTENSION/../.." && pwd)"
CACHE="${CITELSP_E2E_DIR:-$HERE/.e2e}"
# The last code-server line that runs on Node.js 20 (4.104 and later want Node.js 22).
CODE_SERVER_VERSION=4.100.3
CODE_SERVER_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
CODE_SERVER="$CODE_SERVER_DIR/node_modules/.bin/code-server"

START=$SECONDS
TIMINGS=()
step() { TIMINGS+=("$(printf '%-28s %4ds' "$1" $((SECONDS - STEP_START)))"); STEP_START=$SECONDS; }
STEP_START=$SECONDS

# citelsp only in a venv: the dependencies once, this checkout (not editable) at every run.
VENV="$CACHE/venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$REPO"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --force-reinstall "$REPO"
EDITOR_PATH="$VENV/bin"
IFS=: read -r -a FOLDERS <<<"$PATH"
for folder in "${FOLDERS[@]}"; do
    [ -n "$folder" ] && [ ! -e "$folder/citelsp" ] && EDITOR_PATH="$EDITOR_PATH:$folder"
done
found="$(PATH="$EDITOR_PATH" command -v citelsp)"
[ "$found" = "$VENV/bin/citelsp" ] || { echo "e2e: citelsp found at $found" >&2; exit 2; }
"$found" --version
# The server path setting is left empty: the extension finds the venv's citelsp on PATH.
SERVER_PATH=""
step "citelsp in a venv"

missing=()
for tool in chromium:chromium rg:ripgrep make:build-essential g++:build-essential; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
[ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
if [ "${#missing[@]}" -gt 0 ]; then
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
fi
step "Debian packages"

# code-server's own postinstall downloads ripgrep from GitHub and node-gyp headers from
# nodejs.org; neither is reachable here. The same steps by hand: npm packages without their
# scripts, Debian's rg where @vscode/ripgrep wants its own binary, then the native builds
# against the headers Node.js ships in /usr/include/node.
if ! "$CODE_SERVER" --version >/dev/null 2>&1; then
    rm -rf "$CODE_SERVER_DIR"
    mkdir -p "$CODE_SERVER_DIR"
    export npm_config_nodedir=/usr npm_config_yes=true npm_config_unsafe_perm=true
    (
        cd "$CODE_SERVER_DIR"
        # A package.json of its own, or npm would install into the nearest ancestor that has
        # one: the extension (editors/vscode), when this directory is inside the repository.
        echo '{"private": true}' >package.json
        npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
            "code-server@$CODE_SERVER_VERSION"
        npm rebuild argon2 --loglevel=error
        cd node_modules/code-server/lib/vscode
        npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
        mkdir -p node_modules/@vscode/ripgrep/bin
        cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
        npm rebuild --loglevel=error >/dev/null
        ln -sfn node_modules node_modules.asar
        ln -sfn code-linux.sh bin/remote-cli/code-server
        ln -sfn browser-linux.sh bin/helpers/browser.sh
        cd extensions
        npm install --omit=dev --no-audit --no-fund --loglevel=error
    )
fi
"$CODE_SERVER" --version | head -1
step "code-server"

(
    cd "$EXTENSION"
    [ node_modules/.package-lock.json -nt package-lock.json ] ||
        npm ci --no-audit --no-fund --loglevel=error
    npm run --silent package >/dev/null
)
step "build citelsp.vsix"

RUN="$(mktemp -d /tmp/citelsp-e2e.XXXXXX)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$RUN"
}
trap cleanup EXIT

mkdir -p "$RUN/user/User" "$RUN/workspace" "$RUN/config"
cp "$REPO/examples/paper.md" "$REPO/examples/refs.bib" "$RUN/workspace/"
# Every source is pointed at a closed loopback port, unpaced (one origin for all would be paced
# at arXiv's 3 s): each lookup comes out "unreachable" at once, and this goes through the
# extension's mirroring of machine-scoped settings.
CLOSED="http://127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 - "$RUN/user/User/settings.json" "$CLOSED" "$SERVER_PATH" <<'PY'
import json, sys
path, closed, server = sys.argv[1:]
settings = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "telemetry.telemetryLevel": "off",
    "security.workspace.trust.enabled": False,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "update.mode": "none",
    "editor.hover.delay": 100,
}
for source in ("crossref", "openalex", "semanticScholar", "arxiv", "doiRegistry", "handle",
               "datacite", "eutils"):
    settings[f"citelsp.resolvers.{source}.baseUrl"] = closed
    settings[f"citelsp.resolvers.{source}.minIntervalMs"] = 0
if server:
    settings.update({"citelsp.server.path": server, "citelsp.server.args": ["-m", "citelsp"]})
json.dump(settings, open(path, "w"), indent=2)
PY

export XDG_CONFIG_HOME="$RUN/config" XDG_DATA_HOME="$RUN/data" CITELSP_CACHE_DIR="$RUN/cache"
CS_ARGS=(--user-data-dir "$RUN/user" --extensions-dir "$RUN/extensions")
"$CODE_SERVER" "${CS_ARGS[@]}" --install-extension "$EXTENSION/citelsp.vsix" >/dev/null
step "install the .vsix"

PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# VSCODE_CLI=1, as `code .` sets it: the editor keeps the PATH of the shell that started it.
# Without it the VS Code server replaces PATH with a login shell's (Debian's /etc/profile
# resets root's), which holds no venv: then only the other places can find the server.
VSCODE_CLI=1 PATH="$EDITOR_PATH" "$CODE_SERVER" "${CS_ARGS[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    "$RUN/workspace" > "$RUN/code-server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 120); do
    curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    sleep 0.5
done
step "start code-server"

mkdir -p "$HERE/screenshots"
status=0
node "$HERE/e2e.mjs" "http://127.0.0.1:$PORT/?folder=$RUN/workspace" "$HERE/screenshots" \
    "$RUN/browser" "$SERVER_PATH" || status=$?
step "browser checks"
# The extension's output channel (VS Code keeps a copy under the logs folder) says which
# server it started: the venv's.
if ! grep -rhs "\[discovery\] found citelsp" "$RUN/user/logs" | grep -q " $VENV/bin/citelsp\$"; then
    echo "FAIL the extension did not start $VENV/bin/citelsp:" >&2
    grep -rhs "\[discovery\]" "$RUN/user/logs" >&2 || echo "(no discovery lines logged)" >&2
    status=1
else
    echo "ok   the extension started $VENV/bin/citelsp"
fi
if [ "$status" -ne 0 ]; then
    echo "--- code-server log ---" >&2
    tail -n 40 "$RUN/code-server.log" >&2
fi

echo "e2e timings:"
printf '  %s\n' "${TIMINGS[@]}"
printf '  %-28s %4ds\n' "total" $((SECONDS - START))
exit "$status"
