import { describe, expect, it } from 'vitest';
import { ResponseBudget } from '../../src/transport/core/response-budget.js';

const small = { content: [{ type: 'text', text: 'hello' }] };
const big = { content: [{ type: 'text', text: 'y'.repeat(50_000) }] };

function budget(...calls: (string | number)[]): ResponseBudget {
  const b = new ResponseBudget({ maxResultBytes: 8 * 1024 });
  for (const id of calls) b.inbound({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't' } });
  return b;
}

describe('ResponseBudget.route', () => {
  it('response-budget: a fitting answer goes out as the very object it was, and the request is forgotten', () => {
    const b = budget(1);
    const m = { jsonrpc: '2.0', id: 1, result: small };
    expect(b.route(m)).toEqual({ action: 'send', message: m });
    expect(b.route(m)).toEqual({ action: 'drop', reason: 'unmatched', id: 1 }); // answered already
    expect(b.pending.size).toBe(0);
  });

  it('response-budget: non-standard top-level members are dropped, inherited ones are not members', () => {
    const b = budget(1, 2, 3);
    const extra = b.route({ jsonrpc: '2.0', id: 1, result: small, trace: 'x' });
    expect(extra).toEqual({ action: 'send', message: { jsonrpc: '2.0', id: 1, result: small } });
    const inherited = Object.assign(Object.create({ trace: 'x' }) as object, { jsonrpc: '2.0', id: 2, result: small });
    expect((b.route(inherited) as { message: unknown }).message).toBe(inherited);
    const empty = Object.assign(Object.create(null) as object, { jsonrpc: '2.0', id: 3, result: small });
    expect((b.route(empty) as { message: unknown }).message).toBe(empty);
  });

  it('response-budget: an answer is matched as a client matches it, exact id first, and bounded', () => {
    const b = budget(7, '7', 0);
    const exact = b.route({ jsonrpc: '2.0', id: '7', result: big }) as { action: string; message: { id: unknown } };
    expect(exact.message.id).toBe('7');
    expect(JSON.stringify(exact.message).length).toBeLessThanOrEqual(8 * 1024 + 100);
    const numeric = b.route({ jsonrpc: '2.0', id: ' 7', result: small }) as { action: string; message: { id: unknown } };
    expect(numeric).toMatchObject({ action: 'send', message: { id: ' 7' } });
    expect(b.route({ jsonrpc: '2.0', id: '', result: small })).toMatchObject({ action: 'send' });
    expect(b.pending.size).toBe(0);
    expect(b.route({ jsonrpc: '2.0', id: 7, result: small })).toEqual({ action: 'drop', reason: 'unmatched', id: 7 });
  });

  it('response-budget: an invalid answer to a pending request is refused with an error under the matched id', () => {
    const b = budget(4);
    const r = b.route({ jsonrpc: '2.0', id: '4', result: small, error: { code: 1, message: 'm' } });
    expect(r).toMatchObject({ action: 'refuse', id: 4, message: { id: 4, error: { code: -32603 } } });
    expect(b.pending.size).toBe(0);
  });

  it('response-budget: requests and notifications pass as they are; an error naming no request is sent', () => {
    const b = budget();
    const req = { jsonrpc: '2.0', id: 9, method: 'ping' };
    expect((b.route(req) as { message: unknown }).message).toBe(req);
    const err = { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse' } };
    expect((b.route(err) as { message: unknown }).message).toBe(err);
    expect(b.route({ jsonrpc: '2.0', id: null, result: small })).toEqual({ action: 'drop', reason: 'unmatched', id: null });
  });
});
