#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian 12 (bookworm) package Passim needs, non-interactively and idempotently.
# Re-running it when everything is present takes well under a second.
#
#   bash tools/setup.sh                    # all packages
#   PASSIM_SETUP_EXTRA=1 bash tools/setup.sh   # also iverilog (second simulator for netlist checks)
set -euo pipefail

PKGS=(
  # C++ toolchain, build and test
  g++ cmake make ninja-build pkg-config git
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # runtime libraries (outside the core)
  libeigen3-dev       # float reference forward pass
  libcli11-dev        # command-line parsing
  nlohmann-json3-dev  # JSON reports
  libfmt-dev          # formatting (g++ 12 has no std::format)
  libssl-dev          # SHA-256 of model files (OpenSSL EVP)
  libflatbuffers-dev flatbuffers-compiler  # TFLite model files (flatc, Verifier)
  zlib1g-dev          # zlib.h and -lz: Verilator's FST waveform writer (passim run --trace)
  # hardware simulation
  verilator           # 5.006, ships verilator-config.cmake
  libsystemc-dev      # 2.3.4 with TLM-2.0, found through pkg-config
  # synthesis and place-and-route (Lattice iCE40 is the complete open flow in bookworm)
  yosys nextpnr-ice40 fpga-icestorm
  # plots
  python3 python3-matplotlib
  # sweeps: the suite runs a `passim sweep --print-commands` grid through GNU parallel
  parallel
  # fuzzing (tests/fuzz): clang with libFuzzer, ASan and UBSan
  clang-14 libfuzzer-14-dev
  # keyword spotting tests (tests/kwt): spoken keywords, resampled to 16 kHz
  espeak-ng sox
)
# Node.js runs LiteRT, the float peer of `passim classify` (tools/litert). A Node already on the
# machine (e.g. from NodeSource, which bundles npm) is used as it is; otherwise Debian's.
if ! command -v node >/dev/null 2>&1; then
  PKGS+=(nodejs npm)
fi
if [[ "${PASSIM_SETUP_EXTRA:-0}" == "1" ]]; then
  PKGS+=(iverilog)
fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  SUDO=""
  if [[ "$(id -u)" -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  # Another apt/dpkg run may hold the lock; wait for it instead of failing at once.
  APT=(apt-get -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 -o Dpkg::Use-Pty=0)
  echo "setup: installing ${missing[*]}"
  $SUDO "${APT[@]}" update -qq
  $SUDO "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all ${#PKGS[@]} packages already installed"
fi

# LiteRT from npm, pinned by tools/litert/package-lock.json, outside the source tree:
# $PASSIM_LITERT_DIR, else ${XDG_CACHE_HOME:-~/.cache}/passim/litert (tools/litert/kwt_logits.mjs
# looks in the same place).
LITERT_SRC="$(cd "$(dirname "$0")/litert" && pwd)"
LITERT_DIR="${PASSIM_LITERT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/passim/litert}"
if [[ ! -f "$LITERT_DIR/node_modules/@litertjs/core/package.json" ]] ||
   ! cmp -s "$LITERT_SRC/package-lock.json" "$LITERT_DIR/package-lock.json"; then
  echo "setup: installing LiteRT (npm @litertjs/core) into $LITERT_DIR"
  mkdir -p "$LITERT_DIR"
  cp "$LITERT_SRC/package.json" "$LITERT_SRC/package-lock.json" "$LITERT_DIR/"
  npm ci --prefix "$LITERT_DIR" --no-audit --no-fund --loglevel=error
fi

echo "setup: $(verilator --version | head -n1)"
LITERT_PKG="$LITERT_DIR/node_modules/@litertjs/core/package.json"
echo "setup: node $(node --version), LiteRT $(node -p "require('$LITERT_PKG').version")"
echo "setup: systemc $(pkg-config --modversion systemc)"
echo "setup: $(yosys -V)"
