// A lean MCP client for bench/proxy.bench.ts, in its own process so that the bench's own work does
// not weigh on the figure: starts `CMD...`, initializes, waits until WAIT_MS after the start (so
// startup is not timed), calls `huge_text {mb: MB}` and reads the response up to its newline
// (one `indexOf` per chunk, nothing held): by 'data' events, as a Node client reads, or with READER
// `reused` through the built pipe reader (one reused buffer: the stricter floor). Prints one JSON
// line: the call's round trip in ms, the response's bytes and its first 200 characters, and the
// server's stderr.
// Usage: node bench/line-client.mjs data|reused MB WAIT_MS CMD...
import { spawn } from 'node:child_process';

const [reader, mb, waitMs, ...cmd] = process.argv.slice(2);
const started = performance.now();
const p = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
let stderr = '';
p.stderr.on('data', (d) => (stderr += d));
let bytes = 0;
let head = '';
let lines = 0;
let t0 = 0;
let ms = 0;
let answer = { bytes: 0, head: '' };
const onChunk = (chunk) => {
  let from = 0;
  for (;;) {
    const nl = chunk.indexOf(10, from);
    const end = nl === -1 ? chunk.length : nl;
    if (head.length < 200) head += chunk.subarray(from, Math.min(end, from + 200)).toString();
    bytes += end - from;
    if (nl === -1) return;
    from = nl + 1;
    if (++lines === 1) {
      setTimeout(() => {
        t0 = performance.now();
        p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'huge_text', arguments: { mb: Number(mb) } } }) + '\n');
      }, Math.max(0, started + Number(waitMs) - performance.now()));
    } else {
      ms = performance.now() - t0;
      answer = { bytes, head };
      p.stdin.end();
    }
    bytes = 0;
    head = '';
  }
};
if (reader === 'reused') {
  const { readPipe } = await import(new URL('../dist/stream/pipe-reader.js', import.meta.url).href);
  readPipe(p.stdout, { piece: onChunk, end: () => undefined, error: () => undefined }, { flush: 'lines' });
} else {
  p.stdout.on('data', onChunk);
}
p.on('close', () => process.stdout.write(JSON.stringify({ ms, ...answer, stderr }) + '\n'));
p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) + '\n');
