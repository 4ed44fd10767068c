/**
 * Generates `specs/exec-action-inventory.json` from the action registry of `exec` (itself derived
 * from the tool declarations). `npm run exec-inventory` writes it; test/exec/inventory.test.ts
 * fails when an action has no row, a row no action, or the file is stale.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { actionRowOf, EXEC_LIMITS, RECEIPT_LIMITS } from '../src/exec/index.js';
import { createWorkspaceServer } from '../src/server/create-server.js';

export async function renderExecInventory(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'exec-inventory-'));
  try {
    const ws = await createWorkspaceServer(dir);
    await ws.close();
    const doc = {
      $comment:
        'Actions of the `exec` tool of `mcp-budget serve` (and `mcp-budget exec`). Generated from the action registry by `npm run exec-inventory`; test/exec/inventory.test.ts checks it.',
      input_policy: 'strict, as the tool: an unknown member of input is refused (INVALID_PARAMS naming the accepted names and the nearest), nothing is applied',
      envelope: {
        success: '{action, ok: true, result}; result validates against the output schema of the tool named in output_schema',
        limit_bytes: EXEC_LIMITS.envelopeBytes,
        limit_rule: 'the JSON of the envelope is at most limit_bytes, and the answer (the envelope and its text mirror) passes the server budget whole; otherwise it is never cut',
        over_limit_read_only: 'isError; _meta report key: error result_budget_exceeded, envelope_bytes, limit_bytes, limited_by, continuation {continue_with, narrow_with, cursor_fields}',
        over_limit_mutation: 'isError; _meta report key: error result_budget_exceeded, applied: true, receipt (receipt_fields); the text says it was applied and must not be repeated',
        receipt_limits: RECEIPT_LIMITS,
      },
      actions: ws.actions.list().map(actionRowOf),
    };
    return JSON.stringify(doc, null, 2) + '\n';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../specs/exec-action-inventory.json', import.meta.url)), await renderExecInventory());
}
