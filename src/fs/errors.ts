/**
 * Workspace failures: the workspace's codes of the one error (engine/errors.ts), and the mapping
 * from file-system errors. Messages say what happened and what to do, and name only the user's
 * path, never a host path. git and exec raise these codes too.
 */
import { BudgetError, type LayerError } from '../engine/index.js';

/** Stable codes of tool failures; tool results start their text with the code. */
export type WorkspaceErrorCode =
  | 'INVALID_PATH'
  | 'PATH_ESCAPES_ROOT'
  | 'NOT_FOUND'
  | 'NOT_A_DIRECTORY'
  | 'NOT_A_FILE'
  | 'INVALID_CURSOR'
  | 'INVALID_PARAMS'
  | 'INPUT_TOO_LARGE'
  | 'ALREADY_EXISTS'
  | 'IO_ERROR'
  /** The workspace root was replaced (renamed, swapped for a link) since the server started. */
  | 'ROOT_CHANGED'
  /** A repository git would act on is not confined to the root, or its config could run a program. */
  | 'UNSAFE_REPOSITORY'
  /** The root (or the named directory) is not a git repository of its own. */
  | 'NOT_A_REPOSITORY'
  /** This platform cannot confine the operation by descriptors; it is refused rather than pretended. */
  | 'UNSUPPORTED_PLATFORM'
  /** The caller's team role may not do this; nothing was written. */
  | 'PERMISSION_DENIED'
  /**
   * A write was started and whether it took effect is not known (its process was killed, the
   * store's connection was lost after the write was sent); the message says what is known and
   * how to check. Never repeat it blindly.
   */
  | 'OUTCOME_UNKNOWN';

declare module '../engine/errors.js' {
  interface ErrorCodes extends Record<WorkspaceErrorCode, true> {}
}

/** The one error, raised with a workspace code. */
export type WorkspaceError = BudgetError<WorkspaceErrorCode>;
/** The one error's constructor, typed to the workspace's codes (the same class: match with `isBudgetError`). */
export const WorkspaceError: LayerError<WorkspaceErrorCode> = BudgetError;

/** Map a file-system error to a workspace error with a message that says what to do. */
export function fsError(e: unknown, path: string | undefined): BudgetError {
  if (e instanceof BudgetError) return e;
  const err = e as NodeJS.ErrnoException;
  const p = JSON.stringify(path ?? '.');
  switch (err.code) {
    case 'ENOENT':
      return new WorkspaceError('NOT_FOUND', `${p} does not exist in the workspace`);
    case 'ENOTDIR':
      return new WorkspaceError('NOT_A_DIRECTORY', `${p} or one of its parents is not a directory (a symlink is never followed)`);
    case 'ELOOP':
      return new WorkspaceError('PATH_ESCAPES_ROOT', `${p} is a symlink (or passes through one) and is not followed here`);
    case 'EACCES':
    case 'EPERM':
      return new WorkspaceError('IO_ERROR', `Permission denied for ${p}`);
    case 'EEXIST':
      return new WorkspaceError('ALREADY_EXISTS', `${p} already exists; pass overwrite: true to replace it`);
    default:
      // Never the host path: only the user's path and the error code.
      return new WorkspaceError('IO_ERROR', `Cannot access ${p} (${err.code ?? 'error'})`);
  }
}
