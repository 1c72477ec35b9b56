// Writes the mixed corpus bench/tokenizers/compare.sh measures tokenizers on, one text per line:
// English prose (the repository's Markdown), C++ (its headers) and the 43 stress texts of the
// tokenizer fixtures (accents, CJK, emoji, right-to-left scripts, numbers, whitespace), those
// repeated 20 times. Deterministic for a given checkout.
//   node bench/tokenizers/make_corpus.js <output.txt>
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..', '..');
const lines = [];
const addFile = (file) => {
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) if (line.trim() !== '') lines.push(line);
};
const sorted = (dir, suffix) =>
  fs.readdirSync(dir).filter((name) => name.endsWith(suffix)).sort().map((name) => path.join(dir, name));

addFile(path.join(root, 'README.md'));
for (const file of sorted(path.join(root, 'docs'), '.md')) addFile(file);
for (const file of sorted(path.join(root, 'include', 'seqembed'), '.hpp')) addFile(file);
const expected = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'fixtures', 'text', 'expected', 'gpt2.json'), 'utf8'));
const stress = expected.cases.filter((item) => typeof item.text === 'string' && item.text !== '' && !item.text.includes('\n'));
for (let round = 0; round < 20; ++round) for (const item of stress) lines.push(item.text);

fs.writeFileSync(process.argv[2], lines.join('\n') + '\n');
const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
console.error(`make_corpus.js: ${lines.length} texts, ${bytes} bytes -> ${process.argv[2]}`);
