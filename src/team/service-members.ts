/**
 * Members of the team store: add, role changes (no renames), deactivation, the admin listing by
 * name, and the role-scoped member pages behind `task_options` (field `assignee`). Visibility: a
 * guest sees only itself; an agent sees members and agents; a member sees everyone but guests;
 * leads and owners see everyone. Deactivated members never appear in option pages. Names compare
 * bytewise on both engines (SQLite's BINARY, PostgreSQL's `COLLATE "C"`), so a keyset position
 * means the same thing on either.
 */
import type { TeamDialect } from './dialect.js';
import { pageOf, insertedId, q, type Rule } from './rule.js';
import { lastOwner, memberExists, noActiveMember, noMember } from './service-errors.js';
import { toMember, type MemberRow } from './service-rows.js';
import type { Member, Page, Role } from './types.js';
import { checkMemberName, checkRole } from './validate.js';

const COLUMNS = `id, name, role, active`;
const BY_NAME = `SELECT ${COLUMNS} FROM members WHERE name = ?`;
const BY_ID = `SELECT ${COLUMNS} FROM members WHERE id = ?`;
const ANY = `SELECT 1 AS one FROM members LIMIT 1`;
const INSERT = `INSERT INTO members (name, name_lower, role, created_at) VALUES (?, ?, ?, ?) RETURNING id`;
const SET_ROLE = `UPDATE members SET role = ? WHERE id = ?`;
const OTHER_OWNER = `SELECT 1 AS one FROM members WHERE role = 'owner' AND active = TRUE AND id <> ? LIMIT 1`;
const SET_ACTIVE = `UPDATE members SET active = ? WHERE id = ?`;
const LIST = `SELECT ${COLUMNS} FROM members WHERE name > ? ORDER BY name LIMIT ?`;

/** Roles `viewer` may see (a guest sees only itself, handled separately). */
export function visibleRoles(viewer: Role): Role[] {
  switch (viewer) {
    case 'owner':
    case 'lead':
      return ['owner', 'lead', 'member', 'agent', 'guest'];
    case 'member':
      return ['owner', 'lead', 'member', 'agent'];
    case 'agent':
      return ['member', 'agent'];
    case 'guest':
      return [];
  }
}

/** The members table's rules. */
export class MemberRules {
  constructor(private readonly d: TeamDialect) {}

  *isEmpty(): Rule<boolean> {
    return (yield* q.get(ANY)) === undefined;
  }

  *get(name: string): Rule<Member | undefined> {
    const r = yield* q.get<MemberRow>(BY_NAME, [name]);
    return r === undefined ? undefined : toMember(r);
  }

  /** An active member by name, or NOT_FOUND naming the argument. */
  *requireActive(name: string, arg: string): Rule<Member> {
    const m = yield* this.get(name);
    if (m === undefined || !m.active) throw noActiveMember(arg, name);
    return m;
  }

  /** Check, then insert. In a write; `at` defaults to the time the write runs. */
  *add(name: string, role: string, createdAt?: number): Rule<Member> {
    const at = createdAt ?? Date.now();
    checkMemberName(name);
    const r = checkRole(role);
    if ((yield* q.get(BY_NAME, [name])) !== undefined) throw memberExists(name);
    const id = yield* insertedId(INSERT, [name, name.toLowerCase(), r, at]);
    return { id, name, role: r, active: true };
  }

  /** In a write. */
  *setRole(name: string, role: string): Rule<Member> {
    const r = checkRole(role);
    const m = yield* this.get(name);
    if (m === undefined) throw noMember(name);
    if (r !== 'owner') yield* this.keepAnOwner(m);
    yield* q.run(SET_ROLE, [r, m.id]);
    return { ...m, role: r };
  }

  /** Deactivate or reactivate a member (its records and tasks stay either way). In a write. */
  *setActive(name: string, active: boolean): Rule<Member> {
    const m = yield* this.get(name);
    if (m === undefined) throw noMember(name);
    if (!active) yield* this.keepAnOwner(m);
    // 1 and 0: what SQLite binds, and what PostgreSQL reads as a boolean.
    yield* q.run(SET_ACTIVE, [active ? 1 : 0, m.id]);
    return { ...m, active };
  }

  /**
   * Refuse to take `m` from the active owners when it is the last one. In the same write as the
   * change, so two changes cannot each leave the other as the last owner (writers run one at a
   * time on both engines).
   */
  private *keepAnOwner(m: Member): Rule<void> {
    if (!m.active || m.role !== 'owner') return;
    if ((yield* q.get(OTHER_OWNER, [m.id])) === undefined) throw lastOwner(m.name);
  }

  /** Every member (active or not) by name: the admin listing. */
  *list(after: string | undefined, limit: number): Rule<Page<Member>> {
    const rows = yield* q.all<MemberRow>(LIST, [after ?? '', limit + 1]);
    return pageOf(rows.map(toMember), limit);
  }

  /**
   * Active members `viewer` may see, by name (the UNIQUE index on name), with `query` a
   * case-insensitive substring of the name. Stops at limit+1 matches; the members table is the
   * team, so the filtered scan is bounded by the team's size.
   */
  *options(viewer: Member, query: string | undefined, after: string | undefined, limit: number): Rule<Page<Member>> {
    if (viewer.role === 'guest') {
      const r = yield* q.get<MemberRow>(BY_ID, [viewer.id]);
      const self = r === undefined ? undefined : toMember(r);
      const match = self !== undefined && self.active && (query === undefined || self.name.toLowerCase().includes(query.toLowerCase()));
      return { rows: match && (after === undefined || self.name > after) ? [self] : [], more: false };
    }
    const roles = visibleRoles(viewer.role);
    const rows = yield* q.all<MemberRow>(
      `SELECT ${COLUMNS} FROM members
       WHERE name > ? AND active = TRUE AND role IN (${roles.map(() => '?').join(',')}) ${query === undefined ? '' : `AND ${this.d.contains('name_lower')}`}
       ORDER BY name LIMIT ?`,
      [after ?? '', ...roles, ...(query === undefined ? [] : [query.toLowerCase()]), limit + 1],
    );
    return pageOf(rows.map(toMember), limit);
  }
}
