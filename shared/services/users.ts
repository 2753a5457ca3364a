/**
 * The directory's users after creation: read one (with what support asks about: the last
 * sign-in, linked upstream identities, passkeys, custom claim values), list and search a
 * tenant's users with signed keyset cursors, and edit name, address and custom claims under an
 * optional If-Match (docs/directory.md, "Users: read, search, edit"). Used by the admin API and
 * the `iam users` commands alike.
 *
 * The ETag is a hash of the user's whole row and custom claim values, not a version column:
 * any change to them, by this service or another (a status change, a claims PUT, a sign-in that
 * records email_verified), changes it, with no writer having to remember to bump a counter.
 */
import { createHash } from 'node:crypto';
import { CursorSigner } from '../cursor.js';
import { isUniqueViolation, type Database } from '../db/index.js';
import { ApiError, badRequest, conflict, notFound } from '../errors.js';
import { TenantRepository, TenantScope } from '../repositories/index.js';
import type { UserRecord } from '../repositories/users.js';
import { PatchUserInput, USER_PAGE_DEFAULT, USER_PAGE_MAX, UserListQuery } from '../schemas/users.js';
import { parseInput } from '../schemas/validate.js';
import { ifMatchSatisfied } from './agents/terms.js';
import { audit, type Actor } from './audit.js';
import { canonicalize } from './federation/jcs.js';
import type { CustomClaimsService } from './custom-claims.js';
import { toUserView, type UserPublic } from './directory.js';
import type { Outbox } from './outbox.js';
import { MailTemplateService, type MailComposer } from './mail-templates.js';

export type UserListItem = UserPublic & { email_verified: boolean };

export interface UserDetail extends UserListItem {
  last_sign_in: { at: number; method: string | null; client_id: string | null } | null;
  upstream_identities: { provider_id: string; issuer: string; subject: string; state: string; linked_at: number }[];
  passkey_count: number;
  claims: Record<string, unknown>;
}

export interface UserPage {
  users: UserListItem[];
  next_cursor?: string;
}

const toItem = (r: UserRecord): UserListItem => ({ ...toUserView(r), email_verified: r.email_verified });

/**
 * A strong entity tag (RFC 9110 §8.8.3) of the user: SHA-256 over every column of the row and
 * the custom claim values, so it changes with any of them and only with them.
 */
export function userEtag(r: UserRecord, claims: Record<string, unknown>): string {
  const digest = createHash('sha256')
    .update(canonicalize({ row: r, claims }))
    .digest('base64url');
  return `"${digest.slice(0, 32)}"`;
}

/** An address shown without its local part but the first character: the old inbox learns of a change, not where to. */
const masked = (address: string) => address.replace(/^(.)[^@]*@/, '$1***@');

export class UserDirectoryService {
  private readonly cursors: CursorSigner;

  constructor(
    private readonly ds: Database,
    secretKey: string,
    private readonly deps: {
      customClaims: CustomClaimsService;
      outbox: Pick<Outbox, 'enqueueEmail' | 'kick'>;
      /** Composes the mail to the old address (the container's; without one, unbranded). */
      templates?: MailComposer;
    },
  ) {
    this.cursors = new CursorSigner(secretKey, 'users');
  }

  private templatesFor(): MailComposer {
    return this.deps.templates ?? new MailTemplateService(this.ds, { issuerHost: '' });
  }

  private async requireTenant(tenantId: string) {
    const t = await new TenantRepository(this.ds).get(tenantId);
    if (!t) throw notFound(`Tenant ${tenantId}`);
    return t;
  }

  /** GET …/users/{userId}: the user and its ETag; another tenant's user is 404 like no user. */
  async get(tenantId: string, userId: string): Promise<{ user: UserDetail; etag: string }> {
    await this.requireTenant(tenantId);
    const scope = new TenantScope(this.ds, tenantId);
    const r = await scope.users.record(userId);
    if (!r) throw notFound(`User ${userId}`);
    const { claims } = await this.deps.customClaims.getUserClaims(tenantId, userId);
    const last = await scope.authHistory.lastSignIn(userId);
    const links = await scope.upstreamLinks.listForUser(userId);
    const passkeys = await scope.passkeys.listByUser(userId);
    const user: UserDetail = {
      ...toItem(r),
      // The history records that a session was made, not by which method (docs/directory.md).
      last_sign_in: last ? { at: last.created_at, method: null, client_id: last.client_id } : null,
      upstream_identities: links.map((l) => ({
        provider_id: l.provider_id,
        issuer: l.upstream_iss,
        subject: l.upstream_sub,
        state: l.state,
        linked_at: l.created_at,
      })),
      passkey_count: passkeys.length,
      claims,
    };
    return { user, etag: userEtag(r, claims) };
  }

