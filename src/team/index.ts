/** The team layer's face: the store interface, the team service over its SQLite and PostgreSQL dialects, paths, import and limits. */
export { TeamService } from './service.js';
export { openSqliteTeamStore, type SqliteDialect } from './sqlite-dialect.js';
export { openPgTeamStore, type PgDialect } from './pg-dialect.js';
export type { TeamDialect } from './dialect.js';
export { PG_SETTINGS, isPostgresTarget } from './pg-connect.js';
export { PG_SCHEMA_VERSION } from './pg-schema.js';
export { TeamSession, defaultMemberName, type Caller, type TeamSessionOptions } from './session.js';
export { importJsonLines, type ImportOptions, type ImportSummary } from './import.js';
export { defaultTeamDbPath, resolveTeamDbPath, isInside } from './paths.js';
export { SCHEMA_VERSION } from './sqlite-schema.js';
export { checkStore, describeStoredValues, STORE_CHECK, type StoredValueReport, type StoredValueIssue, type StoredValueWindow } from './service-check.js';
export { visibleRoles } from './service-members.js';
export { checkMemberName, taskIdOf } from './validate.js';
export type { PageMessage, PageTask } from './service-rows.js';
export * from './limits.js';
export * from './types.js';
export { ACTIONS, PERMISSIONS, TEAM_ACTIONS, accessOf, isTeamAction, permissionDenied, type Access, type Action, type TeamAction } from './permissions.js';
