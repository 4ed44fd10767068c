/**
 * Refs read from the repository's own files, in git's name order, stopping as soon as the caller
 * has its page: `packed-refs` (sorted; a binary search finds the page's first line, then it is
 * streamed) merged with the loose refs under `refs/`, walked one directory level at a time in
 * sorted order and entered only where the page's names can be. Everything is opened through the
 * workspace gate (`.git` of the root, no link followed, files checked to be regular).
 *
 * Perf: `git for-each-ref` (git 2.39) reads and sorts every ref before its first line; this reads
 * what one page needs, plus one directory level per loose directory on the way.
 *
 * Every name is checked against git's ref-name rules and every value against the object-id
 * syntax; an odd line or file is skipped with a warning, never trusted. `undefined` (the caller
 * asks git) when the repository is not in a shape this reader knows: no gate (a bare root guard),
 * a `reftable` directory, or a `packed-refs` without the `sorted` trait.
 */
import type { FileHandle } from 'node:fs/promises';
import { Workspace, type DirHandle } from '../fs/confine.js';
import { OID, isValidRefName, mergeSorted, readPacked, type RefRecord } from './packed-refs.js';
import type { Anchor } from './page-fit.js';
import type { GitRunner } from './run-git.js';

export { OID, isValidRefName, type RefRecord } from './packed-refs.js';

/** Bytes of a loose ref file read at most (an object id or `ref: <name>` and a newline). */
const MAX_LOOSE_BYTES = 4096;

export async function refsFromFiles(
  git: GitRunner,
  prefix: string,
  after: Anchor | undefined,
  warn: (w: string) => void,
): Promise<AsyncIterable<RefRecord> | undefined> {
  const ws = git.ws;
  if (!(ws instanceof Workspace)) return undefined;
  // The same checks a git call makes (root, repository shape, config policy), refused alike.
  await git.check();
  let gitDir: DirHandle;
  try {
    gitDir = await ws.openDir(['.git']);
  } catch {
    return undefined;
  }
  try {
    if (await exists(gitDir, 'reftable')) {
      await gitDir.close();
      return undefined;
    }
  } catch {
    await gitDir.close();
    return undefined;
  }
  // The first name the page can hold: the namespace, or the cursor's anchor inside it.
  const anchor = after === undefined ? undefined : Buffer.from(after.a, 'base64url');
  const from = anchor !== undefined && Buffer.compare(anchor, Buffer.from(prefix)) > 0 ? anchor : Buffer.from(prefix);
  const packed = await readPacked(gitDir, prefix, from, warn);
  if (packed === 'unsorted') {
    await gitDir.close();
    return undefined;
  }
  const loose = looseRefs(git, gitDir, prefix, from, warn);
  return closing(mergeSorted(packed, loose), gitDir);
}

async function* closing(refs: AsyncIterable<RefRecord>, dir: DirHandle): AsyncGenerator<RefRecord> {
  try {
    yield* refs;
  } finally {
    await dir.close();
  }
}

async function exists(dir: DirHandle, name: string): Promise<boolean> {
  try {
    const d = await dir.openDir(name);
    await d.close();
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code === 'ENOTDIR') return true; // something odd of that name: not ours to read
    throw e;
  }
}

/** Read a small regular file whole (capped), or `undefined` when it is not one. */
export async function readSmall(dir: DirHandle, name: string | Buffer, max: number): Promise<Buffer | undefined> {
  let fh: FileHandle;
  try {
    fh = await dir.openFile(name);
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > max) return undefined;
    const buf = Buffer.alloc(st.size);
    const { bytesRead } = await fh.read(buf, 0, st.size, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Loose refs under `prefix` in name order. Each directory level is listed whole (its entries must
 * be sorted to merge) but only directories whose names can still be at or after `from` are
 * entered. A directory sorts as its name plus `/`, which is what places `a/b` after `a-b`.
 */
async function* looseRefs(git: GitRunner, gitDir: DirHandle, prefix: string, from: Buffer, warn: (w: string) => void): AsyncGenerator<RefRecord> {
  let dir: DirHandle;
  try {
    dir = await gitDir.openDir('refs');
    const sub = await dir.openDir(prefix.slice('refs/'.length, -1));
    await dir.close();
    dir = sub;
  } catch {
    return; // no loose refs in that namespace
  }
  yield* walkLoose(git, dir, Buffer.from(prefix), from, warn, 0);
}

async function* walkLoose(
  git: GitRunner,
  dir: DirHandle,
  base: Buffer,
  from: Buffer,
  warn: (w: string) => void,
  depth: number,
): AsyncGenerator<RefRecord> {
  try {
    const entries: { key: Buffer; raw: Buffer; isDir: boolean }[] = [];
    for await (const d of await dir.list(256, true)) {
      const raw = d.name as unknown as Buffer;
      if (!d.isDirectory() && !d.isFile()) {
        warn('A loose ref that is not a regular file was skipped.');
        continue;
      }
      const key = Buffer.concat([base, raw, d.isDirectory() ? Buffer.from('/') : Buffer.alloc(0)]);
      // Prune: a file before `from`, or a directory whose every name sorts before `from`.
      if (Buffer.compare(key, from) < 0 && !(d.isDirectory() && from.subarray(0, key.length).equals(key))) continue;
      entries.push({ key, raw, isDir: d.isDirectory() });
    }
    entries.sort((x, y) => Buffer.compare(x.key, y.key));
    for (const e of entries) {
      if (e.isDir) {
        if (depth > 64) {
          warn('Loose refs nested too deep were skipped.');
          continue;
        }
        let sub: DirHandle;
        try {
          sub = await dir.openDir(e.raw);
        } catch {
          warn('A loose ref directory could not be opened and was skipped.');
          continue;
        }
        yield* walkLoose(git, sub, e.key, from, warn, depth + 1);
        continue;
      }
      const name = e.key.toString('utf8');
      if (e.raw.toString('latin1').endsWith('.lock')) continue; // an update in progress
      if (!isValidRefName(name) || Buffer.byteLength(name) !== e.key.length) {
        warn('A loose ref with a name git does not accept was skipped.');
        continue;
      }
      const target = await looseTarget(git, dir, e.raw, warn);
      if (target !== undefined) yield { name, target };
    }
  } finally {
    await dir.close();
  }
}

async function looseTarget(git: GitRunner, dir: DirHandle, raw: Buffer, warn: (w: string) => void): Promise<string | undefined> {
  const buf = await readSmall(dir, raw, MAX_LOOSE_BYTES);
  const text = buf?.toString('utf8').replace(/\n$/, '');
  if (text === undefined) {
    warn('A loose ref that could not be read was skipped.');
    return undefined;
  }
  if (OID.test(text)) return text;
  if (text.startsWith('ref: ') && isValidRefName(text.slice(5))) {
    // A symbolic ref lists the object it resolves to, as for-each-ref does (rare: one git call).
    const r = await git.tryRun(['rev-parse', '--verify', '--quiet', '--end-of-options', text.slice(5)]);
    const oid = r.stdout.toString('utf8').trim();
    if (r.code === 0 && OID.test(oid)) return oid;
    warn('A symbolic ref that does not resolve was skipped.');
    return undefined;
  }
  warn('A loose ref whose content is not an object id was skipped.');
  return undefined;
}
