/**
 * The cut log cannot be turned into unbounded memory by a peer that makes every result cut while
 * nobody reads stderr: over the buffer cap, cuts are counted, and the count is written once the
 * stream drains.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CutLog } from '../../src/cli/cut-log.js';
import { MAX_BUFFERED_WARNING_BYTES, MAX_WARNING_FIELD_CHARS } from '../../src/shared/warnings.js';
import type { BudgetReport } from '../../src/engine/index.js';

const report = { truncated: true, budget_kind: 'text', omitted_count: 1 } as unknown as BudgetReport;

describe('cut log', () => {
  it('cut-log: a stderr that does not drain holds at most the cap; the count follows when it drains', async () => {
    const written: string[] = [];
    let release: (() => void)[] = [];
    // A pipe nobody reads: writes are accepted but never completed until released.
    const stderr = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk.toString('utf8'));
        release.push(cb);
      },
    });
    const log = new CutLog(stderr);
    const listener = log.listener(() => 'session-1');
    for (let i = 0; i < 20_000; i++) listener({ id: i, tool: 'big', report, bytesBefore: 1e6, bytesAfter: 1000 });
    expect(stderr.writableLength).toBeLessThanOrEqual(MAX_BUFFERED_WARNING_BYTES + 1024);
    const drain = async (): Promise<void> => {
      while (release.length > 0 || stderr.writableLength > 0) {
        const cbs = release;
        release = [];
        for (const cb of cbs) cb();
        await new Promise((r) => setImmediate(r));
      }
    };
    // Drain everything, then one more cut: the count of the lines not logged comes first.
    await drain();
    // The count is written as soon as the stream drains, before any other cut.
    const lastLine = JSON.parse(written.at(-1)!.trim()) as Record<string, unknown>;
    expect(lastLine).toMatchObject({ event: 'cuts_not_logged' });
    const before = written.length;
    expect(before).toBeLessThan(1000);
    listener({ id: 'last', tool: 'big', report });
    await drain();
    const tail = [lastLine, ...written.slice(before).join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)];
    const lines = written.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const cutLines = lines.filter((l) => l.event === 'cut');
    // Every cut is either written or counted: nothing is lost silently.
    expect(cutLines.length + (tail[0]!.count as number)).toBe(20_001);
    expect(cutLines.at(-1)).toMatchObject({ id: 'last', session: 'session-1', bytes_before: null });
  });

  it('cut-log: peer-chosen fields are cut, so one line stays small whatever the tool name or id', () => {
    const lines: string[] = [];
    const log = new CutLog({ write: (l: string) => lines.push(l) });
    log.listener(() => 's'.repeat(10_000))({ id: 'i'.repeat(1_000_000), tool: 't'.repeat(1_000_000), report });
    const line = JSON.parse(lines[0]!) as Record<string, string>;
    expect(lines[0]!.length).toBeLessThan(1000);
    expect(line.tool).toBe(`${'t'.repeat(MAX_WARNING_FIELD_CHARS)}…`);
    expect(line.id).toBe(`${'i'.repeat(MAX_WARNING_FIELD_CHARS)}…`);
    expect(line.session).toBe(`${'s'.repeat(MAX_WARNING_FIELD_CHARS)}…`);
  });
});
