/**
 * What the model reads of a tool's answer: its structure written compactly as text, in the text
 * block beside `structuredContent` (which stays the exact, typed answer for programs). JSON
 * repeats every key of every item and escapes every quote and newline of a file; this writes a
 * key once per list and a file's lines as they are, so a listing or a file read costs the model
 * about what its content does (`npm run bench:tokens-read`).
 *
 * The form, line by line (two spaces of indentation per level):
 *   - `key: value` for a scalar; a string is written plain when it is one line with nothing that
 *     could read as something else (no control character, no surrounding space, not empty, not a
 *     JSON literal, not starting with a quote, bracket, brace, bar or dash), else as a JSON string;
 *   - `key: |` and then the string's lines, each indented one space deeper than the key (an
 *     empty line stays empty), for a string of several lines with no other control than tab;
 *   - `key[N]{a,b}:` and then one line per item, its values in that order separated by tabs, for
 *     a list of flat objects (a value absent from an item is an empty cell; an empty string is
 *     `""`);
 *   - `key[N]:` and then one line per item, for any other list (nested values as compact JSON);
 *   - `key:` and then the members of a nested object, indented.
 * No value can start a line of its own at a shallower indentation, so a file's content cannot
 * pass for the answer's own fields.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const PLAIN_MAX = 512;
/**
 * A character a plain string may not hold: a control character (C0 with tab, which separates
 * cells; DEL; C1 with NEL, which some readers break a line at), a line or paragraph separator, an
 * invisible format character (zero-width, bidirectional controls: they hide or reorder what is
 * shown), or a lone surrogate.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;
/** What JSON leaves raw and a reader may break a line at or not show: written as `\uXXXX`. */
const RAW_IN_JSON = /[\u0080-\u009f\u2028\u2029\p{Cf}]/gu;
const LITERAL = /^(?:null|true|false|-?\d[\d.eE+-]*)$/;
/** First characters a plain string may not have: they would read as JSON, a block or a list. */
const LEADS = '"|-{[';

/** JSON, with what JSON leaves raw and a reader may break a line at or not show escaped. */
function json(v: Json): string {
  return escapeRaw(JSON.stringify(v));
}

/** C1 controls, line and paragraph separators and format characters as `\uXXXX` (a pair of them outside the BMP). */
export function escapeRaw(text: string): string {
  return text.replace(RAW_IN_JSON, (c) => {
    let out = '';
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

/** A string as one token of a line: plain when nothing in it can be misread, else JSON. */
function scalar(v: Json): string {
  if (typeof v !== 'string') return json(v);
  const plain =
    v.length > 0 &&
    v.length <= PLAIN_MAX &&
    !UNSAFE.test(v) &&
    v.trim() === v &&
    !LITERAL.test(v) &&
    !LEADS.includes(v[0]!);
  return plain ? v : json(v);
}

/** A string of several lines that can be written as an indented block (no control character but tab and newline). */
function blockable(v: string): boolean {
  return v.includes('\n') && !UNSAFE.test(v.replace(/[\t\n]/g, ' '));
}

function isObject(v: Json): v is { [k: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The keys of a list of flat objects (every value a scalar), in first-seen order; undefined when it is not one. */
function tableKeys(items: readonly Json[]): string[] | undefined {
  if (items.length === 0) return undefined;
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (!isObject(item)) return undefined;
    for (const [k, v] of Object.entries(item)) {
      if (v === undefined) continue;
      if (v !== null && typeof v === 'object') return undefined;
      if (!seen.has(k)) {
        seen.add(k);
        keys.push(k);
      }
    }
  }
  return keys;
}

function name(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) ? key : json(key);
}

/**
 * One item of a list as its line shows it (without the indentation): as a table row, the cells of
 * `columns` separated by tabs (an absent member an empty cell); else the item alone (nested values
 * as compact JSON). Page sizing weighs items by it (src/tools/page-sizer.ts).
 */
export function itemLine(item: unknown, columns?: readonly string[]): string {
  if (columns !== undefined) {
    const row = item as { [k: string]: Json | undefined };
    // Only the item's own members: a column named `constructor` is not read through the prototype.
    return columns.map((c) => (!Object.hasOwn(row, c) || row[c] === undefined ? '' : scalar(row[c]))).join('\t');
  }
  const v = item as Json | undefined;
  return v === undefined ? 'null' : v !== null && typeof v === 'object' ? json(v) : scalar(v);
}

/** The keys of an item that can be a table row (a flat object), in order; undefined when it cannot. */
export function rowKeys(item: unknown): string[] | undefined {
  return tableKeys([item as Json]);
}

/** The line that opens a list of `n` items under `key` (`columns`: a table's). */
export function listHeader(key: string, n: number, columns?: readonly string[]): string {
  return columns === undefined ? `${name(key)}[${n}]:` : `${name(key)}[${n}]{${columns.map(name).join(',')}}:`;
}

function member(out: string[], indent: string, key: string, v: Json): void {
  const k = name(key);
  if (typeof v === 'string' && blockable(v)) {
    out.push(`${indent}${k}: |`);
    // One space deeper than the key: a line's cost on the wire is then what JSON's `\n` costs.
    for (const line of v.split('\n')) out.push(line.length === 0 ? '' : `${indent} ${line}`);
    return;
  }
  if (Array.isArray(v)) {
    const keys = tableKeys(v);
    out.push(`${indent}${listHeader(key, v.length, keys)}`);
    for (const item of v) out.push(`${indent}  ${itemLine(item, keys)}`);
    return;
  }
  if (isObject(v)) {
    out.push(`${indent}${k}:`);
    for (const [ck, cv] of Object.entries(v)) if (cv !== undefined) member(out, `${indent}  `, ck, cv);
    return;
  }
  out.push(`${indent}${k}: ${scalar(v)}`);
}

/** The text a model reads for a structured answer (an object). Deterministic. */
export function renderText(value: object): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    member(out, '', k, v as Json);
  }
  return out.join('\n');
}
