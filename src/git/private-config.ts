/**
 * The configuration git reads is one this program wrote, in a directory the workspace cannot
 * reach. git finds its repository config (and hooks, `info/attributes`, `info/exclude`) in the
 * common directory, so every call names a private one (`GIT_COMMON_DIR`), while `GIT_DIR` stays the
 * root's own `.git` for what is per work tree (HEAD, index, merge state):
 *
 * ```
 * <private>/<hash>/config          the vetted copy: the repository's config, its includes as
 *                 /inc-1 …           private files beside it, program keys left out
 *                 /info/exclude    copies of `.git/info/exclude` and `.git/info/attributes`
 *                 /info/attributes
 *                 /refs /logs /objects /packed-refs /shallow  → links to the same names in `.git`
 * ```
 *
 * How the copy is made, so that what is judged is exactly what git reads:
 *
 * 1. each source file (`.git/config`, every file an `include.path` or `includeIf.*.path` names,
 *    `.git/config.worktree` under `extensions.worktreeConfig`) is read once through the workspace
 *    gate (no link followed, regular files only, inside `.git` only, within the byte cap) and
 *    parsed by git itself from those bytes (`git config --file - --list -z --no-includes`);
 * 2. every entry is judged by config-policy.ts; every included file is judged whatever its
 *    condition, so whichever branch or directory a condition later sees, nothing unjudged can apply;
 * 3. the kept entries are written out and git parses the written text again: unless it reads back
 *    exactly the kept entries, the call is refused;
 * 4. the directory is published under the hash of its content and never changed afterwards.
 *
 * A writer racing `.git/config` or an include target changes only what the next call copies: a
 * running call's git reads its private copy. The links lead to data only (refs, reflogs, objects),
 * which run nothing. Nothing is ever read twice from the workspace to decide one call.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { lstatSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import { lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, sep } from 'node:path';
import { WorkspaceError } from '../fs/errors.js';
import { parseConfigList, vetEntry, type ConfigEntry } from './config-policy.js';
import { spawnGit } from './spawn-git.js';
import { BudgetError } from '../engine/index.js';
import { removeStaleDirs } from '../shared/stale-dirs.js';

/** The config files read per call at most (the repository's config, its includes, `config.worktree`). */
export const MAX_CONFIG_FILES = 64;
/** git's own limit on include nesting; deeper is refused as git refuses it. */
export const MAX_INCLUDE_DEPTH = 10;
/** `info/exclude` and `info/attributes` are copied up to this size each; larger is refused. */
export const MAX_INFO_BYTES = 4 * 1024 * 1024;
/** Private directories kept for reuse; older unused ones are removed. */
const KEEP_DIRS = 16;
/** A private directory used within this long is never removed (a call's git may still read it). */
const IN_USE_MS = 60_000;
/** Beyond this many, the least recently used directory goes whatever its age. */
const HARD_MAX_DIRS = 256;
/** Parsed config files kept by content hash (a file that did not change is not parsed again). */
const PARSE_CACHE = 64;

/** What the copy needs of the workspace: its root and the gate's regular-file open. */
export interface ConfigSource {
  readonly root: string;
  openFile(path: string): Promise<{ handle: FileHandle; size: number }>;
}

export interface PrivateConfigOptions {
  /** git's real path. */
  git: string;
  maxConfigBytes: number;
  configTimeoutMs: number;
}

function unsafe(message: string, data: Record<string, unknown> = {}): WorkspaceError {
  return new WorkspaceError('UNSAFE_REPOSITORY', message, data);
}

/** One file of the private copy: its name in the directory and the entries git must read from it. */
interface PrivateFile {
  name: string;
  entries: ConfigEntry[];
}

interface Collect {
  src: ConfigSource;
  opts: PrivateConfigOptions;
  files: PrivateFile[];
  bytes: number;
  /** `extensions.worktreeConfig` as git would read it (the last value in reading order wins). */
  worktreeConfig: boolean;
}

/** Read a root-relative file through the gate: its bytes, or `null` when it does not exist. */
async function readGated(c: Collect, rel: string, cap: number, what: string): Promise<Buffer | null> {
  let opened: { handle: FileHandle; size: number };
  try {
    opened = await c.src.openFile(rel);
  } catch (e) {
    if (e instanceof BudgetError && e.code === 'NOT_FOUND') return null;
    const why = e instanceof BudgetError && e.code === 'NOT_A_FILE' ? 'is not a regular file (a FIFO, device or directory)' : 'cannot be opened without following a link';
    throw unsafe(`\`${rel}\` (${what}) ${why}; the git tools read only regular files inside \`.git\`. Nothing was run.`, { path: rel });
  }
  try {
    if (opened.size > cap) throw unsafe(`The repository config ${what === 'the repository config' ? '' : `(with ${what}) `}is over ${cap} bytes; the git tools refuse a config they cannot read completely. Nothing was run.`);
    const buf = Buffer.alloc(opened.size + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await opened.handle.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > opened.size) throw unsafe(`\`${rel}\` grew while it was read; nothing was run.`, { path: rel });
    }
    return buf.subarray(0, n);
  } finally {
    await opened.handle.close().catch(() => undefined);
  }
}

