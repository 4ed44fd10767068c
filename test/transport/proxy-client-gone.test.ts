/**
 * The client goes away while the proxy holds the server's output for it: a failed output never
 * drains, and the proxy must still read the server's end and finish.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runProxy } from '../../src/transport/proxy/proxy.js';

describe('proxy and a client that goes away', () => {
  it('proxy-client-gone: a client that fails while its output is full lets the proxy finish (the server\'s reader was held for a drain that never came)', async () => {
    // A server that writes notifications forever.
    const dir = mkdtempSync(join(tmpdir(), 'client-gone-'));
    const server = join(dir, 'chatty.js');
    writeFileSync(server, `
      const line = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(1000) } }) + '\\n';
      const tick = () => { while (process.stdout.write(line)); process.stdout.once('drain', tick); };
      tick();
      process.on('SIGTERM', () => process.exit(0));
    `);
    const stdin = new PassThrough();
    let failed = false;
    const stdout = new Writable({
      highWaterMark: 1,
      write(_c, _e, cb) {
        // never completes: the client does not read; then it goes away
        if (!failed) {
          failed = true;
          setTimeout(() => { const e = Object.assign(new Error('EPIPE'), { code: 'EPIPE' }); cb(e); }, 200);
        }
      },
    });
    const stderr = new PassThrough();
    stderr.resume();
    const done = runProxy({ command: process.execPath, args: [server], limits: {}, stdin, stdout, stderr, handleSignals: false, killGraceMs: 200, continuation: false });
    const r = await Promise.race([done.then((c) => `done ${c}`), new Promise((res) => setTimeout(() => res('hung'), 4000))]);
    expect(r).not.toBe('hung');
    rmSync(dir, { recursive: true, force: true });
  }, 10_000);

});
