/**
 * A corpus of text as tools return it, by kind, built from what an installed checkout holds (the
 * project's own prose, code and history, its dependencies' docs, code, data and translations) and
 * from seeded generators where no real text of a kind is at hand (base64 of real binaries, emoji
 * chat). The same checkout always gives the same corpus.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Sample {
  kind: string;
  source: string;
  text: string;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** An installed package's folder (the dependencies are installed flat). */
const pkgDir = (name: string): string => join(root, 'node_modules', name);
const read = (path: string): string => readFileSync(path, 'utf8');

function filesUnder(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p, ext));
    else if (e.name.endsWith(ext)) out.push(p);
  }
  return out.sort();
}

/** A deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The values of a TypeScript diagnostics translation, one message a line. */
function diagnostics(lang: string): string {
  const json = JSON.parse(read(join(pkgDir('typescript'), 'lib', lang, 'diagnosticMessages.generated.json'))) as Record<string, string>;
  return Object.values(json).join('\n');
}

function emojiChat(seed: number, chars: number): string {
  const r = rng(seed);
  const words = read(join(root, 'README.md')).split(/\s+/).filter((w) => /^[a-z]+$/.test(w));
  const emoji = ['😀', '🎉', '👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', '❤️', '🚀', '✅', '🔥', '🤖', '👩🏻‍💻', '🏳️‍🌈', '🧪', '📦', '⚠️', '🙏', '😂', '🥲'];
  let out = '';
  while (out.length < chars) {
    const n = 1 + Math.floor(r() * 8);
    for (let i = 0; i < n; i++) out += words[Math.floor(r() * words.length)] + ' ';
    const e = 1 + Math.floor(r() * 3);
    for (let i = 0; i < e; i++) out += emoji[Math.floor(r() * emoji.length)];
    out += r() < 0.3 ? '\n' : ' ';
  }
  return out;
}

/** Words of random letters of one script's block, space-separated: harder than real text of it. */
function scriptWords(seed: number, from: number, to: number, chars: number): string {
  const r = rng(seed);
  let out = '';
  while (out.length < chars) {
    const n = 2 + Math.floor(r() * 7);
    for (let i = 0; i < n; i++) out += String.fromCodePoint(from + Math.floor(r() * (to - from + 1)));
    out += r() < 0.1 ? '\n' : r() < 0.1 ? ', ' : ' ';
  }
  return out;
}

/** Random printable ASCII in shapes tokenizers split finely: soup, one-letter words, mixed-case names. */
function hostileAscii(seed: number, chars: number, shape: 'soup' | 'letters' | 'names'): string {
  const r = rng(seed);
  const pick = (alphabet: string): string => alphabet[Math.floor(r() * alphabet.length)]!;
  const lower = 'abcdefghijklmnopqrstuvwxyz';
  const upper = lower.toUpperCase();
  let out = '';
  while (out.length < chars) {
    if (shape === 'soup') out += String.fromCharCode(32 + Math.floor(r() * 95));
    else if (shape === 'letters') out += pick(lower + upper + '0123456789') + pick(' \n.,;:');
    else {
      const parts = 1 + Math.floor(r() * 4);
      for (let i = 0; i < parts; i++) out += pick(upper) + Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(lower)).join('') + (r() < 0.3 ? String(Math.floor(r() * 1000)) : '');
      out += pick(' _.-/\n');
    }
  }
  return out;
}

/** Text of one random shape that tokenizers split finely, `chars` long (seeded). */
function adversarial(seed: number, chars: number, shape: string): string {
  const r = rng(seed);
  const pick = (alphabet: string): string => alphabet[Math.floor(r() * alphabet.length)]!;
  const lower = 'abcdefghijklmnopqrstuvwxyz';
  const words = read(join(root, 'README.md')).split(/\s+/).filter((w) => /^[a-z]{3,}$/.test(w));
  let out = '';
  while (out.length < chars) {
    if (shape === 'random lowercase') out += pick(lower);
    else if (shape === 'random capitals') out += pick(lower.toUpperCase());
    else if (shape === 'control characters') out += String.fromCharCode(Math.floor(r() * 32));
    else if (shape === 'punctuation runs') out += pick('!#$%&()*+,-./:;<=>?@[]^_`{|}~') + (r() < 0.05 ? ' ' : '');
    else if (shape === 'combining marks') out += pick(lower) + String.fromCharCode(0x300 + Math.floor(r() * 0x70)) + (r() < 0.2 ? ' ' : '');
    else if (shape === 'DNA') out += pick('ACGT');
    else if (shape === 'base58 ids') out += Array.from({ length: 46 }, () => pick('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz')).join('') + '\n';
    else if (shape === 'random URLs') out += `https://${Array.from({ length: 2 + Math.floor(r() * 3) }, () => Array.from({ length: 3 + Math.floor(r() * 8) }, () => pick(lower)).join('')).join('.')}/${Array.from({ length: 1 + Math.floor(r() * 4) }, () => Array.from({ length: 2 + Math.floor(r() * 10) }, () => pick(lower)).join('')).join('/')}\n`;
    else if (shape === 'NUL-padded records') out += `${words[Math.floor(r() * words.length)]}${'\u0000'.repeat(1 + Math.floor(r() * 12))}`;
    else if (shape === 'glued words') out += words[Math.floor(r() * words.length)];
  }
  return out.slice(0, chars);
}

