#!/usr/bin/env bash
# Two builds of seqembed side by side in one program (bench/pairs/main.cpp): a revision's headers
# against the working tree's, timed call by call in alternation.
#   bench/pairs/pairs.sh [revision] [rounds] [workload...]   (scripts/run.sh pairs; HEAD, 41)
# Workloads: forward backward fused_sparse_adam bert_backward evaluation forward_bf16 evaluation_bf16
# (all by default). The compiler is $CXX (g++), the flags -O2 and $PAIRS_FLAGS (say -march=native).
set -euo pipefail
cd "$(dirname "$0")/../.."
revision=${1:-HEAD}
rounds=${2:-41}
shift $(($# < 2 ? $# : 2))
compiler=${CXX:-g++}
eigen=$(pkg-config --cflags-only-I eigen3 2>/dev/null | sed 's/^-I//; s/ .*//')
eigen=${eigen:-/usr/include/eigen3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/old"
git archive "$revision" include | tar -x -C "$work/old"
# shellcheck disable=SC2086
flags=(-std=c++17 -O2 -DNDEBUG ${PAIRS_FLAGS:-} -isystem "$eigen" -Ibench/pairs)
"$compiler" "${flags[@]}" -I"$work/old/include" -Dseqembed=seqembed_old -DSEQEMBED_PAIRS_SIDE=old \
  -c bench/pairs/workload.cpp -o "$work/old.o" &
"$compiler" "${flags[@]}" -Iinclude -DSEQEMBED_PAIRS_SIDE=new -c bench/pairs/workload.cpp -o "$work/new.o"
wait
"$compiler" "${flags[@]}" bench/pairs/main.cpp "$work/old.o" "$work/new.o" -pthread -o "$work/pairs"
echo "old: $revision ($(git rev-parse --short "$revision")), new: the working tree; $compiler -O2 ${PAIRS_FLAGS:-};" \
  "$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
"$work/pairs" "$rounds" "$@"
