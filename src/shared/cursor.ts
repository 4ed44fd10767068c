/**
 * Opaque, signed cursors. The payload is HMAC-SHA256 signed with a key that is random per process,
 * or read from `MCP_BUDGET_CURSOR_KEY` so that replicas can share it. A cursor names the tool and
 * the path it belongs to; a tampered cursor, or one presented to another tool or path, is refused.
 *
 * Decoding is strict: both parts must be canonical base64url (no padding, only the alphabet, and
 * re-encoding the decoded bytes gives the same text), because Node's decoder skips characters it
 * does not know and ignores the spare bits of the last character, so several strings would
 * otherwise name one cursor. Any change to a cursor string is refused.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { BudgetError } from '../engine/index.js';

declare module '../engine/errors.js' {
  interface ErrorCodes {
    /** A cursor this server did not issue, or issued for another tool, path or query. */
    INVALID_CURSOR: true;
  }
}

/** Longest cursor accepted (base64url characters). */
export const MAX_CURSOR_CHARS = 4096;

export class CursorCodec {
  private readonly key: Buffer;

  constructor(key?: string | Buffer) {
    const fromEnv = process.env.MCP_BUDGET_CURSOR_KEY;
    this.key =
      key !== undefined ? Buffer.from(key) : fromEnv !== undefined && fromEnv !== '' ? Buffer.from(fromEnv) : randomBytes(32);
  }

  encode(kind: string, payload: Record<string, unknown>): string {
    const body = Buffer.from(JSON.stringify({ t: kind, ...payload })).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** Verify and decode; throws `INVALID_CURSOR` with a message saying what to do. */
  decode(kind: string, cursor: unknown): Record<string, unknown> {
    const bad = (why: string): BudgetError<'INVALID_CURSOR'> =>
      new BudgetError('INVALID_CURSOR', `Invalid params: \`cursor\` ${why}. Start again without a cursor.`);
    if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_CHARS) throw bad('is not a cursor this server issued');
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw bad('is not a cursor this server issued');
    const body = cursor.slice(0, dot);
    const sigText = cursor.slice(dot + 1);
    if (!isCanonicalBase64url(body) || !isCanonicalBase64url(sigText)) throw bad('is not a cursor this server issued');
    const sig = Buffer.from(sigText, 'base64url');
    const want = Buffer.from(this.sign(body), 'base64url');
    if (sig.length !== want.length || !timingSafeEqual(sig, want)) throw bad('was altered or comes from another server');
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      throw bad('is malformed');
    }
    if (payload.t !== kind) throw bad(`belongs to another tool (${String(payload.t)})`);
    return payload;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Only the alphabet, no padding, and the decoded bytes encode back to the same text. */
export function isCanonicalBase64url(text: string): boolean {
  return BASE64URL.test(text) && Buffer.from(text, 'base64url').toString('base64url') === text;
}
