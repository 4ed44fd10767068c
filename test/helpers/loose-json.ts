/**
 * `value` as JSON a server might write: whitespace between tokens, characters of strings written
 * as `\\uXXXX` escapes (either case), `/` as `\\/`. It parses to the same value, in the same key
 * order.
 */
export function looseJson(value: unknown, rnd: () => number): string {
  const ws = (): string => (rnd() < 0.15 ? [' ', '\n', '\t', ' \r\n '][Math.floor(rnd() * 4)]! : '');
  const str = (s: string): string => {
    if (rnd() < 0.3) return JSON.stringify(s);
    let out = '"';
    for (const ch of JSON.stringify(s).slice(1, -1).match(/\\u[0-9a-f]{4}|\\.|[\s\S]/gu) ?? []) {
      const r = rnd();
      if (ch.length === 1 && ch.charCodeAt(0) < 0xd800 && r < 0.2) {
        const hex = ch.charCodeAt(0).toString(16).padStart(4, '0');
        out += `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
      } else if (ch === '/' && r < 0.5) out += '\\/';
      else out += ch;
    }
    return out + '"';
  };
  const write = (v: unknown): string => {
    if (v === null || typeof v === 'boolean') return String(v);
    // Numbers as JSON.stringify writes them: the byte path keeps a number's text as written (by
    // design, so that no digit is lost), the memory path re-serializes it, so `1.0` differs anyway.
    if (typeof v === 'number') return JSON.stringify(v);
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => `${ws()}${write(x)}${ws()}`).join(',')}${ws()}]`;
    const o = v as Record<string, unknown>;
    return `{${ws()}${Object.keys(o).filter((k) => o[k] !== undefined).map((k) => `${ws()}${str(k)}${ws()}:${ws()}${write(o[k])}${ws()}`).join(',')}${ws()}}`;
  };
  return write(value);
}
