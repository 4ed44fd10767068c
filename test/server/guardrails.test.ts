/**
 * Guardrails of the workspace MCP server (`mcp-budget serve`):
 * - the tool inventory (specs/agent-mcp-tool-inventory.json) is exactly what the code declares and
 *   what the running server registers, one row per tool;
 * - over-max limits are refused or clamped as each row says; list tools refuse a query and point
 *   to the search tool; the search tool requires one;
 * - every result leaves within the final result budget, even from a tool that returns megabytes;
 * - `serve` on a terminal prints how to connect a client.
 *
 * The server is spawned as `node dist/cli.js serve --root <tmp>` and driven with the SDK Client over
 * StdioClientTransport; result sizes are measured on the messages as received.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { execSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderInventory } from '../../scripts/inventory.js';
import { connectHelp } from '../../src/commands/serve.js';
import { DEFAULT_LIMITS, REPORT_KEY } from '../../src/engine/limits.js';
import { SEED_LIMITS } from '../../src/fs/seed.js';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { QUERY_ARGS, type InventoryRow } from '../../src/server/tool-kinds.js';
import { GIT_WRITE_LIMITS } from '../../src/git/git-writes.js';
import { GIT_LIMITS } from '../../src/server/git-tools.js';
import { WORKSPACE_LIMITS } from '../../src/server/workspace-tools.js';
import { MAX_CURSOR_CHARS } from '../../src/shared/cursor.js';
import { TEAM_INPUT_CAPS, TEAM_PAGE_LIMITS } from '../../src/team/index.js';
import { cleanEnv, cliPath, ensureBuilt, repoRoot } from '../helpers/cli.js';
import { fillEmpty, tempTree } from '../helpers/fs-tree.js';
import { RecordingTransport, callErr, callOk, connectClient, reportOf, serveTransport, type Connected, type ToolResult } from '../helpers/mcp-stdio.js';

const INVENTORY_PATH = join(repoRoot, 'specs', 'agent-mcp-tool-inventory.json');
const MAX_RESULT = DEFAULT_LIMITS.maxResultBytes;
const SEARCH_TOOL = 'workspace_search_files';

/** Arguments each paged tool needs besides limit/cursor, and the array its page holds. */
const PAGED: Record<string, { args: Record<string, unknown>; items: string }> = {
  workspace_list_dir: { args: { path: 'long' }, items: 'entries' },
  workspace_scan: { args: {}, items: 'directories' },
  workspace_search_files: { args: { query: '**/*' }, items: 'matches' },
  git_log: { args: {}, items: 'commits' },
  git_status: { args: {}, items: 'entries' },
  git_branches: { args: {}, items: 'refs' },
  git_tags: { args: {}, items: 'refs' },
  git_stashes: { args: {}, items: 'stashes' },
  message_history_read: { args: { channel: 'general' }, items: 'messages' },
  message_search: { args: { q: 'hello' }, items: 'matches' },
  inbox_read: { args: {}, items: 'messages' },
  task_list: { args: {}, items: 'tasks' },
  task_search: { args: { q: 'hello' }, items: 'tasks' },
  task_options: { args: { field: 'status' }, items: 'options' },
};

/** What a list tool refusing a query points to instead. */
const QUERY_HINT: Record<string, string> = {
  workspace_list_dir: SEARCH_TOOL,
  workspace_scan: SEARCH_TOOL,
  git_status: SEARCH_TOOL,
  git_log: 'the `path` argument',
  git_branches: 'the `match` argument',
  git_tags: 'the `match` argument',
  git_stashes: 'the `match` argument',
  message_history_read: 'message_search',
  inbox_read: 'message_search',
  task_list: 'task_search',
};

let tree: ReturnType<typeof tempTree>;
let teamDir: ReturnType<typeof tempTree>;
let root: string;
let conn: Connected;
let inventory: { $comment: string; tools: InventoryRow[] };

function longName(i: number, len = 250): string {
  const head = `${String(i).padStart(4, '0')}-`;
  return head + 'n'.repeat(len - head.length);
}

