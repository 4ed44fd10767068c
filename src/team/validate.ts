/**
 * Input checks of the team store, made before anything is written: names by pattern and byte cap,
 * texts by byte cap, and the total of one mutation. Errors name the cap and the value seen.
 */
import { TEAM_INPUT_CAPS, TIME_RANGE_MS } from './limits.js';
import { ROLES, TASK_PRIORITIES, TASK_STATUSES, TeamError, type Role, type SendOptions, type TaskPriority, type TaskStatus } from './types.js';

const MEMBER_NAME = /^[\p{L}\p{N}][\p{L}\p{N}._@-]*$/u;
const CHANNEL_NAME = /^[\p{L}\p{N}][\p{L}\p{N}._-]*$/u;
const LABEL = /^[\p{L}\p{N}][\p{L}\p{N}._:/-]*$/u;


/** A stored time: whole milliseconds within {@link TIME_RANGE_MS}. */
export function checkTime(field: string, t: number): number {
  if (!Number.isSafeInteger(t) || t < TIME_RANGE_MS.min || t > TIME_RANGE_MS.max) {
    throw new TeamError('INVALID_PARAMS', `\`${field}\` is not a time the store keeps: whole milliseconds from ${new Date(TIME_RANGE_MS.min).toISOString()} to ${new Date(TIME_RANGE_MS.max).toISOString()}, got ${String(t).slice(0, 40)}`);
  }
  return t;
}

/** An id read from outside: a positive whole number within 2^53. */
export function checkId(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new TeamError('INVALID_PARAMS', `\`${field}\` must be a positive whole number below 2^53, got ${String(v).slice(0, 40)}`);
  return v;
}

