/**
 * Members of a SQLite team store: add, rename-free role changes, deactivation, and the role-scoped
 * member pages behind `task_options` (field `assignee`). Visibility: a guest sees only itself; an
 * agent sees members and agents; a member sees everyone but guests; leads and owners see everyone.
 * Deactivated members never appear in option pages.
 */
import type Database from 'better-sqlite3';
import { checkMemberName, checkRole } from './validate.js';
import { TeamError, type Member, type Page, type Role } from './types.js';

interface Row {
  id: number;
  name: string;
  role: Role;
  active: number;
}

const toMember = (r: Row): Member => ({ id: r.id, name: r.name, role: r.role, active: r.active === 1 });

/** A name that is not an active member, as every engine (and the import) refuses it. */
export function noActiveMember(arg: string, name: string): TeamError {
  return new TeamError('NOT_FOUND', `\`${arg}\`: no active member named ${JSON.stringify(name)}. Use task_options with field "assignee" to find members.`);
}

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

/** SQL for the members table; every statement prepared once. */
export class MemberTable {
  private readonly byName: Database.Statement<[string], Row>;
  private readonly byId: Database.Statement<[number], Row>;
  private readonly insert: Database.Statement<[string, string, string, number]>;
  private readonly any: Database.Statement<[], { one: number }>;

  constructor(private readonly db: Database.Database) {
    this.byName = db.prepare(`SELECT id, name, role, active FROM members WHERE name = ?`);
    this.byId = db.prepare(`SELECT id, name, role, active FROM members WHERE id = ?`);
    this.insert = db.prepare(`INSERT INTO members (name, name_lower, role, created_at) VALUES (?, ?, ?, ?)`);
    this.any = db.prepare(`SELECT 1 AS one FROM members LIMIT 1`);
  }

  isEmpty(): boolean {
    return this.any.get() === undefined;
  }

  get(name: string): Member | undefined {
    const r = this.byName.get(name);
    return r === undefined ? undefined : toMember(r);
  }

  getById(id: number): Member | undefined {
    const r = this.byId.get(id);
    return r === undefined ? undefined : toMember(r);
  }

  /** An active member by name, or NOT_FOUND naming the argument. */
  requireActive(name: string, arg: string): Member {
    const m = this.get(name);
    if (m === undefined || !m.active) throw noActiveMember(arg, name);
    return m;
  }

  add(name: string, role: string, at = Date.now()): Member {
    checkMemberName(name);
    const r = checkRole(role);
    if (this.byName.get(name) !== undefined) throw new TeamError('ALREADY_EXISTS', `A member named ${JSON.stringify(name)} exists already.`);
    const info = this.insert.run(name, name.toLowerCase(), r, at);
    return { id: Number(info.lastInsertRowid), name, role: r, active: true };
  }

  setRole(name: string, role: string): Member {
    const r = checkRole(role);
    const m = this.get(name);
    if (m === undefined) throw new TeamError('NOT_FOUND', `No member named ${JSON.stringify(name)}.`);
    this.db.prepare(`UPDATE members SET role = ? WHERE id = ?`).run(r, m.id);
    return { ...m, role: r };
  }

  deactivate(name: string): Member {
    return this.setActive(name, false);
  }

  /** Deactivate or reactivate a member (its records and tasks stay either way). */
  setActive(name: string, active: boolean): Member {
    const m = this.get(name);
    if (m === undefined) throw new TeamError('NOT_FOUND', `No member named ${JSON.stringify(name)}.`);
    this.db.prepare(`UPDATE members SET active = ? WHERE id = ?`).run(active ? 1 : 0, m.id);
    return { ...m, active };
  }

  /** Every member (active or not) by name: the admin listing. */
  list(after: string | undefined, limit: number): Page<Member> {
    const rows = this.db
      .prepare<[string, number], Row>(`SELECT id, name, role, active FROM members WHERE name > ? ORDER BY name LIMIT ?`)
      .all(after ?? '', limit + 1);
    return { rows: rows.slice(0, limit).map(toMember), more: rows.length > limit };
  }

  /**
   * Active members `viewer` may see, by name (the UNIQUE index on name), with `q` a
   * case-insensitive substring of the name. Stops at limit+1 matches; the members table is the
   * team, so the filtered scan is bounded by the team's size.
   */
  options(viewer: Member, q: string | undefined, after: string | undefined, limit: number): Page<Member> {
    if (viewer.role === 'guest') {
      const self = this.getById(viewer.id);
      const match = self !== undefined && self.active && (q === undefined || self.name.toLowerCase().includes(q.toLowerCase()));
      const rows = match && (after === undefined || self.name > after) ? [self] : [];
      return { rows, more: false };
    }
    const roles = visibleRoles(viewer.role);
    const marks = roles.map(() => '?').join(',');
    const rows = this.db
      .prepare<unknown[], Row>(
        `SELECT id, name, role, active FROM members
         WHERE name > ? AND active = 1 AND role IN (${marks}) ${q === undefined ? '' : 'AND instr(name_lower, ?) > 0'}
         ORDER BY name LIMIT ?`,
      )
      .all(after ?? '', ...roles, ...(q === undefined ? [] : [q.toLowerCase()]), limit + 1);
    return { rows: rows.slice(0, limit).map(toMember), more: rows.length > limit };
  }
}
