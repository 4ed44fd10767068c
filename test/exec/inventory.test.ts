/**
 * specs/exec-action-inventory.json against the action registry: exhaustive both ways and fresh;
 * and the registry against the tools of `serve` (every tool but exec itself is an action).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderExecInventory } from '../../scripts/exec-inventory.js';
import { actionNameOf, type ActionRow } from '../../src/exec/index.js';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { repoRoot } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';

const PATH = join(repoRoot, 'specs', 'exec-action-inventory.json');

describe('the exec action inventory', () => {
  it('specs/exec-action-inventory.json equals renderExecInventory() (run `npm run exec-inventory` when it is stale)', async () => {
    expect(readFileSync(PATH, 'utf8')).toBe(await renderExecInventory());
  });

  it('every action has one row and every row an action; every tool of serve but exec is an action', async () => {
    const doc = JSON.parse(readFileSync(PATH, 'utf8')) as { actions: ActionRow[] };
    const dir = tempTree('exec-inventory');
    try {
      const ws = await createWorkspaceServer(dir.dir);
      await ws.close();
      const actions = ws.actions.list();
      const rows = doc.actions.map((r) => r.name);
      const names = actions.map((x) => x.name);
      expect(new Set(rows).size).toBe(rows.length);
      for (const n of names) expect(rows, `action ${n} has no row`).toContain(n);
      for (const n of rows) expect(names, `row ${n} has no action`).toContain(n);
      expect(actions.map((x) => x.tool).sort()).toEqual(ws.rows.map((r) => r.name).filter((n) => n !== 'exec').sort());
      for (const row of doc.actions) {
        const action = ws.actions.get(row.name)!;
        expect(row.class, row.name).toBe(ws.rows.find((r) => r.name === action.tool)!.classification === 'mutation' ? 'mutation' : 'read_only');
        expect(row.class === 'read_only' ? row.continuation : row.receipt_fields, row.name).toBeDefined();
        expect(row.class === 'read_only' ? row.receipt_fields : row.continuation, row.name).toBeUndefined();
        if (row.class === 'read_only') expect(row.idempotent, row.name).toBe(true);
        expect(row.envelope_limit_bytes).toBe(65536);
      }
    } finally {
      dir.remove();
    }
  });

  it('action names: domain.verb from the tool name, plural nouns moved to the front', () => {
    const domains = new Set(['git', 'task', 'workspace']);
    expect(actionNameOf('git_create_branch', domains)).toBe('git.create_branch');
    expect(actionNameOf('task_list', domains)).toBe('task.list');
    expect(actionNameOf('task_search', domains)).toBe('task.search');
    expect(actionNameOf('git_tags', domains)).toBe('git.tags');
    expect(actionNameOf('workspace_search_files', domains)).toBe('workspace.search_files');
  });
});
