/**
 * `mcp-budget team import FILE`: JSON Lines into a team store, streamed line by line with a cap on
 * a line's length, written in batches of one transaction each, with progress on stderr. Each line
 * is one object with a `kind`: `member`, `channel`, `message`, `task` or `comment`. A bad line stops
 * the import with an error naming its number; the batch holding it is rolled back, earlier batches
 * stay written (the error says how many lines that is).
 */
import { createReadStream } from 'node:fs';
import { TEAM_IMPORT_LIMITS } from './limits.js';
import type { SqliteTeamStore } from './sqlite-store.js';
import { taskIdOf } from './tasks.js';
import { TeamError, type Member } from './types.js';
import { checkId, checkTime } from './validate.js';

/** Options of {@link importJsonLines}. */
export interface ImportOptions {
  /** Where progress lines go. @default process.stderr */
  progress?: NodeJS.WritableStream;
  /** Rows per transaction. @default TEAM_IMPORT_LIMITS.batchRows */
  batchRows?: number;
}

/** What an import wrote. */
export interface ImportSummary {
  lines: number;
  counts: Record<string, number>;
  ms: number;
}

type Line = Record<string, unknown>;

/** Milliseconds since the epoch from a number or an ISO date; `undefined` when absent. */
function timeOf(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const t = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(t)) throw new TeamError('INVALID_PARAMS', `\`${field}\` is not a time (milliseconds or an ISO date)`);
  return checkTime(field, t);
}

const str = (v: unknown, field: string, required = true): string | undefined => {
  if (v === undefined || v === null) {
    if (required) throw new TeamError('INVALID_PARAMS', `\`${field}\` is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new TeamError('INVALID_PARAMS', `\`${field}\` must be a string`);
  return v;
};

/** Splits a byte stream into lines, refusing a line longer than `maxBytes` without holding it. */
async function* linesOf(file: string, maxBytes: number): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      lineNo++;
      if (pendingBytes + nl - start > maxBytes) throw new TeamError('INPUT_TOO_LARGE', `line ${lineNo}: longer than ${maxBytes} bytes`);
      const part = chunk.subarray(start, nl);
      yield pending.length === 0 ? part.toString('utf8') : Buffer.concat([...pending, part]).toString('utf8');
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxBytes) throw new TeamError('INPUT_TOO_LARGE', `line ${lineNo + 1}: longer than ${maxBytes} bytes`);
      pending.push(Buffer.from(chunk.subarray(start)));
    }
  }
  if (pendingBytes > 0) yield Buffer.concat(pending).toString('utf8');
}

/** Import `file` into `store`. Throws `TeamError` naming the line of the first bad one. */
export async function importJsonLines(store: SqliteTeamStore, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
  const progress = options.progress ?? process.stderr;
  const batchRows = options.batchRows ?? TEAM_IMPORT_LIMITS.batchRows;
  const started = Date.now();
  const counts: Record<string, number> = {};
  const authors = new Map<string, Member>();
  const author = (v: unknown, field: string): Member | null => {
    const name = str(v, field, false);
    if (name === undefined) return null;
    let m = authors.get(name);
    if (m === undefined) {
      m = store.members.get(name);
      if (m === undefined) throw new TeamError('NOT_FOUND', `\`${field}\`: no member named ${JSON.stringify(name)} (import members first)`);
      authors.set(name, m);
    }
    return m;
  };
  const apply = (o: Line): void => {
    switch (o.kind) {
      case 'member': {
        const m = store.members.add(str(o.name, 'name')!, str(o.role, 'role', false) ?? 'member', timeOf(o.created_at, 'created_at'));
        if (o.active === false) store.members.deactivate(m.name);
        break;
      }
      case 'channel':
        store.messages.ensureChannel(str(o.name, 'name')!, timeOf(o.created_at, 'created_at') ?? Date.now());
        break;
      case 'message': {
        const to = o.to === undefined ? undefined : Array.isArray(o.to) ? o.to.map((t, i) => str(t, `to[${i}]`)!) : [str(o.to, 'to')!];
        const replyTo = o.reply_to === undefined || o.reply_to === null ? undefined : checkId('reply_to', o.reply_to);
        store.messages.send(author(o.author, 'author'), { channel: str(o.channel, 'channel')!, body: str(o.body, 'body')!, to, replyTo, at: timeOf(o.created_at, 'created_at') });
        break;
      }
      case 'task': {
        const labels = o.labels === undefined ? undefined : Array.isArray(o.labels) ? o.labels.map((l, i) => str(l, `labels[${i}]`)!) : undefined;
        const at = timeOf(o.created_at, 'created_at') ?? Date.now();
        store.tasks.create(
          author(o.created_by, 'created_by'),
          { title: str(o.title, 'title')!, body: str(o.body, 'body', false), status: str(o.status, 'status', false) as never, priority: str(o.priority, 'priority', false) as never, assignee: str(o.assignee, 'assignee', false), labels },
          at,
          timeOf(o.updated_at, 'updated_at') ?? at,
        );
        break;
      }
      case 'comment': {
        const id = typeof o.task === 'number' ? checkId('task', o.task) : taskIdOf(str(o.task, 'task')!);
        if (id === undefined) throw new TeamError('INVALID_PARAMS', '`task` must be a task id or key such as T-12');
        store.tasks.comment(author(o.author, 'author'), id, str(o.body, 'body')!, timeOf(o.created_at, 'created_at'));
        break;
      }
      default:
        throw new TeamError('INVALID_PARAMS', `unknown \`kind\` ${JSON.stringify(o.kind)} (member, channel, message, task, comment)`);
    }
    counts[o.kind as string] = (counts[o.kind as string] ?? 0) + 1;
  };

  let lineNo = 0;
  let committed = 0;
  let batch: { no: number; text: string }[] = [];
  let lastReport = started;
  const flush = (): void => {
    store.write(() => {
      for (const { no, text } of batch) {
        let o: Line;
        try {
          o = JSON.parse(text) as Line;
        } catch (e) {
          throw new TeamError('INVALID_PARAMS', `line ${no}: not JSON (${(e as Error).message})`);
        }
        if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new TeamError('INVALID_PARAMS', `line ${no}: not an object`);
        try {
          apply(o);
        } catch (e) {
          if (e instanceof TeamError) throw new TeamError(e.code, `line ${no}: ${e.message}`, { ...e.data, line: no });
          throw e;
        }
      }
    });
    committed = batch.length === 0 ? committed : batch[batch.length - 1]!.no;
    batch = [];
    const now = Date.now();
    if (now - lastReport >= TEAM_IMPORT_LIMITS.progressEveryMs) {
      lastReport = now;
      progress.write(`team import: ${committed} lines (${Math.round((committed * 1000) / (now - started))} lines/s)\n`);
    }
  };
  try {
    for await (const text of linesOf(file, TEAM_IMPORT_LIMITS.maxLineBytes)) {
      lineNo++;
      if (text.trim() === '') continue;
      batch.push({ no: lineNo, text });
      if (batch.length >= batchRows) flush();
    }
    flush();
  } catch (e) {
    if (e instanceof TeamError) {
      throw new TeamError(e.code, `${e.message}. ${committed === 0 ? 'Nothing was imported' : `Lines 1-${committed} were imported; nothing after them was written`}.`, { ...e.data, committed });
    }
    throw e;
  }
  return { lines: lineNo, counts, ms: Date.now() - started };
}

