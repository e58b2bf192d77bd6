#!/usr/bin/env bash
# Assembles the runtime tree of the service in OUTDIR: package files, production dependencies only
# (`npm ci --omit=dev`) and the built `dist/` (run `npm run build` first). The Dockerfile's build stage and CI both
# call this one script, so the image and what CI checks are the same tree.
#   usage: scripts/build-runtime.sh OUTDIR
set -euo pipefail

if [[ $# -ne 1 || -z $1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1

[[ -f $root/dist/server.js ]] || { echo "error: $root/dist/server.js is missing; run npm run build first" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
cp "$root/package.json" "$root/package-lock.json" "$out/"
# Reproducible from the lock file; no dev tools (TypeScript, vitest, tsx) in the runtime tree.
(cd "$out" && npm ci --omit=dev --no-audit --no-fund)
rm -rf "$out/dist"
cp -R "$root/dist" "$out/dist"
# Operations helpers that run from the tree (scripts/approve-sender.sh needs only bash, curl and openssl).
mkdir -p "$out/scripts"
cp "$root/scripts/approve-sender.sh" "$out/scripts/"
cp "$root/.env.example" "$out/"
echo "runtime tree ready in $out" >&2
