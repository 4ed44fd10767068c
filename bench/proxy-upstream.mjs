// Upstream MCP server for bench/proxy.bench.ts: answers like an SDK server (id last), with a
// 1 KB result (`small`) and a streamed text result of any size (`huge_text {mb}`), written in
// pieces of BENCH_UPSTREAM_PIECE bytes (default about 1 MiB), one write each.
import { createInterface } from 'node:readline';

const out = process.stdout;
const write = (s) => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', r)));
const small = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(1000) }] });
const line = 'the quick brown fox jumps over the lazy dog \\"quoted\\" \\\\ end\\n';
const pieceBytes = Number(process.env.BENCH_UPSTREAM_PIECE ?? line.length * 16384);
// A piece of exactly pieceBytes that never ends inside an escape.
let text = line.repeat(Math.ceil(pieceBytes / line.length) + 1).slice(0, pieceBytes);
while (text.endsWith('\\')) text = text.slice(0, -1) + 'x';
const chunk = Buffer.from(text);

async function handle({ id, method, params }) {
  if (id === undefined) return;
  const respond = (json) => write(`{"result":${json},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n`);
  if (method === 'initialize') {
    return respond(JSON.stringify({ protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } }));
  }
  if (method === 'tools/list') return respond(JSON.stringify({ tools: [{ name: 'small', inputSchema: { type: 'object' } }, { name: 'huge_text', inputSchema: { type: 'object' } }] }));
  if (method === 'tools/call' && params?.name === 'small') return respond(small);
  if (method === 'tools/call' && params?.name === 'huge_text') {
    await write('{"result":{"content":[{"type":"text","text":"');
    const total = (params.arguments?.mb ?? 100) * 1024 * 1024;
    for (let n = 0; n < total; n += chunk.length) await write(chunk);
    return write(`"}]},"jsonrpc":"2.0","id":${JSON.stringify(id)}}\n`);
  }
  return write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'no such method' } }) + '\n');
}

let chain = Promise.resolve();
createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (line.trim() !== '') chain = chain.then(() => handle(JSON.parse(line)));
});
process.stdin.on('end', () => chain.then(() => process.exit(0)));