beforeAll(async () => {
  ensureBuilt();
  tree = tempTree('guardrails');
  teamDir = tempTree('guardrails-team');
  root = tree.dir;
  // 300 entries with 250-byte names: a max page (200) of them is over the result budget
  mkdirSync(join(root, 'long'));
  for (let i = 0; i < 300; i++) writeFileSync(join(root, 'long', longName(i)), '');
  // 120 root subdirectories with long names, for workspace_scan at its max
  for (let i = 0; i < 120; i++) mkdirSync(join(root, longName(i, 200)));
  // deep paths for search: 4 × 200-byte segments
  const deep = join(root, 'deep', 'a'.repeat(200), 'b'.repeat(200), 'c'.repeat(200));
  mkdirSync(deep, { recursive: true });
  for (let i = 0; i < 250; i++) writeFileSync(join(deep, longName(i, 200)), '');
  writeFileSync(join(root, 'ctrl.txt'), '\u0001'.repeat(64 * 1024)); // 6 bytes each once JSON-escaped
  writeFileSync(join(root, 'bin.bin'), Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 131 + 7) & 0xff)));
  writeFileSync(join(root, 'plain.txt'), 'abcdefghijklmnopqrstuvwxyz\n'.repeat(1000)); // 27 000 bytes
  mkdirSync(join(root, 'small'));
  fillEmpty(join(root, 'small'), 10);
  // The root is a git repository too, for the git tools (a few commits and branches).
  const git = (cmd: string): void => void execSync(`git -c user.name=t -c user.email=t@example.com ${cmd}`, { cwd: root, stdio: 'ignore' });
  git('init -q');
  writeFileSync(join(root, 'g.txt'), 'first\n');
  git('add small g.txt');
  git('commit -qm first');
  writeFileSync(join(root, 'g.txt'), 'second\n');
  git('commit -qam second');
  for (let i = 0; i < 5; i++) git(`branch b${i}`);
  inventory = JSON.parse(readFileSync(INVENTORY_PATH, 'utf8')) as typeof inventory;
  // The team store outside the root, with a channel and a task for the team tools.
  conn = await connectClient(serveTransport(root, ['--team-db', join(teamDir.dir, 'team.db')]));
  await conn.client.callTool({ name: 'message_send', arguments: { channel: 'general', body: 'hello team' } });
  await conn.client.callTool({ name: 'task_create', arguments: { title: 'hello task' } });
}, 120_000);

afterAll(async () => {
  await conn?.close();
  tree?.remove();
  teamDir?.remove();
});

