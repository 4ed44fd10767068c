/**
 * Roles: what a value is, from where it sits. The budgeter's rules depend on a value's role (the
 * result object, `content`, a block, a resource, the result's own `_meta`, …), derived from its
 * parent's role and key alone, so every decision is local and online.
 */
import { BudgetError } from './errors.js';
import { NOTICE_KEY, REPORT_KEY } from './limits.js';

/** What the root object is: a result, a JSON-RPC error object, a response envelope, or decided by its first key. */
export type RootKind = 'auto' | 'result' | 'error' | 'envelope';

export type Role =
  | 'auto'
  | 'envelope'
  | 'result'
  | 'error'
  | 'errdata'
  | 'content'
  | 'block'
  | 'blockmeta'
  | 'resource'
  | 'meta'
  | 'structure'
  | 'generic';

/**
 * How a string is bounded: cut to the string bound, cut as text, kept whole or its block dropped
 * (base64 of a binary block), kept whole or its member dropped (`opaque`: identifiers and base64
 * that a cut would corrupt), or an envelope field.
 */
export type StrKind = 'generic' | 'text' | 'atomic' | 'opaque' | 'envelope';

export type Container = 'object' | 'array' | 'other';

/**
 * The role of a child value; `drop` for a value that is never kept (a non-object `_meta`, a
 * standard result field of the wrong JSON type), `invalid` for a `content` item that is no object.
 */
export function childRole(parent: Role, key: string, container: Container): Role | 'drop' | 'invalid' {
  switch (parent) {
    case 'envelope':
      if (key === 'result' || key === 'error') {
        if (container !== 'object') {
          throw new BudgetError('INVALID_RESULT', `Expected the JSON-RPC \`${key}\` to be an object`, { field: key });
        }
        return key;
      }
      if (container !== 'other') {
        throw new BudgetError('INVALID_ENVELOPE', `Expected the JSON-RPC \`${key}\` to be a string, number or null`, { field: key });
      }
      return 'envelope';
    case 'result':
      // The client's schema: `content` an array, `structuredContent` an object, `isError` a boolean
      // (scalars are checked where their text is known).
      if (key === 'content') return container === 'array' ? 'content' : 'drop';
      if (key === '_meta') return container === 'object' ? 'meta' : 'drop';
      if (key === 'structuredContent') return container === 'object' ? 'structure' : 'drop';
      if (key === 'isError' && container !== 'other') return 'drop';
      return 'generic';
    case 'error':
      if (key === 'data' && container === 'object') return 'errdata';
      return 'generic';
    case 'content':
      return container === 'object' ? 'block' : 'invalid';
    case 'block':
      if (key === 'resource' && container === 'object') return 'resource';
      if (key === '_meta' && container === 'object') return 'blockmeta';
      return 'generic';
    default:
      return 'generic';
  }
}

/** The container kind of an in-memory value, as {@link childRole} takes it (null is a scalar). */
export function containerOf(v: unknown): Container {
  return v === null || typeof v !== 'object' ? 'other' : Array.isArray(v) ? 'array' : 'object';
}

/**
 * The role of a scalar child (a string, number, boolean or null): as {@link childRole} gives it
 * for `other`, except that the result's `isError` must be a boolean (the client's schema).
 */
export function scalarRole(parent: Role, key: string, isBoolean: boolean): Role | 'drop' | 'invalid' {
  if (parent === 'result' && key === 'isError' && !isBoolean) return 'drop';
  return childRole(parent, key, 'other');
}

/** Whether an array in this role is bounded by `maxItems` (`content` is bounded by bytes only). */
export function countsItems(role: Role): boolean {
  return role !== 'content';
}

/**
 * Whether an object in this role is bounded by `maxKeys`: structured data and `_meta` objects are;
 * the result, the error, the envelope, blocks and resources have members named by the protocol.
 */
export function countsKeys(role: Role): boolean {
  return role === 'generic' || role === 'structure' || role === 'meta' || role === 'errdata' || role === 'blockmeta';
}

/** The member of a block's `_meta` that marks the notice an earlier pass appended (when `true`). */
export function isNoticeKey(parent: Role, key: string): boolean {
  return parent === 'blockmeta' && key === NOTICE_KEY;
}

/** How a string member of `parent` under `key` is bounded. */
export function strKind(parent: Role, key: string): StrKind {
  if (parent === 'envelope') return 'envelope';
  if (parent === 'block' || parent === 'resource') {
    if (key === 'text') return 'text';
    if ((parent === 'block' && key === 'data') || (parent === 'resource' && key === 'blob')) return 'atomic';
    // A cut type, URI or media type names something else: kept whole, or the member (and with it
    // the block, when the member is required) goes.
    if (key === 'uri' || key === 'mimeType' || (parent === 'block' && key === 'type')) return 'opaque';
  }
  return 'generic';
}

/** The member under which an earlier pass left its report. */
export function startsCapture(parent: Role, key: string): boolean {
  return (parent === 'meta' || parent === 'errdata') && key === REPORT_KEY;
}

/**
 * Keys the string bound does not apply to: the members of the result, the envelope and the error
 * are named by the protocol, and this library's own `_meta` keys must survive any bound.
 */
export function exemptKey(role: string, name: string): boolean {
  switch (role) {
    case 'result':
    case 'envelope':
      return true;
    case 'error':
      return name === 'code' || name === 'message' || name === 'data';
    case 'meta':
    case 'errdata':
      return name === REPORT_KEY;
    case 'blockmeta':
      return name === NOTICE_KEY;
    default:
      return false;
  }
}
