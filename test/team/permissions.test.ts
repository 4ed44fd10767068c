/**
 * The permission table (src/team/permissions.ts) on every route: each team tool, called directly
 * and through `exec`, as each role, over real HTTP with bearer tokens, on SQLite and PostgreSQL,
 * answers exactly as the table says (`own`: a member or agent may change a task it created or is
 * assigned, not another's); a denial names the role and what would allow it. The generated
 * `specs/permissions.json` equals the table.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPermissions } from '../../scripts/permissions.js';
import { runExec } from '../../src/commands/exec.js';
import { PERMISSIONS, TEAM_ACTIONS, openPgTeamStore, openSqliteTeamStore, type Action, type TeamStore } from '../../src/team/index.js';
import { ROLES, type Role } from '../../src/team/types.js';
import { ensureBuilt, repoRoot } from '../helpers/cli.js';
import { connect, killAll, removeStateDir, startListening, type Listening } from '../transport/http-harness.js';
import { createTestDatabase, probePostgres, type TestDatabase } from './pg-harness.js';

const pgReady = await probePostgres();
const NAMES: Record<Role, string> = { owner: 'olivia', lead: 'leo', member: 'mia', agent: 'ada', guest: 'gus' };
const token = (role: Role): string => `token-of-${role}-0123456789abcdef`;
let dir: string;
const dbs: TestDatabase[] = [];

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-permissions-'));
  mkdirSync(join(dir, 'root'));
  writeFileSync(join(dir, 'tokens'), [...ROLES.map((r) => `${token(r)} ${NAMES[r]}\n`), `token-of-${DEACTIVATED}-0123456789abcdef ${DEACTIVATED}\n`, `token-of-${UNKNOWN}-0123456789abcdef ${UNKNOWN}\n`].join(''));
  const git = (...args: string[]): void => void execFileSync('git', ['-C', join(dir, 'root'), '-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { stdio: 'ignore' });
  writeFileSync(join(dir, 'root', 'a.txt'), 'a\n');
  git('init', '-q');
  git('add', 'a.txt');
  git('commit', '-qm', 'first');
  chmodSync(join(dir, 'tokens'), 0o600);
});

afterAll(async () => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
  await Promise.all(dbs.map((d) => d.drop()));
  removeStateDir();
});

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };

/** Members of every role, a message to all of them, a task by the owner and one by the member. */
async function seed(store: TeamStore): Promise<{ messageId: number; ownersTask: number; membersTask: number }> {
  const members = Object.fromEntries(await Promise.all(ROLES.map(async (r) => [r, await store.addMember(NAMES[r], r)] as const)));
  await store.addMember(DEACTIVATED, 'member');
  const m = await store.sendMessage(members.owner!, { channel: 'general', body: 'hello team', to: ROLES.map((r) => NAMES[r]) });
  const a = await store.createTask(members.owner!, { title: 'owner task' });
  const b = await store.createTask(members.member!, { title: 'member task' });
  return { messageId: m.id, ownersTask: a.id, membersTask: b.id };
}

const DEACTIVATED = 'dora';
const CURSOR_KEY = 'one-key-for-the-server-and-the-cli';
const UNKNOWN = 'nobody';

/** A valid input per tool, as `role` would send it. */
type Inputs = (tool: string, role: Role, route?: 'direct' | 'exec' | 'cli') => Promise<Record<string, unknown>>;

/** How a call came out: admitted (ran, or failed for a reason other than who called), denied, or the caller refused. */
function outcome(r: Result): string {
  const text = r.content?.[0]?.text ?? '';
  if (text.startsWith('PERMISSION_DENIED')) return 'denied';
  if (text.startsWith('NOT_FOUND') && /token is (not a member of the team store|deactivated; reactivate it)/.test(text)) return 'refused caller';
  return 'admitted';
}

/** The CLI route (`mcp-budget exec ACTION --as NAME`), run in process: its JSON line as a result. */
async function cliExec(root: string, target: string, as: string, action: string, input: Record<string, unknown>): Promise<Result> {
  let out = '';
  const stdout = new Writable({ write: (c, _e, cb) => ((out += String(c)), cb()) });
  // the server's signing key, as a user paging with the CLI against a server's cursors sets it
  process.env.MCP_BUDGET_CURSOR_KEY = CURSOR_KEY;
  try {
    await runExec({ values: { root, 'team-db': target, as, input: JSON.stringify(input) }, positionals: [action] }, {}, stdout);
  } catch (e) {
    return { isError: true, content: [{ text: (e as Error).message }] };
  } finally {
    delete process.env.MCP_BUDGET_CURSOR_KEY;
  }
  return JSON.parse(out) as Result;
}

