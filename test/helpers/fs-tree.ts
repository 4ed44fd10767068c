/**
 * Helpers for the workspace file-system tests: temporary trees under the OS temp directory (removed
 * by the caller), fast bulk creation, raw (non-UTF-8) names, and a snapshot of a tree that does not
 * follow symlinks, so "nothing was written" can be asserted exactly.
 */
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir; `remove()` deletes it (permissions restored first). */
export function tempTree(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `mcp-budget-${prefix}-`));
  return {
    dir,
    remove: () => {
      restoreModes(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Make every directory under `dir` traversable again (tests chmod some to 000). */
function restoreModes(dir: string): void {
  try {
    chmodSync(dir, 0o755);
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) restoreModes(join(dir, e.name));
    }
  } catch {
    // gone or not ours: rmSync reports what matters
  }
}

/** Create `count` empty files `${prefix}${i}` in `dir` (about 15 µs each on ext4). */
export function fillEmpty(dir: string, count: number, prefix = 'e'): string[] {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}${i}`;
    closeSync(openSync(join(dir, name), 'w'));
    names.push(name);
  }
  return names;
}

/** `dir` joined with a raw name given as bytes (for names that are not valid UTF-8). */
export function rawPath(dir: string, raw: Buffer): Buffer {
  return Buffer.concat([Buffer.from(dir + '/'), raw]);
}

/** Create an empty file with a raw (byte) name. */
export function touchRaw(dir: string, raw: Buffer): void {
  closeSync(openSync(rawPath(dir, raw), 'w'));
}

/** Create a directory with a raw (byte) name. */
export function mkdirRaw(dir: string, raw: Buffer): void {
  mkdirSync(rawPath(dir, raw));
}

/**
 * Every entry under `dir` (hidden ones included), never following symlinks: `path` → `d`, `l:<target>`
 * or `f:<size>:<sha1>`. Two equal snapshots mean the tree was not changed.
 */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string): void => {
    for (const name of readdirSync(abs)) {
      const p = join(abs, name);
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `l:${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = 'd';
        walk(p, r);
      } else {
        out[r] = `f:${st.size}:${createHash('sha1').update(readFileSync(p)).digest('hex')}`;
      }
    }
  };
  walk(dir, '');
  return out;
}

/** Names of regular files and directories starting with the seed staging prefix, anywhere under `dir`. */
export function leftovers(dir: string): string[] {
  return Object.keys(snapshot(dir)).filter((p) => p.split('/').some((s) => s.startsWith('.mcp-budget-')));
}
