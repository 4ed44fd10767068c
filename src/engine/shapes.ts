/**
 * What a content block must hold to be accepted by an MCP client, and which strings are opaque.
 *
 * The engine never imports the SDK, so the shapes the SDK's `CallToolResultSchema` requires of a
 * block (MCP 2025-06-18 and later; `resource_link` is accepted by the SDK whatever the version) are
 * written down here. A block is kept only when, once bounded, it still has every required member
 * with the right JSON type and no optional member of the wrong type; otherwise it is dropped whole
 * and reported. Tests check these shapes against the SDK schema itself.
 */

/** JSON type of a member as it arrives in events. */
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

interface Shape {
  readonly required: Readonly<Record<string, JsonType>>;
  readonly optional: Readonly<Record<string, JsonType>>;
}

const COMMON: Readonly<Record<string, JsonType>> = { annotations: 'object', _meta: 'object' };

/** Required and optional members of each content block type. Unknown members are ignored (the SDK strips them). */
export const BLOCK_SHAPES: Readonly<Record<string, Shape>> = Object.freeze({
  text: { required: { text: 'string' }, optional: COMMON },
  image: { required: { data: 'string', mimeType: 'string' }, optional: COMMON },
  audio: { required: { data: 'string', mimeType: 'string' }, optional: COMMON },
  resource: { required: { resource: 'object' }, optional: COMMON },
  resource_link: {
    required: { uri: 'string', name: 'string' },
    optional: { ...COMMON, title: 'string', description: 'string', mimeType: 'string', size: 'number', icons: 'array' },
  },
});

/** Members of an embedded resource's contents: `uri` and one of `text` or `blob`. */
const RESOURCE_OPTIONAL: Readonly<Record<string, JsonType>> = { mimeType: 'string', _meta: 'object' };

/** JSON type of a scalar as written (`true`, `null`, a number). */
export function scalarType(raw: string): JsonType {
  return raw === 'true' || raw === 'false' ? 'boolean' : raw === 'null' ? 'null' : 'number';
}

/** JSON type of a value held in memory (as `JSON.stringify` would write it). */
export function valueType(v: unknown): JsonType | undefined {
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isFinite(v) ? 'number' : 'null';
    case 'boolean':
      return 'boolean';
    case 'object':
      return v === null ? 'null' : Array.isArray(v) ? 'array' : 'object';
    default:
      return undefined;
  }
}

/** Members seen in one block (or one resource's contents): name → JSON type, and the block's `type`. */
export class ShapeTracker {
  readonly members = new Map<string, JsonType>();
  /** Member names present in the input, kept or not. */
  readonly seen = new Set<string>();
  /** The block's `type` string, when it was kept whole. */
  type: string | undefined;
  /** The embedded resource's contents were valid (blocks of type `resource`). */
  resourceOk = false;
  /** Base64 members (`data`, `blob`) whose value is not valid base64. */
  readonly badBase64 = new Set<string>();

  note(name: string, type: JsonType): void {
    this.members.set(name, type);
  }

  /** Whether the members seen make a valid content block. */
  blockOk(): boolean {
    const shape = this.type === undefined ? undefined : BLOCK_SHAPES[this.type];
    if (shape === undefined || this.members.get('type') !== 'string') return false;
    if (!membersOk(this.members, shape)) return false;
    if ((this.type === 'image' || this.type === 'audio') && this.badBase64.has('data')) return false;
    return this.type !== 'resource' || this.resourceOk;
  }

  /**
   * Whether the input block had every member its type requires, so that only the budget made it
   * invalid (it is then reported under the bound that cut it, not as `invalid_block`).
   */
  completeInInput(): boolean {
    if (this.type === undefined) return this.seen.has('type');
    const shape = BLOCK_SHAPES[this.type];
    return shape !== undefined && Object.keys(shape.required).every((k) => this.seen.has(k));
  }

  /** Whether the members seen make valid resource contents (`uri` and `text` or `blob`). */
  resourceContentsOk(): boolean {
    const m = this.members;
    if (m.get('uri') !== 'string') return false;
    if (m.get('text') !== 'string' && (m.get('blob') !== 'string' || this.badBase64.has('blob'))) return false;
    for (const [k, t] of Object.entries(RESOURCE_OPTIONAL)) if (m.has(k) && m.get(k) !== t) return false;
    return true;
  }
}