const parsed = new Map<string, string>();

/** git's own parse of one file's bytes, as `key\nvalue\0` records (cached by content). */
async function gitParse(c: Collect, bytes: Buffer, rel: string): Promise<string> {
  const hash = createHash('sha256').update(bytes).digest('hex');
  const hit = parsed.get(hash);
  if (hit !== undefined) {
    parsed.delete(hash);
    parsed.set(hash, hit);
    return hit;
  }
  const out = await readConfigText(c.opts, bytes, `\`${rel}\``);
  parsed.set(hash, out);
  if (parsed.size > PARSE_CACHE) parsed.delete(parsed.keys().next().value!);
  return out;
}

/** `git config --file - --list -z --no-includes` over `text`: no repository, no other source. */
async function readConfigText(opts: PrivateConfigOptions, text: Buffer, what: string): Promise<string> {
  const base = privateBase();
  const r = await spawnGit(opts.git, ['config', '--file', '-', '--list', '-z', '--no-includes'], parseEnv(base), base, {
    input: text,
    maxBytes: opts.maxConfigBytes * 2 + 65536,
    timeoutMs: opts.configTimeoutMs,
  });
  const why = r.timedOut
    ? `was not parsed within ${opts.configTimeoutMs} ms`
    : r.truncated
      ? 'lists more than the byte cap allows'
      : r.code !== 0
        ? `could not be parsed (git config exited with ${r.code ?? 'a signal'}: a bad line)`
        : r.stderr !== ''
          ? 'made git print warnings'
          : undefined;
  // Never the stderr text itself: it can name host paths.
  if (why !== undefined) throw unsafe(`The repository config (${what}) ${why}; the git tools refuse a config they cannot read completely. Nothing was run.`);
  return r.stdout.toString('latin1');
}

function parseEnv(cwd: string): NodeJS.ProcessEnv {
  return {
    PATH: privateExecDir(),
    GIT_EXEC_PATH: privateExecDir(),
    HOME: '/nonexistent',
    XDG_CONFIG_HOME: '/nonexistent',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_SYSTEM: '/dev/null',
    GIT_CEILING_DIRECTORIES: dirname(cwd),
  };
}

/**
 * Where an include's path leads, root-relative (`.git/…`), or a refusal: only files inside the
 * repository's own `.git`, named relative to the including file or absolutely under the root.
 */
function includeTarget(src: ConfigSource, from: string, e: ConfigEntry): string {
  const raw = e.value;
  const refuse = (why: string): never => {
    throw unsafe(`${`\`${e.key.slice(0, 120)}\``} ${why}; includes of anything but a regular file inside the repository's \`.git\` are refused. Nothing was run.`, { key: e.key });
  };
  if (raw === undefined || raw === '') return refuse('has no path');
  const bytes = Buffer.from(raw, 'latin1');
  if (!isUtf8(bytes)) return refuse('names a path that is not UTF-8');
  const path = bytes.toString('utf8');
  if (path.startsWith('~') || path.startsWith('%(prefix)')) return refuse('names a path outside the repository');
  let parts: string[];
  if (path.startsWith('/')) {
    const prefix = src.root.endsWith(sep) ? src.root : src.root + sep;
    if (!path.startsWith(prefix)) return refuse('names a path outside the repository');
    parts = path.slice(prefix.length).split('/');
  } else {
    parts = [...posix.dirname(from).split('/'), ...path.split('/')];
  }
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') {
      if (out.length === 0) return refuse('climbs out of the workspace');
      out.pop();
    } else out.push(p);
  }
  if (out.length < 2 || out[0] !== '.git') return refuse('names a path outside `.git`');
  return out.join('/');
}

const isInclude = (e: ConfigEntry): boolean =>
  e.name === 'path' && ((e.section === 'include' && e.subsection === undefined) || (e.section === 'includeif' && e.subsection !== undefined));

/**
 * Copy one source file and, depth first, the files it includes. Returns the private file's name,
 * or `null` for a file that does not exist (git skips a missing include).
 */
