/**
 * 200 slow connections against `serve --listen`, each declaring a body just under the 4 MiB cap
 * and sending all but its last bytes, then stalling; plus 20 connections that stall inside their
 * headers. Measured in the server's own process (VmHWM and VmRSS from /proc): the peak RSS against
 * the idle RSS, with the in-flight body budget at its default and, as the baseline in the same run,
 * with the budget lifted (64 GiB: every body admitted, as before the budget existed). Every
 * connection's answer (503, 408, 413) and when it came, against the documented times (headers
 * within 10 s, the whole request within 60 s, checked every second).
 *
 *   npm run bench:slow-bodies            (about 2.5 minutes: two runs of a minute each)
 *   SLOW_BODIES_CONNECTIONS=50 npm run bench:slow-bodies
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES, DEFAULT_HTTP_MAX_REQUEST_BYTES, HEADERS_TIMEOUT_MS, REFUSED_BODY_DRAIN_MS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_MS } from '../dist/transport/http/defaults.js';
import { machineLine } from './util.js';

const CONNECTIONS = Number(process.env.SLOW_BODIES_CONNECTIONS ?? 200);
const HEADER_STALLS = 20;
const DECLARED = DEFAULT_HTTP_MAX_REQUEST_BYTES - 1024; // just under the body cap
const SENT = DECLARED - 16; // all but the last bytes
const MiB = 1024 * 1024;

interface Answer {
  status: number;
  /** ms from the connection's TCP connect to its answer (or to the socket's end). */
  ms: number;
}

function rssOf(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

async function start(extra: string[]): Promise<{ url: URL; pid: number; stop: () => Promise<void> }> {
  const root = mkdtempSync(join(tmpdir(), 'slow-bodies-root-'));
  const state = mkdtempSync(join(tmpdir(), 'slow-bodies-state-'));
  const proc = spawn(process.execPath, ['dist/cli.js', 'serve', '--root', root, '--listen', '127.0.0.1:0', ...extra], {
    env: { ...process.env, XDG_STATE_HOME: state },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const url = await new Promise<URL>((resolve, reject) => {
    proc.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m !== null) resolve(new URL(m[1]!));
    });
    proc.once('exit', (c) => reject(new Error(`serve exited ${String(c)}: ${err}`)));
  });
  return {
    url,
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(root, { recursive: true, force: true });
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** A POST declaring DECLARED bytes that sends SENT of them at a steady pace, then stalls. */
function slowBody(url: URL): Promise<Answer> {
  return new Promise((resolve) => {
    let done = false;
    let t0 = performance.now();
    const finish = (status: number): void => {
      if (done) return;
      done = true;
      resolve({ status, ms: performance.now() - t0 });
      req.destroy();
    };
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': String(DECLARED) },
    });
    req.on('response', (res) => {
      res.resume();
      finish(res.statusCode ?? 0);
    });
    req.on('socket', (sock) => sock.once('connect', () => (t0 = performance.now())));
    req.on('error', () => finish(-1));
    req.on('close', () => finish(-1));
    const piece = Buffer.alloc(256 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      if (done || sent >= SENT) return;
      const n = Math.min(piece.length, SENT - sent);
      sent += n;
      req.write(n === piece.length ? piece : piece.subarray(0, n));
      setTimeout(pump, 100); // ~2.5 MiB/s: the body takes a second and a half, then never ends
    };
    pump();
  });
}

/** A raw connection that sends half its headers and stalls. */
function headerStall(url: URL): Promise<Answer> {
  return new Promise((resolve) => {
    import('node:net').then(({ connect }) => {
      let t0 = performance.now();
      const sock = connect(Number(url.port), url.hostname, () => {
        t0 = performance.now();
        sock.write(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n`);
      });
      let head = '';
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
        resolve({ status: m === null ? -1 : Number(m[1]), ms: performance.now() - t0 });
        sock.destroy();
      };
      sock.on('data', (b: Buffer) => {
        head += b.toString('latin1');
        if (head.includes('\r\n')) finish();
      });
      sock.on('error', finish);
      sock.on('close', finish);
    }, () => resolve({ status: -2, ms: 0 }));
  });
}

function summary(label: string, answers: Answer[]): string {
  const by = new Map<number, number[]>();
  for (const a of answers) {
    const list = by.get(a.status) ?? [];
    list.push(a.ms);
    by.set(a.status, list);
  }
  const parts = [...by].sort((a, b) => a[0] - b[0]).map(([status, ms]) => {
    const sorted = ms.sort((a, b) => a - b);
    const name = status === -1 ? 'cut without answer' : String(status);
    return `${name} ×${ms.length} (${(sorted[0]! / 1000).toFixed(2)}–${(sorted.at(-1)! / 1000).toFixed(2)} s)`;
  });
  return `${label}: ${parts.join(', ')}`;
}

async function run(label: string, extra: string[]): Promise<void> {
  const s = await start(extra);
  await new Promise((r) => setTimeout(r, 500));
  const idle = rssOf(s.pid);
  const bodies = Array.from({ length: CONNECTIONS }, () => slowBody(s.url));
  const heads = Array.from({ length: HEADER_STALLS }, () => headerStall(s.url));
  let peak = idle.rss;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(s.pid).rss)), 50);
  const [b, h] = await Promise.all([Promise.all(bodies), Promise.all(heads)]);
  clearInterval(sampler);
  const end = rssOf(s.pid);
  await s.stop();
  console.log(`\n${label} (${extra.join(' ') || 'defaults'})`);
  console.log(`  server RSS idle ${(idle.rss / MiB).toFixed(0)} MiB, peak ${(Math.max(peak, end.hwm) / MiB).toFixed(0)} MiB (+${((Math.max(peak, end.hwm) - idle.rss) / MiB).toFixed(0)} MiB), after ${(end.rss / MiB).toFixed(0)} MiB`);
  console.log(`  ${summary(`${CONNECTIONS} slow bodies of ${(DECLARED / MiB).toFixed(3)} MiB`, b)}`);
  console.log(`  ${summary(`${HEADER_STALLS} stalled headers`, h)}`);
}

console.log(machineLine());
console.log(
  `documented: headers within ${HEADERS_TIMEOUT_MS / 1000} s, request within ${REQUEST_TIMEOUT_MS / 1000} s (checked every ${TIMEOUT_CHECK_MS / 1000} s); ` +
    `in-flight body budget ${DEFAULT_HTTP_MAX_INFLIGHT_BODY_BYTES / MiB} MiB; a refused body is drained up to ${REFUSED_BODY_DRAIN_MS / 1000} s before its answer; times from each connection's connect`,
);
await run('in-flight budget at its default', []);
await run('baseline: budget lifted', ['--max-inflight-body-bytes', '64GiB']);
