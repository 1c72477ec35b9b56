#!/usr/bin/env bash
# The project's commands. Each installs what it needs from Debian's packages if missing.
#   scripts/run.sh demo      build and run the seed walkthrough demo
#   scripts/run.sh test      build and run every test: g++ -Werror, then clang++ with ASan+UBSan,
#                            then an aarch64 cross build (g++ -Werror, the core suite without
#                            seqembed::io) run under qemu-aarch64,
#                            then the file readers' libFuzzer targets (about a minute each); the
#                            tokenizers whose licence keeps them out of the tree are fetched with
#                            npm first (their tests are skipped by name where that fails)
#   scripts/run.sh bench     build and run the Google Benchmark suite (-O3 -march=native)
#   scripts/run.sh compare   seqembed vs memcpy vs libtorch, side by side (native and -O2 builds)
#   scripts/run.sh compare-tokenizers  seqembed::text's Tokenizer vs Hugging Face's Rust library
#                            (npm tokenizers), MB/s on one thread and two (not part of CI)
#   scripts/run.sh docs      build the API reference with Doxygen
#   scripts/run.sh compile-time  the compile time of a pipeline translation unit, header-only and
#                            with compiled kernels, next to a small Eigen program
#   scripts/run.sh pairs [revision] [rounds] [workload...]  a revision's headers against the
#                            working tree's, in one program, timed call by call (bench/pairs)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${SEQEMBED_JOBS:-2}
export CMAKE_BUILD_PARALLEL_LEVEL=$jobs CTEST_PARALLEL_LEVEL=$jobs

case "${1:-}" in
  demo)
    scripts/install-deps.sh
    cmake --workflow --preset demo ;;
  test)
    scripts/install-deps.sh cross tokenizers mpi
    scripts/fetch-tokenizers.sh build/tokenizers ||
      echo "run.sh: fetching the tokenizers failed: their tests will be reported as skipped" >&2
    cmake --workflow --preset test
    cmake --workflow --preset test-sanitize
    cmake --workflow --preset test-aarch64
    cmake --workflow --preset fuzz ;;
  bench)
    scripts/install-deps.sh bench
    cmake --workflow --preset bench ;;
  compare)
    scripts/install-deps.sh bench
    cmake --workflow --preset compare
    cmake --workflow --preset compare-portable ;;
  compare-tokenizers)
    scripts/install-deps.sh bench tokenizers
    scripts/fetch-tokenizers.sh build/tokenizers
    bench/tokenizers/compare.sh ;;
  docs)
    scripts/install-deps.sh docs
    cmake --workflow --preset docs ;;
  compile-time)
    scripts/install-deps.sh
    bench/compile_time.sh ;;
  pairs)
    scripts/install-deps.sh
    bench/pairs/pairs.sh "${@:2}" ;;
  *)
    echo "usage: scripts/run.sh demo|test|bench|compare|compare-tokenizers|docs|compile-time|pairs" >&2
    exit 2 ;;
esac
