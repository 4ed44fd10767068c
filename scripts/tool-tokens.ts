/**
 * What `serve`'s `tools/list` costs a model's context, in tokens of four open tokenizers: the whole
 * listing as sent, and the part hosts put before the model (name, title, description, input
 * schema), for every surface (`--tools`) and for all of them. `npm run tool-tokens` prints a table;
 * test/server/tool-listing.test.ts holds the whole listing under its bound.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { TOKENIZERS } from '../bench/tokens/tokenizers.js';
import { TOOLSETS, createWorkspaceServer, type Toolset } from '../src/server/create-server.js';

/** `tools/list` of a `serve` offering `toolsets`, as a client receives it. */
export async function listTools(toolsets: readonly Toolset[]): Promise<{ tools: Record<string, unknown>[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-budget-tool-tokens-'));
  mkdirSync(join(dir, 'root'));
  const ws = await createWorkspaceServer(join(dir, 'root'), {}, { dbPath: join(dir, 'team.db'), as: 'owner', toolsets, checkStoredValues: false });
  const client = new Client({ name: 'tool-tokens', version: '1' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  try {
    await Promise.all([ws.connect(b), client.connect(a)]);
    return (await client.listTools()) as { tools: Record<string, unknown>[] };
  } finally {
    await client.close();
    await ws.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a host puts before the model of one tool. */
export const modelPart = (t: Record<string, unknown>): unknown => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema });

async function main(): Promise<void> {
  const rows: string[] = [`| tools | count | ${Object.keys(TOKENIZERS).map((k) => `${k} whole / model part`).join(' | ')} |`, `| --- | ---: |${' ---: |'.repeat(Object.keys(TOKENIZERS).length)}`];
  const sets: Toolset[][] = [[...TOOLSETS], ...TOOLSETS.filter((t) => t !== 'exec').map((t) => [t])];
  for (const set of sets) {
    const list = await listTools(set);
    const whole = JSON.stringify(list);
    const part = JSON.stringify(list.tools.map(modelPart));
    const cells = Object.values(TOKENIZERS).map((count) => `${count(whole).toLocaleString('en')} / ${count(part).toLocaleString('en')}`);
    rows.push(`| ${set.length === TOOLSETS.length ? 'all' : set.join(',')} | ${list.tools.length} | ${cells.join(' | ')} |`);
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
