/**
 * Generates `specs/permissions.json` from the permission table (src/team/permissions.ts) and the
 * tool declarations (each tool names its action). `npm run permissions` writes it;
 * test/team/permissions.test.ts fails when it is stale.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorkspaceServer } from '../src/server/create-server.js';
import { ACTIONS, PERMISSIONS } from '../src/team/index.js';

export async function renderPermissions(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'permissions-'));
  try {
    mkdirSync(join(dir, 'root'));
    const ws = await createWorkspaceServer(join(dir, 'root'), {}, { dbPath: join(dir, 'unused.db') });
    await ws.close();
    const doc = {
      $comment:
        'Who may do what: action x role -> allowed, own (tasks the caller created or is assigned) or denied, for every tool of `serve` on every route (a tool, exec, the exec CLI; stdio and HTTP) and both store engines, checked by the call pipeline. While a workspace has no team store there are no roles: the workspace and git actions are allowed to whoever the transport admitted. `exec` runs each action with its tool\'s permission. Generated from src/team/permissions.ts and the tool declarations by `npm run permissions`. Member administration stays with the `mcp-budget team` CLI.',
      actions: ACTIONS.map((action) => ({ action, tools: ws.tools.filter((t) => t.action === action).map((t) => t.name), roles: PERMISSIONS[action] })),
    };
    return JSON.stringify(doc, null, 2) + '\n';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../specs/permissions.json', import.meta.url)), await renderPermissions());
}
