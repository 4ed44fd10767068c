/**
 * Whether a Windows batch file is a shim that hands its arguments (`%*`) to one program once, as
 * the shims npm, pnpm and Node install do: read the way cmd.exe reads a line (percent expansion
 * first, then quotes, carets, `&`, `|` and blocks). The proxy's escaping covers exactly two cmd.exe
 * parses (the `/c` line and the shim's `%*` line); a batch file that parses its arguments again
 * (`set A=%*` then `%A%`, `call`, `%~1`, delayed expansion) is not one (see spawn-command.ts).
 */

/**
 * Why a batch file's text is not a shim that hands `%*` to one program once (see the module
 * comment), or `undefined` when it is. The check reads cmd.exe's two steps of a line: percent
 * expansion (where `%*` and numbered arguments stand), then quotes, carets, `&`, `|` and blocks.
 */
export function notAShim(text: string): string | undefined {
  const lines = text.split('\n').map((l) => l.replaceAll('\r', ''));
  const blocks: boolean[] = []; // open parenthesised blocks: whether each is a FOR's
  let forwards = 0;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    const at = `line ${n + 1}`;
    if (/enabledelayedexpansion/i.test(line)) return `${at} turns on delayed expansion`;
    if (/cmdcmdline/i.test(line)) return `${at} reads %CMDCMDLINE%`;
    if (/\bshift\b/i.test(line)) return `${at} shifts its arguments`;
    const percent = percentTokens(line);
    if (percent.numbered) return `${at} reads an argument by number`;
    if (percent.stars.length > 1) return `${at} holds %* more than once`;
    const star = percent.stars[0] ?? -1;
    let quoted = false;
    let command = 0; // where the command holding the current position starts
    let bare = ''; // the line's text outside quotes, up to here
    let checked = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (i === star) {
        checked = true;
        const whyNot = forwardingFault(line, star, { command, quoted, bare, blocks }, text);
        if (whyNot !== undefined) return `${at}: ${whyNot}`;
        forwards++;
      }
      if (quoted) {
        if (c === '"') quoted = false;
        continue;
      }
      if (c === '^') {
        if (i + 1 === line.length) return `${at} continues on the next line`;
        i++;
      } else if (c === '"') quoted = true;
      else if (c === '(') blocks.push(/\bfor\b/i.test(bare)), (command = i + 1);
      else if (c === ')') blocks.pop(), (command = i + 1);
      else if (c === '&' || c === '|') command = i + 1;
      bare += c;
    }
    // Percent expansion comes first: a `%*` after a caret (`^%*`) is expanded all the same.
    if (star !== -1 && !checked) return `${at}: %* follows a caret`;
  }
  return forwards === 0 ? 'it never passes on %*' : undefined;
}

/**
 * Why the `%*` at `star` is not handed to one program once, or `undefined`. `command` is where the
 * command holding it starts, `bare` the line before it outside quotes, `blocks` the open blocks.
 */
function forwardingFault(
  line: string,
  star: number,
  at: { command: number; quoted: boolean; bare: string; blocks: readonly boolean[] },
  text: string,
): string | undefined {
  const { command, quoted, bare, blocks } = at;
  if (quoted) return '%* stands inside quotes';
  if (blocks.includes(true)) return '%* is inside a FOR body';
  if (/\bfor\b/i.test(bare)) return '%* is part of a FOR command';
  if (/\bcall\b/i.test(line)) return 'the line that passes on %* uses CALL';
  const words = line.slice(command, star).replace(/^[\s@]+/, '');
  // cmd.exe ends a bare command name at white space, `=,;`, `/` (`cmd/c`) and `(`.
  const program = (/^"[^"]*"?/.exec(words)?.[0] ?? /^[^\s=,;/(]*/.exec(words)![0]).replaceAll('"', '').toLowerCase();
  if (program === '') return 'the arguments themselves are the command';
  if (['set', 'if', 'for', 'start', 'call', 'rem'].includes(program) || program.startsWith(':')) return `%* is part of a ${program.toUpperCase()} command`;
  for (const name of programsOf(program, text)) {
    if (name.startsWith('?')) return `%* is passed to a program named by %${name.slice(1)}%, which the batch file does not set`;
    if (REPARSERS.test(name)) return `%* is passed to ${name}, which parses it again`;
  }
  if (!/\s/.test(line[star - 1] ?? '') || line.slice(star + 2).trim() !== '') return '%* is not the last word of its line';
  return undefined;
}

/** Programs that parse their arguments again: cmd.exe (by any name), PowerShell, another batch file. */
const REPARSERS = /comspec|(^|[\\/])(cmd|powershell|pwsh)(\.exe)?$|\.(bat|cmd)$/;

/**
 * What a command word can run, as far as the batch file itself says: the word, and for each
 * `%VAR%` in it every value the file `SET`s that variable to (recursively, a few levels). A
 * variable the file never sets comes from the environment and could name anything: it comes back
 * as `?name`, which the caller refuses. `%~dp0` (the batch file's own folder) is kept as it is.
 */
function programsOf(word: string, text: string, depth = 0): string[] {
  const names = [...word.matchAll(/%([^%~*0-9][^%]*)%/g)].map((m) => m[1]!.toLowerCase());
  if (names.length === 0) return [word];
  if (depth > 3) return [word, `?${names[0]}`];
  const out: string[] = [word];
  for (const name of names) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const values = [...text.matchAll(new RegExp(`\\bset\\s+"?${escaped}=([^"\\r\\n]*)`, 'gi'))].map((m) => m[1]!.trim().toLowerCase());
    if (values.length === 0) return [word, `?${name}`];
    for (const v of values) out.push(...programsOf(word.replaceAll(`%${name}%`, v.replaceAll('"', '')), text, depth + 1));
  }
  return out;
}

/** cmd.exe's percent expansion of one batch line: where `%*` stands, and whether `%1`…`%9` or `%~…1` is read. */
function percentTokens(line: string): { stars: number[]; numbered: boolean } {
  const stars: number[] = [];
  let numbered = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] !== '%') continue;
    const next = line[i + 1];
    if (next === undefined) break;
    if (next === '%') i++; // `%%`: a literal `%` (a FOR variable's first half)
    else if (next === '*') stars.push(i++);
    else if (next >= '0' && next <= '9') {
      numbered ||= next !== '0';
      i++;
    } else if (next === '~') {
      // `%~dp0`, `%~$PATH:1`: modifiers, then the argument's number (0 is the batch file itself).
      const m = /^~[a-z]*(?:\$[^:%]*:)?([0-9]?)/i.exec(line.slice(i + 1))!;
      numbered ||= m[1] !== '0';
      i += m[0].length;
    } else {
      const end = line.indexOf('%', i + 1); // `%NAME%`, `%NAME:~0,5%`, `%NAME:a=b%`
      if (end === -1) break;
      i = end;
    }
  }
  return { stars, numbered };
}
