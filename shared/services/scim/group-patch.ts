/**
 * A SCIM PATCH of a Group (RFC 7644 §3.5.2) read as a change of the stored group: its name,
 * its externalId, and member rows to insert and delete. The member list is never rebuilt and
 * written back (scim-patch over the whole representation would do that): each member named by
 * an operation becomes one INSERT or DELETE (docs/scim.md, "PATCH"), so two concurrent
 * PATCHes of one group's members both take effect.
 *
 * The forms read, `op` compared without case ("Add", "Replace", "Remove" as Entra ID sends):
 * - `add` / `replace` without path: `{displayName?, externalId?, members?, id?}` (Okta sends the
 *   group's own `id` beside a new displayName: accepted when it is the group's id, else 400
 *   mutability); `add` of members adds them, `replace` makes them the whole set.
 * - path `displayName`, `externalId`: add/replace set it; remove clears externalId (displayName
 *   is required: 400 invalidValue).
 * - path `members`: `add` a value array; `replace` the whole set; `remove` with a value array
 *   (Entra ID) removes those, without value removes every member (§3.5.2.2).
 * - path `members[value eq "<id>"]` (Okta; `or` of such terms too): `remove` removes them; a
 *   member that is not there is no error (the change is already made).
 * - anything else: `id`, `meta`, a member's sub-attribute (immutable), a filter on another
 *   sub-attribute: 400 mutability / invalidPath / invalidFilter, before anything is written.
 */
import { groupDisplayName, groupExternalId } from '../../schemas/groups.js';
import { invalidFilter, invalidPath, invalidValue, mutability, parseFilter, parsePatchBody } from './index.js';
import { GROUP_TYPE, type ScimFilter } from './index.js';

/** What a PATCH asks of the stored group. */
export interface GroupPatch {
  display_name?: string;
  external_id?: string | null;
  add: string[];
  remove: string[];
  /** Set when an operation replaced (or removed) the whole member set; add and remove then apply to it. */
  replaceMembers?: string[];
}

/** The user ids of a members value (`[{value, $ref?, display?, type?}]`, or one such object). */
export function memberIds(v: unknown, where: string): string[] {
  const list = Array.isArray(v) ? v : v && typeof v === 'object' ? [v] : undefined;
  if (!list) throw invalidValue(`${where} must be an array of {"value": "<user id>"}.`);
  return list.map((m, i) => {
    const value = (m as { value?: unknown } | null)?.value;
    if (typeof value !== 'string' || value === '' || value.length > 40)
      throw invalidValue(`${where}[${i}].value must be a user id.`);
    const type = (m as { type?: unknown }).type;
    if (type !== undefined && type !== null && (typeof type !== 'string' || type.toLowerCase() !== 'user'))
      throw invalidValue(`${where}[${i}].type: groups hold users only (no nesting).`);
    return value;
  });
}

export function checkedName(v: unknown, where: string): string {
  const r = groupDisplayName.safeParse(v);
  if (!r.success) throw invalidValue(`${where} must be a string of 1 to 200 characters.`);
  return r.data;
}

export function checkedExternalId(v: unknown, where: string): string | null {
  if (v === null) return null;
  const r = groupExternalId.safeParse(v);
  if (!r.success) throw invalidValue(`${where} must be a string of 1 to 255 characters.`);
  return r.data;
}

/** The member ids a `members[...]` filter names: `value eq "<id>"`, or an `or` of such terms. */
function filteredIds(f: ScimFilter, path: string): string[] {
  if (f.op === 'or') return f.filters.flatMap((x) => filteredIds(x, path));
  if (f.op === 'eq' && f.inner && f.path.sub?.name === 'value' && typeof f.value === 'string') return [f.value];
  throw invalidFilter(`${path}: a member path filters by value eq "<user id>" (or an or of those) only.`);
}

class MemberSet {
  add = new Set<string>();
  remove = new Set<string>();
  replace?: Set<string>;

