/**
 * Bearer tokens of the HTTP front (`--token-file FILE`): one `TOKEN MEMBER` per line, blank lines
 * and `#` comments ignored. The file must not be readable or writable by others (checked at
 * startup). A presented token is compared with every known token in constant time (SHA-256
 * digests compared with `timingSafeEqual`, no early exit), and maps to the calling member.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { BudgetError } from '../../engine/index.js';
import { MIN_TOKEN_CHARS } from './defaults.js';

declare module '../../engine/errors.js' {
  interface ErrorCodes {
    /** A token file that cannot be used: the message names the file and the line. */
    TOKEN_FILE_INVALID: true;
  }
}

/** A token file that cannot be used (the one error, code `TOKEN_FILE_INVALID`). */
function tokenFileError(message: string): BudgetError<'TOKEN_FILE_INVALID'> {
  return new BudgetError('TOKEN_FILE_INVALID', message);
}

interface TokenEntry {
  digest: Buffer;
  member: string;
  /** Short, non-secret name of the token (a digest prefix), safe to log and to hand to tools. */
  fingerprint: string;
}

/** The known tokens and who they belong to. */
export class BearerTokens {
  private constructor(private readonly entries: readonly TokenEntry[]) {}

  /** Read and check a token file (permissions, format, duplicates). */
  static async fromFile(path: string): Promise<BearerTokens> {
    let info;
    try {
      info = await stat(path);
    } catch (e) {
      throw tokenFileError(`cannot read the token file ${JSON.stringify(path)}: ${(e as Error).message}`);
    }
    if (!info.isFile()) throw tokenFileError(`the token file ${JSON.stringify(path)} is not a regular file`);
    if (process.platform !== 'win32' && (info.mode & 0o006) !== 0) {
      throw tokenFileError(
        `the token file ${JSON.stringify(path)} is readable or writable by others (mode ${(info.mode & 0o777).toString(8)}); run \`chmod 600\` on it`,
      );
    }
    return BearerTokens.parse(await readFile(path, 'utf8'), path);
  }

  /** Parse the text of a token file; `name` is used in error messages. */
  static parse(text: string, name = 'token file'): BearerTokens {
    const entries: TokenEntry[] = [];
    const seen = new Set<string>();
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const fields = line.split(/\s+/);
      const where = `${name} line ${i + 1}`;
      if (fields.length !== 2) throw tokenFileError(`${where}: expected \`TOKEN MEMBER\`, got ${fields.length} fields`);
      const [token, member] = fields as [string, string];
      if (token.length < MIN_TOKEN_CHARS) throw tokenFileError(`${where}: the token is shorter than ${MIN_TOKEN_CHARS} characters`);
      const digest = sha256(token);
      const hex = digest.toString('hex');
      if (seen.has(hex)) throw tokenFileError(`${where}: the same token is listed twice`);
      seen.add(hex);
      entries.push({ digest, member, fingerprint: `sha256:${hex.slice(0, 16)}` });
    });
    if (entries.length === 0) throw tokenFileError(`${name} holds no token`);
    return new BearerTokens(entries);
  }

  get size(): number {
    return this.entries.length;
  }

  /**
   * The auth info of an `Authorization` header value, or `undefined` when it is missing, not a
   * bearer token, or unknown. Every known token is compared, whatever matched first.
   */
  authenticate(header: string | undefined): AuthInfo | undefined {
    if (header === undefined) return undefined;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (m === null) return undefined;
    const presented = sha256(m[1]!);
    let found: TokenEntry | undefined;
    for (const e of this.entries) {
      if (timingSafeEqual(presented, e.digest) && found === undefined) found = e;
    }
    return found === undefined ? undefined : memberAuthInfo(found.member, found.fingerprint);
  }
}

/**
 * What a tool handler sees as `extra.authInfo` for a caller authenticated as `member`:
 * `clientId` is the member name and `extra.member` too; `token` is a non-secret fingerprint of the
 * token (never the token itself), so handlers can log it.
 */
export function memberAuthInfo(member: string, fingerprint: string): AuthInfo {
  return { token: fingerprint, clientId: member, scopes: [], extra: { member } };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
