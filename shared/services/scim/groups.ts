/**
 * SCIM /Groups (RFC 7644 §3; docs/scim.md): the service's groups, one record whichever
 * surface made it (the admin API, `iam groups`, SCIM). Writes go through the group service
 * (shared/services/rbac/groups.ts: audit, version, If-Match with the row locked, member rows
 * inserted and deleted one by one); reads render the stored rows.
 *
 * - `members[].value` is the user's id, `display` the user's name, `$ref` the /Users URL.
 * - Large groups (RFC 7644 leaves it to the provider): a group of more than `membersInlineMax`
 *   members (MEMBERS_INLINE_MAX, 1,000) is rendered without `members`, on GET by id and in
 *   lists alike, so no answer carries 50,000 members; `GET /Groups?filter=members[value eq
 *   "<user id>"]` answers "is this user a member" from an index, PATCH adds and removes members
 *   of any group, and the admin API pages the member list (docs/scim.md).
 * - Filters: `id`, `displayName`, `externalId` `eq` and `members[value eq "…"]` are read from an
 *   index; `meta.lastModified gt|ge` narrows the keyset scan; anything else is evaluated over
 *   keyset-paged batches (shared/services/scim/list.ts).
 */
import { ApiError } from '../../errors.js';
import { TenantScope, type GroupRow } from '../../repositories/index.js';
import type { Actor } from '../audit.js';
import { checkedExternalId, checkedName, memberIds, readGroupPatch, type GroupPatch } from './group-patch.js';
import {
  checkBody,
  GROUP_TYPE,
  indexedEq,
  invalidValue,
  matches,
  noSuchResource,
  preconditionFailed,
  project,
  scanPage,
  slicePage,
  SCHEMA_GROUP,
  scimError,
  uniqueness,
  withMeta,
  type ListQuery,
  type Projection,
  type ScimFilter,
  type ScimResource,
} from './index.js';

/** Above this many members a group is rendered without `members` (docs/scim.md). */
export const MEMBERS_INLINE_MAX = 1000;

/** What SCIM needs of the group service (structural: shared/services/rbac/groups.ts). */
export interface GroupWrites {
  create(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts?: { where?: string; members?: string[] },
  ): Promise<{ id: string }>;
  change(
    tenantId: string,
    groupId: string,
    c: Omit<GroupPatch, 'add' | 'remove'> & { add?: string[]; remove?: string[] },
    actor: Actor,
    pre?: { ifMatch?: string; weak?: boolean },
  ): Promise<unknown>;
  delete(tenantId: string, groupId: string, actor: Actor, pre?: { ifMatch?: string; weak?: boolean }): Promise<unknown>;
}

/** The service's errors in SCIM's words (RFC 7644 §3.12): scimType where Table 9 has one. */
function scimOf(e: unknown): unknown {
  if (!(e instanceof ApiError) || e.extra.scimType) return e;
  if (e.error === 'unknown_users') return invalidValue(e.message);
  if (e.error === 'conflict') return uniqueness(e.message);
  if (e.error === 'precondition_failed') return preconditionFailed();
  if (e.status === 404) return scimError(404, undefined, e.message);
  if (e.status === 400) return invalidValue(e.message);
  return scimError(e.status, undefined, e.message);
}

async function scimErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    throw scimOf(e);
  }
}

/** Whether a projection keeps `members` (so it is worth reading them). */
function wantsMembers(p: Projection): boolean {
  if (p.attributes) return p.attributes.some((a) => a.attr.name === 'members');
  return !p.excluded?.some((a) => a.attr.name === 'members' && !a.sub);
}

const mentionsMembers = (f: ScimFilter | undefined): boolean => memberTerms(f) > 0;

/** How many terms of the filter test `members`. */
function memberTerms(f: ScimFilter | undefined): number {
  if (!f) return 0;
  if ('filters' in f) return f.filters.reduce((n, x) => n + memberTerms(x), 0);
  if (f.op === 'not') return memberTerms(f.filter);
  return f.path.attr.name === 'members' ? 1 : 0;
}

/** The user id of a `members[value eq "…"]` term (alone or in a top-level and). */
function memberEq(f: ScimFilter): string | undefined {
  if (f.op === 'and') return f.filters.map(memberEq).find((x) => x !== undefined);
  if (f.op !== '[]' || f.path.attr.name !== 'members') return undefined;
  const inner = f.filter;
  return inner.op === 'eq' && inner.path.sub?.name === 'value' && typeof inner.value === 'string'
    ? inner.value
    : undefined;
}