describe('the tool inventory', () => {
  it('specs/agent-mcp-tool-inventory.json equals renderInventory() (run `npm run inventory` when it is stale)', async () => {
    expect(readFileSync(INVENTORY_PATH, 'utf8')).toBe(await renderInventory());
  });

  it('every registered tool has exactly one row, and every row a registered tool', async () => {
    const { tools } = await conn.client.listTools();
    // The reading tool is the budget's, listed by withResultBudget and specified with the continuation
    // (specs/agent-mcp-result-budget.md), not one of serve's declared tools.
    expect(tools.at(-1)?.name).toBe('mcp_result_budget__read');
    const registered = tools.map((t) => t.name).filter((n) => n !== 'mcp_result_budget__read');
    const rows = inventory.tools.map((r) => r.name);
    expect(new Set(registered).size).toBe(registered.length);
    expect(new Set(rows).size).toBe(rows.length);
    expect([...registered].sort()).toEqual([...rows].sort());
    // and the in-process declarations agree with the file, in order
    const dir = tempTree('inventory-rows');
    try {
      const ws = await createWorkspaceServer(dir.dir);
      await ws.close();
      expect(ws.rows).toEqual(inventory.tools);
    } finally {
      dir.remove();
    }
  });

  it('each row states what the code does: limits, caps, result budget, classification vs schema', async () => {
    const { tools } = await conn.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const limits: Record<string, { default: number; max: number }> = {
      workspace_list_dir: WORKSPACE_LIMITS.listDir,
      workspace_scan: WORKSPACE_LIMITS.scan,
      workspace_search_files: WORKSPACE_LIMITS.search,
      git_log: GIT_LIMITS.log,
      git_status: GIT_LIMITS.status,
      git_branches: GIT_LIMITS.refs,
      git_tags: GIT_LIMITS.refs,
      git_stashes: GIT_LIMITS.stashes,
      message_history_read: TEAM_PAGE_LIMITS.history,
      message_search: TEAM_PAGE_LIMITS.messageSearch,
      inbox_read: TEAM_PAGE_LIMITS.inbox,
      task_list: TEAM_PAGE_LIMITS.listTasks,
      task_search: TEAM_PAGE_LIMITS.searchTasks,
      task_options: TEAM_PAGE_LIMITS.options,
    };
    for (const row of inventory.tools) {
      const tool = byName.get(row.name)!;
      const props = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      const required = tool.inputSchema.required ?? [];
      expect(row.result_budget, row.name).toBe(`withResultBudget, maxResultBytes ${MAX_RESULT}`);
      const file = row.name.startsWith('git_')
        ? 'git-tools'
        : /^(message_|inbox_)/.test(row.name)
          ? 'team-tools'
          : /^(task_|task_list|task_search)/.test(row.name)
            ? 'team-task-tools'
            : row.name === 'exec'
              ? 'exec-tool'
              : 'workspace-tools';
      expect(row.entry_point, row.name).toBe(`src/server/${file}.ts#${row.name}`);
      if (row.limit !== null) {
        expect(row.limit, row.name).toMatchObject(limits[row.name]!);
        expect(Object.keys(props), row.name).toEqual(expect.arrayContaining(row.name === 'inbox_read' ? ['limit'] : ['limit', 'cursor']));
        expect(tool.description, row.name).toContain(`max ${row.limit.max}`);
      }
      switch (row.classification) {
        case 'browse/list':
          // refused by the input schema with the hint (checked below), not published
          for (const q of QUERY_ARGS) expect(props[q], `${row.name}.${q}`).toBeUndefined();
          break;
        case 'search/lookup':
          // the team searches take `q`; task_options pages a field, and `q` is its member query mode
          expect(required, row.name).toContain(row.name === 'task_options' ? 'field' : /task|message/.test(row.name) ? 'q' : 'query');
          break;
        case 'mutation':
          expect(tool.annotations?.readOnlyHint, row.name).toBe(false);
          if (row.name.startsWith('git_') || row.name.startsWith('workspace_')) {
            expect(row.input_caps, row.name).toEqual(row.name.startsWith('git_') ? { ...GIT_WRITE_LIMITS } : { ...SEED_LIMITS });
          } else {
            const known: Record<string, number> = { ...TEAM_INPUT_CAPS, maxCursorChars: MAX_CURSOR_CHARS };
            for (const [cap, value] of Object.entries(row.input_caps ?? {})) expect(value, `${row.name}.${cap}`).toBe(known[cap]);
          }
          break;
        default:
          expect(tool.annotations?.readOnlyHint, row.name).toBe(true);
      }
      if (row.classification !== 'mutation') expect(tool.annotations?.readOnlyHint, row.name).toBe(true);
    }
    expect(inventory.tools.find((r) => r.name === 'workspace_read_file')?.per_item_budget).toContain(String(WORKSPACE_LIMITS.readFile.maxBytes));
  });
});

