/**
 * `mcp-budget <command> --help` for every command, `mcp-budget --help` and `--version`: exit 0,
 * on stdout, nothing on stderr; each help names every flag the command parses, its defaults and
 * environment variables, and one example.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/spec.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';

beforeAll(() => {
  ensureBuilt();
});

describe('mcp-budget help', { timeout: 60_000 }, () => {
  for (const spec of COMMANDS) {
    it(`help: ${spec.name} --help prints its usage, every flag and an example`, () => {
      for (const flag of ['--help', '-h']) {
        const r = runCli([spec.name, flag]);
        expect(r.code).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout).toContain(`mcp-budget ${spec.name}`);
        for (const f of spec.flags) expect(r.stdout).toContain(`--${f.name}`);
        expect(r.stdout).toContain('Example:');
        expect(r.stdout).toContain(spec.example);
      }
    });
  }

  it('help: budget flags show their default and environment variable', () => {
    const r = runCli(['limits', '--help']);
    expect(r.stdout).toMatch(/--max-bytes N .*default: 64KiB; env: MCP_BUDGET_MAX_BYTES/);
    expect(r.stdout).toMatch(/--max-items N .*default: 200; env: MCP_BUDGET_MAX_ITEMS/);
  });

  it('help: --help wins over other flags, even ones that would be usage errors', () => {
    const r = runCli(['apply', '--max-bytes', '1', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('mcp-budget apply');
  });

  it('help: mcp-budget --help and help list every command; help COMMAND is COMMAND --help', () => {
    for (const args of [['--help'], ['help'], ['-h']]) {
      const r = runCli(args);
      expect(r.code).toBe(0);
      for (const spec of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${spec.name} +${spec.summary.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
    }
    expect(runCli(['help', 'proxy']).stdout).toBe(runCli(['proxy', '--help']).stdout);
  });

  it('help: --version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const r = runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });
});