/** `meta.lastModified gt|ge <time>` (alone or in a top-level and): the epoch ms updated_at must exceed. */
function modifiedAfter(f: ScimFilter): number | undefined {
  if (f.op === 'and') return f.filters.map(modifiedAfter).find((x) => x !== undefined);
  if ((f.op !== 'gt' && f.op !== 'ge') || f.inner || f.path.attr.name !== 'meta') return undefined;
  if (f.path.sub?.name !== 'lastModified' || typeof f.value !== 'string') return undefined;
  const t = Date.parse(f.value);
  // Stored times are whole milliseconds: `ge t` is `> t - 1`.
  return Number.isNaN(t) ? undefined : f.op === 'gt' ? t : t - 1;
}

export class ScimGroups {
  private readonly max: number;

  constructor(
    private readonly db: TenantScope['db'],
    private readonly writes: GroupWrites,
    opts: { membersInlineMax?: number } = {},
  ) {
    this.max = opts.membersInlineMax ?? MEMBERS_INLINE_MAX;
  }

  /**
   * A group's SCIM representation. `members`: every member when `withMembers` and the group has
   * at most `membersInlineMax`; left out otherwise; `knownMember` (a filter's indexed hit) is
   * put in when the rest are not read, so the filter can be checked on it.
   */
  private async render(
    scope: TenantScope,
    g: GroupRow,
    base: string,
    withMembers: boolean,
    knownMember?: string,
  ): Promise<ScimResource> {
    const r: ScimResource = {
      schemas: [SCHEMA_GROUP],
      id: g.id,
      ...(g.external_id !== null ? { externalId: g.external_id } : {}),
      displayName: g.display_name,
    };
    let full = false;
    if (withMembers) {
      const rows = await scope.groups.members(g.id, { limit: this.max + 1 });
      if (rows.length <= this.max) {
        full = true;
        r.members = rows.map((m) => ({
          value: m.user_id,
          display: m.name || m.user_name || m.email,
          $ref: `${base}/Users/${encodeURIComponent(m.user_id)}`,
          type: 'User',
        }));
      }
    }
    if (!full && knownMember !== undefined) r.members = [{ value: knownMember }];
    const out = withMeta(GROUP_TYPE, r, {
      base,
      created: g.created_at,
      lastModified: g.updated_at,
      version: g.version,
    });
    // Rendered with every member, or with none because the group is over the cap: final as it is.
    if (full || (withMembers && knownMember === undefined)) this.final.add(out);
    return out;
  }

  /** The renderings that need no second read for a page (see `render`). */
  private readonly final = new WeakSet<ScimResource>();

  /** GET /Groups/{id}, projected. Another tenant's group is 404 like none. */
  async get(tenantId: string, id: string, base: string, projection: Projection = {}): Promise<ScimResource> {
    const scope = new TenantScope(this.db, tenantId);
    const g = await scope.groups.get(id);
    if (!g) throw noSuchResource('Group', id);
    return project(GROUP_TYPE, await this.render(scope, g, base, wantsMembers(projection)), projection);
  }

