#!/usr/bin/env bash
# Installs the Debian packages posttrain's sandbox and tests need, when they are missing.
# bubblewrap: the isolated sandbox backend. chromium: the headless browser the report test
# renders the HTML evaluation report in (and that makes docs/img/report.png).
# Needs root (CI and these machines run as root); elsewhere it prints what to install and
# carries on (the process backend still works; the browser test skips without chromium).
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
else
    echo "posttrain: please install: ${need[*]} (the isolated sandbox and the report test need them)" >&2
fi
