/**
 * The team store as `serve` uses it: a PostgreSQL database when `--team-db` names one
 * (`postgres://…` or libpq keywords: opened and checked at startup), else the SQLite file chosen
 * for the workspace (refused inside the root),
 * opened at startup when it exists (so a corrupt, locked, foreign or newer file, or an unknown
 * `--as`, stops the server with a clear error), and created on the first team call otherwise, so
 * serving a workspace without using the team tools leaves no file behind. The calling member is
 * read again on every call: a role change or a deactivation takes effect at once.
 */
import { checkStore, describeStoredValues } from './service-check.js';
import { StderrWarnings } from '../shared/warnings.js';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { userInfo } from 'node:os';
import { resolveTeamDbPath } from './paths.js';
import { isPostgresTarget, pgLabel } from './pg-connect.js';
import { openPgTeamStore } from './pg-dialect.js';
import { openSqliteTeamStore } from './sqlite-dialect.js';
import { TeamError, type Member, type TeamStore } from './types.js';
import { BudgetError } from '../engine/index.js';

/** Options of {@link TeamSession}. */
/** The stored-value check's finding, for the operator. */
const storeWarnings = new StderrWarnings(process.stderr, 'mcp-budget');

export interface TeamSessionOptions {
  /** The store file, or a PostgreSQL database (`postgres://…`) (`--team-db`). @default the per-user state file for the root */
  dbPath?: string;
  /** The calling member's name (`--as`). @default the OS user name */
  as?: string;
  /**
   * Every call names its member by token (HTTP with a token file): the `--as` member is not a
   * caller, so it need not be a member at startup (it still names the first owner of an empty
   * store). @default false
   */
  callersFromTokens?: boolean;
  /** Check the stored values in the background once the store opens, and report rows no reader shows as stored. @default true */
  checkStoredValues?: boolean;
}

/** The member a process runs as when `--as` names none: the OS user, when it is a valid member name. */
export function defaultMemberName(): string {
  try {
    const name = userInfo().username;
    return /^[\p{L}\p{N}][\p{L}\p{N}._@-]*$/u.test(name) ? name : 'owner';
  } catch {
    return 'owner';
  }
}

/** Who calls, as the pipeline resolved it: with the store's record once the workspace has a store. */
export interface Caller {
  name: string;
  /** The member as the store has it now (role, active); absent while the workspace has no store. */
  me?: Member;
  store?: TeamStore;
}

export class TeamSession {
  readonly memberName: string;
  private readonly file: string;
  /** Why the default file cannot be used (it is inside the root): told on the first team call. */
  private readonly unusable: TeamError | undefined;
  private store: TeamStore | undefined;
  private opening: Promise<TeamStore> | undefined;
  /** `--team-db` names a PostgreSQL database. */
  private readonly postgres: boolean;

  /**
   * Resolves the file; opens nothing yet. An explicit file inside the root throws
   * STORE_INSIDE_ROOT here (a startup error); the default one inside the root (a root holding the
   * user's state directory) fails the team calls only, so the workspace can still be served.
   */
  constructor(realRoot: string, private readonly options: TeamSessionOptions = {}) {
    this.memberName = options.as ?? defaultMemberName();
    this.postgres = options.dbPath !== undefined && isPostgresTarget(options.dbPath);
    let file = '';
    try {
      if (!this.postgres) file = resolveTeamDbPath(realRoot, options.dbPath, false);
    } catch (e) {
      if (!(e instanceof BudgetError)) throw e;
      if (options.dbPath !== undefined) throw new BudgetError(e.code, `${e.code}: ${e.message}`, e.data);
      this.unusable = e;
    }
    this.file = file;
  }

  private label(): string {
    if (this.postgres) return pgLabel(this.options.dbPath!);
    return this.options.dbPath !== undefined ? this.options.dbPath : '(the default team store)';
  }