async function copyFile(c: Collect, rel: string, scope: ConfigEntry['scope'], depth: number): Promise<string | null> {
  if (depth > MAX_INCLUDE_DEPTH) throw unsafe(`The repository config nests includes deeper than ${MAX_INCLUDE_DEPTH} (an include cycle?); git refuses it too. Nothing was run.`);
  if (c.files.length >= MAX_CONFIG_FILES) throw unsafe(`The repository config reads more than ${MAX_CONFIG_FILES} files through its includes; nothing was run.`);
  const what = depth === 0 && rel === '.git/config' ? 'the repository config' : `\`${rel}\``;
  const bytes = await readGated(c, rel, c.opts.maxConfigBytes - c.bytes, what);
  if (bytes === null) return null;
  c.bytes += bytes.length;
  const file: PrivateFile = { name: c.files.length === 0 ? 'config' : `inc-${c.files.length}`, entries: [] };
  c.files.push(file);
  for (const e of parseConfigList(await gitParse(c, bytes, rel), scope)) {
    if (!isInclude(e)) {
      if (e.section === 'extensions' && e.subsection === undefined && e.name === 'worktreeconfig') {
        c.worktreeConfig = e.value === undefined || /^(true|yes|on|0*[1-9][0-9]*)$/i.test(e.value);
      }
      if (vetEntry(e)) file.entries.push(e);
      continue;
    }
    const target = includeTarget(c.src, rel, e);
    const name = await copyFile(c, target, scope, depth + 1);
    if (name === null) continue;
    let sub = e.subsection;
    // `gitdir:./x` is relative to the including file's directory: keep it pointing there.
    if (sub !== undefined) sub = sub.replace(/^(gitdir(?:\/i)?:)\.\//, (_, k: string) => `${k}${Buffer.from(join(c.src.root, posix.dirname(rel)) + '/', 'utf8').toString('latin1')}`);
    file.entries.push(includeEntry(e.section, sub, name, scope));
  }
  return file.name;
}

function includeEntry(section: string, subsection: string | undefined, value: string, scope: ConfigEntry['scope']): ConfigEntry {
  return { scope, key: `${section}${subsection === undefined ? '' : `.${subsection}`}.path`, section, subsection, name: 'path', value };
}

// ---- writing -------------------------------------------------------------------------------

const quote = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
const quoteValue = (s: string): string => quote(s).replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\x08/g, '\\b');

/** A file's entries as config text git parses back to the same entries (checked, step 3). */
export function serializeConfig(entries: readonly ConfigEntry[]): string {
  let out = '';
  let header: string | undefined;
  for (const e of entries) {
    const h = e.subsection === undefined ? `[${e.section}]` : `[${e.section} "${quote(e.subsection)}"]`;
    if (h !== header) {
      out += `${h}\n`;
      header = h;
    }
    out += e.value === undefined ? `\t${e.name}\n` : `\t${e.name} = "${quoteValue(e.value)}"\n`;
  }
  return out;
}

/** The `key\nvalue\0` listing git prints for `entries` (what step 3 compares against). */
function listing(entries: readonly ConfigEntry[]): string {
  return entries.map((e) => `${e.section}${e.subsection === undefined ? '' : `.${e.subsection}`}.${e.name}${e.value === undefined ? '' : `\n${e.value}`}\0`).join('');
}

let base: string | undefined;

/**
 * This process's private directory (mode 0700, by its real path, outside any workspace; removed at
 * exit), with an empty `exec` directory that is git's whole `PATH` and `GIT_EXEC_PATH`.
 */
export function privateBase(): string {
  if (base !== undefined) return base;
  const parent = realpathSync(tmpdir());
  removeStaleDirs(parent, /^mcp-budget-git-(\d+)-[0-9a-f]{12}$/);
  const dir = join(parent, `mcp-budget-git-${process.pid}-${randomBytes(6).toString('hex')}`);
  mkdirSync(dir, { mode: 0o700 });
  mkdirSync(join(dir, 'exec'), { mode: 0o500 });
  const st = lstatSync(dir);
  if (!st.isDirectory() || (st.mode & 0o077) !== 0 || (typeof process.getuid === 'function' && st.uid !== process.getuid())) {
    throw unsafe('The private directory for git\'s config could not be made private; nothing was run.');
  }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  base = dir;
  return dir;
}

/** The empty directory git gets as `PATH` and `GIT_EXEC_PATH`: it can start no program by name. */
export function privateExecDir(): string {
  return join(privateBase(), 'exec');
}

/** Whether `inner` is `outer` or below it. */
function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith(sep) ? outer : outer + sep);
}

