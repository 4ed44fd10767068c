/**
 * The permission table (src/team/permissions.ts) on every route: each team tool, called directly
 * and through `exec`, as each role, over real HTTP with bearer tokens, on SQLite and PostgreSQL,
 * answers exactly as the table says (`own`: a member or agent may change a task it created or is
 * assigned, not another's); a denial names the role and what would allow it. The generated
 * `specs/team-permissions.json` equals the table.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPermissions } from '../../scripts/permissions.js';
import { PERMISSIONS, PgTeamStore, SqliteTeamStore, TEAM_ACTIONS, TOOLS_BY_ACTION, type TeamStore } from '../../src/team/index.js';
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
  writeFileSync(join(dir, 'tokens'), ROLES.map((r) => `${token(r)} ${NAMES[r]}\n`).join(''));
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
  const m = await store.sendMessage(members.owner!, { channel: 'general', body: 'hello team', to: ROLES.map((r) => NAMES[r]) });
  const a = await store.createTask(members.owner!, { title: 'owner task' });
  const b = await store.createTask(members.member!, { title: 'member task' });
  return { messageId: m.id, ownersTask: a.id, membersTask: b.id };
}

async function matrix(target: string, open: () => Promise<TeamStore>): Promise<void> {
  const store = await open();
  const ids = await seed(store);
  await store.close();
  const s: Listening = await startListening(['serve', '--root', join(dir, 'root'), '--team-db', target, '--as', NAMES.owner, '--listen', '127.0.0.1:0', '--token-file', join(dir, 'tokens')]);
  const clients = {} as Record<Role, Client>;
  for (const r of ROLES) clients[r] = await connect(s.url, token(r));
  try {
    const acks: Partial<Record<Role, string>> = {};
    const argsOf = async (tool: string, role: Role): Promise<Record<string, unknown>> => {
      switch (tool) {
        case 'message_history_read': return { channel: 'general' };
        case 'message_search': return { q: 'hello' };
        case 'message_get': return { id: ids.messageId };
        case 'message_send': return { channel: 'general', body: `from ${role}` };
        case 'inbox_read': return { peek: true };
        case 'inbox_ack': {
          // one cursor per member, acked on both routes (acking it again changes nothing)
          if (acks[role] === undefined) {
            const inbox = (await clients[role].callTool({ name: 'inbox_read', arguments: {} })) as Result;
            acks[role] = String(inbox.structuredContent?.ack_cursor);
          }
          return { ack_cursor: acks[role] };
        }
        case 'list_tasks': return {};
        case 'search_tasks': return { q: 'task' };
        case 'task_get': return { id: ids.ownersTask };
        case 'task_options': return { field: 'status' };
        case 'task_create': return { title: `by ${role}` };
        case 'task_update': return { id: ids.ownersTask, priority: 'high' };
        case 'task_comment': return { id: ids.ownersTask, body: `comment by ${role}` };
        default: throw new Error(`no arguments for ${tool}`);
      }
    };
    const outcome = (r: Result): string => {
      if (r.isError !== true) return 'allowed';
      const text = r.content?.[0]?.text ?? '';
      return text.startsWith('PERMISSION_DENIED') ? 'denied' : `error: ${text.slice(0, 200)}`;
    };
    const seen: string[] = [];
    const want: string[] = [];
    for (const action of TEAM_ACTIONS) {
      for (const tool of TOOLS_BY_ACTION[action]) {
        for (const role of ROLES) {
          // `own` on another's task is denied; the own case is checked below.
          const expected = PERMISSIONS[action][role] === 'allowed' ? 'allowed' : 'denied';
          for (const route of ['direct', 'exec'] as const) {
            const args = await argsOf(tool, role);
            const r = (route === 'direct'
              ? await clients[role].callTool({ name: tool, arguments: args })
              : await clients[role].callTool({ name: 'exec', arguments: { action: tool.replace('_', '.').replace(/^list\.tasks$/, 'task.list').replace(/^search\.tasks$/, 'task.search'), input: args } })) as Result;
            seen.push(`${tool} ${role} ${route}: ${outcome(r)}`);
            want.push(`${tool} ${role} ${route}: ${expected}`);
            if (outcome(r) === 'denied') expect(r.content?.[0]?.text, tool).toMatch(new RegExp(`a ${role} may.*member ${NAMES[role]}`));
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
  } finally {
    await Promise.all(ROLES.map((r) => clients[r]?.close().catch(() => undefined)));
    await s.stop();
  }
}

describe('the permission table on every route, as every role', () => {
  it('SQLite', async () => {
    const file = join(dir, 'team.db');
    await matrix(file, async () => SqliteTeamStore.open(file));
  });

  it.skipIf(!pgReady)('PostgreSQL', async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    await matrix(db.target, () => PgTeamStore.open(db.target));
  });

  it('specs/team-permissions.json is generated from the table (npm run permissions)', () => {
    expect(readFileSync(join(repoRoot, 'specs', 'team-permissions.json'), 'utf8')).toBe(renderPermissions());
  });
});
