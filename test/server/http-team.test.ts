/**
 * Bearer tokens name the calling member of the team tools over HTTP: a message alice sends to bob
 * with her token reaches bob's continuation inbox, read with his token, with alice as its author;
 * a token naming no member of the store gets a clear NOT_FOUND, never the server's `--as` member.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { connect, killAll, removeStateDir, startListening, stateDir } from '../transport/http-harness.js';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef00';
const MALLORY = 'mallory-token-0123456789abcd';
let dir: string;
let db: string;
let tokenFile: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-http-team-'));
  mkdirSync(join(dir, 'root'));
  db = join(dir, 'team.db');
  tokenFile = join(dir, 'tokens');
  writeFileSync(tokenFile, `${ALICE} alice\n${BOB} bob\n${MALLORY} mallory\n`);
  chmodSync(tokenFile, 0o600);
  for (const [name, role] of [['owner', 'owner'], ['alice', 'member'], ['bob', 'member']]) {
    const r = runCli(['team', 'add', name!, '--role', role!, '--root', join(dir, 'root'), '--team-db', db], { env: { XDG_STATE_HOME: stateDir() } });
    expect(r.code, r.stderr).toBe(0);
  }
});

afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
  removeStateDir();
});

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };

describe('serve --listen --token-file with the team tools', () => {
  it('each token calls as its member; an unknown member is refused, not mapped to --as', async () => {
    const s = await startListening(['serve', '--root', join(dir, 'root'), '--team-db', db, '--as', 'owner', '--listen', '127.0.0.1:0', '--token-file', tokenFile]);
    const alice = await connect(s.url, ALICE);
    const bob = await connect(s.url, BOB);
    const mallory = await connect(s.url, MALLORY);
    try {
      const sent = (await alice.callTool({ name: 'message_send', arguments: { channel: 'general', body: 'hello bob', to: ['bob'] } })) as Result;
      expect(sent.isError, JSON.stringify(sent.content)).not.toBe(true);
      const inbox = (await bob.callTool({ name: 'inbox_read', arguments: {} })) as Result;
      expect(inbox.isError, JSON.stringify(inbox.content)).not.toBe(true);
      const text = JSON.stringify(inbox.structuredContent);
      expect(text).toContain('hello bob');
      expect(text).toContain('alice');
      const aliceInbox = (await alice.callTool({ name: 'inbox_read', arguments: {} })) as Result;
      expect(JSON.stringify(aliceInbox.structuredContent)).not.toContain('hello bob');
      const refused = (await mallory.callTool({ name: 'inbox_read', arguments: {} })) as Result;
      expect(refused.isError).toBe(true);
      expect(refused.content?.[0]?.text).toMatch(/NOT_FOUND.*mallory/);
    } finally {
      await Promise.all([alice.close(), bob.close(), mallory.close()]);
      await s.stop();
    }
  });

  it('with a token file and no --as, serve starts on a store that does not list the OS user, and each token calls as its member', async () => {
    // (it refused to start: the OS user, the default --as, is not a member, although no call would run as it)
    const s = await startListening(['serve', '--root', join(dir, 'root'), '--team-db', db, '--listen', '127.0.0.1:0', '--token-file', tokenFile]);
    const alice = await connect(s.url, ALICE);
    try {
      const sent = (await alice.callTool({ name: 'message_send', arguments: { channel: 'no-as', body: 'from alice' } })) as Result;
      expect(sent.isError, JSON.stringify(sent.content)).not.toBe(true);
      const read = (await alice.callTool({ name: 'message_history_read', arguments: { channel: 'no-as' } })) as Result;
      expect(JSON.stringify(read.structuredContent)).toContain('"alice"');
    } finally {
      await alice.close();
      await s.stop();
    }
  });

  it('exec runs as the request\'s member too (the same call pipeline), never as --as', async () => {
    const s = await startListening(['serve', '--root', join(dir, 'root'), '--team-db', db, '--as', 'owner', '--listen', '127.0.0.1:0', '--token-file', tokenFile]);
    const alice = await connect(s.url, ALICE);
    const bob = await connect(s.url, BOB);
    const mallory = await connect(s.url, MALLORY);
    try {
      const sent = (await alice.callTool({ name: 'exec', arguments: { action: 'message.send', input: { channel: 'exec-route', body: 'via exec', to: ['bob'] } } })) as Result;
      expect(sent.isError, JSON.stringify(sent.content)).not.toBe(true);
      const history = (await bob.callTool({ name: 'exec', arguments: { action: 'message.history_read', input: { channel: 'exec-route' } } })) as Result;
      expect(history.isError, JSON.stringify(history.content)).not.toBe(true);
      const text = JSON.stringify(history.structuredContent);
      expect(text).toContain('via exec');
      expect(text).toContain('"alice"');
      expect(text).not.toContain('"owner"');
      // bob reads his own inbox through exec; the unknown member is refused there as on the direct route
      const inbox = (await bob.callTool({ name: 'exec', arguments: { action: 'inbox.read', input: {} } })) as Result;
      expect(JSON.stringify(inbox.structuredContent)).toContain('via exec');
      const refused = (await mallory.callTool({ name: 'exec', arguments: { action: 'inbox.read', input: {} } })) as Result;
      expect(refused.isError).toBe(true);
      expect(refused.content?.[0]?.text).toMatch(/NOT_FOUND.*mallory/);
    } finally {
      await Promise.all([alice.close(), bob.close(), mallory.close()]);
      await s.stop();
    }
  });
});
