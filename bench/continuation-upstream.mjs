// Upstream MCP server for bench/continuation.bench.ts: tools with no paging arguments that answer
// with one huge result, written as it is made: `huge_text {bytes}` (one text block), and
// `huge_array {items}` (structuredContent.items, each item {"i":n,"s":...}, with a short text). The
// content is a function of the position, so a client checks every byte and item it reads back
// without holding the original (see continuation-data.mjs).
import { createInterface } from 'node:readline';
import { BLOCK_ITEMS, itemsJson, textPiece, PIECE_BYTES } from './continuation-data.mjs';

const out = process.stdout;
const write = (s) => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', r)));

async function handle({ id, method, params }) {
  if (id === undefined) return;
  const respond = (json) => write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${json}}\n`);
  if (method === 'initialize') {
    return respond(JSON.stringify({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } }));
  }
  if (method === 'tools/list') return respond(JSON.stringify({ tools: [{ name: 'huge_text', inputSchema: { type: 'object' } }, { name: 'huge_array', inputSchema: { type: 'object' } }] }));
  if (method === 'tools/call' && params?.name === 'huge_text') {
    await write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
    const total = params.arguments.bytes;
    for (let n = 0; n < total; n += PIECE_BYTES) await write(textPiece(n / PIECE_BYTES, Math.min(PIECE_BYTES, total - n)));
    return write('"}]}}\n');
  }
  if (method === 'tools/call' && params?.name === 'huge_array') {
    await write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"items follow"}],"structuredContent":{"items":[`);
    const items = params.arguments.items;
    for (let i = 0; i < items; i += BLOCK_ITEMS) {
      if (i > 0) await write(',');
      await write(itemsJson(i, Math.min(BLOCK_ITEMS, items - i)));
    }
    return write(']}}}\n');
  }
  return write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'no such method' } }) + '\n');
}

let chain = Promise.resolve();
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (line.trim() !== '') chain = chain.then(() => handle(JSON.parse(line)));
});
process.stdin.on('end', () => chain.then(() => process.exit(0)));
