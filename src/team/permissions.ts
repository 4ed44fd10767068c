/**
 * Who may do what: one table of action × role → `allowed`, `own` (only items the caller created or
 * is assigned) or `denied`, for every tool of `serve` (each tool declares its action; `exec` runs
 * an action as its tool) and both store engines. It is checked in one place, the call pipeline
 * (`runToolCall` in src/server/tool-kinds.ts), which every route into a tool handler goes through;
 * `own` is settled by the handler that can see the item, through the access the pipeline handed it.
 * Roles live in the team store: while a workspace has no store there are no roles, and the
 * workspace and git actions are allowed to whoever the transport admitted (the token file decides).
 * `specs/permissions.json` is generated from this table and the tool declarations
 * (`npm run permissions`) and a test keeps the two equal. Member administration (add, roles,
 * deactivate) is not a tool: it stays with the `mcp-budget team` CLI, run by whoever can open the
 * store.
 */
import { ROLES, TeamError, type Member, type Role } from './types.js';

export type Access = 'allowed' | 'own' | 'denied';

/** The team actions; reads are one action per surface. */
export const TEAM_ACTIONS = ['message.read', 'message.send', 'inbox.read', 'inbox.ack', 'task.read', 'task.create', 'task.update', 'task.comment'] as const;
export type TeamAction = (typeof TEAM_ACTIONS)[number];

/** Every action a tool performs: the team's, then the workspace's and the repository's. */
export const ACTIONS = [...TEAM_ACTIONS, 'workspace.read', 'workspace.write', 'git.read', 'git.write'] as const;
export type Action = (typeof ACTIONS)[number];

/** Whether an action needs the team store (opened, or created on first use, by the pipeline). */
export function isTeamAction(action: Action): action is TeamAction {
  return (TEAM_ACTIONS as readonly string[]).includes(action);
}

const ALL: Record<Role, Access> = { owner: 'allowed', lead: 'allowed', member: 'allowed', agent: 'allowed', guest: 'allowed' };
const NOT_GUEST: Record<Role, Access> = { owner: 'allowed', lead: 'allowed', member: 'allowed', agent: 'allowed', guest: 'denied' };

/**
 * The table. A guest reads (files, history, messages, tasks) and acknowledges its own inbox, and
 * writes nothing; members and agents write files, commit, post, create and comment, and change
 * tasks they created or are assigned; leads and owners change any task.
 */
export const PERMISSIONS: Readonly<Record<Action, Readonly<Record<Role, Access>>>> = {
  'message.read': ALL,
  'message.send': NOT_GUEST,
  'inbox.read': ALL,
  'inbox.ack': ALL,
  'task.read': ALL,
  'task.create': NOT_GUEST,
  'task.update': { owner: 'allowed', lead: 'allowed', member: 'own', agent: 'own', guest: 'denied' },
  'task.comment': NOT_GUEST,
  'workspace.read': ALL,
  'workspace.write': NOT_GUEST,
  'git.read': ALL,
  'git.write': NOT_GUEST,
};

/** `action`'s access for a member; without one (no store, so no roles) only team actions are refused. */
export function accessOf(action: Action, me: Member | undefined): Access {
  if (me === undefined) return isTeamAction(action) ? 'denied' : 'allowed';
  return PERMISSIONS[action][me.role];
}

/** The least role allowed `action` on anyone's items, for the refusal's advice. */
function leastAllowed(action: Action): Role | undefined {
  return [...ROLES].reverse().find((r) => PERMISSIONS[action][r] === 'allowed');
}

/** The refusal of `action` to `me` (PERMISSION_DENIED), naming the role and what would allow it. */
export function permissionDenied(action: Action, me: Member, access: Access): TeamError {
  const least = leastAllowed(action);
  const why = access === 'own' ? `a ${me.role} may ${action} only on tasks it created or is assigned` : `a ${me.role} may not ${action}`;
  return new TeamError(
    'PERMISSION_DENIED',
    `${why} (member ${me.name}). ${least === undefined ? 'No role may.' : `A ${least} or above may; an owner can change the role with \`mcp-budget team set-role ${me.name} --role ${least}\`.`}`,
    { action, role: me.role },
  );
}
