#!/usr/bin/env bash
# Build the pion/sctp interop peer (see ../PROTOCOL.md).
# Usage: tests/interop/pion/build.sh [OUT]
#   OUT defaults to target/interop; a relative OUT is taken relative to the
#   repository root. Prints the path of the built binary.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"

out="${1:-target/interop}"
case "$out" in
  /*) ;;
  *) out="$root/$out" ;;
esac
mkdir -p "$out"
out="$(cd "$out" && pwd)"

cd "$here"
go build -o "$out/pion-peer" . >&2
echo "$out/pion-peer"
