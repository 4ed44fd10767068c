/**
 * `mcp-budget team [--root DIR] [--team-db PATH] <add|list|deactivate|reactivate|set-role|import|check> ...`:
 * administers the team store of a workspace (the same file `serve` uses for that root) and
 * bulk-imports JSON Lines. Writes go through the store's checks; a bad file or name is an error
 * with exit code 1, a usage mistake exit code 2.
 */
import { realpathSync } from 'node:fs';
import { usageError } from '../cli/args.js';
import { requiredValue, type FlagValues } from '../cli/parse.js';
import { ROLES, checkMemberName, checkStore, defaultMemberName, describeStoredValues, importJsonLines, isPostgresTarget, openPgTeamStore, openSqliteTeamStore, resolveTeamDbPath, type Role, type TeamStore } from '../team/index.js';
import { isBudgetError } from '../engine/index.js';

/** Streams of {@link runTeam}. */
export interface TeamCommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** `team`'s command line as `parseArgs` left it (flags `root`, `team-db`, `role`; the subcommand and its words). */
export interface TeamCommandLine {
  values: FlagValues;
  positionals: readonly string[];
}

/** Members listed per store read by `team list`. */
const LIST_PAGE_ROWS = 500;

function role(v: string | undefined, fallback?: Role): Role {
  if (v === undefined && fallback !== undefined) return fallback;
  if (v === undefined || !(ROLES as readonly string[]).includes(v)) throw usageError(`Expected a role (${ROLES.join(', ')}), got ${JSON.stringify(v ?? '')}`);
  return v as Role;
}

/** Run one `team` subcommand; returns the exit code. */
export async function runTeam(line: TeamCommandLine, io: TeamCommandIo): Promise<number> {
  const root = requiredValue(line.values, 'root') ?? process.cwd();
  const dbPath = requiredValue(line.values, 'team-db');
  const roleFlag = requiredValue(line.values, 'role');
  const admin = requiredValue(line.values, 'as') ?? defaultMemberName();
  const [sub, ...rest] = line.positionals;
  const arity: Record<string, number[]> = { add: [1], list: [0], deactivate: [1], reactivate: [1], 'set-role': [1, 2], import: [1], check: [0] };
  if (sub === undefined || arity[sub] === undefined) throw usageError(`team needs a subcommand: add, list, deactivate, reactivate, set-role, import or check${sub === undefined ? '' : ` (got \`${sub}\`)`}`);
  if (!arity[sub]!.includes(rest.length)) throw usageError(`team ${sub}: wrong number of arguments`);

  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    throw usageError(`\`--root\` ${root} is not a directory that exists`);
  }
  let store: TeamStore | undefined;
  try {
    // The same store `serve --team-db` uses: a PostgreSQL target, or a SQLite file (never a file
    // named after a connection string).
    store =
      dbPath !== undefined && isPostgresTarget(dbPath)
        ? await openPgTeamStore(dbPath)
        : openSqliteTeamStore(resolveTeamDbPath(realRoot, dbPath, true), dbPath ?? '(the default team store)');
    switch (sub) {
      case 'add': {
        // The administrator added to an empty store is its owner: any other role would leave the
        // store with no owner at all.
        const first = rest[0] === admin && (await store.isEmpty());
        const given = role(roleFlag, first ? 'owner' : 'member');
        if (first && given !== 'owner') {
          throw usageError(`the store is empty, and its first member must be its owner: add ${admin} with --role owner (or without --role), then others with any role`);
        }
        // An empty store gets its owner first: serve runs as the administrator, and a store whose
        // first member is someone else would refuse it (and have no owner to fix that).
        // both names checked before either is written (a refused name must not leave the owner behind)
        checkMemberName(admin);
        checkMemberName(rest[0]!);
        if (rest[0] !== admin && (await store.addFirstOwner(admin))) {
          const who = requiredValue(line.values, 'as') === undefined ? 'the OS user, whom serve runs as unless --as names another member' : 'from --as; start serve with the same --as';
          io.stdout.write(`the store was empty: added ${admin} (owner; ${who})\n`);
        }
        const m = await store.addMember(rest[0]!, given);
        io.stdout.write(`added ${m.name} (${m.role})\n`);
        break;
      }
      case 'reactivate': {
        const m = await store.reactivate(rest[0]!);
        io.stdout.write(`reactivated ${m.name}\n`);
        break;
      }
      case 'deactivate': {
        const m = await store.deactivate(rest[0]!);
        io.stdout.write(`deactivated ${m.name}\n`);
        break;
      }
      case 'set-role': {
        const m = await store.setRole(rest[0]!, role(rest[1] ?? roleFlag));
        io.stdout.write(`${m.name} is now ${m.role}\n`);
        break;
      }
      case 'list': {
        let after: string | undefined;
        for (;;) {
          const page = await store.listMembers(after, LIST_PAGE_ROWS);
          for (const m of page.rows) io.stdout.write(`${m.name}\t${m.role}\t${m.active ? 'active' : 'deactivated'}\n`);
          if (!page.more) break;
          after = page.rows[page.rows.length - 1]!.name;
        }
        break;
      }
      case 'check': {
        const label = dbPath ?? '(the default team store)';
        const report = await checkStore(store);
        if (report.rows > 0) {
          io.stdout.write(`${describeStoredValues(report, label)}\n`);
          return 1;
        }
        io.stdout.write(`team store ${label}: every stored value is one readers show as stored\n`);
        break;
      }
      case 'import': {
        const s = await importJsonLines(store, rest[0]!, { progress: io.stderr, skipBadLines: line.values['skip-bad-lines'] === true, skipExisting: line.values['skip-existing'] === true });
        const rate = Math.round((s.lines * 1000) / Math.max(1, s.ms));
        const skipped = s.skipped > 0 ? `; ${s.skipped} bad line${s.skipped === 1 ? '' : 's'} skipped (listed above)` : '';
        const existing = s.existing > 0 ? `; ${s.existing} existing member${s.existing === 1 ? '' : 's'} kept as they were` : '';
        io.stderr.write(`team import: done, ${s.lines} lines in ${(s.ms / 1000).toFixed(1)} s (${rate} lines/s): ${JSON.stringify(s.counts)}${skipped}${existing}\n`);
        const me = await store.getMember(admin);
        if (me === undefined || !me.active) {
          io.stderr.write(
            `team import: note: ${admin} is ${me === undefined ? 'not a member' : 'deactivated'}, and serve runs as ${admin} unless --as names another member; ` +
              `${me === undefined ? `add it (mcp-budget team add ${admin} --role owner)` : `reactivate it (mcp-budget team reactivate ${admin})`} or start serve with --as\n`,
          );
        }
        break;
      }
    }
    return 0;
  } catch (e) {
    // A store's or a member's failure is printed with its code (exit 1); a usage error goes on to the CLI (exit 2).
    if (isBudgetError(e) && e.code !== 'USAGE') {
      io.stderr.write(`mcp-budget: ${e.code}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await store?.close();
  }
}
