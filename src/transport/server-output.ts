/**
 * The proxy's server→client direction, message by message: each message is classified by all of
 * its top-level keys (`classifyKeys`); each response is matched to a pending client request the
 * way the client could match it, bounded when it answers a `tools/call`, and dropped with a
 * warning when it answers nothing pending (a duplicate, a late answer to a cancelled request, an
 * unsolicited one), since a lenient client could take it unbounded. An invalid message (both a
 * request and a response, both `result` and `error`) never passes: a pending request its id
 * names is answered with an error instead. Lines that fit and answer a pending request pass
 * byte for byte.
 */
import { errorLine, INVALID_REQUEST, RESPONSE_TOO_LARGE } from './jsonrpc-errors.js';
import { PASS_THROUGH_MAX_BYTES, type LongServerLine } from './long-response.js';
import { isRequestId } from './request-ids.js';
import { BOUNDED_METHODS, type ResponseBudget } from './response-budget.js';
import { warningJson, warningText } from './warnings.js';

/** Where {@link ServerOutput} sends what it decides. */
export interface ServerOutputSinks {
  budget: ResponseBudget;
  toClient(data: string | Buffer): void;
  toServer(line: string): void;
  warn(text: string): void;
  /** True while the server is being stopped: a line it leaves unfinished is expected. */
  quiet(): boolean;
}

export class ServerOutput {
  constructor(private readonly o: ServerOutputSinks) {}

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
    let changed = false;
    const out: unknown[] = [];
    for (const m of messages) {
      const o = this.route(m);
      if (o !== m) changed = true;
      if (o !== undefined) out.push(o);
    }
    // A message that fits and answers a pending request is passed on byte for byte.
    if (!changed) this.o.toClient(Buffer.concat([bytes, NEWLINE]));
    else if (out.length > 0) this.o.toClient(JSON.stringify(batch ? out : out[0]) + '\n');
  }

  /** What to send for one message from the server (undefined: drop it). */
  private route(message: unknown): unknown {
    const r = this.o.budget.route(message);
    if (r.action === 'send') return r.message;
    if (r.action === 'refuse') {
      this.refused(r.id, r.why);
      return r.message;
    }
    if (r.reason === 'unmatched') this.dropUnmatched(r.id);
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
    if (outcome.kind === 'message') {
      this.o.toClient(Buffer.concat([...outcome.bytes, NEWLINE]));
      return;
    }
    if (outcome.kind === 'message-too-large') {
      this.o.warn(`dropped a ${total}-byte request or notification from the MCP server (over ${PASS_THROUGH_MAX_BYTES} bytes)`);
      const { idState, id } = outcome.facts;
      if (idState === 'value' && isRequestId(id)) {
        // A request nobody will see must not leave the server waiting forever.
        this.o.toServer(errorLine(id, INVALID_REQUEST, `mcp-budget proxy: request of ${total} bytes is too large to pass to the client`));
      }
      return;
    }
    if (outcome.kind === 'invalid') {
      const { idState, id } = outcome.facts;
      const r = idState === 'value' ? this.o.budget.refuse(id, outcome.why) : undefined;
      if (r?.action === 'refuse') {
        // Its id names a pending request: answered with an error, never left waiting.
        this.refused(r.id, outcome.why, total);
        this.o.toClient(JSON.stringify(r.message) + '\n');
      } else if (!this.o.quiet()) {
        this.o.warn(`dropped a ${total}-byte line from the MCP server that is not valid JSON-RPC: ${warningText(outcome.why)}`);
      }
      return;
    }
    const { message, facts, receiptFrom } = outcome;
    if (facts.idState !== 'value') {
      const m = { ...message, id: facts.idState === 'null' ? null : undefined };
      if (facts.idState === 'null' || facts.idState === 'absent') {
        if ('error' in m && !('result' in m)) this.o.toClient(JSON.stringify(m) + '\n');
        else this.dropUnmatched(undefined, total);
      } else {
        this.dropUnmatched(undefined, total);
      }
      return;
    }
    const id = facts.id!;
    const key = this.o.budget.answers(id);
    const request = key === undefined ? undefined : this.o.budget.pending.take(key);
    if (request === undefined) {
      this.dropUnmatched(id, total);
      return;
    }
    if (!BOUNDED_METHODS.has(request.method)) {
      this.o.warn(`withheld a ${total}-byte response to request ${warningJson(id)}: too large and not a tool result`);
      this.o.toClient(
        errorLine(
          id,
          RESPONSE_TOO_LARGE,
          `The MCP server's response (${total} bytes) is over mcp-budget's ${this.o.budget.limits.maxResultBytes}-byte budget ` +
            `and is not a tools/call result, so it was withheld. Ask for less (use paging or filters).`,
        ),
      );
      return;
    }
    let result = message.result;
    if (result !== null && typeof result === 'object') {
      const r = result as Record<string, unknown>;
      const report = (r._meta as Record<string, unknown> | undefined)?.['io.github.mcp-result-budget/budget'];
      // Only the bounded result is at hand: a mutation's receipt comes from the captured original members.
      result = this.o.budget.typed(request, r, r, report as never, id, receiptFrom, total);
    }
    // The placeholder id goes: the response carries the id the server wrote, whatever its length.
    this.o.toClient(JSON.stringify('result' in message ? { ...message, result, id } : { ...message, id }) + '\n');
  }
}

const NEWLINE = Buffer.from('\n');

/** The start of a line as JSON, for a warning. */
function preview(bytes: Buffer): string {
  const s = bytes.subarray(0, 120).toString('utf8');
  return JSON.stringify(bytes.length > 120 ? s + '…' : s);
}