function membersOk(members: ReadonlyMap<string, JsonType>, shape: Shape): boolean {
  for (const [k, t] of Object.entries(shape.required)) if (members.get(k) !== t) return false;
  for (const [k, t] of Object.entries(shape.optional)) if (members.has(k) && members.get(k) !== t) return false;
  return true;
}

function trackerOf(obj: Record<string, unknown>): ShapeTracker {
  const t = new ShapeTracker();
  for (const [k, v] of Object.entries(obj)) {
    const type = valueType(v);
    if (type !== undefined) t.note(k, type);
  }
  return t;
}

/**
 * The value version of {@link ShapeTracker.blockOk}, for the fast path. A base64 member longer
 * than `maxBytes` makes it false at once (such a block cannot fit anyway; its check would cost).
 */
export function isValidBlock(block: unknown, maxBytes = Infinity): boolean {
  if (valueType(block) !== 'object') return false;
  const b = block as Record<string, unknown>;
  const r = b.resource as Record<string, unknown> | undefined;
  if ((typeof b.data === 'string' && b.data.length > maxBytes) || (typeof r?.blob === 'string' && r.blob.length > maxBytes)) return false;
  const t = trackerOf(b);
  t.type = typeof b.type === 'string' ? b.type : undefined;
  if (typeof b.data === 'string' && !isBase64(b.data)) t.badBase64.add('data');
  if (t.type === 'resource' && r !== undefined && valueType(r) === 'object') {
    const rt = trackerOf(r);
    if (typeof r.blob === 'string' && !isBase64(r.blob)) rt.badBase64.add('blob');
    t.resourceOk = rt.resourceContentsOk();
  }
  return t.blockOk();
}

// ---------------------------------------------------------------- base64

/**
 * Incremental check of what `atob` accepts (the SDK validates `data` and `blob` with it): the
 * base64 alphabet and ASCII whitespace, at most two `=` at the very end, and a length (without
 * whitespace) that is a multiple of 4 when padded and not 1 more than one otherwise.
 */
export class Base64Check {
  private count = 0;
  private pad = 0;
  bad = false;

  feed(s: string): void {
    if (this.bad) return;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) continue;
      if (c === 0x3d) {
        if (++this.pad > 2) this.bad = true;
      } else if (this.pad > 0 || !isAlphabet(c)) {
        this.bad = true;
      }
      if (this.bad) return;
      this.count++;
    }
  }

  get valid(): boolean {
    if (this.bad) return false;
    return this.pad > 0 ? this.count % 4 === 0 : this.count % 4 !== 1;
  }
}

function isAlphabet(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
}

/** Whether `atob` would accept `s`. */
export function isBase64(s: string): boolean {
  // Perf: the common case (plain alphabet, no whitespace) in one native regex.
  if (/^[A-Za-z0-9+/]*={0,2}$/.test(s)) {
    const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
    return pad > 0 ? s.length % 4 === 0 : s.length % 4 !== 1;
  }
  const c = new Base64Check();
  c.feed(s);
  return c.valid;
}

// ---------------------------------------------------------------- opaque strings

/** A string whose kept prefix is shorter than this is never detected as base64. */
export const MIN_OPAQUE_PREFIX = 16;

/**
 * Is a string that is about to be cut opaque (base64 or a base64 data URI), judged from the part
 * that would be kept? Decided on that prefix only, because the byte path has not seen the rest when
 * it must decide. Base64 here: at least {@link MIN_OPAQUE_PREFIX} characters, all from the base64
 * alphabet (`A–Z a–z 0–9 + /`, then at most two `=`; or the URL-safe `- _`, not both), with an upper-case letter, a
 * lower-case letter and a digit (text and identifiers rarely mix all three without a space or
 * punctuation; a prefix of one class only, such as a run of `A`, is not detected); or a string that
 * starts with `data:` and is cut in its header or has a `;base64,` payload. `prefix` is the kept part as written (escaped); base64 needs no escape, so a
 * backslash in it means it is not base64.
 */
export function looksOpaque(prefix: string): boolean {
  if (prefix.startsWith('data:')) {
    // Cut in its header (no comma yet), a data URI is broken whatever it holds; past the header,
    // only a base64 payload is opaque.
    const comma = prefix.indexOf(',');
    return comma === -1 || prefix.slice(0, comma + 1).endsWith(';base64,');
  }
  if (prefix.length < MIN_OPAQUE_PREFIX) return false;
  if (!/^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/.test(prefix)) return false;
  return /[A-Z]/.test(prefix) && /[a-z]/.test(prefix) && /[0-9]/.test(prefix);
}
