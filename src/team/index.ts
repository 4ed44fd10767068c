/** The team layer's face: the store interface, the SQLite engine, paths, import and limits. */
export { SqliteTeamStore } from './sqlite-store.js';
export { TeamSession, type TeamSessionOptions } from './session.js';
export { importJsonLines, type ImportOptions, type ImportSummary } from './import.js';
export { defaultTeamDbPath, resolveTeamDbPath, isInside } from './paths.js';
export { SCHEMA_VERSION } from './schema.js';
export { visibleRoles } from './members.js';
export { taskIdOf } from './tasks.js';
export type { PageMessage } from './messages.js';
export type { PageTask } from './tasks.js';
export * from './limits.js';
export * from './types.js';