async function matrix(target: string, open: () => Promise<TeamStore>): Promise<void> {
  const store = await open();
  const ids = await seed(store);
  await store.close();
  const root = join(dir, 'root');
  const s: Listening = await startListening(['serve', '--root', root, '--team-db', target, '--as', NAMES.owner, '--listen', '127.0.0.1:0', '--token-file', join(dir, 'tokens')], { MCP_BUDGET_CURSOR_KEY: CURSOR_KEY });
  const clients = {} as Record<Role | typeof DEACTIVATED | typeof UNKNOWN, Client>;
  for (const r of ROLES) clients[r] = await connect(s.url, token(r));
  clients[DEACTIVATED] = await connect(s.url, `token-of-${DEACTIVATED}-0123456789abcdef`);
  clients[UNKNOWN] = await connect(s.url, `token-of-${UNKNOWN}-0123456789abcdef`);
  const spec = JSON.parse(readFileSync(join(repoRoot, 'specs', 'permissions.json'), 'utf8')) as { actions: { action: Action; tools: string[] }[] };
  const execRows = JSON.parse(readFileSync(join(repoRoot, 'specs', 'exec-action-inventory.json'), 'utf8')) as { actions: { name: string; input_schema: { same_as_tool: string } }[] };
  const actionName = new Map(execRows.actions.map((a) => [a.input_schema.same_as_tool, a.name]));
  try {
    const acks: Partial<Record<Role, string>> = {};
    const argsOf: Inputs = async (tool, role, route = 'direct') => {
      switch (tool) {
        case 'workspace_list_dir': case 'workspace_scan': case 'git_log': case 'git_status': case 'git_branches': case 'git_tags': case 'git_stashes': case 'git_merge_status': return {};
        case 'workspace_search_files': return { query: '*.txt' };
        case 'workspace_read_file': return { path: 'a.txt' };
        case 'workspace_seed_files': return { files: [{ path: `by-${role}.txt`, content: role }], overwrite: true };
        case 'git_commit': return { message: `commit by ${role}` };
        case 'git_create_branch': return { name: `b-${role}-${Math.random().toString(36).slice(2, 8)}` };
        case 'git_create_tag': return { name: `t-${role}-${Math.random().toString(36).slice(2, 8)}` };
        case 'message_history_read': return { channel: 'general' };
        case 'message_search': return { q: 'hello' };
        case 'message_get': return { id: ids.messageId };
        case 'message_send': return { channel: 'general', body: `from ${role}` };
        case 'inbox_read': return { peek: true };
        case 'inbox_ack': {
          // one cursor per member (the server and the CLI sign with one key), acked on every
          // route (acking it again changes nothing)
          if (acks[role] === undefined) {
            const inbox = (await clients[role].callTool({ name: 'inbox_read', arguments: {} })) as Result;
            acks[role] = String(inbox.structuredContent?.ack_cursor);
          }
          return { ack_cursor: acks[role] };
        }
        case 'task_list': return {};
        case 'task_search': return { q: 'task' };
        case 'task_get': return { id: ids.ownersTask };
        case 'task_options': return { field: 'status' };
        case 'task_create': return { title: `by ${role}` };
        case 'task_update': return { id: ids.ownersTask, priority: 'high' };
        case 'task_comment': return { id: ids.ownersTask, body: `comment by ${role}` };
        default: throw new Error(`no arguments for ${tool}: add them here`);
      }
    };
    const seen: string[] = [];
    const want: string[] = [];
    for (const { action, tools } of spec.actions) {
      for (const tool of tools) {
        for (const role of ROLES) {
          // `own` on another's task is denied; the own case is checked below.
          const expected = PERMISSIONS[action][role] === 'allowed' ? 'admitted' : 'denied';
          for (const route of ['direct', 'exec', 'cli'] as const) {
            const args = await argsOf(tool, role, route);
            const r =
              route === 'direct'
                ? ((await clients[role].callTool({ name: tool, arguments: args })) as Result)
                : route === 'exec'
                  ? ((await clients[role].callTool({ name: 'exec', arguments: { action: actionName.get(tool), input: args } })) as Result)
                  : await cliExec(root, target, NAMES[role], actionName.get(tool)!, args);
            seen.push(`${tool} ${role} ${route}: ${outcome(r)}`);
            want.push(`${tool} ${role} ${route}: ${expected}`);
            if (outcome(r) === 'denied') expect(r.content?.[0]?.text, tool).toMatch(new RegExp(`a ${role} may.*member ${NAMES[role]}`));
            // the team tools' inputs are all valid: admitted means it ran
            if (expected === 'admitted' && TEAM_ACTIONS.includes(action as never)) expect(r.isError, `${tool} ${role} ${route}: ${JSON.stringify(r.content)}`).not.toBe(true);
          }
        }
      }
    }
    expect(seen).toEqual(want);
    // `own`: the member changes its own task, and the agent a task it is assigned
    const own = (await clients.member.callTool({ name: 'task_update', arguments: { id: ids.membersTask, status: 'in_progress' } })) as Result;
    expect(own.isError, JSON.stringify(own.content)).not.toBe(true);
    const assign = (await clients.owner.callTool({ name: 'task_update', arguments: { id: ids.ownersTask, assignee: NAMES.agent } })) as Result;
    expect(assign.isError, JSON.stringify(assign.content)).not.toBe(true);
    const assigned = (await clients.agent.callTool({ name: 'exec', arguments: { action: 'task.update', input: { id: ids.ownersTask, status: 'done' } } })) as Result;
    expect(assigned.isError, JSON.stringify(assigned.content)).not.toBe(true);

    // A filter cannot tell who is on the team: a member the caller may not see answers as an unknown name.
    const unseen = async (role: Role, name: string): Promise<string> => {
      const r = (await clients[role].callTool({ name: 'task_list', arguments: { assignee: name } })) as Result;
      return r.isError === true ? String(r.content?.[0]?.text).replace(JSON.stringify(name), 'NAME') : 'listed';
    };
    const nobody = await unseen('guest', 'zzz-nobody');
    expect(nobody).toMatch(/^NOT_FOUND/);
    for (const other of [NAMES.owner, NAMES.lead, NAMES.member, NAMES.agent, DEACTIVATED]) expect(await unseen('guest', other), other).toBe(nobody);
    expect(await unseen('guest', NAMES.guest)).toBe('listed');
    expect(await unseen('agent', NAMES.owner)).toBe(nobody);
    expect(await unseen('owner', NAMES.guest)).toBe('listed');

    // A deactivated member's token and a token naming no member: refused on every tool, every route.
    const again = await open();
    await again.deactivate(DEACTIVATED);
    await again.close();
    const refused: string[] = [];
    const everyRefused: string[] = [];
    for (const { tools } of spec.actions) {
      for (const tool of tools) {
        const args = await argsOf(tool, 'owner');
        for (const who of [DEACTIVATED, UNKNOWN] as const) {
          const direct = (await clients[who].callTool({ name: tool, arguments: args })) as Result;
          const viaExec = (await clients[who].callTool({ name: 'exec', arguments: { action: actionName.get(tool), input: args } })) as Result;
          refused.push(`${tool} ${who}: ${outcome(direct)} / ${outcome(viaExec)}`);
          everyRefused.push(`${tool} ${who}: refused caller / refused caller`);
        }
        const cli = await cliExec(root, target, DEACTIVATED, actionName.get(tool)!, await argsOf(tool, 'owner', 'cli'));
        expect(cli.content?.[0]?.text, `${tool} cli`).toMatch(/deactivated/);
      }
    }
    expect(refused).toEqual(everyRefused);
  } finally {
    await Promise.all(Object.values(clients).map((c) => c?.close().catch(() => undefined)));
    await s.stop();
  }
}

describe('the permission table on every route, as every role', () => {
  it('SQLite', async () => {
    const file = join(dir, 'team.db');
    await matrix(file, async () => openSqliteTeamStore(file));
  });

  it.skipIf(!pgReady)('PostgreSQL', async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    await matrix(db.target, () => openPgTeamStore(db.target));
  });

  it('specs/permissions.json is generated from the table and the tool declarations (npm run permissions)', async () => {
    expect(readFileSync(join(repoRoot, 'specs', 'permissions.json'), 'utf8')).toBe(await renderPermissions());
  });
});
