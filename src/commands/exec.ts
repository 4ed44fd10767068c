/**
 * `mcp-budget exec ACTION [--input JSON | --input-file FILE] [--root DIR] [--team-db PATH] [--as NAME]`:
 * one `exec` action run in process, on the same server `serve` builds (same tools, limits and
 * store), printing the same envelope the `exec` tool answers, as one JSON line on stdout. Exit 0
 * on a typed success, 1 on an `isError` envelope, 2 on a usage error (the one error, code `USAGE`),
 * 3 on an `isError` envelope that says the write was made or may have been (`applied: true` or
 * `"unknown"` in its report: APPLIED, OUTCOME_UNKNOWN, a withheld mutation's receipt), so that a
 * script never takes a made write for a failure to retry.
 */
import { readFileSync } from 'node:fs';
import { usageError } from '../cli/args.js';
import { requiredValue, stringFlag, type FlagValues } from '../cli/parse.js';
import type { BudgetOptions } from '../engine/index.js';
import { promoteExecReport } from '../exec/index.js';
import { createWorkspaceServer } from '../server/create-server.js';

/** Largest `--input-file` read, in bytes: the largest input a `serve` message may carry. */
export const MAX_EXEC_INPUT_FILE_BYTES = 64 * 1024 * 1024;

interface ExecArgs {
  action: string;
  input: unknown;
  root: string;
  team: { dbPath?: string; as?: string };
}

/** `exec`'s command line as `parseArgs` left it (budget flags are read by the caller). */
export interface ExecCommandLine {
  values: FlagValues;
  positionals: readonly string[];
}

/** Check `exec`'s arguments and read its input. */
export function parseExecArgs(line: ExecCommandLine): ExecArgs {
  if (line.positionals.length > 1) throw usageError(`exec takes one action, got \`${line.positionals[0]}\` and \`${line.positionals[1]}\``);
  const action = line.positionals[0];
  let inputText = stringFlag(line.values, 'input');
  const inputFile = requiredValue(line.values, 'input-file');
  const root = requiredValue(line.values, 'root') ?? process.cwd();
  const team: ExecArgs['team'] = {};
  const dbPath = requiredValue(line.values, 'team-db');
  const as = requiredValue(line.values, 'as');
  if (dbPath !== undefined) team.dbPath = dbPath;
  if (as !== undefined) team.as = as;
  if (action === undefined) throw usageError('exec needs an action, e.g. `mcp-budget exec workspace.list_dir --input {}`');
  if (inputText !== undefined && inputFile !== undefined) throw usageError('exec takes `--input` or `--input-file`, not both');
  if (inputFile !== undefined) inputText = readInputFile(inputFile);
  let input: unknown = {};
  if (inputText !== undefined) {
    try {
      input = JSON.parse(inputText);
    } catch (e) {
      throw usageError(`Expected \`${inputFile === undefined ? '--input' : '--input-file'}\` to be JSON: ${(e as Error).message}`);
    }
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw usageError('The exec input must be a JSON object');
  return { action, input, root, team };
}

function readInputFile(path: string): string {
  let buf: Buffer;
  try {
    buf = readFileSync(path === '-' ? 0 : path);
  } catch (e) {
    throw usageError(`Cannot read \`--input-file\` ${JSON.stringify(path)}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (buf.length > MAX_EXEC_INPUT_FILE_BYTES) throw usageError(`\`--input-file\` is ${buf.length} bytes; at most ${MAX_EXEC_INPUT_FILE_BYTES}`);
  // Refused, not repaired: replacing bad bytes would store text the file does not hold (team import refuses it too).
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw usageError(`\`--input-file\` ${JSON.stringify(path)} is not valid UTF-8; nothing was run`);
  }
}

/** The write of an `isError` envelope was made, or may have been: its report or error says `applied`. */
function saysApplied(result: { _meta?: unknown }): boolean {
  const meta = result._meta;
  if (typeof meta !== 'object' || meta === null) return false;
  return Object.values(meta).some((v) => {
    if (typeof v !== 'object' || v === null) return false;
    const r = v as { applied?: unknown; receipt?: { applied?: unknown } };
    return r.applied === true || r.applied === 'unknown' || r.receipt?.applied === true || r.receipt?.applied === 'unknown';
  });
}

/** Run `exec` once and print its envelope; returns the exit code (0 ok, 1 isError, 3 isError after the write). */
export async function runExec(line: ExecCommandLine, budget: BudgetOptions, stdout: NodeJS.WritableStream): Promise<number> {
  const args = parseExecArgs(line);
  const ws = await createWorkspaceServer(args.root, budget, args.team);
  try {
    // Through the call pipeline, as every route is: the `--as` member resolved, its role checked.
    const result = promoteExecReport(await ws.exec(args.action, args.input));
    stdout.write(JSON.stringify(result) + '\n');
    return result.isError !== true ? 0 : saysApplied(result) ? 3 : 1;
  } finally {
    await ws.close();
  }
}
