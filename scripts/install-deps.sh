#!/usr/bin/env bash
# Installs from Debian's packages whatever seqembed's build needs and the machine lacks.
#   scripts/install-deps.sh            the build, the tests and the demo (Eigen, Catch2, CMake, compilers)
#   scripts/install-deps.sh cross      plus the aarch64 and i686 cross compilers, qemu-aarch64 and qemu-i386
#                                      (the test-aarch64 preset and tests/strict/'s compiler
#                                      matrix, both part of scripts/run.sh test)
#   scripts/install-deps.sh bench      plus Google Benchmark and libtorch (side-by-side comparison)
#   scripts/install-deps.sh docs       plus Doxygen
#   scripts/install-deps.sh generator  plus python3-torch, mpmath, numpy and sentencepiece's spm_train
#                                      (tests/reference/ only)
#   scripts/install-deps.sh tokenizers plus npm, for scripts/fetch-tokenizers.sh
#   scripts/install-deps.sh mpi        plus Open MPI (seqembed::mpi, its tests and example)
set -euo pipefail

# nlohmann-json3-dev: seqembed::io's safetensors header; clang-14 and libclang-rt-14-dev: the
# fuzz preset's libFuzzer; libsentencepiece-dev: seqembed::sentencepiece and its tests, which
# train their models with the library's own trainer (no spm_* program is needed);
# libutf8proc-dev and libpcre2-dev: seqembed::text's Unicode data and regular expressions.
packages=(cmake ninja-build g++ clang libeigen3-dev catch2 git pkg-config libstb-dev nlohmann-json3-dev clang-14
          libclang-rt-14-dev libsentencepiece-dev libutf8proc-dev libpcre2-dev)
for extra in "$@"; do
  case "$extra" in
    cross) packages+=(g++-aarch64-linux-gnu g++-i686-linux-gnu qemu-user) ;;
    bench) packages+=(libbenchmark-dev libtorch-dev) ;;
    docs) packages+=(doxygen) ;;
    generator) packages+=(python3-torch python3-mpmath python3-numpy sentencepiece) ;;
    # A machine with another Node.js (NodeSource's, which bundles npm) keeps it: Debian's npm
    # conflicts with it.
    tokenizers) command -v npm >/dev/null || packages+=(npm) ;;
    mpi) packages+=(libopenmpi-dev openmpi-bin) ;;
    *) echo "install-deps.sh: unknown extra '$extra' (cross, bench, docs, generator, tokenizers, mpi)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps.sh: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
