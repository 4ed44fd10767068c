/**
 * The proxy's server→client direction, message by message: each message is classified by all of
 * its top-level keys (`classifyKeys`); each response is matched to a pending client request the
 * way the client could match it, bounded when it answers a `tools/call`, and dropped with a
 * warning when it answers nothing pending (a duplicate, a late answer to a cancelled request, an
 * unsolicited one), since a lenient client could take it unbounded. An invalid message (both a
 * request and a response, both `result` and `error`, a classifying member repeated) never passes:
 * a pending request its id names is answered with an error instead. Lines that fit and answer a
 * pending request pass byte for byte, so a line passed raw must mean to the client what it meant
 * to `JSON.parse`: one whose top level repeats `jsonrpc`, `id`, `result`, `error` or `method` (where
 * a parser that takes the first would read another id or another result) is refused on both paths,
 * and a pending request named by its first or its last id is answered with an error.
 */
import type { EnvelopeFacts } from '../core/envelope-scan.js';
import { structureAfterCut } from '../core/receipt-capture.js';
import { repeatedMembers, repeatWhy } from '../core/repeated-members.js';
import { errorLine, INVALID_REQUEST } from '../core/jsonrpc-errors.js';
import type { LongServerLine } from './long-response.js';
import { isRequestId, type RequestId } from '../core/request-ids.js';
import { BOUNDED_METHODS, type ResponseBudget } from '../core/response-budget.js';
import { warningJson, warningText } from '../../shared/warnings.js';

/** Where {@link ServerOutput} sends what it decides. */
export interface ServerOutputSinks {
  budget: ResponseBudget;
  toClient(data: string | Buffer): void;
  /** Stop (true) or go on (false) reading the server: while an answer is being made, later messages wait, few. */
  hold?(on: boolean): void;
  toServer(line: string): void;
  warn(text: string): void;
  /** True while the server is being stopped: a line it leaves unfinished is expected. */
  quiet(): boolean;
}

export class ServerOutput {
  /**
   * Messages wait here, in order, while an answer ahead of them is still being made (a streamed
   * result's continuation is planned by reading the kept line): the client gets the server's
   * messages in the order the server wrote them.
   */
  private queue: Promise<string | Buffer | undefined>[] = [];

  constructor(private readonly o: ServerOutputSinks) {}

  private emit(data: string | Buffer | Promise<string | Buffer | undefined>): void {
    if (typeof data === 'string' || Buffer.isBuffer(data)) {
      if (this.queue.length === 0) return this.o.toClient(data);
      this.queue.push(Promise.resolve(data));
      return;
    }
    this.queue.push(data);
    if (this.queue.length === 1) void this.drain();
  }

  /** Send what waits, in order; the server is not read meanwhile (what was read already waits here). */
  private async drain(): Promise<void> {
    this.o.hold?.(true);
    try {
      await this.send();
    } finally {
      this.o.hold?.(false);
    }
  }

  private async send(): Promise<void> {
    while (this.queue.length > 0) {
      let data: string | Buffer | undefined;
      try {
        data = await this.queue[0]!;
      } catch (e) {
        this.o.warn(`dropped an answer that could not be made: ${warningText((e as Error)?.message ?? String(e))}`);
      }
      this.queue.shift();
      if (data !== undefined) this.o.toClient(data);
    }
  }

