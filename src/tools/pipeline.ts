/**
 * The tool contract shared by `server/` (which declares the tools) and `exec/` (which runs them by
 * name): a declared tool's shape, the one call pipeline every route into a handler takes
 * ({@link runToolCall}), the admitted {@link Call} only it can make, and how a failure becomes a
 * tool result.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { WorkspaceError } from '../fs/confine.js';
import type { WorkspaceErrorCode } from '../fs/errors.js';
import { accessOf, isTeamAction, permissionDenied, type Access, type Action, type Caller, type Member, type TeamStore } from '../team/index.js';
import { ERROR_META_KEY } from '../shared/meta.js';
import { StderrWarnings } from '../shared/warnings.js';
import { WorkLimiter } from './work-limiter.js';
import { appliedAnswer, markingWrites, type Applied } from './applied.js';
import { BudgetError, isBudgetError, type ErrorCode } from '../engine/index.js';
import { escapeRaw, renderText } from './text-render.js';

/** Unexpected tool errors for the operator: a client can cause many, so they share stderr's bound. */
const toolErrors = new StderrWarnings(process.stderr, 'mcp-budget');

/** Resolves the caller of one call (the team session): refuses an unknown or deactivated member. */
export interface Authority {
  /** `member`: the member a transport authenticated, else the server's own; `team`: the call needs the store. */
  caller(member: string | undefined, team: boolean): Promise<Caller>;
}

/** Zod shape of a tool's input or output object. */
export type Shape = Record<string, z.ZodTypeAny>;

/** A registered tool as `exec` reuses it: the same input shape, output schema and handler. */
export interface DeclaredTool {
  name: string;
  inputShape: Shape;
  /** Arguments refused with their own advice (see `strictInput`). */
  refused?: Readonly<Record<string, string>>;
  /** Every declared tool has one: `exec` types each action's result by it. */
  outputSchema: Shape;
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  /** What the tool does, as the permission table names it. */
  action: Action;
  /** The tool's handler on validated arguments, for a call the pipeline admitted (it holds the work slot). */
  handler: (args: Record<string, unknown>, call: Call) => Promise<CallToolResult>;
}

/**
 * The code the model sees for a store's own trouble: one it already knows from the workspace tools
 * (it can act on "not found" or "try again", not on which store file is locked). Every other code
 * is shown as raised: the error is one tree, so there is nothing else to translate.
 */
const MODEL_CODE: Partial<Record<ErrorCode, WorkspaceErrorCode>> = {
  UNKNOWN_MEMBER: 'NOT_FOUND',
  STORE_CORRUPT: 'IO_ERROR',
  STORE_LOCKED: 'IO_ERROR',
  STORE_UNAVAILABLE: 'IO_ERROR',
  STORE_DRIVER_MISSING: 'IO_ERROR',
  STORE_NEWER_SCHEMA: 'IO_ERROR',
  STORE_FOREIGN: 'IO_ERROR',
  STORE_INSIDE_ROOT: 'IO_ERROR',
};

/** A failure as the model is told it (one mapping for every route): a described error with the code it sees. */
export function asToolFailure(e: unknown): unknown {
  if (isBudgetError(e)) {
    const shown = MODEL_CODE[e.code];
    return shown === undefined ? e : new BudgetError(shown, e.message, e.data);
  }
  const sqlite = (e as { code?: unknown } | null)?.code;
  if (typeof sqlite === 'string' && sqlite.startsWith('SQLITE_BUSY')) {
    return new WorkspaceError('IO_ERROR', 'The team store is busy (another process is writing); try again.');
  }
  return e;
}

/**
 * What the model is told of a team store failure: the store's own message names the database (a
 * file path, a host, a role) and the driver's words, which are the operator's (logged on stderr).
 */
const STORE_FAILURE_SAYS: Partial<Record<ErrorCode, string>> = {
  STORE_LOCKED: 'The team store is busy (another writer holds it, or a statement ran past its time limit); try again shortly.',
  STORE_UNAVAILABLE: 'The team store cannot be reached right now; the server log names the cause for the operator. Try again later.',
  STORE_DRIVER_MISSING: 'The team store cannot be opened on this server: a package it needs is not installed (the server log names it for the operator).',
  STORE_CORRUPT: 'The team store failed in a way this server does not recognise; the server log has the details for the operator.',
  STORE_NEWER_SCHEMA: 'The team store was written by a newer version of this server and cannot be opened; the operator must upgrade it.',
  STORE_FOREIGN: 'The team store is not usable (its database holds other tables); the operator must name another one.',
  STORE_INSIDE_ROOT: 'The team store is not usable (it lies inside the workspace); the operator must move it.',
};

