#!/usr/bin/env bash
# The compile time of a translation unit that includes a seqembed header, next to one that
# includes <Eigen/Dense>: the median of 7 compiles (-c, C++17) for each compiler and flag set.
#   bench/compile_time.sh [runs]      (scripts/run.sh compile-time)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
eigen=$(pkg-config --cflags-only-I eigen3 2>/dev/null | sed 's/^-I//; s/ .*//')
eigen=${eigen:-/usr/include/eigen3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# seconds <compiler> <flags> <header>: the median wall time of compiling a file that includes it.
seconds() {
  printf '#include <%s>\n' "$3" > "$work/tu.cpp"
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    "$1" -std=c++17 $2 -Iinclude -isystem "$eigen" -c "$work/tu.cpp" -o "$work/tu.o"
    end=$(date +%s%N)
    echo $(( (end - start) / 1000000 ))
  done | median
}

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; median of $runs compiles, ms"
printf '%-12s %-22s %14s %12s %12s %12s %8s\n' compiler flags "<Eigen/Dense>" "<Eigen/Core>" types.hpp seqembed.hpp ratio
for compiler in g++ clang++; do
  command -v "$compiler" >/dev/null || continue
  for flags in "-O2" "-O2 -march=native"; do
    dense=$(seconds "$compiler" "$flags" Eigen/Dense)
    core=$(seconds "$compiler" "$flags" Eigen/Core)
    types=$(seconds "$compiler" "$flags" seqembed/types.hpp)
    umbrella=$(seconds "$compiler" "$flags" seqembed/seqembed.hpp)
    printf '%-12s %-22s %14s %12s %12s %12s %7.2fx\n' "$compiler" "$flags" "$dense" "$core" "$types" "$umbrella" \
      "$(echo "$umbrella / $dense" | bc -l)"
  done
done
