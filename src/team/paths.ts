/**
 * Where the team store lives: by default in the user's state directory, outside any workspace
 * (`$XDG_STATE_HOME` or `~/.local/state`, then `mcp-result-budget/team-<hash>.db`, the hash of the
 * root's real path), or the file `--team-db` names. A file inside the workspace root is refused:
 * the workspace tools must not be able to read or write the store.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { TeamError } from './types.js';

/** Hex characters of the root hash in the default file name. */
const ROOT_HASH_CHARS = 16;

/** The default store file for the workspace whose real path is `realRoot`. */
export function defaultTeamDbPath(realRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  const hash = createHash('sha256').update(realRoot).digest('hex').slice(0, ROOT_HASH_CHARS);
  return join(state, 'mcp-result-budget', `team-${hash}.db`);
}

/** The real path of `p`, or of its nearest existing ancestor joined with the rest. */
function realPathOf(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realPathOf(parent), basename(abs));
  }
}

/** `true` when `file` (resolved through links) is `root` or inside it. */
export function isInside(file: string, realRoot: string): boolean {
  const real = realPathOf(file);
  return real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep);
}

/**
 * The store file to use for `root`: `explicit` when given, else the default; refused inside the
 * root. With `create`, the default's directory is created (mode 0700).
 */
export function resolveTeamDbPath(realRoot: string, explicit: string | undefined, create: boolean): string {
  const file = explicit !== undefined ? resolve(explicit) : defaultTeamDbPath(realRoot);
  if (isInside(file, realRoot)) {
    throw new TeamError(
      'STORE_INSIDE_ROOT',
      explicit !== undefined
        ? `\`--team-db\` ${explicit} is inside the workspace root; the workspace tools could reach it. Choose a file outside the root.`
        : 'The default team store (in the user state directory) is inside the workspace root; pass `--team-db` with a file outside the root.',
    );
  }
  if (create) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  return file;
}
