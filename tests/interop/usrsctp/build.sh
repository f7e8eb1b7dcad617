#!/usr/bin/env bash
# Builds the usrsctp interop peer (see ../PROTOCOL.md).
# Usage: build.sh [OUTDIR]   (default: target/interop); prints the binary's path.
# Needs libusrsctp-dev (usrsctp.h, libusrsctp).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-target/interop}"
mkdir -p "$out"
bin="$(cd "$out" && pwd)/usrsctp-peer"
cc -O2 -Wall -Wextra -Werror -o "$bin" "$here/peer.c" -lusrsctp -lpthread
echo "$bin"