describe('limits, queries and the search tool', () => {
  it('over-max limits are refused or clamped as each row says; the max itself is accepted', async () => {
    const paged = inventory.tools.filter((r) => r.limit !== null);
    expect(paged.length).toBeGreaterThan(0);
    for (const row of paged) {
      const spec = PAGED[row.name];
      expect(spec, `add ${row.name} to PAGED`).toBeDefined();
      const { max, over_max } = row.limit!;
      if (over_max === 'refuse') {
        const text = await callErr(conn.client, row.name, { ...spec!.args, limit: max + 1 });
        expect(text, row.name).toMatch(/^INVALID_PARAMS: /);
        expect(text, row.name).toContain(`1 to ${max}`);
        const huge = await callErr(conn.client, row.name, { ...spec!.args, limit: 1e9 });
        expect(huge, row.name).toMatch(/^INVALID_PARAMS: /);
      } else {
        const sc = await callOk(conn.client, row.name, { ...spec!.args, limit: max + 1 });
        expect((sc[spec!.items] as unknown[]).length, row.name).toBeLessThanOrEqual(max);
      }
      const atMax = await callOk(conn.client, row.name, { ...spec!.args, limit: max });
      expect((atMax[spec!.items] as unknown[]).length, row.name).toBeLessThanOrEqual(max);
      // below the minimum: a validation error, never a page
      const zero = (await conn.client.callTool({ name: row.name, arguments: { ...spec!.args, limit: 0 } })) as ToolResult;
      expect(zero.isError, row.name).toBe(true);
    }
  });

  it('workspace_read_file clamps an over-max max_bytes to the window max (its row says clamped)', async () => {
    expect(inventory.tools.find((r) => r.name === 'workspace_read_file')?.per_item_budget).toMatch(/clamped/);
    const sc = await callOk<{ bytes: number; next_offset: number }>(conn.client, 'workspace_read_file', { path: 'bin.bin', max_bytes: 10_000_000 });
    // Clamped to the window max, then to what its content may take written out (never cut by the budget).
    expect(sc.bytes).toBeGreaterThan(0);
    expect(sc.bytes).toBeLessThanOrEqual(WORKSPACE_LIMITS.readFile.maxBytes);
    expect(sc.next_offset).toBe(sc.bytes);
  });

  it('list tools reject q / query / search and point to the search tool', async () => {
    const lists = inventory.tools.filter((r) => r.classification === 'browse/list');
    expect(lists.map((r) => r.name).sort()).toEqual([
      'git_branches', 'git_log', 'git_stashes', 'git_status', 'git_tags', 'inbox_read', 'message_history_read', 'task_list', 'workspace_list_dir', 'workspace_scan',
    ]);
    for (const row of lists) {
      for (const q of QUERY_ARGS) {
        for (const value of ['*.md', '', 0, null, ['x']]) {
          const text = await callErr(conn.client, row.name, { ...PAGED[row.name]!.args, [q]: value });
          // refused by the input schema, as every argument a tool does not take, with the hint
          expect(text, `${row.name} ${q}=${JSON.stringify(value)}`).toMatch(/^MCP error -32602: Input validation error: /);
          expect(text).toContain(`does not take \`${q}\``);
          expect(text).toContain(QUERY_HINT[row.name]!);
        }
      }
    }
  });

  it('through exec, the same refusals name actions, keep every other unknown argument, and read as one sentence each', async () => {
    const ACTION: Record<string, string> = {
      workspace_list_dir: 'workspace.list_dir', workspace_scan: 'workspace.scan', workspace_search_files: 'workspace.search_files',
      git_status: 'git.status', git_log: 'git.log', git_branches: 'git.branches', git_tags: 'git.tags', git_stashes: 'git.stashes',
      message_history_read: 'message.history_read', inbox_read: 'inbox.read', task_list: 'task.list', message_search: 'message.search', task_search: 'task.search',
    };
    for (const [tool, hint] of Object.entries(QUERY_HINT)) {
      for (const q of QUERY_ARGS) {
        for (const extra of [{}, { bogus: 1 }, { bogus: 1, other: 2 }]) {
          const r = (await conn.client.callTool({ name: 'exec', arguments: { action: ACTION[tool], input: { ...PAGED[tool]!.args, [q]: 'x', ...extra } } })) as { isError?: boolean; content: { text: string }[] };
          const text = r.content[0]!.text;
          const what = `${tool} ${q} ${JSON.stringify(extra)}`;
          expect(r.isError, what).toBe(true);
          expect(text, what).toContain(`${ACTION[tool]} lists without filtering and does not take \`${q}\`; use ${ACTION[hint] ?? hint} to search`);
          // no tool name where an action is meant, and no sentence ends twice
          for (const name of Object.keys(ACTION)) expect(text, what).not.toMatch(new RegExp(`\\b${name}\\b`));
          expect(text, what).not.toMatch(/\.\s*\./);
          for (const k of Object.keys(extra)) expect(text, what).toContain(`\`${k}\``);
        }
      }
    }
    // exec's own arguments are strict too: a misspelt `input` is refused, never dropped
    expect(await callErr(conn.client, 'exec', { action: 'workspace.list_dir', inptu: {} })).toMatch(/Unknown argument `inptu`: exec takes `action`, `input` \(nearest: `input`\)/);
    // the tool itself names the other unknown arguments beside the refusal too
    const text = await callErr(conn.client, 'workspace_list_dir', { q: 'x', bogus: 1 });
    expect(text).toContain('does not take `q`; use workspace_search_files to search.');
    expect(text).toMatch(/Unknown argument `bogus`: workspace_list_dir takes /);
  });

  it('the search tool requires a query and refuses escaping ones', async () => {
    expect(await callErr(conn.client, SEARCH_TOOL, {})).toMatch(/query/);
    expect(await callErr(conn.client, SEARCH_TOOL, { query: '' })).toMatch(/query/);
    expect(await callErr(conn.client, SEARCH_TOOL, { query: '   ' })).toMatch(/^INVALID_PARAMS: /);
    expect(await callErr(conn.client, SEARCH_TOOL, { query: '../*' })).toMatch(/^PATH_ESCAPES_ROOT: /);
    expect(await callErr(conn.client, SEARCH_TOOL, { query: '/etc/*' })).toMatch(/^PATH_ESCAPES_ROOT: /);
  });

  it('tool errors are isError results whose text starts with the stable code', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['workspace_list_dir', { path: '../x' }, 'PATH_ESCAPES_ROOT'],
      ['workspace_list_dir', { path: 'plain.txt' }, 'NOT_A_DIRECTORY'],
      ['workspace_list_dir', { path: 'small', cursor: 'forged.cursor' }, 'INVALID_CURSOR'],
      ['workspace_read_file', { path: 'nope.txt' }, 'NOT_FOUND'],
      ['workspace_read_file', { path: 'small' }, 'NOT_A_FILE'],
      ['workspace_seed_files', { files: [{ path: 'plain.txt', content: 'x' }] }, 'ALREADY_EXISTS'],
      ['workspace_seed_files', { files: Array.from({ length: 101 }, (_, i) => ({ path: `x${i}`, content: '' })) }, 'INPUT_TOO_LARGE'],
    ];
    for (const [name, args, code] of cases) {
      const r = (await conn.client.callTool({ name, arguments: args })) as ToolResult;
      expect(r.isError, name).toBe(true);
      expect(r.content?.[0]?.text, name).toMatch(new RegExp(`^${code}: `));
      expect((r._meta?.['io.github.mcp-result-budget/error'] as { code: string }).code).toBe(code);
    }
  });
});

