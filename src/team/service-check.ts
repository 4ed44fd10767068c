/**
 * The stored-value check: rows a store already holds that its write boundary would refuse today
 * (validate.ts), written by an older version or by hand: a time outside the range every reader
 * renders, an id past 2^53, a NUL inside a text. Readers show such rows defensively (a time as
 * `invalid time (N ms)`), so a page never fails on one; the check tells the operator which rows
 * they are. It reads one window of ids per rule, so a large store is checked in short steps that
 * leave the process free between them.
 */
import { TIME_RANGE_MS } from './limits.js';
import { q, type Rule } from './rule.js';

/** What a table holds that readers may not render as stored. */
interface Checked {
  table: string;
  times: readonly string[];
  texts: readonly string[];
}

const CHECKED: readonly Checked[] = [
  { table: 'members', times: ['created_at'], texts: ['name'] },
  { table: 'channels', times: ['created_at'], texts: ['name'] },
  { table: 'messages', times: ['created_at'], texts: ['body'] },
  { table: 'tasks', times: ['created_at', 'updated_at'], texts: ['title', 'body'] },
  { table: 'comments', times: ['created_at'], texts: ['body'] },
];

/** A row found, and why. */
export interface StoredValueIssue {
  table: string;
  id: number;
  why: string;
}

/** One window of the check: the issues of rows with ids in `(after, after + span]`, and where the next window starts (none at the end). */
export interface StoredValueWindow {
  issues: StoredValueIssue[];
  next: number | undefined;
}

/** The largest id a reader keeps exactly. */
const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * Check ids in `(after, after + span]` of every table; at most `keep` issues per table are
 * returned. `hasNul(column)` is the dialect's condition for a NUL inside a text, `notKind` for a
 * value of another type than the column's (a database that cannot store one says `false`).
 */
export function* checkStoredValues(
  after: number,
  span: number,
  keep: number,
  hasNul: (column: string) => string,
  notKind: (column: string, kind: 'text' | 'integer') => string,
): Rule<StoredValueWindow> {
  const issues: StoredValueIssue[] = [];
  let next: number | undefined;
  for (const t of CHECKED) {
    const reasons = [
      ...t.times.map((c) => `CASE WHEN ${c} < ? OR ${c} > ? THEN '${c} outside the times readers show' END`),
      ...t.times.map((c) => `CASE WHEN ${notKind(c, 'integer')} THEN '${c} not a whole number' END`),
      ...t.texts.map((c) => `CASE WHEN ${notKind(c, 'text')} THEN '${c} not a text' END`),
      `CASE WHEN id > ${MAX_ID} THEN 'id past 2^53' END`,
      ...t.texts.map((c) => `CASE WHEN ${hasNul(c)} THEN 'NUL in ${c}' END`),
    ];
    const params = t.times.flatMap(() => [TIME_RANGE_MS.min, TIME_RANGE_MS.max]);
    const rows = yield* q.all<{ id: number; why: string }>(
      `SELECT id, why FROM (SELECT id, coalesce(${reasons.join(', ')}) AS why FROM ${t.table} WHERE id > ? AND id <= ?) r WHERE why IS NOT NULL ORDER BY id LIMIT ?`,
      [...params, after, after + span, keep],
    );
    for (const r of rows) issues.push({ table: t.table, id: Number(r.id), why: r.why });
    // The next window starts just before the next id of any table: a gap of any size costs one step.
    const beyond = yield* q.get<{ id: number | string | null }>(`SELECT min(id) AS id FROM ${t.table} WHERE id > ?`, [after + span]);
    if (beyond?.id !== null && beyond?.id !== undefined) next = Math.min(next ?? Infinity, Number(beyond.id) - 1);
  }
  return { issues, next };
}

/** Ids one step of the check covers, and the issues one table may return per step. */
export const STORE_CHECK = Object.freeze({ span: 20_000, keepPerStep: 1_000, examples: 10 });

/** What the whole check found. */
export interface StoredValueReport {
  /** Rows found (a lower bound when `atLeast`: a step returned as many as it keeps). */
  rows: number;
  atLeast: boolean;
  examples: StoredValueIssue[];
  /** `false` when the check was stopped before its end. */
  complete: boolean;
}

/** Check the whole store in steps, yielding to the event loop between them; `stopped` ends it early. */
export async function checkStore(
  store: { checkStoredValues(after: number, span: number, keep: number): Promise<StoredValueWindow> },
  stopped: () => boolean = () => false,
): Promise<StoredValueReport> {
  const report: StoredValueReport = { rows: 0, atLeast: false, examples: [], complete: false };
  let after: number | undefined = 0;
  while (after !== undefined) {
    if (stopped()) return report;
    const step: StoredValueWindow = await store.checkStoredValues(after, STORE_CHECK.span, STORE_CHECK.keepPerStep);
    report.rows += step.issues.length;
    if (step.issues.length >= STORE_CHECK.keepPerStep) report.atLeast = true;
    for (const i of step.issues) if (report.examples.length < STORE_CHECK.examples) report.examples.push(i);
    after = step.next;
    await new Promise((resolve) => setImmediate(resolve));
  }
  report.complete = true;
  return report;
}

/** The check's finding for the operator (empty when there is none). */
export function describeStoredValues(report: StoredValueReport, label: string): string {
  if (report.rows === 0) return '';
  const shown = report.examples.map((i) => `${i.table} ${i.id} (${i.why})`).join(', ');
  return (
    `team store ${label}: ${report.atLeast ? 'at least ' : ''}${report.rows} row${report.rows === 1 ? '' : 's'} hold values no reader shows as stored: ${shown}` +
    `${report.rows > report.examples.length ? ', …' : ''}. Pages still answer (a time is shown as "invalid time (N ms)"); correct these rows in the database, or export and re-import them (team import refuses them with a reason).`
  );
}
