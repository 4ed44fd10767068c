/**
 * Who is calling, for the tool that runs: the member a transport authenticated (the HTTP front's
 * bearer token maps to `extra.authInfo.clientId`), carried through the handler's async work
 * without changing every tool's signature. Absent over stdio: the server's `--as` member calls.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What a handler may know of its caller. */
export interface CallContext {
  /** The authenticated member name, when a transport authenticated one. */
  member?: string;
}

const storage = new AsyncLocalStorage<CallContext>();

/** Run `work` with the caller named by a request's `extra.authInfo`. */
export function runAsCaller<T>(authInfo: { clientId?: unknown } | undefined, work: () => Promise<T>): Promise<T> {
  const member = typeof authInfo?.clientId === 'string' && authInfo.clientId !== '' ? authInfo.clientId : undefined;
  return member === undefined ? work() : storage.run({ member }, work);
}

/** The authenticated member of the call being handled, if any. */
export function callerMember(): string | undefined {
  return storage.getStore()?.member;
}