  /**
   * GET …/users: one page in (created_at, id) order, filtered. The cursor is signed
   * (shared/cursor.ts), so one this endpoint did not make is 400 naming `query.cursor`.
   */
  async list(tenantId: string, input: unknown, where = 'query'): Promise<UserPage> {
    await this.requireTenant(tenantId);
    const q = parseInput(UserListQuery, input, where);
    if (q.cursor !== undefined && q.offset !== undefined) {
      const field = [where, 'offset'].filter(Boolean).join('.');
      throw badRequest(`${field}: give cursor or offset, not both`, [
        { field, message: 'give cursor or offset, not both' },
      ]);
    }
    const limit = Math.min(Math.max(q.limit ?? USER_PAGE_DEFAULT, 1), USER_PAGE_MAX);
    // One row more than asked tells whether another page exists without a COUNT.
    const rows = await new TenantScope(this.ds, tenantId).users.search({
      email: q.email,
      emailPrefix: q.email_prefix,
      namePrefix: q.name_prefix,
      status: q.status,
      createdFrom: q.created_since,
      createdTo: q.created_until,
      signedInFrom: q.signed_in_since,
      signedInTo: q.signed_in_until,
      after: q.cursor === undefined ? undefined : this.cursors.decode(q.cursor),
      offset: q.offset,
      limit: limit + 1,
    });
    const users = rows.slice(0, limit);
    const last = users[users.length - 1];
    return {
      users: users.map(toItem),
      ...(rows.length > limit && last ? { next_cursor: this.cursors.encode(last.created_at, last.id) } : {}),
    };
  }

  /**
   * PATCH …/users/{userId}. In one transaction, with the row locked: the If-Match compare
   * (RFC 9110 §13.1.1, strong; `*` matches any user), the write, the custom claims merge, the
   * mail to the old address on an email change, and the audit event. A taken address is 409
   * `conflict` naming `email`, as on create. Returns the user as GET shows it, with its new ETag.
   */
  async update(
    tenantId: string,
    userId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ user: UserDetail; etag: string }> {
    await this.requireTenant(tenantId);
    const body = parseInput(PatchUserInput, input, opts.where ?? '');
    const templates = this.templatesFor();
    // Fetched before the transaction, for the mail an address change sends from inside it.
    const branding = body.email === undefined ? undefined : await templates.brandingOf(tenantId);
    if (body.claims) await this.deps.customClaims.ensureSystemSchemas(tenantId);
    let mailed = false;
    try {
      await this.ds.transaction(async (tx) => {
        const scope = new TenantScope(tx, tenantId);
        const before = await scope.users.record(userId, { forUpdate: true });
        if (!before) throw notFound(`User ${userId}`);
        // RFC 9110 §13.2.1: the precondition is evaluated before the request's content is applied,
        // against the row this transaction holds locked.
        if (
          opts.ifMatch !== undefined &&
          !ifMatchSatisfied(opts.ifMatch, userEtag(before, await claimsOf(scope, userId)))
        ) {
          throw new ApiError(
            412,
            'precondition_failed',
            "If-Match does not match the user's current ETag; read the user again (RFC 9110 §13.1.1).",
          );
        }
        const after = {
          name: body.name ?? before.name,
          email: body.email ?? before.email,
          email_verified: before.email_verified,
        };
        const emailChanged = after.email !== before.email;
        // An operator's new address is unverified unless the operator vouches for it.
        if (emailChanged) after.email_verified = body.email_verified === true;
        else if (body.email_verified !== undefined) after.email_verified = body.email_verified;
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        for (const k of ['name', 'email', 'email_verified'] as const) {
          if (after[k] !== before[k]) changes[k] = { old: before[k], new: after[k] };
        }
        const claimChange = body.claims
          ? await this.deps.customClaims.mergeUserClaims(scope, userId, body.claims)
          : null;
        if (!Object.keys(changes).length && !claimChange?.set.length && !claimChange?.cleared.length) return;
        const now = Date.now();
        await scope.users.updateProfile(userId, {
          email: after.email,
          name: after.name,
          emailVerified: after.email_verified,
          now: Math.max(now, before.updated_at + 1),
        });
        if (emailChanged) {
          await this.deps.outbox.enqueueEmail(tx, {
            tenantId,
            to: before.email,
            // The user's locale is not known to the directory: English (docs/email.md).
            ...(await templates.compose({
              tenantId,
              kind: 'email_changed_by_admin',
              vars: { new_email_masked: masked(after.email) },
              db: tx,
              branding,
            })),
          });
          mailed = true;
        }
        await audit(tx, actor, {
          tenantId,
          action: 'user.update',
          targetType: 'user',
          targetId: userId,
          // Old and new values of the record's fields; claim keys only (their values may be
          // personal data, as user.claims.update records them).
          summary: {
            changes,
            ...(claimChange ? { claims: claimChange } : {}),
            ...(emailChanged ? { notified: 'old_address' } : {}),
          },
        });
      });
    } catch (e) {
      if (isUniqueViolation(e)) {
        throw conflict(`A user with email ${body.email} already exists in this tenant.`, { field: 'email' });
      }
      throw e;
    }
    if (mailed) this.deps.outbox.kick();
    return this.get(tenantId, userId);
  }
}

/** The user's custom claim values as GET shows them (CustomClaimsService.getUserClaims), in the scope's transaction. */
async function claimsOf(scope: TenantScope, userId: string): Promise<Record<string, unknown>> {
  const claims: Record<string, unknown> = {};
  for (const r of await scope.customClaims.emittable(userId)) claims[r.field_key] = JSON.parse(r.value_json);
  return claims;
}
