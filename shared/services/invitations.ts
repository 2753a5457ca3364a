/**
 * Inviting a user (docs/directory.md, "Users: invite"): an operator (admin API, `iam users
 * invite`, the console) sends a user of the tenant a mail with a sign-in link.
 *
 * The link carries no secret. It is the account page's sign-in for the tenant
 * (`/account/sign-in?tenant=…`) with the user's address as `login_hint` (OIDC Core §3.1.2.1),
 * which the account page passes on to /authorize so the login page opens with the address
 * filled in; the user still proves the address with an email code (or a passkey). A code cannot
 * be sent ahead instead: an email code is bound to the login attempt of the browser that asked
 * for it (`CodeBinding`, shared/services/auth/codes.ts). So a forwarded or leaked invitation
 * gives nobody the account.
 *
 * One transaction: the user's row is read locked (a disable that commits first wins: a disabled
 * user is refused, 409 `user_disabled`), the mail is written to the outbox and the audit event
 * `user.invite` naming the actor, so a mail is recorded exactly when it is sent. The mail is
 * the `invitation` kind of the template system (branded, overridable per tenant and locale), in
 * the language of the user's `locale` claim when the service speaks it, else English.
 */
import type { Database } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { negotiateLocale } from '../i18n/index.js';
import { TenantRepository, TenantScope } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';
import type { MailComposer } from './mail-templates.js';
import type { Outbox } from './outbox.js';

/** What an invitation answers (the admin API's 202 body). */
export interface InvitationResult {
  user_id: string;
  tenant_id: string;
  /** The outbox entry of the mail (`iam outbox list` follows its delivery). */
  mail_id: string;
  /** The link the mail carries: no secret in it (see the file header). */
  sign_in_url: string;
}

/** The link that starts the account page's sign-in to `tenantId` with `email` filled in. */
export function signInLink(issuer: string, tenantId: string, email: string, locale?: string): string {
  const q = new URLSearchParams({ tenant: tenantId, login_hint: email });
  // OIDC Core §3.1.2.1 ui_locales: the login page then speaks the mail's language.
  if (locale) q.set('ui_locales', locale);
  return `${issuer}/account/sign-in?${q}`;
}

export class InvitationService {
  constructor(
    private readonly db: Database,
    private readonly deps: { outbox: Pick<Outbox, 'enqueueEmail' | 'kick'>; templates: MailComposer },
  ) {}

  /**
   * Mails the user a sign-in link to the tenant's account page. 404 `not_found` for no such
   * tenant or user (another tenant's user too); 409 `tenant_not_active` when the tenant's users
   * cannot sign in (the link would lead nowhere); 409 `user_disabled` for a disabled user.
   */
  async invite(tenantId: string, userId: string, actor: Actor, opts: { issuer: string }): Promise<InvitationResult> {
    const tenant = await new TenantRepository(this.db).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    if (tenant.lifecycle_state !== 'active')
      throw new ApiError(
        409,
        'tenant_not_active',
        `Tenant ${tenantId} is ${tenant.lifecycle_state}: its users cannot sign in, so no invitation was sent.`,
        { lifecycle_state: tenant.lifecycle_state },
      );
    // Fetched before the transaction, as the other mails written inside one do.
    const branding = await this.deps.templates.brandingOf(tenantId);
    const result = await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const user = await scope.users.record(userId, { forUpdate: true });
      if (!user) throw new ApiError(404, 'not_found', `User ${userId} not found in tenant ${tenantId}.`);
      if (user.status !== 'active')
        throw new ApiError(
          409,
          'user_disabled',
          `User ${userId} is disabled and could not sign in: enable them first, then invite them.`,
        );
      const claimed: unknown = user.standard_claims?.locale;
      const locale = typeof claimed === 'string' ? negotiateLocale(claimed) : undefined;
      const url = signInLink(opts.issuer, tenantId, user.email, locale);
      const mailId = await this.deps.outbox.enqueueEmail(tx, {
        tenantId,
        to: user.email,
        ...(await this.deps.templates.compose({
          tenantId,
          kind: 'invitation',
          locale,
          vars: { sign_in_url: url, email: user.email },
          db: tx,
          branding,
        })),
      });
      await audit(tx, actor, {
        tenantId,
        action: 'user.invite',
        targetType: 'user',
        targetId: userId,
        // The outbox entry, not the address: the audit log names users by id only.
        summary: { mail_id: mailId },
      });
      return { user_id: userId, tenant_id: tenantId, mail_id: mailId, sign_in_url: url };
    });
    this.deps.outbox.kick();
    return result;
  }
}
