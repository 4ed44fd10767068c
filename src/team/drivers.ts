/**
 * The team store's database drivers, loaded on first use: `better-sqlite3` (a native module) for
 * the SQLite store, `pg` for PostgreSQL. They are optional dependencies of the package, so the
 * engine, the decorator and the proxy install and run without them; `serve` and `team` load the one
 * their store needs when it opens, and a driver that is missing or was not built answers
 * STORE_DRIVER_MISSING naming the package to install.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type Pg from 'pg';
import { TeamError } from './types.js';

const require = createRequire(import.meta.url);

/** The drivers, and the stores that need them. */
export const DRIVERS = Object.freeze({
  sqlite: { name: 'better-sqlite3', store: 'the SQLite team store' },
  pg: { name: 'pg', store: 'a PostgreSQL team store' },
});

/** The major version the package pins a driver at (its optional dependencies, read from its own package.json). */
function majorOf(name: string): string {
  try {
    const pkg = require('../../package.json') as { optionalDependencies?: Record<string, string> };
    return /\d+/.exec(pkg.optionalDependencies?.[name] ?? '')?.[0] ?? 'latest';
  } catch {
    return 'latest';
  }
}

type Driver = (typeof DRIVERS)[keyof typeof DRIVERS];

function load<T>(driver: Driver, check: (loaded: T) => void = () => {}): T {
  try {
    const loaded = require(driver.name) as T;
    check(loaded);
    return loaded;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const missing = err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${driver.name}'`);
    const text = String(err.message);
    const otherNode = err.code === 'ERR_DLOPEN_FAILED' && /NODE_MODULE_VERSION|different Node\.js version/.test(text);
    const unbuilt = /bindings file|\.node\b/.test(text);
    const why = missing
      ? 'is not installed'
      : otherNode
        ? `has a native module built for another Node.js version (run npm rebuild ${driver.name})`
        : unbuilt
          ? 'was installed without its native module (its install script did not run, or its build failed)'
          : `cannot be loaded (${text.split('\n')[0]})`;
    throw new TeamError(
      'STORE_DRIVER_MISSING',
      `${driver.store[0]!.toUpperCase()}${driver.store.slice(1)} needs the package ${driver.name}, which ${why}. ` +
        `Install it beside mcp-result-budget (npm install ${driver.name}@${majorOf(driver.name)}), or install mcp-result-budget without --omit=optional; ` +
        'the decorator and the proxy never need it, nor does serve while the workspace has no team store (once it has one, every call is checked against its members).',
    );
  }
}

let sqlite: typeof BetterSqlite3 | undefined;
let pg: typeof Pg | undefined;

/** The SQLite driver's constructor, loaded once. Throws STORE_DRIVER_MISSING when it cannot be. */
export function sqliteDriver(): typeof BetterSqlite3 {
  // A package installed without running its build script has no native module, and its require
  // still succeeds: opening a database in memory is what finds that out.
  sqlite ??= load<typeof BetterSqlite3>(DRIVERS.sqlite, (Database) => new Database(':memory:').close());
  return sqlite;
}

/** The PostgreSQL driver, loaded once. Throws STORE_DRIVER_MISSING when it cannot be. */
export function pgDriver(): typeof Pg {
  pg ??= load<typeof Pg>(DRIVERS.pg);
  return pg;
}