describe('results within the final result budget', () => {
  it('detail and list results at their maxima are within maxResultBytes (cut ones carry a report)', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['workspace_list_dir', { path: 'long', limit: WORKSPACE_LIMITS.listDir.max }],
      ['workspace_scan', { limit: WORKSPACE_LIMITS.scan.max }],
      ['workspace_search_files', { query: '**/*', path: 'deep', limit: WORKSPACE_LIMITS.search.max }],
      ['workspace_read_file', { path: 'ctrl.txt', max_bytes: WORKSPACE_LIMITS.readFile.maxBytes }],
      ['workspace_read_file', { path: 'bin.bin', max_bytes: WORKSPACE_LIMITS.readFile.maxBytes }],
      ['workspace_read_file', { path: 'plain.txt' }],
      [
        'workspace_seed_files',
        { files: Array.from({ length: SEED_LIMITS.maxFiles }, (_, i) => ({ path: `seeded/${'s'.repeat(200)}/${longName(i, 200)}`, content: 'x' })) },
      ],
    ];
    for (const [name, args] of calls) {
      const r = await conn.client.callTool({ name, arguments: args });
      expect(r.isError, name).not.toBe(true);
      const bytes = conn.wire.lastBytes;
      expect(bytes, name).toBeLessThanOrEqual(MAX_RESULT);
      expect(Buffer.byteLength(JSON.stringify(r)), name).toBeLessThanOrEqual(MAX_RESULT);
      if (reportOf(r) !== undefined) expect(reportOf(r)!.truncated).toBe(true);
    }
  });

  it('a budget flag on serve (--max-bytes 8KiB) bounds the workspace tools the same way', async () => {
    const small = await connectClient(serveTransport(root, ['--max-bytes', '8KiB']));
    try {
      for (const [name, args] of [
        ['workspace_list_dir', { path: 'long', limit: 200 }],
        ['workspace_read_file', { path: 'plain.txt', max_bytes: 49152 }],
      ] as const) {
        const r = await small.client.callTool({ name, arguments: args });
        expect(small.wire.lastBytes, name).toBeLessThanOrEqual(8 * 1024);
        // Pages and windows shrink to the budget at the source, so nothing needs cutting:
        // they say there is more instead.
        expect(reportOf(r), name).toBeUndefined();
        const sc = r.structuredContent as { has_more?: boolean; next_cursor?: string; eof?: boolean; next_offset?: number };
        if (name === 'workspace_list_dir') expect([sc.has_more, typeof sc.next_cursor], name).toEqual([true, 'string']);
        else expect([sc.eof, typeof sc.next_offset], name).toEqual([false, 'number']);
      }
    } finally {
      await small.close();
    }
  });

  // Regression (a fixed bug): the workspace tools' own maxima do not fit the default budget, and the budget cuts the page
  // from the end: a max page of long names loses its trailing `has_more` and `next_cursor`, so the
  // client cannot continue (or learn that there is more) although the tool read limit+1 entries.
  // Pages should carry has_more/next_cursor before the items, or be sized to the result budget.
  it('a list page cut by the budget still says has_more and carries next_cursor', async () => {
    const sc = await callOk<{ entries: unknown[]; has_more?: boolean; next_cursor?: string }>(conn.client, 'workspace_list_dir', {
      path: 'long',
      limit: 200,
    });
    expect(sc.has_more).toBe(true);
    expect(typeof sc.next_cursor).toBe('string');
  });

  // Regression (a fixed bug): the default read_file window (16 KiB) is larger than the budget's maxStringBytes (8 KiB), so
  // `structuredContent.content` is cut to ~8 KiB while `bytes` and `next_offset` still say 16384: a
  // client that continues from next_offset silently skips the bytes that were cut.
  it('the default read_file window arrives whole: a 27 000-byte text file in one window, its pieces joined are its bytes', async () => {
    const sc = await callOk<{ content: string[]; bytes: number; next_offset?: number; eof: boolean }>(conn.client, 'workspace_read_file', { path: 'plain.txt' });
    expect(Buffer.byteLength(sc.content.join(''))).toBe(sc.bytes);
    expect(sc.bytes).toBe(27_000);
    expect(sc.eof).toBe(true);
    expect(sc.next_offset).toBeUndefined();
  });
});

