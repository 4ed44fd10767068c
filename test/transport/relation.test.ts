/**
 * The relation of upstream messages to client requests (relation.ts), on generated traffic: a
 * message is related only to a request still in flight, progress by its token whatever else is in
 * flight, anything else only when one request is, and what is remembered stays within its bound.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_RELATED_REQUESTS as MAX_TRACKED } from '../../src/transport/http/defaults.js';
import { RequestRelation } from '../../src/transport/http/relation.js';
import { timeBox } from '../helpers/time-box.js';

const msg = (m: Record<string, unknown>): JSONRPCMessage => ({ jsonrpc: '2.0', ...m }) as JSONRPCMessage;

describe('RequestRelation', () => {
  it('relates by token, by cancellation, or by the one request in flight; never to one answered or cancelled', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('call' as const), id: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom('x', '1')), token: fc.option(fc.constantFrom('t1', 't2', 3), { nil: undefined }) }),
      fc.record({ kind: fc.constant('answer' as const), id: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom('x', '1')), error: fc.boolean() }),
      fc.record({ kind: fc.constant('cancel' as const), id: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom('x', '1')) }),
      fc.record({ kind: fc.constant('progress' as const), token: fc.constantFrom('t1', 't2', 3) }),
      fc.record({ kind: fc.constant('log' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const r = new RequestRelation();
        // the client-facing transport: an answer sent through it, by whatever path, ends its request
        const client = r.watch({ send: async () => undefined, start: async () => undefined, close: async () => undefined } as unknown as Transport);
        // the model: request key -> token
        const open = new Map<string, unknown>();
        // which open request a token names: the latest that carried it, until that one ends
        const owner = new Map<unknown, string>();
        const key = (id: unknown) => JSON.stringify(id);
        const end = (k: string) => {
          const t = open.get(k);
          if (open.has(k) && owner.get(t) === k) owner.delete(t);
          open.delete(k);
        };
        for (const o of ops) {
          if (o.kind === 'call') {
            r.fromClient(msg({ id: o.id, method: 'tools/call', params: { name: 't', ...(o.token === undefined ? {} : { _meta: { progressToken: o.token } }) } }));
            end(key(o.id));
            open.set(key(o.id), o.token);
            if (o.token !== undefined) owner.set(o.token, key(o.id));
          } else if (o.kind === 'answer') {
            const answer = msg(o.error ? { id: o.id, error: { code: -32000, message: 'the upstream could not take it' } } : { id: o.id, result: {} });
            expect(r.fromUpstream(answer)).toBeUndefined();
            void client.send(answer);
            end(key(o.id));
          } else if (o.kind === 'cancel') {
            r.fromClient(msg({ method: 'notifications/cancelled', params: { requestId: o.id } }));
            end(key(o.id));
          } else if (o.kind === 'progress') {
            const got = r.fromUpstream(msg({ method: 'notifications/progress', params: { progressToken: o.token, progress: 1 } }));
            const want = owner.get(o.token);
            expect(got === undefined ? undefined : key(got)).toBe(want);
          } else {
            const got = r.fromUpstream(msg({ method: 'notifications/message', params: { level: 'info', data: 'x' } }));
            if (open.size === 1) expect(key(got)).toBe([...open.keys()][0]);
            else expect(got).toBeUndefined();
          }
          expect(r.size).toBe(open.size);
        }
      }),
      timeBox(500, 2000),
    );
  });

  it("the server's cancellation of its own request goes where that request went", () => {
    const r = new RequestRelation();
    r.fromClient(msg({ id: 7, method: 'tools/call', params: {} }));
    expect(r.fromUpstream(msg({ id: 0, method: 'sampling/createMessage', params: {} }))).toBe(7);
    // a client request with the same id as the server's is not where the cancellation goes
    r.fromClient(msg({ id: 0, method: 'ping' }));
    expect(r.fromUpstream(msg({ method: 'notifications/cancelled', params: { requestId: 0 } }))).toBe(7);
  });

  it('remembers at most MAX_TRACKED requests; past it, their messages have no relation', () => {
    const r = new RequestRelation();
    for (let i = 0; i < MAX_TRACKED * 3; i++) r.fromClient(msg({ id: i, method: 'tools/call', params: { _meta: { progressToken: i } } }));
    expect(r.size).toBe(MAX_TRACKED);
    expect(r.fromUpstream(msg({ method: 'notifications/progress', params: { progressToken: MAX_TRACKED * 2, progress: 1 } }))).toBeUndefined();
    expect(r.fromUpstream(msg({ method: 'notifications/progress', params: { progressToken: 7, progress: 1 } }))).toBe(7);
  });
});

describe('the SDK transport the relation reads', () => {
  it("still has the two maps that say whether a request's stream is open (an SDK without them makes every stream count as open)", async () => {
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const inner = (t as unknown as { _webStandardTransport: { _requestToStreamMapping: unknown; _streamMapping: unknown } })._webStandardTransport;
    expect(inner._requestToStreamMapping).toBeInstanceOf(Map);
    expect(inner._streamMapping).toBeInstanceOf(Map);
  });
});
