/**
 * Members of a PostgreSQL team store, with the SQLite side's rules (see members.ts): role checks,
 * deactivation, the admin listing by name, and role-scoped member options. Names sort bytewise
 * (`COLLATE "C"`), as SQLite's BINARY collation does, so keyset positions mean the same thing.
 */
import { noActiveMember, visibleRoles } from './members.js';
import type { Queryable } from './pg-db.js';
import { pageOf } from './pg-db.js';
import { checkMemberName, checkRole } from './validate.js';
import { TeamError, type Member, type Page, type Role } from './types.js';

interface Row {
  id: number;
  name: string;
  role: Role;
  active: boolean;
}

const COLS = `id, name, role, active`;
const toMember = (r: Row): Member => ({ id: r.id, name: r.name, role: r.role, active: r.active });

/** The members table's queries; each takes the pool or a transaction's client. */
export const pgMembers = {
  async isEmpty(db: Queryable): Promise<boolean> {
    return (await db.query(`SELECT 1 FROM members LIMIT 1`)).rowCount === 0;
  },

  async get(db: Queryable, name: string): Promise<Member | undefined> {
    const r = (await db.query<Row>(`SELECT ${COLS} FROM members WHERE name = $1`, [name])).rows[0];
    return r === undefined ? undefined : toMember(r);
  },

  /** An active member by name, or NOT_FOUND naming the argument. */
  async requireActive(db: Queryable, name: string, arg: string): Promise<Member> {
    const m = await pgMembers.get(db, name);
    if (m === undefined || !m.active) throw noActiveMember(arg, name);
    return m;
  },

  /** Call inside a write transaction. */
  async add(db: Queryable, name: string, role: string, at = Date.now()): Promise<Member> {
    checkMemberName(name);
    const r = checkRole(role);
    if ((await pgMembers.get(db, name)) !== undefined) throw new TeamError('ALREADY_EXISTS', `A member named ${JSON.stringify(name)} exists already.`);
    const id = (await db.query<{ id: number }>(`INSERT INTO members (name, name_lower, role, created_at) VALUES ($1, $2, $3, $4) RETURNING id`, [name, name.toLowerCase(), r, at])).rows[0]!.id;
    return { id, name, role: r, active: true };
  },

  /** Call inside a write transaction. */
  async setRole(db: Queryable, name: string, role: string): Promise<Member> {
    const r = checkRole(role);
    const m = await pgMembers.get(db, name);
    if (m === undefined) throw new TeamError('NOT_FOUND', `No member named ${JSON.stringify(name)}.`);
    await db.query(`UPDATE members SET role = $1 WHERE id = $2`, [r, m.id]);
    return { ...m, role: r };
  },

  /** Call inside a write transaction. */
  async deactivate(db: Queryable, name: string): Promise<Member> {
    return pgMembers.setActive(db, name, false);
  },

  /** Deactivate or reactivate a member (its records and tasks stay either way). Call inside a write transaction. */
  async setActive(db: Queryable, name: string, active: boolean): Promise<Member> {
    const m = await pgMembers.get(db, name);
    if (m === undefined) throw new TeamError('NOT_FOUND', `No member named ${JSON.stringify(name)}.`);
    await db.query(`UPDATE members SET active = $2 WHERE id = $1`, [m.id, active]);
    return { ...m, active };
  },

  /** Every member (active or not) by name. */
  async list(db: Queryable, after: string | undefined, limit: number): Promise<Page<Member>> {
    const rows = (await db.query<Row>(`SELECT ${COLS} FROM members WHERE name > $1 ORDER BY name LIMIT $2`, [after ?? '', limit + 1])).rows;
    return pageOf(rows.map(toMember), limit);
  },

  /** Active members `viewer` may see, by name; `q` a case-insensitive substring of the name. */
  async options(db: Queryable, viewer: Member, q: string | undefined, after: string | undefined, limit: number): Promise<Page<Member>> {
    if (viewer.role === 'guest') {
      const self = (await db.query<Row>(`SELECT ${COLS} FROM members WHERE id = $1`, [viewer.id])).rows[0];
      const match = self !== undefined && self.active && (q === undefined || self.name.toLowerCase().includes(q.toLowerCase()));
      return { rows: match && (after === undefined || self.name > after) ? [toMember(self)] : [], more: false };
    }
    const params: unknown[] = [after ?? '', visibleRoles(viewer.role), limit + 1];
    if (q !== undefined) params.push(q.toLowerCase());
    const rows = (
      await db.query<Row>(
        `SELECT ${COLS} FROM members WHERE name > $1 AND active AND role = ANY($2::text[]) ${q === undefined ? '' : 'AND strpos(name_lower, $4) > 0'} ORDER BY name LIMIT $3`,
        params,
      )
    ).rows;
    return pageOf(rows.map(toMember), limit);
  },
};