describe('a tool that returns far too much', () => {
  async function inProcess(budget: Parameters<typeof createWorkspaceServer>[1] = {}) {
    const dir = tempTree('flood');
    const ws = await createWorkspaceServer(dir.dir, budget);
    const flood = 'flood line that never pages\n'.repeat(Math.ceil((5 * 1024 * 1024) / 28)); // > 5 MB
    ws.server.registerTool('flood', { description: 'returns about 5 MB of text' }, async () => ({ content: [{ type: 'text', text: flood }] }));
    ws.server.registerTool('flood_structured', { description: 'returns 100k rows' }, async () => {
      const structuredContent = { rows: Array.from({ length: 100_000 }, (_, i) => ({ id: i, name: `row ${i}`, blob: 'b'.repeat(40) })) };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    });
    ws.server.registerTool('flood_error', { description: 'throws a 5 MB message' }, async () => {
      throw new Error('e'.repeat(5 * 1024 * 1024));
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await ws.connect(serverSide);
    const wire = new RecordingTransport(clientSide);
    const client = new Client({ name: 'flood-test', version: '1.0.0' });
    await client.connect(wire);
    return {
      client,
      wire,
      close: async () => {
        await client.close();
        await ws.close();
        dir.remove();
      },
    };
  }

  it('a 5 MB tool result registered on ws.server still answers within maxResultBytes, with a report', async () => {
    const s = await inProcess();
    try {
      for (const name of ['flood', 'flood_structured', 'flood_error']) {
        const r = (await s.client.callTool({ name, arguments: {} })) as ToolResult;
        expect(s.wire.lastBytes, name).toBeLessThanOrEqual(MAX_RESULT);
        const report = reportOf(r);
        expect(report, name).toBeDefined();
        expect(report!.truncated).toBe(true);
        expect(report!.omitted_paths.length).toBeGreaterThan(0);
        if (name === 'flood_error') expect(r.isError).toBe(true);
        // the model-visible notice block says what happened
        expect(r.content?.some((b) => (b as { _meta?: Record<string, unknown> })._meta?.['io.github.mcp-result-budget/notice'] === true)).toBe(true);
      }
      // the workspace tools on the same connection are unaffected
      const page = await callOk<{ path: string }>(s.client, 'workspace_list_dir', {});
      expect(page.path).toBe('.');
    } finally {
      await s.close();
    }
  });

  it('a smaller budget passed to createWorkspaceServer is the one applied (and quoted by the rows)', async () => {
    const s = await inProcess({ maxResultBytes: 16 * 1024 });
    try {
      const r = await s.client.callTool({ name: 'flood', arguments: {} });
      expect(s.wire.lastBytes).toBeLessThanOrEqual(16 * 1024);
      expect(reportOf(r)?.truncated).toBe(true);
    } finally {
      await s.close();
    }
    const dir = tempTree('rows-budget');
    try {
      const ws = await createWorkspaceServer(dir.dir, { maxResultBytes: 16 * 1024 });
      await ws.close();
      expect(new Set(ws.rows.map((r) => r.result_budget))).toEqual(new Set(['withResultBudget, maxResultBytes 16384']));
    } finally {
      dir.remove();
    }
  });

  it('the report key is the documented one', () => {
    expect(REPORT_KEY).toBe('io.github.mcp-result-budget/budget');
  });
});

describe('serve on a terminal prints how to connect', () => {
  it('connectHelp() names the root in a Claude Code command and a JSON configuration entry', () => {
    const rootPath = '/srv/my workspace/"quoted"';
    const text = connectHelp(rootPath);
    expect(text).toMatch(/^mcp-budget serve speaks MCP over stdin\/stdout/);
    expect(text).toContain(`claude mcp add workspace -- npx -y mcp-result-budget serve --root '/srv/my workspace/"quoted"'`);
    const jsonLine = text.split('\n').find((l) => l.trim().startsWith('"workspace":'))!;
    const entry = z
      .object({ workspace: z.object({ command: z.literal('npx'), args: z.array(z.string()) }) })
      .parse(JSON.parse(`{${jsonLine}}`));
    expect(entry.workspace.args).toEqual(['-y', 'mcp-result-budget', 'serve', '--root', rootPath]);
    expect(text).toMatch(/Waiting for a client on stdin \(Ctrl-C to quit\)\.\n$/);
  });

  // Regression (a fixed bug): the Claude Code line quotes the root with JSON.stringify, which is not shell quoting: `$`,
  // backticks and `$(...)` stay live inside double quotes, so pasting the line runs substitutions and
  // registers a different root. Single quotes (with ' escaped as '\'') would be exact.
  it('the printed shell command passes the root through a POSIX shell unchanged', () => {
    const rootPath = '/srv/a $HOME b/$(echo injected)';
    const line = connectHelp(rootPath)
      .split('\n')
      .find((l) => l.includes('claude mcp add'))!;
    const command = line.slice(line.indexOf(' -- ') + 4);
    const r = spawnSync('sh', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: '/home/x' } });
    const args = r.stdout.split('\0').filter((s) => s !== '');
    expect(args[args.length - 1]).toBe(rootPath);
  });

  it('started with a TTY on stdin (script -qec), serve prints the help on stderr; with a pipe it does not', async () => {
    const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
    if (script.error !== undefined || script.status !== 0) {
      console.warn('skipped the TTY half: `script` (util-linux) is not available to give serve a terminal');
    } else {
      const child = spawn('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(cliPath)} serve --root ${JSON.stringify(root)}`, '/dev/null'], {
        stdio: ['ignore', 'pipe', 'pipe'], // stdin at EOF: script forwards it, serve sees its terminal close and exits
        env: cleanEnv(),
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      const text = out.replace(/\r\n/g, '\n');
      expect(text).toContain(connectHelp(root).trimEnd());
      expect(code).toBe(0);
    }

    // not a terminal: the client owns stdin/stdout, nothing is printed
    const child = spawn(process.execPath, [cliPath, 'serve', '--root', root], { stdio: ['pipe', 'pipe', 'pipe'], env: cleanEnv() });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await new Promise((r) => setTimeout(r, 500));
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe('');
  });
});
