/**
 * `mcp-budget team import FILE`: JSON Lines into a team store (SQLite or PostgreSQL), streamed line
 * by line with a cap on a line's length, written in batches of one transaction each, with progress
 * on stderr. Each line is one object with a `kind`: `member`, `channel`, `message`, `task` or
 * `comment`. Every line is read and checked here, once, for both engines ({@link ImportOp}); each
 * engine writes a batch of them (`importBatch`) with the same checks as its tools. A bad line stops
 * the import with an error naming its number; the batch holding it is rolled back, earlier batches
 * stay written (the error says how many lines that is).
 */
import { createReadStream } from 'node:fs';
import { TEAM_IMPORT_LIMITS } from './limits.js';
import { TeamError, type ImportOp, type NewTask, type SendOptions } from './types.js';
import { checkId, checkTime, taskIdOf } from './validate.js';
import { BudgetError } from '../engine/index.js';

/** Options of {@link importJsonLines}. */
export interface ImportOptions {
  /** Where progress lines go. @default process.stderr */
  progress?: NodeJS.WritableStream;
  /** Rows per transaction. @default TEAM_IMPORT_LIMITS.batchRows */
  batchRows?: number;
  /**
   * Skip a bad line (reported on `progress` with its number and reason) instead of stopping: the
   * batch holding it is written without it. @default false
   */
  skipBadLines?: boolean;
  /**
   * Skip a member that exists already (reported on `progress`) instead of stopping, so a file can
   * be imported again. Only members have a name to match: messages, tasks and comments have no
   * key a second import could find, and are written again. @default false
   */
  skipExisting?: boolean;
}

/** What an import wrote. */
export interface ImportSummary {
  lines: number;
  counts: Record<string, number>;
  /** Lines skipped as bad (`skipBadLines`), each reported on `progress`. */
  skipped: number;
  /** Members skipped as existing already (`skipExisting`), each reported on `progress`. */
  existing: number;
  ms: number;
}

type Line = Record<string, unknown>;

/** Milliseconds since the epoch from a number or an ISO date; `undefined` when absent. */
/**
 * An ISO 8601 time as `toISOString` writes it and readers show it, with its zone: `Z` or an offset
 * (a time without one would be read in the importing machine's zone), or a date alone (UTC
 * midnight). Anything else `Date.parse` accepts (`"12"`, RFC 2822 dates, years read as 2001) is
 * refused: the same file must store the same times everywhere.
 */
const ISO_TIME = /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/;

/** Milliseconds of a strict ISO 8601 time; NaN for another form or a field out of its range (`2020-02-30`, which `Date.parse` takes for March 1). */
function isoTime(v: string): number {
  const m = ISO_TIME.exec(v);
  if (m === null) return NaN;
  const [y, mo, d, h = 0, mi = 0, sec = 0, oh = 0, om = 0] = m.slice(1).map((x) => (x === undefined ? undefined : Number(x)));
  const day = new Date(Date.UTC(2000, mo! - 1, d!)); // a leap year: February 29 is checked below
  if (mo! < 1 || mo! > 12 || day.getUTCMonth() !== mo! - 1 || h > 23 || mi > 59 || sec > 59 || oh > 23 || om > 59) return NaN;
  if (mo === 2 && d === 29 && new Date(Date.UTC(y!, 1, 29)).getUTCDate() !== 29) return NaN;
  return Date.parse(v);
}

function timeOf(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const t = typeof v === 'number' ? v : typeof v === 'string' ? isoTime(v) : NaN;
  if (!Number.isFinite(t)) {
    throw new TeamError('INVALID_PARAMS', `\`${field}\` is not a time: give milliseconds since 1970 (a number) or an ISO 8601 string with its zone, such as "2026-01-31T09:30:00Z" or "2026-01-31"`);
  }
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

/** One line of the file: its text, or why it cannot be read (too long, not UTF-8). */
type ReadLine = { text: string; bad?: undefined } | { text?: undefined; bad: TeamError };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A line's bytes as text; a line that is not UTF-8 is refused (decoding would replace bytes silently). */
function decodeLine(bytes: Uint8Array, no: number): ReadLine {
  try {
    return { text: UTF8.decode(bytes) };
  } catch {
    return { bad: new TeamError('INVALID_PARAMS', `line ${no}: not valid UTF-8`, { line: no }) };
  }
}

/**
 * Splits a byte stream into lines. A line longer than `maxBytes` is never held: its bytes are
 * passed over to the next newline and it comes out as a bad line, as does one that is not UTF-8;
 * a last line without a newline is a line.
 */
async function* linesOf(file: string, maxBytes: number): AsyncGenerator<ReadLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let tooLong = false;
  let lineNo = 0;
  const long = (no: number): ReadLine => ({ bad: new TeamError('INPUT_TOO_LARGE', `line ${no}: longer than ${maxBytes} bytes`, { line: no, maxLineBytes: maxBytes }) });
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      lineNo++;
      if (tooLong || pendingBytes + nl - start > maxBytes) yield long(lineNo);
      else yield decodeLine(pending.length === 0 ? chunk.subarray(start, nl) : Buffer.concat([...pending, chunk.subarray(start, nl)]), lineNo);
      pending = [];
      pendingBytes = 0;
      tooLong = false;
      start = nl + 1;
    }
    if (start < chunk.length && !tooLong) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxBytes) {
        tooLong = true; // the rest of this line is passed over, not held
        pending = [];
      } else {
        pending.push(Buffer.from(chunk.subarray(start)));
      }
    }
  }
  if (tooLong) yield long(lineNo + 1);
  else if (pendingBytes > 0) yield decodeLine(Buffer.concat(pending), lineNo + 1);
}