function randomBase64(seed: number, bytes: number): string {
  const r = rng(seed);
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = Math.floor(r() * 256);
  return b.toString('base64');
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** Whole documents by kind; `samples` cuts them into pieces of several sizes. */
export function documents(): Sample[] {
  const docs: Sample[] = [];
  const add = (kind: string, source: string, text: string): void => void docs.push({ kind, source, text });
  add('english', 'README.md', read(join(root, 'README.md')));
  for (const f of filesUnder(join(root, 'specs'), '.md')) add('english', relative(root, f), read(f));
  for (const name of ['fast-check', 'vitest', 'pg', 'better-sqlite3', 'zod']) {
    try {
      add('english', `${name}/README.md`, read(join(pkgDir(name), 'README.md')));
    } catch {
      // a dependency without a README
    }
  }
  add('english', 'typescript diagnostics (en)', Object.keys(JSON.parse(read(join(pkgDir('typescript'), 'lib', 'ja', 'diagnosticMessages.generated.json')))).join('\n'));
  for (const f of filesUnder(join(root, 'src'), '.ts').slice(0, 60)) add('code', relative(root, f), read(f));
  add('code', 'typescript/lib/lib.dom.d.ts', read(join(pkgDir('typescript'), 'lib', 'lib.dom.d.ts')).slice(0, 400_000));
  add('code', 'typescript/lib/_tsc.js', read(join(pkgDir('typescript'), 'lib', '_tsc.js')).slice(200_000, 600_000));
  add('minified', 'jszip.min.js', read(join(pkgDir('jszip'), 'dist', 'jszip.min.js')));
  add('json', 'package-lock.json', read(join(root, 'package-lock.json')));
  for (const f of filesUnder(join(root, 'specs'), '.json')) add('json', relative(root, f), read(f));
  add('json', 'git log as JSON', JSON.stringify(git(['log', '--format=%H%x00%an%x00%aI%x00%s']).trim().split('\n').map((l) => {
    const [hash, author, date, subject] = l.split('\0');
    return { hash, author, date, subject };
  }), null, 2));
  add('json-escaped', 'README.md escaped', JSON.stringify(read(join(root, 'README.md'))));
  for (const f of filesUnder(join(root, 'src', 'engine'), '.ts').slice(0, 12)) add('json-escaped', `${relative(root, f)} escaped`, JSON.stringify(read(f)));
  add('listing', 'file paths', filesUnder(join(root, 'node_modules', 'fast-check'), '').map((f) => relative(root, f)).join('\n').slice(0, 200_000));
  add('git', 'git log', git(['log', '--stat', '-n', '120']));
  add('git', 'git diff', git(['log', '-p', '-n', '12', '--', 'src']).slice(0, 600_000));
  add('hex', 'object names', git(['rev-list', '--all', '--objects']).slice(0, 300_000));
  for (const lang of ['ja', 'zh-cn', 'zh-tw', 'ko']) add('cjk', `typescript diagnostics (${lang})`, diagnostics(lang));
  for (const lang of ['ru', 'pl', 'cs', 'tr']) add('other-script', `typescript diagnostics (${lang})`, diagnostics(lang));
  for (const lang of ['de', 'fr', 'es', 'it', 'pt-br']) add('european', `typescript diagnostics (${lang})`, diagnostics(lang));
  add('emoji', 'emoji chat (seed 1)', emojiChat(1, 60_000));
  add('emoji', 'tokenizer test plans', read(join(pkgDir('gpt-tokenizer'), 'data', 'TestPlans.txt')).slice(0, 200_000));
  add('base64', 'random bytes (seed 7)', randomBase64(7, 150_000));
  add('base64', 'tiktoken_bg.wasm', readFileSync(join(pkgDir('tiktoken'), 'lite', 'tiktoken_bg.wasm')).subarray(0, 150_000).toString('base64'));
  for (const [name, from, to] of [['Devanagari', 0x905, 0x939], ['Thai', 0xe01, 0xe2e], ['Arabic', 0x627, 0x64a], ['Hebrew', 0x5d0, 0x5ea], ['Greek', 0x3b1, 0x3c9]] as const) {
    add('random-script', `random ${name} words`, scriptWords(from, from, to, 40_000));
  }
  for (const shape of ['soup', 'letters', 'names'] as const) add('hostile-ascii', `random ${shape}`, hostileAscii(shape.length, 40_000, shape));
  for (const [i, shape] of ['random lowercase', 'random capitals', 'control characters', 'punctuation runs', 'combining marks', 'DNA', 'base58 ids', 'random URLs', 'NUL-padded records', 'glued words'].entries()) {
    add('adversarial', shape, adversarial(100 + i, 40_000, shape));
  }
  return docs;
}

/** Pieces of every document: `count` pieces of each size, at spread offsets, never splitting a surrogate pair. */
export function samples(sizes: readonly number[] = [256, 4096, 32_768], count = 4): Sample[] {
  const out: Sample[] = [];
  for (const d of documents()) {
    for (const size of sizes) {
      if (d.text.length < size) {
        out.push({ ...d, source: `${d.source} [whole]` });
        continue;
      }
      for (let i = 0; i < count; i++) {
        let from = Math.floor(((d.text.length - size) * i) / Math.max(1, count - 1));
        if (from > 0 && isLow(d.text.charCodeAt(from))) from--;
        let to = from + size;
        if (to < d.text.length && isLow(d.text.charCodeAt(to))) to++;
        out.push({ kind: d.kind, source: `${d.source} [${from}+${size}]`, text: d.text.slice(from, to) });
      }
    }
  }
  return out;
}

const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

export function fileSize(path: string): number {
  return statSync(path).size;
}
