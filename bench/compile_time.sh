#!/usr/bin/env bash
# The compile time and peak memory of translation units that use seqembed, next to a small Eigen
# program: for each compiler, at -O2 (-c, C++17), the median wall time of a few compiles and the
# largest peak resident size (GNU time's %M, when /usr/bin/time is there).
#   eigen         a small Eigen program (<Eigen/Dense>, a product, a sum, a print)
#   umbrella      #include <seqembed/seqembed.hpp> and an empty main
#   pipeline      an InputPipeline<float> forward (float table, learned positions, LayerNorm,
#                 dropout in training) and a RotaryEmbedding<float> apply (bench/compile_time/)
#   ... header-only, and with SEQEMBED_COMPILED_KERNELS=1 (what seqembed::kernels' users get:
#   the kernels declared, compiled once in the library; its own two sources are the last rows).
#   bench/compile_time.sh [runs]      (scripts/run.sh compile-time; 5 runs by default)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
eigen=$(pkg-config --cflags-only-I eigen3 2>/dev/null | sed 's/^-I//; s/ .*//')
eigen=${eigen:-/usr/include/eigen3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gnu_time=""
if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then gnu_time=/usr/bin/time; fi

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure <compiler> <source> [flags...]: "<median ms> <peak MB>" of compiling the source.
measure() {
  local compiler=$1 source=$2
  shift 2
  : > "$work/times"
  : > "$work/peaks"
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    if [ -n "$gnu_time" ]; then
      "$gnu_time" -f %M -o "$work/peak" "$compiler" -std=c++17 -O2 "$@" -Iinclude -isystem "$eigen" \
        -c "$source" -o "$work/tu.o"
      cat "$work/peak" >> "$work/peaks"
    else
      "$compiler" -std=c++17 -O2 "$@" -Iinclude -isystem "$eigen" -c "$source" -o "$work/tu.o"
    fi
    end=$(date +%s%N)
    echo $(( (end - start) / 1000000 )) >> "$work/times"
  done
  local peak=-
  if [ -s "$work/peaks" ]; then peak=$(( $(sort -n "$work/peaks" | tail -1) / 1024 )); fi
  echo "$(median < "$work/times") $peak"
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; -O2 -c, median of $runs compiles"
printf '%-10s %-34s %10s %9s %11s\n' compiler "translation unit" "time, ms" "peak, MB" "/ Eigen's"
for compiler in g++ clang++; do
  command -v "$compiler" >/dev/null || continue
  read -r eigen_ms eigen_mb < <(measure "$compiler" bench/compile_time/eigen.cpp)
  row() {
    printf '%-10s %-34s %10s %9s %10.2fx\n' "$compiler" "$1" "$2" "$3" "$(echo "$2 / $eigen_ms" | bc -l)"
  }
  row "small Eigen program" "$eigen_ms" "$eigen_mb"
  read -r ms mb < <(measure "$compiler" bench/compile_time/umbrella.cpp)
  row "seqembed.hpp, header-only" "$ms" "$mb"
  read -r ms mb < <(measure "$compiler" bench/compile_time/umbrella.cpp -DSEQEMBED_COMPILED_KERNELS=1)
  row "seqembed.hpp, compiled kernels" "$ms" "$mb"
  read -r ms mb < <(measure "$compiler" bench/compile_time/pipeline.cpp)
  row "pipeline, header-only" "$ms" "$mb"
  read -r ms mb < <(measure "$compiler" bench/compile_time/pipeline.cpp -DSEQEMBED_COMPILED_KERNELS=1)
  row "pipeline, compiled kernels" "$ms" "$mb"
  # The library, compiled once per build: its two sources, one run each.
  runs_saved=$runs
  runs=1
  for source in src/kernels.cpp src/kernels_rotary.cpp; do
    read -r ms mb < <(measure "$compiler" "$source")
    row "$source (1 run)" "$ms" "$mb"
  done
  runs=$runs_saved
done
