/**
 * Which methods of {@link TeamStore} write, and what identifies what each wrote: once one of them
 * has resolved, its write is committed, so whatever the call does afterwards (rendering a receipt,
 * checking its schema, bounding it) can no longer turn the answer into a failure. The call
 * pipeline reads this table to mark a call applied (src/tools/applied.ts).
 */
import type { TeamStore } from './types.js';

type Method = { [K in keyof TeamStore]: TeamStore[K] extends (...args: never[]) => unknown ? K : never }[keyof TeamStore];
type Receipt<K extends Method> = (result: Awaited<ReturnType<TeamStore[K]>>, args: Parameters<TeamStore[K]>) => Record<string, unknown>;

/** Every writing method with the fields that identify its write (a test checks every other method only reads). */
export const TEAM_WRITES = {
  importBatch: (_r, [ops]) => ({ lines: ops.length }),
  addFirstOwner: (added, [name]) => ({ member: name, added }),
  addMember: (m) => ({ member: m.name }),
  setRole: (m) => ({ member: m.name, role: m.role }),
  deactivate: (m) => ({ member: m.name }),
  reactivate: (m) => ({ member: m.name }),
  createChannel: (_r, [name]) => ({ channel: name }),
  sendMessage: (m) => ({ message_id: m.id, channel: m.channel }),
  createTask: (t) => ({ task_id: t.id }),
  updateTask: (t) => ({ task_id: t.id }),
  addComment: (c) => ({ task_id: c.task_id, comment_id: c.id }),
  ackInbox: (_n, [, through]) => ({ acked_through: through }),
} satisfies { readonly [K in Method]?: Receipt<K> };

/** The methods of {@link TeamStore} that only read (with {@link TEAM_WRITES}: every method, once). */
export const TEAM_READS = [
  'isEmpty',
  'getMember',
  'listMembers',
  'memberOptions',
  'getMessage',
  'history',
  'searchMessages',
  'lastMessageId',
  'getTask',
  'listTasks',
  'searchTasks',
  'lastTaskId',
  'comments',
  'labels',
  'readInbox',
  'checkStoredValues',
  'close',
] as const satisfies readonly Method[];

/** Every method is classified: a method added to TeamStore and to neither list does not compile. */
type Unclassified = Exclude<Method, keyof typeof TEAM_WRITES | (typeof TEAM_READS)[number]>;
export const EVERY_METHOD_CLASSIFIED: [Unclassified] extends [never] ? true : Unclassified = true;

type AnyReceipt = (result: unknown, args: readonly unknown[]) => Record<string, unknown>;

/** How to identify the write `method` makes, from its result and arguments; undefined when `method` only reads. */
export function writeReceiptOf(method: string): AnyReceipt | undefined {
  return Object.hasOwn(TEAM_WRITES, method) ? (TEAM_WRITES as unknown as Record<string, AnyReceipt>)[method] : undefined;
}
