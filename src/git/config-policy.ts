/**
 * The repository config policy, as a pure function of git's own parse of each config file
 * (`git config --file - --list -z --no-includes`, see private-config.ts). Every entry is judged:
 *
 * - dropped: a key that names a program git would run (hooks path, fsmonitor, pagers, editors,
 *   external diff and textconv, merge drivers, signing programs, ssh, askpass, credential helpers,
 *   proxies, …) or one the fixed overrides set. It never reaches the private config git reads, so
 *   git runs its default (no program); the fixed overrides still switch the same keys off on the
 *   command line.
 * - refused: a key with no program-free default that keeps the repository's meaning (filter drivers
 *   with a program: dropping one would commit unfiltered content), a key that looks like it names a
 *   program but is not known here (fail closed: a later git may run it), or a key that points git
 *   outside the root (`core.worktree`, `core.bare`, a promisor remote, an unknown extension). The
 *   call is refused with `UNSAFE_REPOSITORY` naming the key.
 * - kept: anything else is data.
 *
 * Includes are not entries of this policy: private-config.ts resolves them (confined to `.git`) and
 * judges every file they name, whatever its condition.
 *
 * Odd output (a malformed key, a truncated record) refuses the call too.
 */
import { WorkspaceError } from '../fs/errors.js';
import { FIXED_OVERRIDES } from './git-env.js';

/** A config entry as git printed it (section and name lowercased, subsection as written). */
export interface ConfigEntry {
  /** `local` (the config and its includes) or `worktree` (`config.worktree` and its includes). */
  scope: 'local' | 'worktree';
  key: string;
  section: string;
  subsection: string | undefined;
  name: string;
  /** `undefined` for a key written without `=` (a bare boolean). */
  value: string | undefined;
}

/**
 * Keys left out of the private config: programs git would run, and files outside the root it would
 * read (`section`, whether a subsection is required, forbidden or either, `name`).
 */
const DROPPED: readonly { section: string; sub: boolean | 'any'; name: RegExp }[] = [
  { section: 'core', sub: false, name: /^(fsmonitor|hookspath|pager|editor|askpass|sshcommand|gitproxy|alternaterefscommand|attributesfile|excludesfile)$/ },
  { section: 'sequence', sub: false, name: /^editor$/ },
  { section: 'pager', sub: false, name: /^.+$/ },
  { section: 'diff', sub: false, name: /^external$/ },
  { section: 'diff', sub: true, name: /^(textconv|command)$/ },
  { section: 'diff', sub: true, name: /^cachetextconv$/ },
  { section: 'merge', sub: true, name: /^driver$/ },
  { section: 'credential', sub: 'any', name: /^helper$/ },
  { section: 'gpg', sub: 'any', name: /^program$/ },
  { section: 'gpg', sub: true, name: /^defaultkeycommand$/ },
  { section: 'uploadpack', sub: false, name: /^packobjectshook$/ },
  { section: 'interactive', sub: false, name: /^difffilter$/ },
  { section: 'imap', sub: false, name: /^tunnel$/ },
  { section: 'http', sub: 'any', name: /^proxy$/ },
  { section: 'remote', sub: true, name: /^(proxy|uploadpack|receivepack|vcs)$/ },
  { section: 'protocol', sub: true, name: /^allow$/ },
  { section: 'submodule', sub: true, name: /^update$/ },
  { section: 'trailer', sub: true, name: /^(command|cmd)$/ },
  { section: 'difftool', sub: true, name: /^(cmd|path)$/ },
  { section: 'mergetool', sub: true, name: /^(cmd|path)$/ },
  { section: 'man', sub: true, name: /^(cmd|path)$/ },
  { section: 'browser', sub: true, name: /^(cmd|path)$/ },
  { section: 'web', sub: false, name: /^browser$/ },
  { section: 'mailmap', sub: false, name: /^file$/ },
  { section: 'sendemail', sub: 'any', name: /^(smtpserver|sendmailcmd|tocmd|cccmd|headercmd)$/ },
];

/**
 * Names that look like they name a program. Fail closed: such a key that is not dropped above
 * refuses the call (a key added by a later git, a tool's own key).
 */
const PROGRAM_LIKE = /(command|cmd|program|helper|hook|hooks|driver|editor|textconv|askpass|proxy|tunnel|filter|pager|exec|executable|shell|monitor|clean|smudge|process)$/;

