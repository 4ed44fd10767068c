/**
 * `mcp-budget apply` end to end: `node dist/cli.js` on files and stdin, both modes, exit codes
 * 0/1/2 and their messages, budget flags with size suffixes, MCP_BUDGET_* environment variables,
 * --no-notice, --protocol-version, and JSON-RPC responses (results and errors).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundJson } from '../../src/engine/bound.js';
import { NOTICE_KEY, REPORT_KEY } from '../../src/engine/limits.js';
import { cleanEnv, cliPath, ensureBuilt, repoRoot, runAll, runCli } from '../helpers/cli.js';

let dir: string;

function file(name: string, content: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

/** A result well over the default budget (isError first: see the isError it.fails in the engine tests). */
const LARGE = {
  isError: false,
  content: [
    { type: 'text', text: 'line "quoted" é😀\n'.repeat(20_000) },
    { type: 'image', data: 'QUJD'.repeat(30_000), mimeType: 'image/png' },
    { type: 'text', text: 'second block' },
  ],
  structuredContent: { rows: Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b'] })) },
  _meta: { trace: 't'.repeat(50_000) },
};
const LARGE_JSON = JSON.stringify(LARGE);
const SMALL = { content: [{ type: 'text', text: 'hello é😀 "q"' }], structuredContent: { a: [1, 2.5, null, true] }, isError: false };
const SMALL_JSON = JSON.stringify(SMALL);

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-apply-'));
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The budget options the flags used in this file stand for. */
function cliOptions(flags: readonly string[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!;
    if (f === '--no-notice') o.notice = false;
    else if (f === '--max-bytes') o.maxResultBytes = size(flags[++i]!);
    else if (f === '--max-items') o.maxItems = Number(flags[++i]);
    else if (f === '--max-text-bytes') o.maxTextBytes = size(flags[++i]!);
  }
  return o;
}

function size(s: string): number {
  return s.endsWith('KiB') ? Number(s.slice(0, -3)) * 1024 : Number(s);
}

function parsed(stdout: string): Record<string, unknown> {
  expect(stdout.endsWith('\n')).toBe(true);
  return JSON.parse(stdout) as Record<string, unknown>;
}

function reportOf(out: Record<string, unknown>): Record<string, unknown> | undefined {
  const meta = out._meta as Record<string, unknown> | undefined;
  return meta?.[REPORT_KEY] as Record<string, unknown> | undefined;
}

describe('mcp-budget apply: input and output', { timeout: 120_000 }, () => {
  it('a small result from a file comes out unchanged, exit 0', () => {
    const r = runCli(['apply', file('small.json', SMALL_JSON)]);
    expect(r).toEqual({ code: 0, stdout: SMALL_JSON + '\n', stderr: '' });
  });

  it('stdin, with `-` and with no file argument', () => {
    expect(runCli(['apply', '-'], { input: SMALL_JSON })).toEqual({ code: 0, stdout: SMALL_JSON + '\n', stderr: '' });
    expect(runCli(['apply'], { input: SMALL_JSON })).toEqual({ code: 0, stdout: SMALL_JSON + '\n', stderr: '' });
  });

  it('a large result is bounded to the default 64 KiB with a report and a notice', () => {
    const r = runCli(['apply', file('large.json', LARGE_JSON)]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(Buffer.byteLength(r.stdout) - 1).toBeLessThanOrEqual(64 * 1024);
    const out = parsed(r.stdout);
    expect(reportOf(out)).toMatchObject({ truncated: true });
    const content = out.content as { _meta?: Record<string, unknown> }[];
    expect(content.some((b) => b._meta?.[NOTICE_KEY] === true)).toBe(true);
    expect(r.stdout).toBe(boundJson(LARGE, {}, 'auto').json + '\n');
  });

  it('memory and stream modes, file and stdin, all give the same output', async () => {
    const cases: [string, string[]][] = [
      [LARGE_JSON, ['--max-bytes', '8KiB', '--max-items', '5']],
      [JSON.stringify({ jsonrpc: '2.0', id: 'abc', result: LARGE }), ['--max-bytes', '10000']],
      [JSON.stringify({ result: LARGE, jsonrpc: '2.0', id: 99 }), ['--no-notice']],
      [JSON.stringify(LARGE, null, 2), ['--max-text-bytes', '2KiB']],
    ];
    const runs = cases.flatMap(([json, flags], i) => {
      const f = file(`modes-${i}.json`, json);
      return [
        { args: ['apply', ...flags, f] },
        { args: ['apply', ...flags, '--mode=stream', f] },
        { args: ['apply', ...flags, '--mode', 'memory', '-'], input: json },
        { args: ['apply', ...flags, '--mode', 'stream'], input: json },
      ];
    });
    const outs = await runAll(runs);
    cases.forEach(([json, flags], i) => {
      const group = outs.slice(i * 4, i * 4 + 4);
      for (const o of group) {
        expect({ flags, code: o.code, stderr: o.stderr }).toEqual({ flags, code: 0, stderr: '' });
        expect(o.stdout).toBe(group[0]!.stdout);
      }
      expect(group[0]!.stdout).toBe(boundJson(JSON.parse(json), cliOptions(flags), 'auto').json + '\n');
    });
  });

  it('a file above the auto threshold (1 MiB) is streamed and still matches memory mode', () => {
    const big = { ...LARGE, content: [...LARGE.content, { type: 'text', text: 'x'.repeat(2 << 20) }] };
    const f = file('big.json', JSON.stringify(big));
    const auto = runCli(['apply', f]);
    const memory = runCli(['apply', '--mode', 'memory', f]);
    expect(auto.code).toBe(0);
    expect(auto.stdout).toBe(memory.stdout);
  });

  /**
   * `auto` (the default) always takes the byte path, so a file and stdin give the same output and
   * numbers are copied as written; `--mode memory` parses with JSON.parse, as documented.
   */
  it('apply copies a number JS cannot represent exactly, from a file or stdin; memory mode parses it', () => {
    const json = '{"content":[],"structuredContent":{"n":123456789012345678901234567890}}';
    const f = file('bignum.json', json);
    const stream = runCli(['apply', '--mode', 'stream', f]);
    expect(stream.stdout).toBe(json + '\n');
    expect(runCli(['apply', f]).stdout).toBe(stream.stdout);
    expect(runCli(['apply'], { input: json }).stdout).toBe(stream.stdout);
    expect(runCli(['apply', '--mode', 'memory', f]).stdout).toContain('"n":1.2345678901234568e+29');
  });

  it('stream mode keeps a 30-digit integer exactly (file and stdin)', () => {
    const json = '{"content":[{"type":"text","text":"' + 'y'.repeat(100_000) + '"}],"structuredContent":{"n":123456789012345678901234567890}}';
    const f = file('bignum-large.json', json);
    for (const r of [runCli(['apply', '--mode', 'stream', f]), runCli(['apply'], { input: json })]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"structuredContent":{"n":123456789012345678901234567890}');
    }
  });
});

describe('mcp-budget apply: exit 1 on invalid input, naming the byte offset', { timeout: 120_000 }, () => {
  const invalid: [string, number, RegExp][] = [
    ['{"content":[1,2', 15, /unexpected end of input/],
    ['{"content":[1 2]}', 14, /expected ',' or '\]'/],
    ['{"content":[]} x', 15, /after the end of the document/],
    ['', 0, /empty input/],
    ['{"content":"a\u0001"}', 13, /unescaped control character/],
  ];

  it('from a file and from stdin, in every mode; nothing on stdout', async () => {
    const runs = invalid.flatMap(([json], i) => {
      const f = file(`invalid-${i}.json`, json);
      return [
        { args: ['apply', f] },
        { args: ['apply', '--mode', 'stream', f] },
        { args: ['apply', '-'], input: json },
        { args: ['apply', '--mode', 'memory'], input: json },
      ];
    });
    const outs = await runAll(runs);
    invalid.forEach(([json, offset, text], i) => {
      for (const r of outs.slice(i * 4, i * 4 + 4)) {
        expect({ json, code: r.code, stdout: r.stdout }).toEqual({ json, code: 1, stdout: '' });
        expect(r.stderr).toMatch(new RegExp(`^mcp-budget: Invalid JSON at byte offset ${offset}: `));
        expect(r.stderr).toMatch(text);
      }
    });
  });

  it('invalid UTF-8 names its offset (JSON.parse would have replaced it silently)', () => {
    const bytes = Buffer.concat([Buffer.from('{"content":[{"type":"text","text":"ab'), Buffer.from([0xff]), Buffer.from('"}]}')]);
    const f = file('bad-utf8.json', bytes);
    for (const r of [runCli(['apply', '--mode', 'memory', f]), runCli(['apply', '--mode', 'stream', f]), runCli(['apply'], { input: bytes })]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('mcp-budget: Invalid JSON at byte offset 37: invalid UTF-8 in a string\n');
    }
  });

  it('invalid input deep in a large streamed input names its offset', () => {
    const head = '{"content":[{"type":"text","text":"' + 'z'.repeat(3 << 20) + '"}],';
    const r = runCli(['apply'], { input: head + '"isError":tru}' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`mcp-budget: Invalid JSON at byte offset ${head.length + 13}: invalid literal (expected true)\n`);
  });

  it('a request instead of a response, a non-object result, and a missing file exit 1', () => {
    const req = runCli(['apply'], { input: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}' });
    expect(req.code).toBe(1);
    expect(req.stderr).toMatch(/^mcp-budget: Expected a JSON-RPC response, got a request/);
    const arr = runCli(['apply'], { input: '[1,2,3]' });
    expect(arr.code).toBe(1);
    expect(arr.stderr).toMatch(/^mcp-budget: Expected a JSON object/);
    const missing = runCli(['apply', join(dir, 'does-not-exist.json')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^mcp-budget: ENOENT/);
    expect(missing.stdout).toBe('');
  });
});

describe('mcp-budget apply: exit 2 on usage errors, naming the flag and the range', { timeout: 120_000 }, () => {
  const usage: [string[], RegExp][] = [
    [['--max-items', '0'], /Expected `--max-items` to be from 1 to 10000000, got 0/],
    [['--max-bytes', '10'], /Expected `--max-bytes` to be from 1024 to 1073741824, got 10/],
    [['--max-bytes=2GiB'], /Expected `--max-bytes` to be from 1024 to 1073741824, got 2GiB/],
    [['--max-depth', '3'], /Expected `--max-depth` to be from 4 to 1000, got 3/],
    [['--max-string-bytes', '15'], /Expected `--max-string-bytes` to be from 16 to 1073741824, got 15/],
    [['--max-omitted-paths', '1001'], /Expected `--max-omitted-paths` to be from 0 to 1000, got 1001/],
    [['--max-text-bytes', 'lots'], /Expected `--max-text-bytes` to be a size in bytes/],
    [['--max-keys', '1.5'], /Expected `--max-keys` to be a whole number/],
    [['--max-block-bytes'], /`--max-block-bytes` needs a value/],
    [['--mode', 'fast'], /Expected `--mode` to be one of auto, memory, stream, got fast/],
    [['--bogus'], /Unknown flag `--bogus` for apply/],
    [['a.json', 'b.json'], /apply takes one FILE/],
  ];

  it('each mistake: exit 2, the message, the usage text, nothing on stdout', async () => {
    const outs = await runAll(usage.map(([args]) => ({ args: ['apply', ...args], input: SMALL_JSON })));
    usage.forEach(([args, message], i) => {
      const r = outs[i]!;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^mcp-budget: /);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain('Usage:');
    });
  });

  it('an environment variable out of range names the variable', () => {
    const r = runCli(['apply'], { input: SMALL_JSON, env: { MCP_BUDGET_MAX_ITEMS: '0' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Expected `MCP_BUDGET_MAX_ITEMS` to be from 1 to 10000000, got 0/);
  });

  it('no command exits 2 with usage; --help exits 0', () => {
    const none = runCli([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('Usage:');
    const help = runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('mcp-budget apply');
    expect(runCli(['frobnicate']).code).toBe(2);
  });

  it('--max-bytes below the floor that the report needs exits 2 with the accepted range', () => {
    const r = runCli(['apply', '--max-bytes', '2KiB'], { input: SMALL_JSON });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/from \d+ to 1073741824, got 2048/);
  });

  /**
   * Regression (a fixed bug): the flag range check uses LIMIT_RANGES (1024) while the real floor of maxResultBytes
   * depends on the other limits (4970 with the defaults); a value in between passes the flag check
   * and fails in resolveLimits, whose message names the option `maxResultBytes`, not `--max-bytes`
   * (args.ts: "a usage error names the flag, not the option"). The same for MCP_BUDGET_MAX_BYTES.
   * Minimal: `mcp-budget apply --max-bytes 2KiB` → "Expected `maxResultBytes` to be an integer from
   * 4970 to 1073741824, got 2048".
   */
  it('--max-bytes below the floor names the flag (and MCP_BUDGET_MAX_BYTES the variable)', () => {
    const flag = runCli(['apply', '--max-bytes', '2KiB'], { input: SMALL_JSON });
    expect(flag.stderr).toContain('`--max-bytes`');
    const env = runCli(['apply'], { input: SMALL_JSON, env: { MCP_BUDGET_MAX_BYTES: '2048' } });
    expect(env.stderr).toContain('`MCP_BUDGET_MAX_BYTES`');
  });
});

describe('mcp-budget apply: budget flags and environment', { timeout: 120_000 }, () => {
  it('size suffixes: --max-bytes 8KiB, 8KB (the same, 1024-based), 0.01MiB, 8192', () => {
    const f = file('sizes.json', LARGE_JSON);
    const a = runCli(['apply', '--max-bytes', '8KiB', f]);
    const b = runCli(['apply', '--max-bytes', '8192', f]);
    const c = runCli(['apply', '--max-bytes=8kib', f]);
    const kb = runCli(['apply', '--max-bytes', '8KB', f]);
    expect(a.code).toBe(0);
    expect(Buffer.byteLength(a.stdout) - 1).toBeLessThanOrEqual(8192);
    expect(b.stdout).toBe(a.stdout);
    expect(c.stdout).toBe(a.stdout);
    expect(kb.stdout).toBe(a.stdout);
    const d = runCli(['apply', '--max-bytes', '0.01MiB', f]);
    expect(Buffer.byteLength(d.stdout) - 1).toBeLessThanOrEqual(Math.floor(0.01 * 1024 * 1024));
    expect(d.stdout).toBe(boundJson(LARGE, { maxResultBytes: Math.floor(0.01 * 1024 * 1024) }, 'auto').json + '\n');
  });

  it('each budget flag reaches the engine', async () => {
    const f = file('flags.json', LARGE_JSON);
    const flags: [string[], object][] = [
      [['--max-text-bytes', '1KiB'], { maxTextBytes: 1024 }],
      [['--max-block-bytes', '500'], { maxBlockBytes: 500 }],
      [['--max-items', '3'], { maxItems: 3 }],
      [['--max-keys', '2'], { maxKeys: 2 }],
      [['--max-string-bytes', '100'], { maxStringBytes: 100 }],
      [['--max-depth', '4'], { maxDepth: 4 }],
      [['--max-omitted-paths', '0'], { maxOmittedPaths: 0 }],
      [['--no-notice'], { notice: false }],
      [['--protocol-version', '2025-06-18'], { protocolVersion: '2025-06-18' }],
    ];
    const outs = await runAll(flags.map(([args]) => ({ args: ['apply', ...args, f] })));
    flags.forEach(([args, options], i) => {
      const r = outs[i]!;
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
      expect(r.stdout).toBe(boundJson(LARGE, options, 'auto').json + '\n');
    });
  });

  it('MCP_BUDGET_* environment variables set the limits; flags win over them', () => {
    const env = { MCP_BUDGET_MAX_BYTES: '8KiB', MCP_BUDGET_MAX_ITEMS: '4', MCP_BUDGET_NOTICE: '0' };
    const r = runCli(['apply'], { input: LARGE_JSON, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(boundJson(LARGE, { maxResultBytes: 8192, maxItems: 4, notice: false }, 'auto').json + '\n');
    const flagged = runCli(['apply', '--max-items', '6', '--max-bytes', '9000'], { input: LARGE_JSON, env });
    expect(flagged.stdout).toBe(boundJson(LARGE, { maxResultBytes: 9000, maxItems: 6, notice: false }, 'auto').json + '\n');
    const all = runCli(['apply'], {
      input: LARGE_JSON,
      env: {
        MCP_BUDGET_MAX_TEXT_BYTES: '2000',
        MCP_BUDGET_MAX_BLOCK_BYTES: '900',
        MCP_BUDGET_MAX_KEYS: '3',
        MCP_BUDGET_MAX_STRING_BYTES: '64',
        MCP_BUDGET_MAX_DEPTH: '5',
        MCP_BUDGET_MAX_OMITTED_PATHS: '2',
        MCP_BUDGET_PROTOCOL_VERSION: '2025-06-18',
      },
    });
    expect(all.stdout).toBe(
      boundJson(
        LARGE,
        { maxTextBytes: 2000, maxBlockBytes: 900, maxKeys: 3, maxStringBytes: 64, maxDepth: 5, maxOmittedPaths: 2, protocolVersion: '2025-06-18' },
        'auto',
      ).json + '\n',
    );
  });

  it('--no-notice: a report but no notice block', () => {
    const withNotice = parsed(runCli(['apply', '--max-bytes', '8KiB'], { input: LARGE_JSON }).stdout);
    const without = parsed(runCli(['apply', '--max-bytes', '8KiB', '--no-notice'], { input: LARGE_JSON }).stdout);
    const notices = (out: Record<string, unknown>): number =>
      (out.content as { _meta?: Record<string, unknown> }[]).filter((b) => b._meta?.[NOTICE_KEY] === true).length;
    expect(notices(withNotice)).toBe(1);
    expect(notices(without)).toBe(0);
    expect(reportOf(without)).toMatchObject({ truncated: true });
  });

  it('--protocol-version decides version-specific top-level fields', () => {
    const json = JSON.stringify({ content: [{ type: 'text', text: 'x' }], task: { taskId: 't', status: 'working' } });
    expect(parsed(runCli(['apply'], { input: json }).stdout)).toHaveProperty('task');
    const old = parsed(runCli(['apply', '--protocol-version', '2025-06-18'], { input: json }).stdout);
    expect(old).not.toHaveProperty('task');
    expect(reportOf(old)).toMatchObject({ budget_kind: 'top_level_field', omitted_paths: ['/task'] });
    const bad = runCli(['apply', '--protocol-version', 'yesterday'], { input: json });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/protocolVersion/);
  });
});

describe('mcp-budget apply: JSON-RPC responses', { timeout: 120_000 }, () => {
  it('a JSON-RPC error response has its message and data bounded; code and id are kept', () => {
    const response = {
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32000,
        message: 'm'.repeat(20_000),
        data: { trace: 't'.repeat(100_000), list: Array.from({ length: 500 }, (_, i) => i) },
      },
    };
    const json = JSON.stringify(response);
    const f = file('error.json', json);
    const runs = [
      runCli(['apply', '--max-bytes', '8KiB', '--max-string-bytes', '1KiB', f]),
      runCli(['apply', '--max-bytes', '8KiB', '--max-string-bytes', '1KiB', '--mode', 'stream', f]),
      runCli(['apply', '--max-bytes', '8KiB', '--max-string-bytes', '1KiB'], { input: json }),
    ];
    for (const r of runs) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(runs[0]!.stdout);
    }
    const out = parsed(runs[0]!.stdout) as { jsonrpc: string; id: number; error: { code: number; message: string; data: Record<string, unknown> } };
    expect(out.jsonrpc).toBe('2.0');
    expect(out.id).toBe(3);
    expect(out.error.code).toBe(-32000);
    expect(out.error.message.length).toBeLessThanOrEqual(1024);
    expect(out.error.message.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(out.error))).toBeLessThanOrEqual(8192);
    expect(out.error.data[REPORT_KEY]).toMatchObject({ truncated: true, budget_kind: 'string_bytes' });
    expect((out.error.data.list as unknown[]).length).toBeLessThanOrEqual(200);
  });

  it('a JSON-RPC result response keeps its envelope members in place (id last too)', () => {
    const response = { result: LARGE, jsonrpc: '2.0', id: 'call-7' };
    const r = runCli(['apply', '--max-bytes', '6000'], { input: JSON.stringify(response) });
    expect(r.code).toBe(0);
    const out = parsed(r.stdout);
    expect(Object.keys(out)).toEqual(['result', 'jsonrpc', 'id']);
    expect(out.id).toBe('call-7');
    expect(Buffer.byteLength(JSON.stringify(out.result))).toBeLessThanOrEqual(6000);
  });
});

describe('mcp-budget apply: SIGINT', { timeout: 120_000 }, () => {
  /**
   * Start `apply` on a stdin pipe, write `first` and wait until the child has read from the pipe
   * (so its SIGINT handler is installed) — and, when not feeding, 500 ms more so the pipe is empty
   * and the child waits on it — then send SIGINT; `keepFeeding` writes more data every
   * 50 ms afterwards. Resolves with the exit, or with `hung: true` if the child is still running
   * `graceMs` after the signal (it is then killed).
   */
  function interrupt(keepFeeding: boolean, graceMs = 4000): Promise<{ code: number | null; signal: string | null; stderr: string; hung: boolean }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [cliPath, 'apply'], { cwd: repoRoot, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      let hung = false;
      let feeder: NodeJS.Timeout | undefined;
      let guard: NodeJS.Timeout | undefined;
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdin.on('error', () => undefined);
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearInterval(feeder);
        clearTimeout(guard);
        resolve({ code, signal, stderr, hung });
      });
      // More than a pipe holds: 'drain' means the child is reading.
      const first = '{"content":[{"type":"text","text":"' + 'x'.repeat(1 << 20);
      if (child.stdin.write(first)) throw new Error('expected backpressure on the first write');
      child.stdin.once('drain', () => setTimeout(signal, keepFeeding ? 0 : 500)); // idle: let it read what is left
      const signal = (): void => {
        child.kill('SIGINT');
        if (keepFeeding) feeder = setInterval(() => child.stdin.write('y'.repeat(1000)), 50);
        guard = setTimeout(() => {
          hung = true;
          child.kill('SIGKILL');
        }, graceMs);
      };
    });
  }

  // Output is written only once the input is complete, so an interrupt stops at once: exit 130.
  it('SIGINT while input keeps arriving: exit 130, nothing written', async () => {
    const r = await interrupt(true);
    expect(r).toMatchObject({ code: 130, hung: false });
    expect(r.stderr).toBe('mcp-budget: interrupted; nothing was written\n');
  });

  it('SIGINT while stdin is open but idle: exit 130 promptly', async () => {
    const r = await interrupt(false, 3000);
    expect(r).toMatchObject({ code: 130, hung: false });
    expect(r.stderr).toMatch(/interrupted/);
  });
});
