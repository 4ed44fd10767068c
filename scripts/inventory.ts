/**
 * Generates `specs/agent-mcp-tool-inventory.json` from the tool declarations (the rows live next to
 * the code). `npm run inventory` writes it; the guardrail test fails when it is stale.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorkspaceServer } from '../src/server/create-server.js';

export async function renderInventory(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-'));
  try {
    const ws = await createWorkspaceServer(dir);
    await ws.close();
    const doc = {
      $comment:
        'Canonical tool inventory of `mcp-budget serve`. Generated from the declarations by `npm run inventory`; test/server/guardrails.test.ts checks it against the running server.',
      input_policy: 'strict: every tool takes only the arguments of its input schema (additionalProperties: false); an unknown argument is refused with the names the tool takes and the nearest one, and nothing is done',
      tools: ws.rows,
    };
    return JSON.stringify(doc, null, 2) + '\n';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../specs/agent-mcp-tool-inventory.json', import.meta.url)), await renderInventory());
}
