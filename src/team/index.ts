/** The team layer's face: the store interface, the SQLite and PostgreSQL engines, paths, import and limits. */
export { SqliteTeamStore } from './sqlite-store.js';
export { PgTeamStore } from './pg-store.js';
export { PG_SETTINGS, isPostgresTarget } from './pg-connect.js';
export { PG_SCHEMA_VERSION } from './pg-schema.js';
export { TeamSession, type Caller, type TeamSessionOptions } from './session.js';
export { importJsonLines, type ImportOptions, type ImportSummary } from './import.js';
export { defaultTeamDbPath, resolveTeamDbPath, isInside } from './paths.js';
export { SCHEMA_VERSION } from './sqlite-schema.js';
export { visibleRoles } from './members.js';
export { taskIdOf } from './tasks.js';
export type { PageMessage } from './messages.js';
export type { PageTask } from './tasks.js';
export * from './limits.js';
export * from './types.js';
export { ACTIONS, PERMISSIONS, TEAM_ACTIONS, accessOf, isTeamAction, permissionDenied, type Access, type Action, type TeamAction } from './permissions.js';
