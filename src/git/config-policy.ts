/**
 * The repository config policy, as a pure function of what `git config --list -z --show-scope
 * --includes` printed. Every key is classified:
 *
 * - neutralized: a key that names a program and that git lets a command-line override replace
 *   (hooks path, fsmonitor, pagers, editors, external diff and textconv, signing programs, ssh,
 *   askpass, credential helpers, proxies, …). The override is returned; the call goes ahead.
 * - refused: a key with no such override (filter drivers with a program), a key that looks like it
 *   names a program but is not known here (fail closed: a future git may run it), or a key that
 *   points git outside the root (`core.worktree`, `core.bare`, a promisor remote, an unknown
 *   extension). The call is refused with `UNSAFE_REPOSITORY` naming the key.
 * - anything else is data and passes.
 *
 * Odd output (an unknown scope, a malformed key, a truncated record) refuses the call too.
 */
import { WorkspaceError } from '../fs/errors.js';
import { FIXED_OVERRIDES, MAX_OVERRIDES, type ConfigOverride } from './git-env.js';

/** A config entry as git printed it (section and name lowercased, subsection as written). */
export interface ConfigEntry {
  scope: string;
  key: string;
  section: string;
  subsection: string | undefined;
  name: string;
  /** `undefined` for a key written without `=` (a bare boolean). */
  value: string | undefined;
}

/** Overridable program keys: `section`, optional subsection (any), `name`, the neutral value. */
const NEUTRALIZED: readonly { section: string; sub: boolean | 'any'; name: RegExp; value: string }[] = [
  { section: 'core', sub: false, name: /^(fsmonitor|hookspath|pager|editor|askpass|sshcommand|gitproxy|alternaterefscommand|attributesfile|excludesfile)$/, value: '' },
  { section: 'sequence', sub: false, name: /^editor$/, value: 'false' },
  { section: 'pager', sub: false, name: /^.+$/, value: 'false' },
  { section: 'diff', sub: false, name: /^external$/, value: '' },
  { section: 'diff', sub: true, name: /^(textconv|command)$/, value: '' },
  { section: 'diff', sub: true, name: /^cachetextconv$/, value: 'false' },
  { section: 'merge', sub: true, name: /^driver$/, value: '' },
  { section: 'credential', sub: 'any', name: /^helper$/, value: '' },
  { section: 'gpg', sub: 'any', name: /^program$/, value: 'false' },
  { section: 'gpg', sub: true, name: /^defaultkeycommand$/, value: '' },
  { section: 'uploadpack', sub: false, name: /^packobjectshook$/, value: '' },
  { section: 'interactive', sub: false, name: /^difffilter$/, value: '' },
  { section: 'imap', sub: false, name: /^tunnel$/, value: '' },
  { section: 'http', sub: 'any', name: /^proxy$/, value: '' },
  { section: 'remote', sub: true, name: /^(proxy|uploadpack|receivepack|vcs)$/, value: '' },
  { section: 'protocol', sub: true, name: /^allow$/, value: 'never' },
  { section: 'submodule', sub: true, name: /^update$/, value: 'none' },
  { section: 'trailer', sub: true, name: /^(command|cmd)$/, value: '' },
  { section: 'difftool', sub: true, name: /^(cmd|path)$/, value: '' },
  { section: 'mergetool', sub: true, name: /^(cmd|path)$/, value: '' },
  { section: 'man', sub: true, name: /^(cmd|path)$/, value: '' },
  { section: 'browser', sub: true, name: /^(cmd|path)$/, value: '' },
  { section: 'web', sub: false, name: /^browser$/, value: '' },
  { section: 'sendemail', sub: 'any', name: /^(smtpserver|sendmailcmd|tocmd|cccmd|headercmd)$/, value: '' },
];

/**
 * Names that look like they name a program. Fail closed: such a key that is not neutralized above
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

/** Parse `scope\0key\nvalue\0` records (a key without value: `scope\0key\0`). */
export function parseConfigList(out: string): ConfigEntry[] {
  if (out === '') return [];
  if (!out.endsWith('\0')) throw unsafe('The repository config was read incompletely; the call was refused.');
  const fields = out.slice(0, -1).split('\0');
  if (fields.length % 2 !== 0) throw unsafe('The repository config listing is malformed; the call was refused.');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const scope = fields[i]!;
    const rec = fields[i + 1]!;
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

function neutralValue(e: ConfigEntry): string | undefined {
  for (const n of NEUTRALIZED) {
    if (n.section !== e.section || !n.name.test(e.name)) continue;
    if (n.sub === 'any' || (n.sub === true) === (e.subsection !== undefined)) return n.value;
  }
  return undefined;
}

const shown = (key: string): string => `\`${key.length > 120 ? key.slice(0, 119) + '…' : key}\``;

/**
 * The overrides for one call (fixed ones first), or `UNSAFE_REPOSITORY` naming the first key that
 * cannot be neutralized.
 */
export function configOverrides(entries: readonly ConfigEntry[]): ConfigOverride[] {
  const extra = new Map<string, string>();
  const fix = ' Remove it from the repository config (`git config --unset`) to use the git tools.';
  for (const e of entries) {
    if (e.scope !== 'local' && e.scope !== 'worktree') {
      throw unsafe(`The repository config has an entry of unexpected scope ${JSON.stringify(e.scope.slice(0, 40))}; the call was refused.`);
    }
    const v = e.value;
    if (e.section === 'core' && e.subsection === undefined && e.name === 'worktree') {
      throw unsafe(`${shown(e.key)} points git at a work tree other than the workspace root; nothing was run.${fix}`, e.key);
    }
    if (e.section === 'core' && e.subsection === undefined && e.name === 'bare' && (v === undefined || /^(true|yes|on|1)$/i.test(v))) {
      throw unsafe(`${shown(e.key)} says the repository has no work tree; the git tools serve the root's work tree only.${fix}`, e.key);
    }
    if (e.section === 'extensions' && e.subsection === undefined && !SAFE_EXTENSIONS.has(e.name)) {
      throw unsafe(`${shown(e.key)} is an extension the git tools do not support (it may fetch or read objects from elsewhere); nothing was run.`, e.key);
    }
    if (e.section === 'remote' && e.subsection !== undefined && e.name === 'promisor') {
      throw unsafe(`${shown(e.key)} makes git fetch missing objects from a remote; nothing was run.${fix}`, e.key);
    }
    if (e.section === 'filter' && e.subsection !== undefined && /^(clean|smudge|process)$/.test(e.name)) {
      if (v === '') continue;
      throw unsafe(
        `${shown(e.key)} configures a filter driver, a program git would run on file contents and that cannot be switched off safely; nothing was run.${fix}`,
        e.key,
      );
    }
    const neutral = neutralValue(e);
    if (neutral !== undefined) {
      // A fixed override already sets this key last; a second one must not replace its value.
      if (e.subsection !== undefined || !FIXED_KEYS.has(e.key.toLowerCase())) extra.set(e.key, neutral);
      continue;
    }
    // Booleans pass (a bare key is `true`): `true`, `false` or a number run nothing harmful.
    if (PROGRAM_LIKE.test(e.name) && v !== undefined && v !== '' && !BOOLEAN.test(v)) {
      throw unsafe(`${shown(e.key)} looks like it names a program and is not one the git tools know how to switch off; nothing was run.${fix}`, e.key);
    }
  }
  if (extra.size > MAX_OVERRIDES) {
    throw unsafe(`The repository config defines ${extra.size} program keys (at most ${MAX_OVERRIDES} are overridden); the call was refused.`);
  }
  return [...FIXED_OVERRIDES, ...extra];
}
