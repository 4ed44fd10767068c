/**
 * The environment every git call runs in. Nothing of the server's own environment reaches git but
 * a filtered `PATH` and `TMPDIR`: no inherited `GIT_DIR`, `GIT_CONFIG_PARAMETERS`, `GIT_EXEC_PATH`
 * or `GIT_SSH_COMMAND`. The repository is named explicitly (`GIT_DIR`, `GIT_WORK_TREE`), discovery
 * stops at the root's parent, and every pathspec is literal.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve, sep } from 'node:path';
import { WorkspaceError } from '../fs/errors.js';

/** A config override at command-line scope: key and value. */
export type ConfigOverride = readonly [string, string];

/** Where git is told its repository is. */
export interface RepoPaths {
  /** The work tree: the workspace root (real path). */
  workTree: string;
  /** The root's own `.git` directory. */
  gitDir: string;
}

/**
 * Config that must never run anything, whatever the repository says; applied to every call.
 * Values are the ones under which git runs nothing (an empty program, `false` booleans).
 */
export const FIXED_OVERRIDES: readonly ConfigOverride[] = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', 'false'],
  ['sequence.editor', 'false'],
  ['core.askPass', 'false'],
  ['core.sshCommand', 'false'],
  ['core.gitProxy', ''],
  ['core.alternateRefsCommand', ''],
  ['core.untrackedCache', 'false'],
  ['core.attributesFile', '/dev/null'],
  ['core.excludesFile', '/dev/null'],
  ['diff.external', ''],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['protocol.allow', 'never'],
  ['credential.helper', ''],
  ['uploadpack.packObjectsHook', ''],
  ['color.ui', 'false'],
  ['log.showSignature', 'false'],
  ['gpg.program', 'false'],
  ['gpg.openpgp.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.ssh.defaultKeyCommand', ''],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['tag.forceSignAnnotated', 'false'],
  ['interactive.diffFilter', ''],
  ['imap.tunnel', ''],
  // A nested repository (a submodule's work tree) is a repository the policy never read: git must
  // not run a child `git status` inside it (its config, filters and gitfile are the attacker's).
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
];

const under = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** git's real path per workspace root (a root is checked against its own resolution). */
const gitBinaries = new Map<string, string>();

/**
 * git's real path, found on `PATH` outside the workspace: an entry is skipped when it is relative
 * (resolved against the root, git's working directory), when its text or its real path lies inside
 * the root (npm puts `<project>/node_modules/.bin` first when the project is the root), and git is
 * spawned by its real path, so a link on the way that the workspace could swap later is never
 * followed again.
 */
export function resolveGit(root: string): string {
  const known = gitBinaries.get(root);
  if (known !== undefined) return known;
  for (const entry of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (entry === '' || !isAbsolute(entry) || under(resolve(entry), root)) continue;
    let real: string;
    try {
      real = realpathSync(join(entry, 'git'));
      if (!statSync(real).isFile()) continue;
      accessSync(real, constants.X_OK);
    } catch {
      continue;
    }
    if (under(real, root)) continue;
    gitBinaries.set(root, real);
    return real;
  }
  throw new WorkspaceError('IO_ERROR', 'git was not found on PATH (entries inside the workspace are never used)');
}

/**
 * The hardened environment for one call: the repository's per-work-tree files in its own `.git`,
 * its config (and hooks, and `info`) only from the private common directory, the fixed overrides
 * on top. GIT_CONFIG_COUNT/KEY/VALUE are not split at `=` as `-c key=value` is.
 *
 * `PATH` and `GIT_EXEC_PATH` are one empty private directory: git can start no program by name,
 * not even another git (the commands the tools run are all built in). A git child in a nested
 * repository (a submodule's status, which reads that repository's own config) cannot start, whatever
 * `.gitmodules` says; a shell command would need a program key, and none reaches the copy.
 */
export function hardenedEnv(repo: RepoPaths, execDir: string, commonDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: execDir, GIT_EXEC_PATH: execDir };
  if (process.env.TMPDIR !== undefined) env.TMPDIR = process.env.TMPDIR;
  if (process.env.SYSTEMROOT !== undefined) env.SYSTEMROOT = process.env.SYSTEMROOT;
  env.GIT_CONFIG_COUNT = String(FIXED_OVERRIDES.length);
  FIXED_OVERRIDES.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  const parent = repo.workTree.slice(0, Math.max(1, repo.workTree.lastIndexOf(sep)));
  return {
    ...env,
    GIT_DIR: repo.gitDir,
    GIT_COMMON_DIR: commonDir,
    GIT_WORK_TREE: repo.workTree,
    // With GIT_DIR set git does not discover; the ceiling is a second wall if it ever did.
    GIT_CEILING_DIRECTORIES: parent,
    GIT_LITERAL_PATHSPECS: '1',
    HOME: '/nonexistent',
    XDG_CONFIG_HOME: '/nonexistent',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_SYSTEM: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'false',
    SSH_ASKPASS: 'false',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'false',
    GIT_SEQUENCE_EDITOR: 'false',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PROTOCOL_FROM_USER: '0',
  };
}