  adding(ids: string[]) {
    for (const id of ids) {
      if (this.replace) this.replace.add(id);
      else {
        this.add.add(id);
        this.remove.delete(id);
      }
    }
  }
  removing(ids: string[]) {
    for (const id of ids) {
      if (this.replace) this.replace.delete(id);
      else {
        this.remove.add(id);
        this.add.delete(id);
      }
    }
  }
  replacing(ids: string[]) {
    this.replace = new Set(ids);
    this.add.clear();
    this.remove.clear();
  }
}

/** Reads a PatchOp body against the group `groupId`; throws the SCIM 400 of the first bad operation. */
export function readGroupPatch(groupId: string, body: unknown): GroupPatch {
  const ops = parsePatchBody(body);
  const out: GroupPatch = { add: [], remove: [] };
  const members = new MemberSet();
  ops.forEach((o, i) => {
    const where = `Operations[${i}]`;
    if (o.path === undefined) {
      // §3.5.2.1, §3.5.2.3: the value's attributes are the targets (remove has a path: parsePatchBody).
      if (!o.value || typeof o.value !== 'object' || Array.isArray(o.value))
        throw invalidValue(`${where}: an operation without path needs an object value.`);
      for (const [k, v] of Object.entries(o.value as Record<string, unknown>)) {
        const key = k.toLowerCase();
        if (key === 'displayname') out.display_name = checkedName(v, `${where}.value.displayName`);
        else if (key === 'externalid') out.external_id = checkedExternalId(v, `${where}.value.externalId`);
        else if (key === 'members') {
          const ids = memberIds(v, `${where}.value.members`);
          if (o.op === 'add') members.adding(ids);
          else members.replacing(ids);
        } else if (key === 'id') {
          if (v !== groupId) throw mutability(`${where}: id is readOnly (RFC 7643 §3.1).`);
        } else if (key === 'schemas') continue;
        else if (key === 'meta') throw mutability(`${where}: meta is readOnly (RFC 7643 §3.1).`);
        else throw invalidPath(`${where}: the Group resource has no attribute ${k}.`);
      }
      return;
    }
    const path = o.path.replace(new RegExp(`^${GROUP_TYPE.schema.id.replace(/[.:]/g, '\\$&')}:`, 'i'), '');
    const lower = path.toLowerCase();
    if (lower === 'displayname') {
      if (o.op === 'remove') throw invalidValue(`${where}: displayName is required; it cannot be removed.`);
      out.display_name = checkedName(o.value, `${where}.value`);
    } else if (lower === 'externalid') {
      out.external_id = o.op === 'remove' ? null : checkedExternalId(o.value, `${where}.value`);
    } else if (lower === 'members') {
      if (o.op === 'add') members.adding(memberIds(o.value, `${where}.value`));
      else if (o.op === 'replace') members.replacing(memberIds(o.value, `${where}.value`));
      else if (o.value === undefined || o.value === null) members.replacing([]);
      else members.removing(memberIds(o.value, `${where}.value`));
    } else if (lower.startsWith('members[')) {
      const m = /^members\[(.+)\]$/i.exec(path);
      if (!m) throw mutability(`${where}: a member's attributes are immutable; remove the member and add another.`);
      const f = parseFilter(GROUP_TYPE, `members[${m[1]}]`);
      if (f.op !== '[]') throw invalidFilter(`${where}: ${path} is not a member filter.`);
      if (o.op !== 'remove')
        throw invalidPath(`${where}: ${o.op} with a member filter is not supported; add members with path members.`);
      members.removing(filteredIds(f.filter, path));
    } else if (lower === 'id' || lower.startsWith('meta') || lower.startsWith('members.')) {
      throw mutability(`${where}: ${path} is readOnly or immutable (RFC 7643 §2.2).`);
    } else throw invalidPath(`${where}: the Group resource has no attribute ${path}.`);
  });
  if (members.replace) out.replaceMembers = [...members.replace];
  out.add = [...members.add];
  out.remove = [...members.remove];
  return out;
}