/** A failure as the model is told it: its code and a message that names no host detail (the operator's log has the rest). */
export function describeFailure(failure: unknown): { e: unknown; code: string; message: string; unexpected: boolean } {
  const says = isBudgetError(failure) ? STORE_FAILURE_SAYS[failure.code] : undefined;
  if (says !== undefined) {
    toolErrors.warn(`team store failure: ${(failure as BudgetError).code}: ${(failure as BudgetError).message}`);
    const shown = asToolFailure(failure) as BudgetError;
    return { e: shown, code: shown.code, message: says, unexpected: false };
  }
  const e = asToolFailure(failure);
  const code = e instanceof BudgetError ? e.code : 'INTERNAL_ERROR';
  let message: string;
  if (e instanceof BudgetError) {
    message = e.message;
  } else if (e instanceof Error && e.name === 'AbortError') {
    message = 'The call was cancelled'; // the client asked for it: nothing to log (no answer is sent)
  } else {
    // Not a failure we describe: its message may name host paths or descriptors, so the model
    // gets the error code only and the operator gets the whole error on stderr.
    const errno = (e as NodeJS.ErrnoException | undefined)?.code;
    message = `An unexpected error occurred (${typeof errno === 'string' ? errno : 'error'}); the server log has the details.`;
    toolErrors.warn(`unexpected tool error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return { e, code, message, unexpected: true };
  }
  return { e, code, message, unexpected: false };
}

/** A tool failure the model can act on: `isError` with the code and what to do. */
export function toolError(failure: unknown): CallToolResult {
  const { e, code, message: said, unexpected } = describeFailure(failure);
  const message = unexpected ? `${said} Try again; if it persists, report it.` : said;
  // An unknown outcome carries what is known (a commit id, a task id): the caller checks it, never retries blind.
  const known = e instanceof BudgetError && code === 'OUTCOME_UNKNOWN' ? e.data : {};
  // One line whatever the message quotes (a hostile name may hold a line separator or NEL).
  return { content: [{ type: 'text', text: `${code}: ${escapeRaw(message)}` }], isError: true, _meta: { [ERROR_META_KEY]: { ...known, code } } };
}

/**
 * The structure, for programs, and beside it the text the model reads: the structure written
 * compactly (text-render.ts), which costs a listing or a file read about the tokens of its content
 * where JSON cost 1.8× and 1.14× (keys repeated per item, a file's quotes and newlines escaped).
 * `view` is what the text renders when it differs from the structure only in form (the same
 * content, joined): a read window's content is pieces in the structure and one text to read.
 */
export function structured(value: object, view: object = value): CallToolResult {
  const json = JSON.stringify(value);
  // `view`: what the text shows of the value when it is not the value itself (a read window's
  // pieces as the one text they are).
  const rendered = renderText(view);
  // Pages are sized by their JSON (page-budget.ts): a rendering larger on the wire than it (a file
  // of control characters or line separators, escaped as `\uXXXX`) could be cut by the budget, and
  // one over 1.5× it as read past the token bound's margin, so the JSON is sent instead.
  const text = withinJson(rendered, json) ? rendered : json;
  return { content: [{ type: 'text', text }], structuredContent: value as Record<string, unknown> };
}

/** Whether the rendering takes no more than the JSON written in a JSON string, and at most 1.5× it as read (UTF-8). */
function withinJson(rendered: string, json: string): boolean {
  return Buffer.byteLength(JSON.stringify(rendered)) <= Buffer.byteLength(JSON.stringify(json)) && Buffer.byteLength(rendered) <= 1.5 * Buffer.byteLength(json);
}

/**
 * The work slots of the whole process: every server shares them (`serve --listen` builds one per
 * session, and one per request when stateless), so the bound holds however many servers there are.
 */
const PROCESS_WORK = new WorkLimiter();

/** What the pipeline needs of its host (the server's tool context): who calls, and the work slots. */
export interface CallHost {
  authority: Authority;
  /** Bounds the tool handlers running at once. @default the process-wide slots */
  work?: WorkLimiter;
  /**
   * Runs as a call's write is marked applied, before anything else the call does (fault tests
   * throw here to stand for any step after the write failing). @default none
   */
  afterWrite?: (what: string) => void;
}

/** What the SDK hands a tool handler that the pipeline reads. */
export interface CallExtra {
  signal?: AbortSignal;
  authInfo?: { clientId?: unknown };
}

/** Only {@link runToolCall} holds it, so only the pipeline can make a {@link Call}. */
const PIPELINE: unique symbol = Symbol('runToolCall');

/**
 * One call as the pipeline admitted it, handed to the handler explicitly: who calls (resolved
 * against the store, never assumed), the action and the access the permission table gives the
 * caller for it. Only {@link runToolCall} can make one, so a route into a handler that skips the
 * pipeline has no call to hand it and does not compile.
 */
export class Call {
  #applied: Applied | undefined;
  #store: TeamStore | undefined;
  /**
   * How this call's answer is sent, when not as the tool's own: `exec` runs an action inside its
   * envelope (`{action, ok, result}`, at most `maxEnvelopeBytes` of JSON), and pages are sized to
   * fit that answer (src/tools/page-sizer.ts).
   */
  answerAs: { execAction: string; maxEnvelopeBytes: number } | undefined;

  constructor(
    token: typeof PIPELINE,
    /** The action admitted; undefined for an `exec` action that does not exist (nothing runs). */
    readonly action: Action | undefined,
    readonly access: Access,
    readonly caller: Caller,
    readonly signal: AbortSignal | undefined,
    private readonly afterWrite?: (what: string) => void,
  ) {
    if (token !== PIPELINE) throw new Error('a Call is made by runToolCall only');
  }

  /**
   * The store and the calling member, for a team action (the pipeline opened the store for it).
   * Its writing methods mark this call applied as they resolve (src/team/writes.ts).
   */
  team(): { store: TeamStore; me: Member } {
    const { store, me } = this.caller;
    if (store === undefined || me === undefined) throw new Error(`${this.action ?? 'this action'} ran without the team store`);
    this.#store ??= markingWrites(store, (what, known) => this.markApplied(what, known));
    return { store: this.#store, me };
  }

  /**
   * Record that this call's write committed, with what identifies it: from here on the call's
   * answer says it was applied, whatever fails after (src/tools/applied.ts).
   */
  markApplied(what: string, known: Record<string, unknown>): void {
    this.#applied = { what, known: { ...this.#applied?.known, ...known } };
    this.afterWrite?.(what);
  }

  /** The write this call committed, if any. */
  get applied(): Applied | undefined {
    return this.#applied;
  }

  /**
   * Settle `own` access on the item about to change, read inside the write that changes it (never
   * on an earlier read): refused unless the caller may act on any item or `mine` says it is its own.
   */
  requireOwn(mine: boolean): void {
    if (this.access === 'allowed') return;
    if (this.access === 'own' && mine) return;
    throw permissionDenied(this.action!, this.team().me, this.access);
  }
}

/** The member a transport authenticated (`extra.authInfo.clientId`: an HTTP bearer token's member). */
function tokenMember(authInfo: CallExtra['authInfo']): string | undefined {
  const id = authInfo?.clientId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * The one way into a tool handler, for every route (a tool's own `tools/call` over stdio and HTTP,
 * `exec`, the `mcp-budget exec` CLI): a work slot for the whole call; the caller resolved from the
 * request's `authInfo` (else the server's own member) against the store, an unknown or deactivated
 * one refused; the permission table's access for the caller's role and `action` (`denied` refused
 * here, `own` handed on in the call); the handler with that {@link Call}; errors mapped to a tool
 * result. `action` is undefined only for an `exec` action that does not exist.
 */
export async function runToolCall(
  ctx: CallHost,
  extra: CallExtra,
  action: Action | undefined,
  handler: (call: Call) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const work = ctx.work ?? PROCESS_WORK;
  let call: Call | undefined;
  try {
    return await work.run(extra.signal, async () => {
      const caller = await ctx.authority.caller(tokenMember(extra.authInfo), action !== undefined && isTeamAction(action));
      const access = action === undefined ? 'denied' : accessOf(action, caller.me);
      if (action !== undefined && access === 'denied') {
        if (caller.me === undefined) throw new Error(`${action} needs a member record`);
        throw permissionDenied(action, caller.me, access);
      }
      call = new Call(PIPELINE, action, access, caller, extra.signal, ctx.afterWrite);
      return await handler(call);
    });
  } catch (e) {
    const applied = call?.applied;
    return applied === undefined ? toolError(e) : appliedAnswer(applied, describeFailure(e));
  }
}

