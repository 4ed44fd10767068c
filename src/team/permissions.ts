/**
 * Who may do what in the team store: one table of action × role → `allowed`, `own` (only items the
 * caller created or is assigned) or `denied`, enforced in one place above both store engines (the
 * server's `withTeam`, which every team tool and every `exec` team action goes through).
 * `specs/team-permissions.json` is generated from this table (`npm run permissions`) and a test
 * keeps the two equal. Member administration (add, roles, deactivate) is not a tool: it stays with
 * the `mcp-budget team` CLI, run by whoever can open the store.
 */
import { ROLES, TeamError, type Member, type Role } from './types.js';

export type Access = 'allowed' | 'own' | 'denied';

/** The team actions a tool performs; reads are one action per surface. */
export const TEAM_ACTIONS = ['message.read', 'message.send', 'inbox.read', 'inbox.ack', 'task.read', 'task.create', 'task.update', 'task.comment'] as const;
export type TeamAction = (typeof TEAM_ACTIONS)[number];

/**
 * The tools (and so the `exec` actions) that perform each action. Documentation for the spec; the
 * route × role test calls every one of them as every role and checks the answer against the table,
 * so a tool whose `withTeam` names another action fails it.
 */
export const TOOLS_BY_ACTION: Readonly<Record<TeamAction, readonly string[]>> = {
  'message.read': ['message_history_read', 'message_search', 'message_get'],
  'message.send': ['message_send'],
  'inbox.read': ['inbox_read'],
  'inbox.ack': ['inbox_ack'],
  'task.read': ['list_tasks', 'search_tasks', 'task_get', 'task_options'],
  'task.create': ['task_create'],
  'task.update': ['task_update'],
  'task.comment': ['task_comment'],
};

const ALL: Record<Role, Access> = { owner: 'allowed', lead: 'allowed', member: 'allowed', agent: 'allowed', guest: 'allowed' };
const NOT_GUEST: Record<Role, Access> = { owner: 'allowed', lead: 'allowed', member: 'allowed', agent: 'allowed', guest: 'denied' };

/**
 * The table. A guest reads and acknowledges its own inbox, and writes nothing; members and agents
 * post, create and comment, and change tasks they created or are assigned; leads and owners change
 * any task.
 */
export const PERMISSIONS: Readonly<Record<TeamAction, Readonly<Record<Role, Access>>>> = {
  'message.read': ALL,
  'message.send': NOT_GUEST,
  'inbox.read': ALL,
  'inbox.ack': ALL,
  'task.read': ALL,
  'task.create': NOT_GUEST,
  'task.update': { owner: 'allowed', lead: 'allowed', member: 'own', agent: 'own', guest: 'denied' },
  'task.comment': NOT_GUEST,
};

/** The least role allowed `action` on anyone's items, for the refusal's advice. */
function leastAllowed(action: TeamAction): Role | undefined {
  return [...ROLES].reverse().find((r) => PERMISSIONS[action][r] === 'allowed');
}

/**
 * Refuse `action` for `me` (PERMISSION_DENIED, naming the role and what would allow it). For `own`
 * access, `owns` says whether the item is the caller's; it is asked only then.
 */
export async function requirePermission(action: TeamAction, me: Member, owns?: () => Promise<boolean>): Promise<void> {
  const access = PERMISSIONS[action][me.role];
  if (access === 'allowed') return;
  if (access === 'own' && owns !== undefined && (await owns())) return;
  const least = leastAllowed(action);
  const why =
    access === 'own'
      ? `a ${me.role} may ${action} only on tasks it created or is assigned`
      : `a ${me.role} may not ${action}`;
  throw new TeamError(
    'PERMISSION_DENIED',
    `${why} (member ${me.name}). ${least === undefined ? 'No role may.' : `A ${least} or above may; an owner can change the role with \`mcp-budget team set-role ${me.name} --role ${least}\`.`}`,
    { action, role: me.role },
  );
}