  /** Open the store now when its file exists, and check the calling member. Throws `TeamError`. */
  async startup(): Promise<void> {
    if (this.unusable !== undefined || (!this.postgres && !existsSync(this.file))) return;
    try {
      await this.open();
    } catch (e) {
      // A startup error names its code first, as tool failures do.
      if (e instanceof BudgetError) throw new BudgetError(e.code, `${e.code}: ${e.message}`, e.data);
      throw e;
    }
  }

  /** Open once: concurrent first calls share one opening (a database store opens asynchronously). */
  private open(): Promise<TeamStore> {
    if (this.store !== undefined) return Promise.resolve(this.store);
    this.opening ??= this.openNow().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async openNow(): Promise<TeamStore> {
    if (this.unusable !== undefined) throw this.unusable;
    let store: TeamStore;
    if (this.postgres) {
      store = await openPgTeamStore(this.options.dbPath!);
    } else {
      if (!existsSync(this.file)) mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      store = openSqliteTeamStore(this.file, this.label());
    }
    try {
      // Replicas starting on one empty store race here: the check and the insert are one write.
      const added = await store.addFirstOwner(this.memberName);
      if (!added && this.options.callersFromTokens !== true) {
        const me = await store.getMember(this.memberName);
        if (me === undefined || !me.active) {
          throw new TeamError(
            'UNKNOWN_MEMBER',
            `\`--as\` ${this.memberName}: ${me === undefined ? 'no such member' : 'this member is deactivated'} in the team store ${this.label()}. ` +
              (me === undefined ? `Add it with \`mcp-budget team add ${this.memberName} --role member\`` : `Reactivate it with \`mcp-budget team reactivate ${this.memberName}\``) +
              ', or pass another name.',
          );
        }
      }
    } catch (e) {
      await store.close();
      throw e;
    }
    this.store = store;
    this.checkInBackground(store);
    return store;
  }

  /**
   * The stored-value check, after the store opened, without delaying a call: its finding goes to
   * the operator's stderr once; it stops when the session closes.
   */
  private checkInBackground(store: TeamStore): void {
    if (this.options.checkStoredValues === false) return;
    checkStore(store, () => this.store !== store)
      .then((report) => {
        const text = describeStoredValues(report, this.label());
        if (text !== '' && this.store === store) storeWarnings.warn(text);
      })
      .catch(() => undefined); // a store that fails here fails the next call, with its own error
  }

  /**
   * The caller of one call, for the call pipeline: the member a transport authenticated
   * (`member`), else the `--as` member, as the store has it now (an unknown or deactivated one is
   * refused). `team`: the call needs the store, which is opened or created. Otherwise, while the
   * workspace has no store there are no members, and the caller is its name alone.
   */
  async caller(member: string | undefined, team: boolean): Promise<Caller> {
    const hasStore = this.store !== undefined || this.postgres || (this.unusable === undefined && existsSync(this.file));
    if (!team && !hasStore) return { name: member ?? this.memberName };
    const { store, me } = await this.current(member);
    return { name: me.name, me, store };
  }

  /**
   * The store and the calling member as it is now (opened or created on first use). `member` is
   * the member a transport authenticated (an HTTP bearer token); without one, the `--as` member.
   */
  async current(member?: string): Promise<{ store: TeamStore; me: Member }> {
    const store = await this.open();
    const name = member ?? this.memberName;
    const me = await store.getMember(name);
    if (me === undefined || !me.active) {
      throw new TeamError(
        'NOT_FOUND',
        (member === undefined ? `The calling member ${name} (\`--as\`)` : `The member ${name} named by this request's token`) +
          (me === undefined
            ? ` is not a member of the team store; add it with \`mcp-budget team add ${name}\`${member === undefined ? ', or restart the server with another `--as`' : ''}.`
            : ` is deactivated; reactivate it with \`mcp-budget team reactivate ${name}\`${member === undefined ? ', or restart the server with another `--as`' : ''}.`),
      );
    }
    return { store, me };
  }

  async close(): Promise<void> {
    await this.store?.close();
    this.store = undefined;
  }
}
