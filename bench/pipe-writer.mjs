// Writer for bench/pipes.bench.ts: one JSON-RPC response whose result is a text block of MB
// mebibytes (escapes included), written to stdout in pieces of PIECE bytes, each one write call
// (a pipe's write blocks until the reader has taken it, as a server's would).
// Usage: node bench/pipe-writer.mjs PIECE MB
import { writeSync } from 'node:fs';

const piece = Number(process.argv[2] ?? 65536);
const total = Number(process.argv[3] ?? 200) * 1024 * 1024;
const pattern = 'the quick brown fox jumps over the lazy dog \\"quoted\\" \\\\ end\\n';
// One body piece of exactly `piece` bytes that never ends inside an escape.
let body = pattern.repeat(Math.ceil(piece / pattern.length) + 1).slice(0, piece);
while (body.endsWith('\\')) body = body.slice(0, -1) + 'x';
const buf = Buffer.from(body);

function writeAll(b) {
  for (let off = 0; off < b.length; ) {
    try {
      off += writeSync(1, b, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

writeAll(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"'));
for (let n = 0; n < total; n += buf.length) writeAll(buf);
writeAll(Buffer.from('"}]}}\n'));
