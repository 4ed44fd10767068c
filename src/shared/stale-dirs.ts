/**
 * Private per-process directories left behind: a process killed before its `exit` handler ran
 * leaves its directory (git's private config, the continuation's spill files). At start-up each
 * owner removes those named by a process that no longer runs, with one rule for both: only real
 * directories (never a link or a file), owned by this user, named by a dead pid, and unchanged for
 * a day (a process in another PID namespace sharing the directory looks dead from here; a day is
 * also the longest a continuation handle lives).
 */
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** A directory of a dead process unchanged this long is stale. */
const STALE_MS = 24 * 60 * 60 * 1000;

/** Remove the stale directories in `parent` whose names match `pattern` (its first group: the pid). */
export function removeStaleDirs(parent: string, pattern: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = pattern.exec(name);
    if (m === null) continue;
    const path = join(parent, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      if (alive(Number(m[1])) || Date.now() - st.mtimeMs < STALE_MS) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Raced with its owner or another sweeper: leave it.
    }
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
