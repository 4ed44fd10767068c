/**
 * Every message bounded by one stated policy, through the decorator (which the HTTP proxy with
 * `--upstream-url` and `serve` use): a server message that is not a tool result passes whole up to
 * `maxMessageBytes`; over it, a request (sampling, elicitation) is answered to the server with an
 * error and never reaches the client, a notification is dropped, a response withheld with an error.
 * The stdio proxy's side of the same policy is in proxy.test.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/index.js';
import { withResultBudget } from '../../src/transport/index.js';

const CAP = 64 * 1024;

interface Seen {
  logs: number;
  asked: number;
  errors: string[];
}

async function connect(bytes: number): Promise<{ client: Client; seen: Seen; asked: () => Promise<unknown> }> {
  const server = new McpServer({ name: 'caps', version: '1.0.0' }, { capabilities: { logging: {}, resources: {} } });
  let asked: Promise<unknown> = Promise.resolve();
  server.registerTool('talk', { description: 'logs and asks the client to sample' }, async () => {
    await server.server.sendLoggingMessage({ level: 'info', data: 'n'.repeat(bytes) });
    asked = server.server
      .createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'p'.repeat(bytes) } }], maxTokens: 10 })
      .then((r) => r, (e: unknown) => e);
    return { content: [{ type: 'text', text: 'said' }] };
  });
  server.registerTool('long', { description: 'a tool result: budgeted, never capped' }, async () => ({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] }));
  server.registerResource('sized', 'file:///sized', { description: 'a resource of the test size' }, async (uri) => ({ contents: [{ uri: uri.href, text: 's'.repeat(bytes) }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const seen: Seen = { logs: 0, asked: 0, errors: [] };
  const bounded = withResultBudget(serverSide, { maxMessageBytes: CAP });
  await server.connect(bounded);
  bounded.onerror = ((prev) => (e: Error) => {
    seen.errors.push(e.message);
    prev?.(e);
  })(bounded.onerror);
  const client = new Client({ name: 'caps-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => void seen.logs++);
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    seen.asked++;
    return { role: 'assistant', content: { type: 'text', text: 'summary' }, model: 'test-model' };
  });
  await client.connect(clientSide);
  return { client, seen, asked: () => asked };
}

describe('decorator: every message that is not a tool result is held to maxMessageBytes', () => {
  it('under the cap: the notification, the sampling request and the response pass whole', async () => {
    const { client, seen, asked } = await connect(CAP / 2);
    await client.callTool({ name: 'talk', arguments: {} });
    expect(await asked()).toMatchObject({ content: { text: 'summary' } });
    expect(seen).toMatchObject({ logs: 1, asked: 1 });
    expect((await client.readResource({ uri: 'file:///sized' })).contents[0]).toMatchObject({ text: 's'.repeat(CAP / 2) });
    await client.close();
  });

  it('over the cap: the request is answered to the server, the notification dropped, the response withheld, each reported', async () => {
    const { client, seen, asked } = await connect(CAP * 2);
    await client.callTool({ name: 'talk', arguments: {} });
    const answer = await asked();
    expect(answer).toBeInstanceOf(McpError);
    expect((answer as McpError).code).toBe(-32600);
    expect((answer as McpError).message).toMatch(/was not passed to the client/);
    expect(seen).toMatchObject({ logs: 0, asked: 0 });
    const withheld = await client.readResource({ uri: 'file:///sized' }).then(
      () => undefined,
      (e: unknown) => e as McpError,
    );
    expect(withheld?.code).toBe(-32001);
    expect(withheld?.message).toMatch(new RegExp(`over mcp-budget's ${CAP}-byte cap on messages that are not tool results`));
    expect(seen.errors.some((m) => /dropped a notifications\/message notification of \d+ bytes, over the 65536-byte cap/.test(m))).toBe(true);
    expect(seen.errors.some((m) => /answered the server's request \d+ with an error and did not send it/.test(m))).toBe(true);
    // A tool result is budgeted (cut and reported), not capped.
    const r = await client.callTool({ name: 'long', arguments: {} });
    expect(r._meta?.[REPORT_KEY]).toMatchObject({ truncated: true });
    await client.close();
  });

  it('refuses a cap outside its range', () => {
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    for (const bad of [0, 1023, 8 * 1024 * 1024 + 1, 1.5]) expect(() => withResultBudget(serverSide, { maxMessageBytes: bad })).toThrow(/maxMessageBytes/);
  });
});