/** Extensions git 2.39 knows that keep every object and ref inside the git directory. */
const SAFE_EXTENSIONS = new Set(['noop', 'noop-v1', 'preciousobjects', 'objectformat', 'worktreeconfig']);

const FIXED_KEYS = new Set(FIXED_OVERRIDES.map(([k]) => k.toLowerCase()));
const BOOLEAN = /^(true|false|yes|no|on|off|-?[0-9]+)$/i;

function unsafe(message: string, key?: string): WorkspaceError {
  return new WorkspaceError('UNSAFE_REPOSITORY', message, key === undefined ? {} : { key });
}

const KEY = /^([a-z0-9-]+)(?:\.([^\n\0]*))?\.([a-z][a-z0-9-]*)$/i;

/**
 * Parse `key\nvalue\0` records (a key without value: `key\0`), as `git config --list -z` prints
 * them. Text is Latin-1 so that every byte of a value survives the round trip into the private copy.
 */
export function parseConfigList(out: string, scope: ConfigEntry['scope']): ConfigEntry[] {
  if (out === '') return [];
  if (!out.endsWith('\0')) throw unsafe('The repository config was read incompletely; the call was refused.');
  const entries: ConfigEntry[] = [];
  for (const rec of out.slice(0, -1).split('\0')) {
    const nl = rec.indexOf('\n');
    const key = nl === -1 ? rec : rec.slice(0, nl);
    const m = KEY.exec(key);
    if (m === null) throw unsafe(`The repository config has a key git printed oddly (${JSON.stringify(key.slice(0, 80))}); the call was refused.`);
    entries.push({
      scope,
      key,
      section: m[1]!.toLowerCase(),
      subsection: m[2],
      name: m[3]!.toLowerCase(),
      value: nl === -1 ? undefined : rec.slice(nl + 1),
    });
  }
  return entries;
}

function isDropped(e: ConfigEntry): boolean {
  for (const n of DROPPED) {
    if (n.section !== e.section || !n.name.test(e.name)) continue;
    if (n.sub === 'any' || (n.sub === true) === (e.subsection !== undefined)) return true;
  }
  return false;
}

const shown = (key: string): string => `\`${key.length > 120 ? key.slice(0, 119) + '…' : key}\``;

const FIX = ' Remove it from the repository config (`git config --unset`) to use the git tools.';

/**
 * Whether an entry goes into the private config (`true`), is left out (`false`: a program key, a
 * fixed override, or `extensions.worktreeConfig`, whose file is merged into the copy), or refuses
 * the call (`UNSAFE_REPOSITORY` naming the key).
 */
export function vetEntry(e: ConfigEntry): boolean {
  const v = e.value;
  const plain = e.subsection === undefined;
  if (e.section === 'core' && plain && e.name === 'worktree') {
    throw unsafe(`${shown(e.key)} points git at a work tree other than the workspace root; nothing was run.${FIX}`, e.key);
  }
  if (e.section === 'core' && plain && e.name === 'bare' && (v === undefined || /^(true|yes|on|1)$/i.test(v))) {
    throw unsafe(`${shown(e.key)} says the repository has no work tree; the git tools serve the root's work tree only.${FIX}`, e.key);
  }
  if (e.section === 'extensions' && plain && e.name === 'worktreeconfig') return false;
  if (e.section === 'extensions' && plain && !SAFE_EXTENSIONS.has(e.name)) {
    throw unsafe(`${shown(e.key)} is an extension the git tools do not support (it may fetch or read objects from elsewhere); nothing was run.`, e.key);
  }
  if (e.section === 'remote' && !plain && e.name === 'promisor') {
    throw unsafe(`${shown(e.key)} makes git fetch missing objects from a remote; nothing was run.${FIX}`, e.key);
  }
  if (e.section === 'filter' && !plain && /^(clean|smudge|process)$/.test(e.name)) {
    if (v === '') return true;
    throw unsafe(
      `${shown(e.key)} configures a filter driver, a program git would run on file contents and that cannot be left out without changing what is committed; nothing was run.${FIX}`,
      e.key,
    );
  }
  if (isDropped(e) || (plain && FIXED_KEYS.has(e.key.toLowerCase()))) return false;
  // Booleans pass (a bare key is `true`): `true`, `false` or a number run nothing harmful.
  if (PROGRAM_LIKE.test(e.name) && v !== undefined && v !== '' && !BOOLEAN.test(v)) {
    throw unsafe(`${shown(e.key)} looks like it names a program and is not one the git tools know how to switch off; nothing was run.${FIX}`, e.key);
  }
  return true;
}
