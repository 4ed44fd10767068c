/**
 * A depth-first walk under one open directory, through the workspace gate only: every directory is
 * a `DirHandle` opened from its parent's descriptor without following a link, listed with
 * `opendir` on that descriptor (streamed, a few entries at a time: memory stays flat on a directory
 * of a million entries), or, when the query names literal entries there, looked up by `lstat` inside
 * it. Symlinks are never entered and never matched (only regular files match); a directory swapped
 * for a link between its listing and its opening fails the `O_NOFOLLOW` open and is skipped.
 *
 * The walk stops at a cap on entries visited or on time, or when the caller's page is full, and can
 * say where it stands: the names of the directories it is inside, from the base, and the last entry
 * it finished in the deepest one (raw bytes). A new walk resumes there by re-opening each directory
 * through the gate and reading past the entries before the position (a bounded re-read).
 */
import type { Dir, Dirent } from 'node:fs';
import { lstat } from 'node:fs/promises';
import type { DirHandle } from './confine.js';
import { WorkspaceError } from './errors.js';
import type { GlobPlan } from './glob-pattern.js';

/** Caps of one walk (one tool call). */
export interface WalkLimits {
  /** Entries visited (listed or looked up) before the walk stops. */
  maxVisits: number;
  /** Wall time before the walk stops, ms (checked between entries). */
  maxMs: number;
  /** Entries a resume may re-read to reach its position. */
  maxResumeSkip: number;
  /** Entries always visited after a resume before the time cap may stop the walk (progress). */
  minProgress: number;
  /** Directory levels below the base the walk enters (each open level holds two descriptors). */
  maxDepth: number;
  /** Raw bytes of a directory's path from the base for the walk to enter it (keeps cursors small). */
  maxPathBytes: number;
}

/** Where a walk stands: directories it is inside (from the base), and the last entry finished in the deepest. */
export interface WalkPosition {
  dirs: Buffer[];
  last: Buffer | null;
}

/** Why a walk returned. */
export type WalkOutcome = 'done' | 'full' | 'visits' | 'time';

type Kind = 'file' | 'dir' | 'other';

interface Frame {
  handle: DirHandle;
  /** Streamed listing; null for a literal frame or before it is opened. */
  dir: Dir | null;
  /** Names to look up instead of listing (every live alternative names a literal here). */
  literals: Buffer[] | null;
  nextLiteral: number;
  states: number[];
  /** This directory's name in its parent (null for the base). */
  name: Buffer | null;
  /** Path prefix from the base, with a trailing `/` ('' for the base): lossy text and raw bytes. */
  prefix: string;
  prefixRaw: Buffer;
  depth: number;
  last: Buffer | null;
}

const LIST_BUFFER = 128;

function kindOf(d: { isFile(): boolean; isDirectory(): boolean }): Kind {
  return d.isFile() ? 'file' : d.isDirectory() ? 'dir' : 'other';
}

const changed = (): WorkspaceError =>
  new WorkspaceError('INVALID_CURSOR', 'Invalid params: the tree changed where the cursor stopped (its entry is gone). Start again without a cursor.');

/** A glob walk; owns every handle it holds, including the base. Call `close()` when done. */
export class GlobWalk {
  /** Entries visited since the walk started or resumed (the position re-read is not counted). */
  visited = 0;
  /** Entries re-read to reach a resume position. */
  reread = 0;
  /** Directories the query could match under that were not entered (depth or path cap). */
  tooDeep = 0;
  /** Directories that could not be opened or listed (permissions, removed, swapped for a link). */
  unreadable = 0;
  private readonly stack: Frame[] = [];
  private readonly started = performance.now();

  constructor(
    base: DirHandle,
    private readonly plan: GlobPlan,
    private readonly limits: WalkLimits,
  ) {
    this.stack.push(this.frame(base, plan.initial, null, null));
  }

  private frame(handle: DirHandle, states: number[], name: Buffer | null, parent: Frame | null): Frame {
    return {
      handle,
      dir: null,
      literals: this.plan.literalNames(states),
      nextLiteral: 0,
      states,
      name,
      prefix: parent === null ? '' : `${parent.prefix}${name!.toString('utf8')}/`,
      prefixRaw: parent === null ? Buffer.alloc(0) : Buffer.concat([parent.prefixRaw, name!, Buffer.from('/')]),
      depth: parent === null ? 0 : parent.depth + 1,
      last: null,
    };
  }

  /** The next entry of a frame, or null at its end. */
  private async next(f: Frame): Promise<{ name: Buffer; kind: Kind } | null> {
    if (f.literals !== null) {
      const name = f.literals[f.nextLiteral++];
      if (name === undefined) return null;
      try {
        // lstat through the open directory: the final name is never followed.
        return { name, kind: kindOf(await lstat(f.handle.at(name))) };
      } catch {
        return { name, kind: 'other' }; // absent (or unreadable): nothing to match, nothing to enter
      }
    }
    if (!(await this.openListing(f))) return null;
    let d: Dirent<Buffer> | null;
    try {
      d = (await f.dir!.read()) as unknown as Dirent<Buffer> | null;
    } catch {
      this.unreadable++;
      return null; // removed or unreadable while listing: what was read stands
    }
    return d === null ? null : { name: d.name, kind: kindOf(d) };
  }

