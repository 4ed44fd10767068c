/**
 * The class of upstream answers the envelope tests generate: every combination of top-level keys,
 * with the big member first, in the middle or last, and what the proxy must make of each.
 */
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/engine/index.js';

/** The default budget (bytes) and how much a response line may add to it (envelope, id). */
export const BUDGET = 64 * 1024;
export const SLACK = 512;
/** Requests and notifications from the server pass whole up to this size (the cap on messages that are not tool results). */
export const PASS_MAX = DEFAULT_MAX_MESSAGE_BYTES;

export type IdForm = 'exact' | 'string' | 'null' | 'absent';
export type MethodForm = 'string' | 'null' | 'absent';
type Big = 'result' | 'error' | 'params' | 'x_extra';

export interface Case {
  rid: number;
  size: number;
  id: IdForm;
  method: MethodForm;
  result: boolean;
  error: boolean;
  params: boolean;
  extra: boolean;
  big: Big;
  at: 'first' | 'middle' | 'last';
  /** The other members in reverse order (so `params` comes before or after `result`). */
  reversed: boolean;
  /** Also run through the SDK client. */
  sdk: boolean;
  label: string;
}

const SMALL: Record<string, string> = {
  jsonrpc: '"2.0"',
  result: '{"content":[{"type":"text","text":"crafted"}]}',
  error: '{"code":-32000,"message":"crafted error"}',
  params: '{}',
  x_extra: '"x"',
};

/** The members the upstream writes, in order; null marks the padded one, `id`'s text is its form. */
export function membersOf(c: Case): [string, string | null][] {
  const rest: [string, string | null][] = [['jsonrpc', SMALL.jsonrpc!]];
  if (c.id !== 'absent') rest.push(['id', c.id]);
  if (c.method !== 'absent') rest.push(['method', c.method === 'null' ? 'null' : '"tools/call"']);
  for (const k of ['params', 'result', 'error', 'x_extra'] as const) {
    const on = k === 'x_extra' ? c.extra : c[k];
    if (on && k !== c.big) rest.push([k, SMALL[k]!]);
  }
  if (c.reversed) rest.reverse();
  const at = c.at === 'first' ? 0 : c.at === 'middle' ? Math.floor(rest.length / 2) : rest.length;
  rest.splice(at, 0, [c.big, null]);
  return rest;
}

/** What the message is by its keys (the rule under test, written out independently). */
export function classify(c: Case): 'request' | 'notification' | 'response' | 'invalid' {
  const answers = c.result || c.error;
  if (c.method !== 'absent') return answers ? 'invalid' : c.id === 'absent' ? 'notification' : 'request';
  if (c.result && c.error) return 'invalid';
  return answers ? 'response' : 'invalid';
}

/**
 * The one answer the client must get: the crafted response bounded (`ok`, or `error` for an
 * error), -32603 in place of an invalid answer naming the call (`refused`), or the upstream's
 * small follow-up when the crafted line answers nothing (`fallback`).
 */
export function expected(c: Case): 'ok' | 'error' | 'refused' | 'fallback' {
  const names = c.id === 'exact' || c.id === 'string';
  if (!names) return 'fallback';
  const kind = classify(c);
  if (kind === 'response') return c.result ? 'ok' : 'error';
  if (kind === 'invalid') return 'refused';
  return 'fallback';
}

let nextRid = 1000;

/**
 * Every key set at sizes under 3 MB. Far over the fast path the long path classifies by which keys
 * are present, not by their values or by size, so a smaller set keeps the test fast: the id forms
 * that name no call, the extra key and `"method":"tools/call"` (a key like `"method":null`) are
 * left to the smaller sizes, and at 9 MB the id is the call's own.
 */
export function casesFor(size: number): Case[] {
  const huge = size >= 3 * 1024 * 1024;
  const out: Case[] = [];
  const ids: IdForm[] = size > PASS_MAX ? ['exact'] : huge ? ['exact', 'string'] : ['exact', 'string', 'null', 'absent'];
  const methods: MethodForm[] = huge ? ['null', 'absent'] : ['string', 'null', 'absent'];
  for (const id of ids) {
    for (const method of methods) {
      for (const result of [false, true]) {
        for (const error of [false, true]) {
          for (const params of [false, true]) {
            for (const extra of huge ? [false] : [false, true]) {
              const present: Big[] = [];
              if (result) present.push('result');
              if (error) present.push('error');
              if (params) present.push('params');
              if (extra) present.push('x_extra');
              // Under the fast path every present member takes a turn as the big one.
              const bigs: Big[] = present.length === 0 ? ['x_extra'] : size < 1024 * 1024 ? present : [present[0]!];
              for (const big of bigs) {
                for (const at of ['first', 'middle', 'last'] as const) {
                  const reversed = (nextRid & 1) === 1;
                  const sdk = id === 'exact' && (at === 'first' || at === 'last') && big !== 'x_extra';
                  const keys = [id === 'absent' ? '' : `id:${id}`, method === 'absent' ? '' : `method:${method}`, result ? 'result' : '', error ? 'error' : '', params ? 'params' : '', extra || big === 'x_extra' ? 'extra' : '']
                    .filter(Boolean)
                    .join(',');
                  out.push({ rid: nextRid++, size, id, method, result, error, params, extra: extra || big === 'x_extra', big, at, reversed, sdk, label: `{${keys}} big ${big} ${at}${reversed ? ' reversed' : ''}` });
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}
