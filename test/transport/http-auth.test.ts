/**
 * Bearer tokens on the Streamable HTTP front: 401 with `WWW-Authenticate: Bearer` without a token
 * or with an unknown one, 200 with one; a token file others can read refuses to start; and the
 * member a token maps to is what tool handlers see in `extra.authInfo` (`clientId` and
 * `extra.member`), checked on a server built with `createWorkspaceServer` as `serve` builds it.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { McpHttpServer, type McpHttpApp } from '../../src/transport/http/http-server.js';
import { BearerTokens } from '../../src/transport/http/tokens.js';
import { withResultBudget } from '../../src/transport/decorator/with-result-budget.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { connect, INITIALIZE, killAll, POST_HEADERS, removeStateDir, startListening, stateDir } from './http-harness.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef00';
let dir: string;
let tokenFile: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-http-auth-'));
  tokenFile = join(dir, 'tokens');
  writeFileSync(tokenFile, `# team tokens\n${ALICE} alice\n\n${BOB} bob\n`);
  chmodSync(tokenFile, 0o600);
  mkdirSync(join(dir, 'root'));
});

afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
  removeStateDir();
});

describe('serve --listen --token-file', () => {
  it('401 with WWW-Authenticate without a token or with a wrong one, 200 with one', async () => {
    const s = await startListening(['serve', '--root', join(dir, 'root'), '--listen', '127.0.0.1:0', '--token-file', tokenFile]);
    const none = await fetch(s.url, { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    const wrong = await fetch(s.url, { method: 'POST', headers: { ...POST_HEADERS, Authorization: `Bearer ${ALICE}x` }, body: JSON.stringify(INITIALIZE) });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    await wrong.arrayBuffer();
    const ok = await fetch(s.url, { method: 'POST', headers: { ...POST_HEADERS, Authorization: `Bearer ${ALICE}` }, body: JSON.stringify(INITIALIZE) });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    const client = await connect(s.url, BOB);
    const listed = await client.callTool({ name: 'workspace_list_dir', arguments: {} });
    expect(listed.isError).not.toBe(true);
    await client.close();
    expect(await s.stop()).toBe(0);
  });

  it('refuses to start with a token file others can read', () => {
    const loose = join(dir, 'loose-tokens');
    writeFileSync(loose, `${ALICE} alice\n`);
    chmodSync(loose, 0o644);
    const r = runCli(['serve', '--root', dir, '--listen', '127.0.0.1:0', '--token-file', loose], { env: { XDG_STATE_HOME: stateDir() } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/readable or writable by others.*chmod 600/);
  });

  it('refuses a short token and a malformed line', () => {
    expect(() => BearerTokens.parse('short alice\n')).toThrow(/shorter than 16/);
    expect(() => BearerTokens.parse(`${ALICE} alice extra\n`)).toThrow(/TOKEN MEMBER/);
    expect(() => BearerTokens.parse(`${ALICE} a\n${ALICE} b\n`)).toThrow(/twice/);
  });
});

describe('the member a token maps to', () => {
  it('reaches tool handlers as extra.authInfo.clientId and extra.authInfo.extra.member, never the token', async () => {
    const seen: unknown[] = [];
    const app: McpHttpApp = {
      async connect(transport) {
        const ws = await createWorkspaceServer(join(dir, 'root'), {}, { dbPath: join(dir, 'team.db') });
        // What the team tools read: the handler's extra.authInfo.
        ws.server.registerTool('whoami', { description: 'test only' }, async (extra) => {
          seen.push(extra.authInfo);
          return { content: [{ type: 'text', text: String(extra.authInfo?.clientId) }] };
        });
        await ws.server.connect(withResultBudget(transport));
        return () => ws.close();
      },
    };
    const server = new McpHttpServer(app, {
      host: '127.0.0.1',
      port: 0,
      stateless: false,
      jsonResponse: false,
      maxRequestBytes: 4 * 1024 * 1024,
      maxInflightBodyBytes: 32 * 1024 * 1024,
      allowHosts: [],
      allowOrigins: [],
      tokens: BearerTokens.parse(`${ALICE} alice\n${BOB} bob\n`),
      sessionIdleMs: 60_000,
      maxSessions: 8,
      shutdownGraceMs: 100,
      stderr: new PassThrough(),
      name: 'test',
    });
    const url = await server.listen();
    for (const [token, member] of [[ALICE, 'alice'], [BOB, 'bob']] as const) {
      const client = await connect(url, token);
      const r = await client.callTool({ name: 'whoami', arguments: {} });
      expect((r.content as { text: string }[])[0]!.text).toBe(member);
      await client.close();
    }
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ clientId: 'alice', scopes: [], extra: { member: 'alice' }, token: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) });
    expect(seen[1]).toMatchObject({ clientId: 'bob', extra: { member: 'bob' } });
    expect(JSON.stringify(seen)).not.toContain(ALICE);
    await server.shutdown(100);
  });
});