  /** GET /Groups: { total, page } of projected resources. */
  async list(tenantId: string, q: ListQuery, base: string): Promise<{ total: number; page: ScimResource[] }> {
    const scope = new TenantScope(this.db, tenantId);
    const f = q.filter;
    const filterMembers = mentionsMembers(f);
    const finish = async (hits: ScimResource[], total: number) => {
      const out: ScimResource[] = [];
      for (const h of hits) {
        // A page item is rendered again when the projection wants members the match did not read.
        const g = wantsMembers(q.projection) && !this.final.has(h) ? await scope.groups.get(h.id) : undefined;
        out.push(project(GROUP_TYPE, g ? await this.render(scope, g, base, true) : h, q.projection));
      }
      return { total, page: out };
    };
    // `members[value eq "u"]` alone (or beside terms on other attributes): the index said u is a
    // member, so the members need not be read to match; with more member terms they are.
    const oneMemberTerm = memberTerms(f) === 1;
    const fromRows = async (rows: GroupRow[], known?: string) => {
      const hits: ScimResource[] = [];
      for (const g of rows) {
        const r = await this.render(scope, g, base, filterMembers && !(known !== undefined && oneMemberTerm), known);
        if (!f || matches(f, r)) hits.push(r);
      }
      return finish(hits.slice(q.startIndex - 1, q.startIndex - 1 + q.count), hits.length);
    };
    if (f) {
      const eq = indexedEq(f, ['id', 'displayName', 'externalId']);
      if (eq) {
        const g =
          eq.attribute === 'id'
            ? await scope.groups.get(eq.value)
            : eq.attribute === 'displayName'
              ? await scope.groups.byNameKey(eq.value.toLowerCase())
              : await scope.groups.byExternalId(eq.value);
        return fromRows(g ? [g] : []);
      }
      const member = memberEq(f);
      if (member !== undefined) return fromRows(await scope.groups.ofUser(member), member);
    }
    if (!f) {
      const source = {
        count: () => scope.groups.count(),
        slice: (offset: number, limit: number) => scope.groups.list({ offset, limit }),
      };
      const { total, page } = await slicePage(source, (g) => this.render(scope, g, base, false), q);
      return finish(page, total);
    }
    const after = modifiedAfter(f);
    const { total, page } = await scanPage<GroupRow>(
      (last, limit) =>
        scope.groups.list({
          ...(last ? { after: { createdAt: last.created_at, id: last.id } } : {}),
          ...(after !== undefined ? { modifiedAfter: after } : {}),
          limit,
        }),
      (g) => this.render(scope, g, base, filterMembers),
      { filter: f, startIndex: q.startIndex, count: q.count },
    );
    return finish(page, total);
  }

  /** POST /Groups: displayName required, members optional (user ids of the tenant). */
  async create(tenantId: string, body: unknown, actor: Actor, base: string): Promise<ScimResource> {
    const { name, externalId, members } = this.resourceBody(body);
    const g = await scimErrors(() =>
      this.writes.create(tenantId, { display_name: name, ...(externalId ? { external_id: externalId } : {}) }, actor, {
        members,
      }),
    );
    return this.get(tenantId, g.id, base);
  }

  /** PUT /Groups/{id}: displayName, externalId and the whole member set replaced (RFC 7644 §3.5.1). */
  async replace(
    tenantId: string,
    id: string,
    body: unknown,
    actor: Actor,
    base: string,
    ifMatch?: string,
  ): Promise<ScimResource> {
    const { name, externalId, members } = this.resourceBody(body, id);
    await scimErrors(() =>
      this.writes.change(
        tenantId,
        id,
        { display_name: name, external_id: externalId ?? null, replaceMembers: members },
        actor,
        { ifMatch, weak: true },
      ),
    );
    return this.get(tenantId, id, base);
  }

  /** PATCH /Groups/{id}: the operations as one change: fields, member inserts and deletes. */
  async patch(
    tenantId: string,
    id: string,
    body: unknown,
    actor: Actor,
    base: string,
    ifMatch?: string,
  ): Promise<ScimResource> {
    // 404 before 400: a PATCH of a group that is not there names that first.
    if (!(await new TenantScope(this.db, tenantId).groups.get(id))) throw noSuchResource('Group', id);
    const change = readGroupPatch(id, body);
    await scimErrors(() => this.writes.change(tenantId, id, change, actor, { ifMatch, weak: true }));
    return this.get(tenantId, id, base);
  }

  /** DELETE /Groups/{id}: as the admin API's (409 while a SCIM mapping set names it). */
  async delete(tenantId: string, id: string, actor: Actor, ifMatch?: string): Promise<void> {
    await scimErrors(() => this.writes.delete(tenantId, id, actor, { ifMatch, weak: true }));
  }

  /** A POST/PUT body: typed by the schema, unknown attributes refused, the group's fields checked. */
  private resourceBody(body: unknown, id?: string) {
    const b = checkBody(GROUP_TYPE, body);
    const unknown = Object.keys(b.unknown);
    if (unknown.length) throw invalidValue(`The Group resource has no attribute ${unknown.join(', ')}.`);
    const given = (body as Record<string, unknown>).id;
    if (id !== undefined && given !== undefined && given !== id)
      throw scimError(400, 'mutability', 'id is readOnly (RFC 7643 §3.1): it must be the group id or left out.');
    return {
      name: checkedName(b.core.displayName, 'displayName'),
      externalId: b.core.externalId === undefined ? undefined : checkedExternalId(b.core.externalId, 'externalId'),
      members: b.core.members === undefined ? [] : [...new Set(memberIds(b.core.members, 'members'))],
    };
  }
}