  /** One line from the server, short enough to parse whole. */
  line(bytes: Buffer): void {
    let msg: unknown;
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      if (!this.o.quiet()) this.o.warn(`dropped a line the MCP server printed on stdout that is not JSON: ${preview(bytes)}`);
      return;
    }
    const batch = Array.isArray(msg);
    const messages: unknown[] = batch ? (msg as unknown[]) : [msg];
    // Read from the raw line: the parsed message has lost its repeats.
    const repeats = repeatedMembers(bytes);
    let changed = false;
    const out: unknown[] = [];
    for (let k = 0; k < messages.length; k++) {
      const m = messages[k];
      const repeat = repeats?.get(k);
      if (repeat !== undefined) {
        changed = true;
        const why = repeatWhy(repeat.member);
        const answers = this.refuseNamed(repeat.ids, why);
        if (answers.length === 0) this.dropInvalid(repeat.ids.at(-1), why);
        out.push(...answers);
        continue;
      }
      // A line of one message is measured as read; a batch's messages are measured one by one.
      const o = this.route(m, batch ? undefined : bytes.length);
      if (o !== m) changed = true;
      if (o !== undefined) out.push(o);
    }
    // A message that fits and answers a pending request is passed on byte for byte.
    if (!changed) this.emit(Buffer.concat([bytes, NEWLINE]));
    else if (out.length > 0) this.emit(batch ? JSON.stringify(out) + '\n' : out.map((o) => JSON.stringify(o) + '\n').join(''));
  }

  /**
   * An invalid message whose ids may name pending requests: each one named is answered with an
   * error (the answers, to send) and forgotten, with a warning.
   */
  private refuseNamed(ids: readonly unknown[], why: string, bytes?: number): Record<string, unknown>[] {
    const answers: Record<string, unknown>[] = [];
    for (const id of ids) {
      const r = this.o.budget.refuse(id, why);
      if (r.action !== 'refuse') continue;
      this.refused(r.id, why, bytes);
      answers.push(r.message);
    }
    return answers;
  }

  /** What to send for one message from the server (undefined: drop it). */
  private route(message: unknown, bytes: number | undefined): unknown {
    const r = this.o.budget.route(message, bytes);
    if (r.action === 'send') return r.message;
    if (r.action === 'refuse') {
      this.refused(r.id, r.why);
      return r.message;
    }
    if (r.action === 'answer-server') {
      this.o.warn(`answered the MCP server's request ${warningJson(r.id)} with an error and did not pass it on: ${warningText(r.why)}`);
      this.o.toServer(JSON.stringify(r.message) + '\n');
      return undefined;
    }
    if (r.reason === 'unmatched') this.dropUnmatched(r.id);
    else if (r.reason === 'over-cap') this.o.warn(`dropped ${warningText(r.why ?? 'a notification over the cap')}`);
    else this.dropInvalid(r.id, r.why ?? 'invalid');
    return undefined;
  }

  private dropUnmatched(id: unknown, bytes?: number): void {
    const size = bytes === undefined ? '' : ` of ${bytes} bytes`;
    const what = id === undefined ? 'without an id' : `to request ${warningJson(id)}`;
    this.o.warn(`dropped a response${size} ${what}: no pending request has that id (a duplicate, a late answer to a cancelled request, or unsolicited)`);
  }

  private refused(id: unknown, why: string, bytes?: number): void {
    const size = bytes === undefined ? '' : `${bytes}-byte `;
    this.o.warn(`answered request ${warningJson(id)} with an error: the MCP server's ${size}answer is not a valid JSON-RPC response (${warningText(why)})`);
  }

  private dropInvalid(id: unknown, why: string, bytes?: number): void {
    const size = bytes === undefined ? '' : ` of ${bytes} bytes`;
    const what = id === undefined ? '' : ` with id ${warningJson(id)}`;
    this.o.warn(`dropped a message${size}${what} from the MCP server that is not valid JSON-RPC (${warningText(why)}); it answers no pending request`);
  }

  /** One line from the server that streamed through the budget. */
  longLine(l: LongServerLine, total: number): void {
    const outcome = l.end();
    if (outcome.kind === 'message-too-large') {
      const cap = this.o.budget.maxMessageBytes;
      this.o.warn(`dropped a ${total}-byte request or notification from the MCP server (over the ${cap}-byte cap on messages that are not tool results)`);
      const { idState, id } = outcome.facts;
      if (idState === 'value' && isRequestId(id)) {
        // A request nobody will see must not leave the server waiting forever.
        this.o.toServer(errorLine(id, INVALID_REQUEST, `mcp-budget: the request (${total} bytes, over the ${cap}-byte cap on messages that are not tool results) was not passed to the client. Send less, or raise --max-message-bytes.`));
      }
      return;
    }
    if (outcome.kind === 'invalid') {
      // A pending request its ids name is answered with an error, never left waiting.
      const answers = this.refuseNamed(idsOf(outcome.facts), outcome.why, total);
      if (answers.length > 0) {
        this.emit(answers.map((a) => JSON.stringify(a) + '\n').join(''));
      } else if (!this.o.quiet()) {
        this.o.warn(`dropped a ${total}-byte line from the MCP server that is not valid JSON-RPC: ${warningText(outcome.why)}`);
      }
      return;
    }
    const { message, facts, receiptFrom } = outcome;
    // The line as it was kept, for its result's continuation: let go on every path that offers none.
    let held = outcome.held;
    try {
      // Routed by the same rule as a parsed line: an id the scan could not read as a value is none.
      const id = facts.idState === 'value' ? facts.id : facts.idState === 'null' ? null : facts.idState === 'absent' ? undefined : INVALID_ID;
      const to = this.o.budget.claim(id, 'error' in message && !('result' in message));
      if (to.kind === 'orphan-error') {
        this.emit(JSON.stringify({ ...message, id }) + '\n');
        return;
      }
      if (to.kind === 'unmatched') {
        this.dropUnmatched(facts.idState === 'value' ? id : undefined, total);
        return;
      }
      const { request } = to;
      const answered = id as RequestId; // a request was claimed: the id the server wrote names it
      if (!BOUNDED_METHODS.has(request.method)) {
        // Longer than the fast path, so over the cap on messages that are not tool results.
        this.o.warn(`withheld a ${total}-byte response to request ${warningJson(id)}: too large and not a tool result`);
        this.emit(JSON.stringify(this.o.budget.withheld(to.key, request.method, total).message) + '\n');
        return;
      }
      let result = message.result;
      // The placeholder id goes: the response carries the id the server wrote, whatever its length.
      const line = (r: unknown): string => JSON.stringify('result' in message ? { ...message, result: r, id } : { ...message, id }) + '\n';
      if (result !== null && typeof result === 'object') {
        const r = result as Record<string, unknown>;
        const report = (r._meta as Record<string, unknown> | undefined)?.['io.github.mcp-result-budget/budget'];
        // Only the bounded result is at hand, with the original's scalar members captured as it
        // streamed: those the budget had no room for go back for the typed policy to make room,
        // and a mutation's receipt comes from them.
        const known = structureAfterCut(r, receiptFrom) ?? r;
        const later = held === undefined ? undefined : { limits: this.o.budget.streamBase(), original: known, later: true };
        result = this.o.budget.typed(request, known, r, report as never, answered, receiptFrom, total, later);
        if (held !== undefined && report !== undefined) {
          // The continuation is planned by reading the kept line: the answer waits for it (later
          // lines may be answered first, as JSON-RPC allows).
          const keep = held;
          held = undefined;
          const bounded = result as Record<string, unknown>;
          this.emit(
            this.o.budget.offerHeld(keep, bounded, request).then(line, (e: unknown) => {
              this.o.warn(`no continuation for the response to request ${warningJson(id)}: ${warningText((e as Error)?.message ?? String(e))}`);
              return line(bounded);
            }),
          );
          return;
        }
      }
      this.emit(line(result));
    } finally {
      held?.then(
        (h) => h.release(),
        () => undefined,
      );
    }
  }
}

const NEWLINE = Buffer.from('\n');
/** Stands for an id the envelope scan could not read (too long, or not a scalar): it names no request. */
const INVALID_ID: unknown = Object.freeze({});

/** The ids a streamed line names: its last top-level id, and its first when it repeats `id`. */
function idsOf(f: EnvelopeFacts): RequestId[] {
  const ids: RequestId[] = [];
  if (f.firstId !== undefined) ids.push(f.firstId);
  if (f.idState === 'value' && isRequestId(f.id) && !ids.some((known) => Object.is(known, f.id))) ids.push(f.id);
  return ids;
}

/** The start of a line as JSON, for a warning. */
function preview(bytes: Buffer): string {
  const s = bytes.subarray(0, 120).toString('utf8');
  return JSON.stringify(bytes.length > 120 ? s + '…' : s);
}