/** The task id a query or an import line names: `T-123`, `t123`, `#123` or `123`. */
export function taskIdOf(q: string): number | undefined {
  const m = /^\s*(?:[Tt]-?|#)?(\d{1,15})\s*$/.exec(q);
  return m === null ? undefined : Number(m[1]);
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (UTF-16 code units). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What every stored string must be, whichever engine keeps it and whichever reader shows it: no
 * NUL (one engine cut previews there, the other refused it with a driver error) and well-formed
 * UTF-16 (a lone surrogate has no UTF-8 form; one engine would store a replacement, the other fail).
 */
export function checkStoredText(field: string, value: string): string {
  if (value.includes('\0')) throw new TeamError('INVALID_PARAMS', `\`${field}\` contains a NUL character; the store keeps no NUL. Nothing was written.`);
  if (LONE_SURROGATE.test(value)) throw new TeamError('INVALID_PARAMS', `\`${field}\` contains a lone surrogate (half of a UTF-16 pair); send well-formed text. Nothing was written.`);
  return value;
}

/** Adds up the UTF-8 bytes of one mutation's strings and refuses past `maxTotalBytes`; every string is checked for what the store keeps. */
export class ByteTotal {
  private bytes = 0;

  add(field: string, value: string, capBytes: number, capName: string): string {
    checkStoredText(field, value);
    const n = Buffer.byteLength(value, 'utf8');
    if (n > capBytes) {
      throw new TeamError('INPUT_TOO_LARGE', `\`${field}\` is ${n} bytes; the cap \`${capName}\` is ${capBytes} bytes. Nothing was written.`, {
        cap: capName,
        max: capBytes,
        value: n,
      });
    }
    this.bytes += n;
    if (this.bytes > TEAM_INPUT_CAPS.maxTotalBytes) {
      throw new TeamError(
        'INPUT_TOO_LARGE',
        `The strings of this call add up to more than ${TEAM_INPUT_CAPS.maxTotalBytes} bytes (cap \`maxTotalBytes\`, got at least ${this.bytes}). Nothing was written.`,
        { cap: 'maxTotalBytes', max: TEAM_INPUT_CAPS.maxTotalBytes, value: this.bytes },
      );
    }
    return value;
  }
}

function checkPattern(kind: string, value: string, re: RegExp, capBytes: number, capName: string, total?: ByteTotal): string {
  (total ?? new ByteTotal()).add(kind, value, capBytes, capName);
  if (!re.test(value)) {
    throw new TeamError('INVALID_PARAMS', `Invalid ${kind} ${JSON.stringify(value.slice(0, 80))}: use letters, digits and ${kind === 'label' ? '. _ - : /' : kind === 'channel' ? '. _ -' : '. _ - @'}, starting with a letter or digit.`);
  }
  return value;
}

/** A member name: letters, digits, `. _ - @`; at most `maxNameBytes`. */
export function checkMemberName(name: string, total?: ByteTotal): string {
  return checkPattern('member name', name, MEMBER_NAME, TEAM_INPUT_CAPS.maxNameBytes, 'maxNameBytes', total);
}

/** A channel name (a leading `#` is dropped): letters, digits, `. _ -`; at most `maxChannelBytes`. */
export function checkChannelName(name: string, total?: ByteTotal): string {
  const bare = name.startsWith('#') ? name.slice(1) : name;
  return checkPattern('channel', bare, CHANNEL_NAME, TEAM_INPUT_CAPS.maxChannelBytes, 'maxChannelBytes', total);
}

/** Labels: at most `maxLabels`, each a name of at most `maxLabelBytes`; duplicates removed. */
export function checkLabels(labels: readonly string[], total: ByteTotal): string[] {
  if (labels.length > TEAM_INPUT_CAPS.maxLabels) {
    throw new TeamError('INPUT_TOO_LARGE', `\`labels\` has ${labels.length} items; the cap \`maxLabels\` is ${TEAM_INPUT_CAPS.maxLabels}. Nothing was written.`, {
      cap: 'maxLabels',
      max: TEAM_INPUT_CAPS.maxLabels,
      value: labels.length,
    });
  }
  for (const l of labels) checkPattern('label', l, LABEL, TEAM_INPUT_CAPS.maxLabelBytes, 'maxLabelBytes', total);
  return [...new Set(labels)];
}

function oneOf<T extends string>(kind: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new TeamError('INVALID_PARAMS', `Expected \`${kind}\` to be one of ${allowed.join(', ')}, got ${JSON.stringify(value.slice(0, 40))}`);
  }
  return value as T;
}

export const checkRole = (v: string): Role => oneOf('role', v, ROLES);
export const checkStatus = (v: string): TaskStatus => oneOf('status', v, TASK_STATUSES);
export const checkPriority = (v: string): TaskPriority => oneOf('priority', v, TASK_PRIORITIES);

/** A required non-blank text of at most `capBytes`. */
export function checkText(field: string, value: string, capBytes: number, capName: string, total: ByteTotal): string {
  total.add(field, value, capBytes, capName);
  if (value.trim() === '') throw new TeamError('INVALID_PARAMS', `\`${field}\` must not be empty.`);
  return value;
}

/**
 * Every input of a `message_send` checked before anything is written, for both engines: the
 * channel name, the body and the recipients (count and names), all within one byte total.
 */
export function checkSendInput(o: SendOptions): { channel: string; recipients: string[] } {
  const total = new ByteTotal();
  const channel = checkChannelName(o.channel, total);
  checkText('body', o.body, TEAM_INPUT_CAPS.maxMessageBytes, 'maxMessageBytes', total);
  if (o.at !== undefined) checkTime('created_at', o.at);
  const to = o.to ?? [];
  if (to.length > TEAM_INPUT_CAPS.maxRecipients) {
    throw new TeamError('INPUT_TOO_LARGE', `\`to\` has ${to.length} members; the cap \`maxRecipients\` is ${TEAM_INPUT_CAPS.maxRecipients}. Nothing was written.`, {
      cap: 'maxRecipients',
      max: TEAM_INPUT_CAPS.maxRecipients,
      value: to.length,
    });
  }
  return { channel, recipients: to.map((name) => checkMemberName(name, total)) };
}