/** A store an import writes to: one transaction per batch, every op through the engine's own checks. */
export interface ImportTarget {
  importBatch(ops: readonly ImportOp[]): Promise<void>;
}

/** A failure of line `no`, as an import reports it. */
export function atLine(no: number, e: unknown): unknown {
  if (e instanceof BudgetError && e.data.line === undefined) return new BudgetError(e.code, `line ${no}: ${e.message}`, { ...e.data, line: no });
  return e;
}

/** An import's reference to a member that is not there (yet). */
export function unknownAuthor(field: string, name: string): TeamError {
  return new TeamError('NOT_FOUND', `\`${field}\`: no member named ${JSON.stringify(name)} (import members first)`);
}

/** Read and check one line: JSON, an object, a known kind, and every field's type, time and id. */
export function parseImportLine(no: number, text: string): ImportOp {
  let o: Line;
  try {
    o = JSON.parse(text) as Line;
  } catch (e) {
    throw new TeamError('INVALID_PARAMS', `line ${no}: not JSON (${(e as Error).message})`, { line: no });
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new TeamError('INVALID_PARAMS', `line ${no}: not an object`, { line: no });
  try {
    switch (o.kind) {
      case 'member':
        if (o.active !== undefined && typeof o.active !== 'boolean') throw new TeamError('INVALID_PARAMS', '`active` must be true or false');
        return { no, kind: 'member', name: str(o.name, 'name')!, role: str(o.role, 'role', false) ?? 'member', at: timeOf(o.created_at, 'created_at'), active: o.active !== false };
      case 'channel':
        return { no, kind: 'channel', name: str(o.name, 'name')!, at: timeOf(o.created_at, 'created_at') ?? Date.now() };
      case 'message': {
        const to = o.to === undefined ? undefined : Array.isArray(o.to) ? o.to.map((t, i) => str(t, `to[${i}]`)!) : [str(o.to, 'to')!];
        const replyTo = o.reply_to === undefined || o.reply_to === null ? undefined : checkId('reply_to', o.reply_to);
        const at = timeOf(o.created_at, 'created_at');
        const send: SendOptions = { channel: str(o.channel, 'channel')!, body: str(o.body, 'body')! };
        if (to !== undefined) send.to = to;
        if (replyTo !== undefined) send.replyTo = replyTo;
        if (at !== undefined) send.at = at;
        return { no, kind: 'message', author: str(o.author, 'author', false), send };
      }
      case 'task': {
        if (o.labels !== undefined && o.labels !== null && !Array.isArray(o.labels)) throw new TeamError('INVALID_PARAMS', '`labels` must be an array of strings');
        const labels = Array.isArray(o.labels) ? o.labels.map((l, i) => str(l, `labels[${i}]`)!) : undefined;
        const at = timeOf(o.created_at, 'created_at') ?? Date.now();
        const task: NewTask = { title: str(o.title, 'title')! };
        const body = str(o.body, 'body', false);
        if (body !== undefined) task.body = body;
        const status = str(o.status, 'status', false);
        if (status !== undefined) task.status = status as NewTask['status'];
        const priority = str(o.priority, 'priority', false);
        if (priority !== undefined) task.priority = priority as NewTask['priority'];
        const assignee = str(o.assignee, 'assignee', false);
        if (assignee !== undefined) task.assignee = assignee;
        if (labels !== undefined) task.labels = labels;
        return { no, kind: 'task', author: str(o.created_by, 'created_by', false), task, at, updatedAt: timeOf(o.updated_at, 'updated_at') ?? at };
      }
      case 'comment': {
        const id = typeof o.task === 'number' ? checkId('task', o.task) : taskIdOf(str(o.task, 'task')!);
        if (id === undefined) throw new TeamError('INVALID_PARAMS', '`task` must be a task id or key such as T-12');
        return { no, kind: 'comment', author: str(o.author, 'author', false), task: id, body: str(o.body, 'body')!, at: timeOf(o.created_at, 'created_at') };
      }
      default:
        throw new TeamError('INVALID_PARAMS', `unknown \`kind\` ${JSON.stringify(o.kind)} (member, channel, message, task, comment)`);
    }
  } catch (e) {
    throw atLine(no, e);
  }
}

/** Import `file` into `store` (either engine). Throws `TeamError` naming the line of the first bad one. */
export async function importJsonLines(store: ImportTarget, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
  const progress = options.progress ?? process.stderr;
  const batchRows = options.batchRows ?? TEAM_IMPORT_LIMITS.batchRows;
  const started = Date.now();
  const counts: Record<string, number> = {};
  let lineNo = 0;
  /** Every line up to this one is imported, or was skipped and reported. */
  let committed = 0;
  /** The first and last line of the transaction being written. */
  let inFlight: [number, number] = [0, 0];
  let batch: ({ no: number } & ReadLine)[] = [];
  let lastReport = started;
  let skipped = 0;
  let existing = 0;
  const skip = (e: unknown): boolean => {
    if (!(e instanceof BudgetError) || typeof e.data.line !== 'number') return false;
    if (options.skipExisting === true && e.code === 'ALREADY_EXISTS') {
      existing++;
      progress.write(`team import: kept ${e.message.slice(0, 500)}\n`);
      return true;
    }
    if (options.skipBadLines !== true) return false;
    skipped++;
    progress.write(`team import: skipped ${e.code}: ${e.message.slice(0, 500)}\n`);
    return true;
  };
  /**
   * Write `part` in one transaction; with skipping, a line the engine refuses rolls it back and
   * the lines before it and after it are written on their own (each line is written about twice at
   * most, however many are bad). Returns the lines written.
   */
  const write = async (part: ImportOp[]): Promise<ImportOp[]> => {
    if (part.length === 0) return part;
    try {
      inFlight = [part[0]!.no, part[part.length - 1]!.no];
      await store.importBatch(part);
      // Committed (with any bad line before it in the batch skipped and reported).
      committed = Math.max(committed, inFlight[1]);
      return part;
    } catch (e) {
      const at = part.findIndex((op) => op.no === (e as TeamError).data?.line);
      if (at === -1 || !skip(e)) throw e;
      return [...(await write(part.slice(0, at))), ...(await write(part.slice(at + 1)))];
    }
  };
  const flush = async (): Promise<void> => {
    const ops: ImportOp[] = [];
    for (const { no, text, bad } of batch) {
      try {
        if (bad !== undefined) throw bad;
        ops.push(parseImportLine(no, text));
      } catch (e) {
        if (!skip(atLine(no, e))) throw e;
      }
    }
    for (const op of await write(ops)) counts[op.kind] = (counts[op.kind] ?? 0) + 1;
    committed = batch.length === 0 ? committed : batch[batch.length - 1]!.no;
    batch = [];
    const now = Date.now();
    if (now - lastReport >= TEAM_IMPORT_LIMITS.progressEveryMs) {
      lastReport = now;
      progress.write(`team import: ${committed} lines (${Math.round((committed * 1000) / Math.max(1, now - started))} lines/s)\n`);
    }
  };
  try {
    for await (const line of linesOf(file, TEAM_IMPORT_LIMITS.maxLineBytes)) {
      lineNo++;
      if (line.text?.trim() === '') continue;
      batch.push({ no: lineNo, ...line });
      if (batch.length >= batchRows) await flush();
    }
    await flush();
  } catch (e) {
    if (e instanceof BudgetError) {
      const before = committed === 0 ? 'Nothing before it was imported' : `Lines 1-${committed} were imported`;
      if (e.code === 'OUTCOME_UNKNOWN') {
        // The transaction of lines A-B was sent and no answer came back: it may have committed.
        const [a, b] = inFlight;
        throw new TeamError(
          e.code,
          `${e.message}. ${before}; lines ${a}-${b} may have been imported (their transaction's outcome is unknown), and nothing after line ${b} was written. Check what the store holds of lines ${a}-${b} before importing them again.`,
          { ...e.data, committed, in_doubt: { from: a, to: b } },
        );
      }
      const hint = e.code === 'ALREADY_EXISTS' ? ' To import the file again, keeping the members that exist, add --skip-existing.' : '';
      throw new TeamError(e.code, `${e.message.replace(/\.$/, '')}. ${committed === 0 ? 'Nothing was imported' : `Lines 1-${committed} were imported; nothing after them was written`}.${hint}`, { ...e.data, committed });
    }
    throw e;
  }
  return { lines: lineNo, counts, skipped, existing, ms: Date.now() - started };
}

