/**
 * Generates `specs/team-permissions.json` from the permission table (src/team/permissions.ts).
 * `npm run permissions` writes it; test/team/permissions.test.ts fails when it is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PERMISSIONS, TEAM_ACTIONS, TOOLS_BY_ACTION } from '../src/team/index.js';

export function renderPermissions(): string {
  const doc = {
    $comment:
      'Who may do what in the team store: action x role -> allowed, own (tasks the caller created or is assigned) or denied, for every route (a tool, exec, over stdio and HTTP) and both store engines. Generated from src/team/permissions.ts by `npm run permissions`. Member administration stays with the `mcp-budget team` CLI.',
    actions: TEAM_ACTIONS.map((action) => ({ action, tools: TOOLS_BY_ACTION[action], roles: PERMISSIONS[action] })),
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../specs/team-permissions.json', import.meta.url)), renderPermissions());
}
