// Hugging Face tokenizers' (the Rust library, through its Node bindings) encodeBatch throughput on
// a corpus, in MB of text per second: the median of 7 timed runs after one untimed. Its thread
// count is RAYON_NUM_THREADS's. Prints one JSON line.
//   RAYON_NUM_THREADS=1 node bench/tokenizers/rust_throughput.js <node_modules> <tokenizer.json> <corpus.txt>
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [modules, tokenizerFile, corpusFile] = process.argv.slice(2);
  const { Tokenizer } = require(path.join(modules, 'tokenizers'));
  const tokenizer = Tokenizer.fromFile(tokenizerFile);
  const texts = fs.readFileSync(corpusFile, 'utf8').split('\n');
  texts.pop();
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  await tokenizer.encodeBatch(texts);
  const seconds = [];
  let tokens = 0;
  for (let round = 0; round < 7; ++round) {
    const start = process.hrtime.bigint();
    const encodings = await tokenizer.encodeBatch(texts);
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
    tokens = encodings.reduce((sum, encoding) => sum + encoding.getIds().length, 0);
  }
  seconds.sort((a, b) => a - b);
  console.log(JSON.stringify({ mb_per_s: bytes / seconds[3] / 1e6, tokens, threads: process.env.RAYON_NUM_THREADS || '' }));
}
main();
