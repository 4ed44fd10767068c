/**
 * `mcp-budget limits`: the effective limits after flags, environment variables, scaling with
 * `--max-bytes` and the defaults, as JSON with their sources; and the startup errors for limits
 * that are too small or contradict each other. Also the README's 32 KiB example end to end.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/engine/limits.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';

beforeAll(() => {
  ensureBuilt();
});

interface Effective {
  limits: Record<string, unknown>;
  reserveBytes: number;
  minResultBytes: number;
  sources: Record<string, string>;
}

function limits(args: string[], env: Record<string, string> = {}): Effective {
  const r = runCli(['limits', ...args], { env });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Effective;
}

describe('mcp-budget limits', { timeout: 60_000 }, () => {
  it('limits: with no flags, the defaults (64 KiB) as they were', () => {
    const e = limits([]);
    const { notice, protocolVersion, ...numbers } = DEFAULT_LIMITS;
    expect(e.limits).toEqual({ ...numbers, notice, protocolVersion: protocolVersion ?? null });
    expect(e.sources.maxTextBytes).toBe('scaled');
    expect(e.sources.maxItems).toBe('default');
    expect(e.reserveBytes).toBe(4714);
    expect(e.minResultBytes).toBe(4970);
  });

  it('limits: --max-bytes 32KiB scales the text, block and string bounds; an explicit one wins', () => {
    const e = limits(['--max-bytes', '32KiB']);
    expect(e.limits).toMatchObject({ maxResultBytes: 32768, maxTextBytes: 24576, maxBlockBytes: 16384, maxStringBytes: 4096, maxItems: 200 });
    expect(e.sources).toMatchObject({ maxResultBytes: '--max-bytes', maxBlockBytes: 'scaled' });
    const explicit = limits(['--max-bytes', '32KiB'], { MCP_BUDGET_MAX_BLOCK_BYTES: '20000' });
    expect(explicit.limits.maxBlockBytes).toBe(20000);
    expect(explicit.sources.maxBlockBytes).toBe('MCP_BUDGET_MAX_BLOCK_BYTES');
  });

  it('limits: a --max-bytes below the minimum is a startup error naming the minimum', () => {
    const r = runCli(['limits', '--max-bytes', '4KiB']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('`--max-bytes` to be an integer from 4970');
    expect(r.stderr).toContain('`--max-omitted-paths`');
    // Fewer listed pointers lower the minimum.
    expect(limits(['--max-bytes', '4KiB', '--max-omitted-paths', '4']).limits.maxResultBytes).toBe(4096);
  });

  it('limits: the continuation settings, their sources, the reading tool and the reserve an offer takes', () => {
    const e = limits([]) as Effective & { continuation: { settings: Record<string, unknown>; sources: Record<string, string>; tool: string; reserveBytes: number } };
    expect(e.continuation).toEqual({
      settings: { enabled: true, memory: false, dir: '', ttlMs: 600_000, maxResultBytes: 16 * 1024 ** 2, maxSessionBytes: 64 * 1024 ** 2, maxProcessBytes: 256 * 1024 ** 2 },
      sources: { enabled: 'default', ttlMs: 'default', maxResultBytes: 'default', maxSessionBytes: 'default', maxProcessBytes: 'default' },
      tool: 'mcp_result_budget__read',
      reserveBytes: 1611,
    });
    const set = limits(['--no-continuation', '--continuation-max-bytes', '1GiB'], { MCP_BUDGET_CONTINUATION_TTL_MS: '5000' }) as typeof e;
    expect(set.continuation.settings).toMatchObject({ enabled: false, ttlMs: 5000, maxProcessBytes: 1024 ** 3 });
    expect(set.continuation.sources).toMatchObject({ enabled: '--no-continuation', ttlMs: 'MCP_BUDGET_CONTINUATION_TTL_MS', maxProcessBytes: '--continuation-max-bytes' });
    expect(set.continuation.reserveBytes).toBe(0);
    const r = runCli(['limits', '--continuation-ttl-ms', '10']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Expected `--continuation-ttl-ms` to be from 1000 to 86400000, got 10');
    // An on/off variable reads every usual spelling, and refuses the rest (`off` left it on).
    for (const [v, enabled] of [['off', false], ['NO', false], ['0', false], ['false', false], ['on', true], ['1', true]] as const) {
      expect((limits([], { MCP_BUDGET_CONTINUATION: v }) as typeof e).continuation.settings.enabled, v).toBe(enabled);
    }
    const odd = runCli(['limits'], { env: { MCP_BUDGET_CONTINUATION: 'maybe' } });
    expect(odd.code).toBe(2);
    expect(odd.stderr).toContain('Expected `MCP_BUDGET_CONTINUATION` to be on or off');
  });

  it('limits: contradictory settings are a startup error naming both, for every command', () => {
    for (const command of ['limits', 'apply', 'demo']) {
      const r = runCli([command, '--max-bytes', '32KiB', '--max-block-bytes', '1MiB'], { input: '{}' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('`--max-block-bytes` (1048576) is larger than `--max-bytes` (32768)');
    }
    const env = runCli(['limits', '--max-block-bytes', '200'], { env: { MCP_BUDGET_MAX_TEXT_BYTES: '100' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('`--max-block-bytes` (200) is larger than `MCP_BUDGET_MAX_TEXT_BYTES` (100)');
  });

  it('limits: the README example at 32 KiB keeps structuredContent and gives a valid result', () => {
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const input = {
      content: [{ type: 'text', text: JSON.stringify({ rows }) }, ...Array.from({ length: 2000 }, (_, i) => ({ type: 'text', text: `line ${i}` }))],
      structuredContent: { rows },
    };
    const r = runCli(['apply', '--max-bytes', '32KiB'], { input: JSON.stringify(input) });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { structuredContent?: { rows: unknown[] }; content: { text: string }[] };
    expect(Buffer.byteLength(r.stdout.trim())).toBeLessThanOrEqual(32768);
    expect(out.structuredContent?.rows.length).toBeGreaterThan(0);
    expect(CallToolResultSchema.safeParse(out).success).toBe(true);
    // The mirror is never JSON cut in the middle.
    const first = out.content[0]!.text;
    if (first.startsWith('{')) expect(JSON.parse(first)).toEqual(out.structuredContent);
  });
});

describe('limits: the floor the help states', () => {
  it('--max-bytes: the floor in the help is the one the command takes, at the defaults and with nothing reserved', () => {
    const help = runCli(['limits', '--help']).stdout;
    const m = /--max-bytes N .*\((\d+)–\d+ at the defaults; as low as (\d+) with/.exec(help);
    expect(m, help).not.toBeNull();
    const [floor, lowest] = [Number(m![1]), Number(m![2])];
    expect(runCli(['limits', '--max-bytes', String(floor)]).code).toBe(0);
    expect(runCli(['limits', '--max-bytes', String(floor - 1)]).code).toBe(2);
    expect(runCli(['limits', '--max-bytes', String(lowest), '--no-notice', '--max-omitted-paths', '0']).code).toBe(0);
    expect(runCli(['limits', '--max-bytes', String(lowest - 1), '--no-notice', '--max-omitted-paths', '0']).code).toBe(2);
  });
});
