/**
 * The texts of the team service's refusals, each written once: the rules, the dialects' bulk
 * writes and the import all throw these, so a refusal reads the same whichever engine and path
 * made it.
 */
import { TeamError } from './types.js';

/** A name that is not an active member, where `arg` names one. */
export function noActiveMember(arg: string, name: string): TeamError {
  return new TeamError('NOT_FOUND', `\`${arg}\`: no active member named ${JSON.stringify(name)}. Use task_options with field "assignee" to find members.`);
}

/** A member name the store does not have. */
export function noMember(name: string): TeamError {
  return new TeamError('NOT_FOUND', `No member named ${JSON.stringify(name)}.`);
}

/** A member name that is taken. */
export function memberExists(name: string): TeamError {
  return new TeamError('ALREADY_EXISTS', `A member named ${JSON.stringify(name)} exists already.`);
}

/** A change that would leave the store with no active owner (no one could then administer it through `serve`). */
export function lastOwner(name: string): TeamError {
  return new TeamError(
    'INVALID_PARAMS',
    `${JSON.stringify(name)} is the last active owner of this store, so it stays an active owner. Make another member owner first (mcp-budget team set-role NAME owner).`,
  );
}

/** A list filter naming no member. */
export function noAssignee(name: string): TeamError {
  return new TeamError('NOT_FOUND', `\`assignee\`: no member named ${JSON.stringify(name)}.`);
}

/** A channel the store does not have (it is written as the caller gave it, `#` and all). */
export function noChannel(name: string): TeamError {
  return new TeamError('NOT_FOUND', `No channel named ${JSON.stringify(name)}. Channels are created by their first message (message_send).`);
}

/** A message id the store does not have. */
export function noMessage(id: number): TeamError {
  return new TeamError('NOT_FOUND', `No message ${id}.`);
}

/** A reply to a message that is not there (or, in an import, not yet). */
export function noReplyTarget(id: number): TeamError {
  return new TeamError('NOT_FOUND', `\`reply_to\`: no message ${id}.`);
}

/** A task id the store does not have. */
export function noTask(id: number): TeamError {
  return new TeamError('NOT_FOUND', `No task T-${id}. Use task_search to find a task by its title or text.`);
}