interface Published {
  dir: string;
  used: number;
}
const published = new Map<string, Published>();
const building = new Map<string, Promise<string>>();

/** The links into `.git`: data git reads and writes in place of the common directory's own. */
const LINKED = ['refs', 'logs', 'objects', 'packed-refs', 'shallow'] as const;

async function build(key: string, root: string, files: readonly PrivateFile[], texts: readonly string[], info: ReadonlyMap<string, Buffer>): Promise<string> {
  const home = privateBase();
  const dir = join(home, key);
  const tmp = join(home, `.${key}-${randomBytes(4).toString('hex')}`);
  await mkdir(join(tmp, 'info'), { recursive: true, mode: 0o700 });
  try {
    for (let i = 0; i < files.length; i++) await writeFile(join(tmp, files[i]!.name), texts[i]!, { encoding: 'latin1', mode: 0o600 });
    for (const [name, bytes] of info) await writeFile(join(tmp, 'info', name), bytes, { mode: 0o600 });
    for (const name of LINKED) await symlink(join(root, '.git', name), join(tmp, name));
    await rename(tmp, dir).catch(async (e: NodeJS.ErrnoException) => {
      // Published meanwhile under the same content hash: identical, use it.
      if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e;
      await rm(tmp, { recursive: true, force: true });
    });
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e instanceof BudgetError ? e : unsafe(`The private copy of the repository config could not be written (${(e as NodeJS.ErrnoException).code ?? 'error'}); nothing was run.`);
  }
  return dir;
}

function evict(now: number): void {
  if (published.size <= KEEP_DIRS) return;
  for (const [key, p] of published) {
    if (published.size <= KEEP_DIRS) break;
    if (now - p.used < IN_USE_MS && published.size <= HARD_MAX_DIRS) break; // oldest first: the rest are newer
    published.delete(key);
    void rm(p.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The private common directory for one call: the repository's config copied, judged and read back
 * by git, `info` copied, data linked. Throws `UNSAFE_REPOSITORY` for what the policy refuses or a
 * config that cannot be read completely.
 */
export async function privateCommonDir(src: ConfigSource, opts: PrivateConfigOptions): Promise<string> {
  const home = privateBase();
  if (within(home, src.root)) {
    throw unsafe('The private directory for git\'s config would be inside the workspace (the temporary directory is under the root); set TMPDIR to a directory outside it. Nothing was run.');
  }
  const c: Collect = { src, opts, files: [], bytes: 0, worktreeConfig: false };
  if ((await copyFile(c, '.git/config', 'local', 0)) === null) c.files.push({ name: 'config', entries: [] });
  // git reads `config.worktree` after the repository config; the copy includes it at the end.
  if (c.worktreeConfig) {
    const name = await copyFile(c, '.git/config.worktree', 'worktree', 1);
    if (name !== null) c.files[0]!.entries.push(includeEntry('include', undefined, name, 'worktree'));
  }
  const info = new Map<string, Buffer>();
  for (const name of ['exclude', 'attributes']) {
    const bytes = await readGated(c, `.git/info/${name}`, MAX_INFO_BYTES, `\`.git/info/${name}\``);
    if (bytes !== null) info.set(name, bytes);
  }
  const texts = c.files.map((f) => serializeConfig(f.entries));
  const hash = createHash('sha256').update(src.root).update('\0');
  c.files.forEach((f, i) => hash.update(f.name).update('\0').update(texts[i]!, 'latin1').update('\0'));
  for (const [name, bytes] of info) hash.update(name).update('\0').update(bytes).update('\0');
  const key = hash.digest('hex').slice(0, 32);

  const now = Date.now();
  const hit = published.get(key);
  if (hit !== undefined && (await lstat(hit.dir).then((s) => s.isDirectory(), () => false))) {
    published.delete(key);
    hit.used = now;
    published.set(key, hit);
    return hit.dir;
  }
  let pending = building.get(key);
  if (pending === undefined) {
    pending = (async () => {
      // Step 3: git's reading of exactly the text it will read must be exactly the judged entries.
      const back = await readConfigText(opts, Buffer.from(texts.join(''), 'latin1'), 'its private copy');
      if (back !== listing(c.files.flatMap((f) => f.entries))) {
        throw unsafe('The repository config could not be copied faithfully (git reads the copy differently); nothing was run.');
      }
      return build(key, src.root, c.files, texts, info);
    })().finally(() => building.delete(key));
    building.set(key, pending);
  }
  const dir = await pending;
  published.set(key, { dir, used: now });
  evict(now);
  return dir;
}