  /** Start listing a frame's directory through its descriptor (false: it cannot be listed). */
  private async openListing(f: Frame): Promise<boolean> {
    if (f.dir !== null) return true;
    try {
      f.dir = await f.handle.list(LIST_BUFFER, true);
      return true;
    } catch {
      this.unreadable++;
      return false;
    }
  }

  /** Open a child directory through the gate and push it (false: not opened). */
  private async enter(top: Frame, name: Buffer, states: number[]): Promise<boolean> {
    let child: DirHandle;
    try {
      child = await top.handle.openDir(name); // O_NOFOLLOW | O_DIRECTORY from the parent's descriptor
    } catch {
      this.unreadable++;
      return false;
    }
    this.stack.push(this.frame(child, states, name, top));
    return true;
  }

  private async pop(): Promise<void> {
    const f = this.stack.pop();
    if (f === undefined) return;
    await f.dir?.close().catch(() => undefined);
    await f.handle.close();
  }

  /**
   * Walk on. `onMatch` gets each match (lossy path from the base, raw bytes) and returns false
   * when the page is full: that match is then not finished, and the position stays before it.
   */
  async run(onMatch: (path: string, raw: Buffer) => boolean): Promise<WalkOutcome> {
    const { maxVisits, maxMs, minProgress, maxDepth, maxPathBytes } = this.limits;
    for (;;) {
      const top = this.stack[this.stack.length - 1];
      if (top === undefined) return 'done';
      if (this.visited >= maxVisits) return 'visits';
      if (this.visited >= minProgress && performance.now() - this.started > maxMs) return 'time';
      const e = await this.next(top);
      if (e === null) {
        await this.pop();
        continue;
      }
      this.visited++;
      const name = e.name.toString('utf8');
      if (e.kind === 'file') {
        if (this.plan.fileMayMatch(top.states, name)) {
          const path = top.prefix + name;
          if (this.plan.matches(path) && !onMatch(path, Buffer.concat([top.prefixRaw, e.name]))) return 'full';
        }
      } else if (e.kind === 'dir') {
        const states = this.plan.stepDir(top.states, name);
        if (states.length > 0) {
          top.last = e.name;
          if (top.depth + 1 > maxDepth || top.prefixRaw.length + e.name.length > maxPathBytes) this.tooDeep++;
          else await this.enter(top, e.name, states);
          continue;
        }
      }
      top.last = e.name;
    }
  }

  /** Where the walk stands (meaningful after `run` returned anything but 'done'). */
  position(): WalkPosition {
    const dirs = this.stack.slice(1).map((f) => f.name!);
    return { dirs, last: this.stack[this.stack.length - 1]?.last ?? null };
  }

  /**
   * Move to a position a previous walk reported: re-open each directory through the gate and read
   * past the entries before it. A directory on the way that is gone (or is now a link) counts as
   * finished; an entry that cannot be found any more is `INVALID_CURSOR`.
   */
  async resume(pos: WalkPosition): Promise<void> {
    for (const name of pos.dirs) {
      const top = this.stack[this.stack.length - 1]!;
      await this.skipTo(top, name);
      top.last = name;
      const states = this.plan.stepDir(top.states, name.toString('utf8'));
      if (states.length === 0) throw changed(); // a signed cursor never names such a directory
      if (!(await this.enter(top, name, states))) return;
    }
    if (pos.last !== null) {
      const top = this.stack[this.stack.length - 1]!;
      await this.skipTo(top, pos.last);
      top.last = pos.last;
    }
  }

  private async skipTo(f: Frame, name: Buffer): Promise<void> {
    if (f.literals !== null) {
      const i = f.literals.findIndex((n) => n.equals(name));
      if (i < 0) throw changed();
      f.nextLiteral = i + 1;
      return;
    }
    if (!(await this.openListing(f))) throw changed();
    for (let n = 0; ; n++) {
      if (++this.reread > this.limits.maxResumeSkip) {
        throw new WorkspaceError(
          'INVALID_CURSOR',
          `Invalid params: resuming would re-read more than ${this.limits.maxResumeSkip} entries to reach the cursor's position; narrow \`path\` or \`query\`.`,
          { max: this.limits.maxResumeSkip },
        );
      }
      // Perf: the re-read takes entries with Dir.readSync (no promise per entry; one getdents per
      // LIST_BUFFER entries) and yields to the event loop every 1024: about 2x faster than read()
      // on a 200k-entry directory.
      if ((n & 1023) === 1023) await new Promise((r) => setImmediate(r));
      let d: Dirent<Buffer> | null;
      try {
        d = f.dir!.readSync() as unknown as Dirent<Buffer> | null;
      } catch {
        d = null;
      }
      if (d === null) throw changed();
      if (d.name.equals(name)) return;
    }
  }

  /** Close every handle still open (the base included). */
  async close(): Promise<void> {
    while (this.stack.length > 0) await this.pop();
  }
}
