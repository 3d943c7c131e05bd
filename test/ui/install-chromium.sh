#!/usr/bin/env bash
# Debian's Chromium for the browser tests (npm run test:ui), installed with
# apt-get unless it is already there. Safe to run again. CHROMIUM_PATH names
# another binary instead (it must then exist).
set -euo pipefail
if [[ -n "${CHROMIUM_PATH:-}" ]]; then
  [[ -x "$CHROMIUM_PATH" ]] || { echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file" >&2; exit 1; }
  echo "chromium: $CHROMIUM_PATH (from CHROMIUM_PATH)"
  exit 0
fi
if [[ -x /usr/bin/chromium ]]; then
  echo "chromium: /usr/bin/chromium (already installed)"
  exit 0
fi
as_root=()
[[ "$(id -u)" -eq 0 ]] || as_root=(sudo)
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
echo "chromium: /usr/bin/chromium (installed with apt-get)"
