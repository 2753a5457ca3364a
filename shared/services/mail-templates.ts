/**
 * A tenant's mail templates (docs/email.md, "Templates"): composing every mail the service sends
 * from its kind, locale and variables, and the admin API's and CLI's overrides and preview.
 *
 * - A mail is composed from the tenant's override of that kind and locale, part by part, else
 *   the default of the `mail` catalogue (shared/services/mail/templates.ts renders it).
 * - An override is checked on save (an unknown variable or a stray brace answers 400
 *   `invalid_template`, naming it) and again at send time. A stored override that no longer
 *   checks (a variable a later version dropped) never stops the mail, least of all a sign-in:
 *   the default is sent, the failure is logged (kind, locale and the problem; never a variable's
 *   value, so never a code) and recorded on the override as `last_error`, which the admin API
 *   shows until a send uses it again or it is replaced.
 * - Branding (name, logo, colour, support link) comes from an injected source,
 *   `(tenantId) => Promise<TenantBranding>`; without one, the tenant's name.
 */
import { isUniqueViolation, type Database, type Db } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { LOCALES, type Locale } from '../i18n/index.js';
import { TenantRepository, TenantScope, type MailTemplateRow } from '../repositories/index.js';
import { MailTemplateInput } from '../schemas/mail-templates.js';
import { parseInput } from '../schemas/validate.js';
import { audit, type Actor } from './audit.js';
import { NotificationStates } from './notification-states.js';
import type { TenantBranding } from './branding-types.js';
import {
  commonVars,
  isMailKind,
  MAIL_KINDS,
  MAIL_PARTS,
  renderMail,
  SAMPLE_VARS,
  templateProblem,
  unknownVariable,
  variablesOf,
  type ComposedMail,
  type MailKind,
  type MailVars,
  type TemplateParts,
} from './mail/templates.js';

export { MAIL_KIND_NAMES, MAIL_KINDS, type ComposedMail, type MailKind } from './mail/templates.js';

/** Where a tenant's branding comes from (the branding service, wired by the container). */
export type BrandingSource = (tenantId: string) => Promise<TenantBranding>;

/** The slice of a pino logger a failed override is reported through. */
export interface TemplateLogger {
  warn(obj: object, msg: string): void;
}

export interface ComposeInput {
  tenantId: string;
  kind: MailKind;
  /** The reader's locale when the flow knows it; anything unsupported (or none) is English. */
  locale?: string | undefined;
  vars: MailVars;
  /** The handle to read the override through (a transaction the caller holds); default the service's. */
  db?: Db;
  /** The branding, when the caller fetched it before its transaction. */
  branding?: TenantBranding;
}

/** What senders need: composition and the branding to pass in when composing inside a transaction. */
export interface MailComposer {
  compose(p: ComposeInput): Promise<ComposedMail>;
  brandingOf(tenantId: string): Promise<TenantBranding>;
}

/** An override as the admin API shows it (snake_case like the other admin resources). */
export interface MailTemplateView {
  kind: string;
  locale: string;
  subject: string | null;
  text: string | null;
  html: string | null;
  /** The last send that could not use this override (the default was sent), or null. */
  last_error: string | null;
  last_error_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface MailPreview extends ComposedMail {
  kind: MailKind;
  locale: Locale;
  /** `override` when the tenant's override was used, else `default`. */
  source: 'default' | 'override';
  /** Why the stored override could not be used (the default is shown instead). */
  error?: string;
}

const toView = (r: MailTemplateRow): MailTemplateView => ({
  kind: r.kind,
  locale: r.locale,
  subject: r.subject,
  text: r.text_body,
  html: r.html_body,
  last_error: r.last_error,
  last_error_at: r.last_error_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const partsOf = (r: MailTemplateRow): TemplateParts => ({ subject: r.subject, text: r.text_body, html: r.html_body });

export const asLocale = (l: string | undefined): Locale =>
  l !== undefined && (LOCALES as readonly string[]).includes(l) ? (l as Locale) : 'en';

/** The operational notification state of an override that could not be used (docs/email.md). */
export const TEMPLATE_CONDITION = 'mail_template_invalid';
const subjectOf = (kind: string, locale: string) => ({ type: 'mail_template', id: `${kind}/${locale}` });

export class MailTemplateService implements MailComposer {
  private readonly branding: BrandingSource;
  private readonly notifications: NotificationStates;

  constructor(
    private readonly db: Database,
    private readonly opts: { issuerHost: string; branding?: BrandingSource; logger?: TemplateLogger },
  ) {
    this.branding = opts.branding ?? ((id) => this.tenantBranding(id));
    this.notifications = new NotificationStates(db);
  }

  /** The default branding: the tenant's name (its id if it has gone). */
  private async tenantBranding(tenantId: string): Promise<TenantBranding> {
    const tenant = await new TenantRepository(this.db).get(tenantId);
    return { displayName: tenant?.name ?? tenantId };
  }

  /** The tenant's branding; a failing source never stops a mail (the tenant's name, else its id). */
  async brandingOf(tenantId: string): Promise<TenantBranding> {
    try {
      return await this.branding(tenantId);
    } catch (e) {
      this.opts.logger?.warn(
        { tenantId, err: e instanceof Error ? e.message : String(e) },
        'mail branding unavailable',
      );
      return this.tenantBranding(tenantId).catch(() => ({ displayName: tenantId }));
    }
  }

  /** Composes one mail; never fails because of a stored override (see the file header). */
  async compose(p: ComposeInput): Promise<ComposedMail> {
    return (await this.composeWith(p)).mail;
  }

  private async composeWith(p: ComposeInput): Promise<{ mail: ComposedMail; override: boolean; error?: string }> {
    const locale = asLocale(p.locale);
    const db = p.db ?? this.db;
    const branding = p.branding ?? (await this.brandingOf(p.tenantId));
    const vars = { ...commonVars(branding, this.opts.issuerHost), ...p.vars };
    const scope = new TenantScope(db, p.tenantId);
    const row = await scope.mailTemplates.get(p.kind, locale);
    if (row) {
      try {
        const mail = renderMail(p.kind, locale, vars, branding, partsOf(row));
        // Best effort, as the recording below: the mail never waits on its bookkeeping.
        if (row.last_error !== null)
          await scope.mailTemplates.setError(p.kind, locale, null, Date.now()).catch(() => undefined);
        return { mail, override: true };
      } catch (e) {
        const error = e instanceof Error ? e.message : String(e);
        // Kind, locale and the template's problem only: never a variable's value (a code).
        this.opts.logger?.warn(
          { tenantId: p.tenantId, kind: p.kind, locale, error },
          'mail template override unusable; the default was sent',
        );
        if (row.last_error !== error) {
          // Recording is best effort: the mail goes out with the default either way.
          await scope.mailTemplates.setError(p.kind, locale, error, Date.now()).catch(() => undefined);
          // And an operational notification state (`iam notifications list`), cleared by a PUT or DELETE.
          await this.notifications
            .raise(p.tenantId, TEMPLATE_CONDITION, subjectOf(p.kind, locale), { error }, db)
            .catch(() => undefined);
        }
        return { mail: renderMail(p.kind, locale, vars, branding), override: false, error };
      }
    }
    return { mail: renderMail(p.kind, locale, vars, branding), override: false };
  }

  // ---- the admin API and the CLI ----------------------------------------------------------

  private async requireTenant(tenantId: string): Promise<void> {
    if (!(await new TenantRepository(this.db).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
  }

  /** Every kind with its variables (docs/email.md). */
  kinds(): { kind: MailKind; variables: string[] }[] {
    return (Object.keys(MAIL_KINDS) as MailKind[]).map((kind) => ({ kind, variables: variablesOf(kind) }));
  }

  /** The tenant's overrides. */
  async list(tenantId: string): Promise<{ tenantId: string; items: MailTemplateView[] }> {
    await this.requireTenant(tenantId);
    return { tenantId, items: (await new TenantScope(this.db, tenantId).mailTemplates.list()).map(toView) };
  }

  /** One override; 404 when the tenant keeps the defaults for that kind and locale. */
  async get(tenantId: string, kind: MailKind, locale: Locale): Promise<MailTemplateView> {
    await this.requireTenant(tenantId);
    const row = await new TenantScope(this.db, tenantId).mailTemplates.get(kind, locale);
    if (!row) throw notFound(`Mail template override ${kind}/${locale}`);
    return toView(row);
  }

  /**
   * Replaces the override of a kind and locale (a part left out or null keeps the default);
   * each part is checked first. Audited, naming the parts set (not their text).
   */
  async put(
    tenantId: string,
    kind: MailKind,
    locale: Locale,
    input: unknown,
    actor: Actor,
  ): Promise<{ template: MailTemplateView; created: boolean }> {
    const body: TemplateParts = parseInput(MailTemplateInput, input);
    const parts: Record<(typeof MAIL_PARTS)[number], string | null> = {
      subject: body.subject ?? null,
      text: body.text ?? null,
      html: body.html ?? null,
    };
    for (const part of MAIL_PARTS) {
      const src = parts[part];
      if (src === null) continue;
      const problem = templateProblem(kind, part, src);
      if (problem) {
        const variable = unknownVariable(kind, src);
        throw new ApiError(400, 'invalid_template', problem, { field: part, ...(variable ? { variable } : {}) });
      }
    }
    if (MAIL_PARTS.every((part) => parts[part] === null))
      throw new ApiError(400, 'invalid_request', 'Give at least one of subject, text, html (or DELETE the override).');
    await this.requireTenant(tenantId);
    const write = { kind, locale, subject: parts.subject, textBody: parts.text, htmlBody: parts.html, now: Date.now() };
    let created = false;
    await this.db.transaction(async (tx) => {
      const s = new TenantScope(tx, tenantId).mailTemplates;
      if (!(await s.update(write))) {
        try {
          await s.insert(write);
          created = true;
        } catch (e) {
          // Written meanwhile by another PUT: this one replaces it.
          if (!isUniqueViolation(e)) throw e;
          await s.update(write);
        }
      }
      await this.notifications.clear(tenantId, TEMPLATE_CONDITION, subjectOf(kind, locale), tx);
      await audit(tx, actor, {
        tenantId,
        action: 'tenant.mail_template.update',
        targetType: 'mail_template',
        targetId: `${kind}/${locale}`,
        summary: { parts: MAIL_PARTS.filter((part) => parts[part] !== null), created },
      });
    });
    return { template: await this.get(tenantId, kind, locale), created };
  }

  /** Removes the override (the defaults apply again); 404 when there was none. Audited. */
  async delete(tenantId: string, kind: MailKind, locale: Locale, actor: Actor): Promise<void> {
    await this.requireTenant(tenantId);
    await this.db.transaction(async (tx) => {
      if (!(await new TenantScope(tx, tenantId).mailTemplates.delete(kind, locale)))
        throw notFound(`Mail template override ${kind}/${locale}`);
      await this.notifications.clear(tenantId, TEMPLATE_CONDITION, subjectOf(kind, locale), tx);
      await audit(tx, actor, {
        tenantId,
        action: 'tenant.mail_template.delete',
        targetType: 'mail_template',
        targetId: `${kind}/${locale}`,
      });
    });
  }

  /** The mail as it would be sent now, with sample variables (`iam mail preview`). */
  async preview(tenantId: string, kind: string, locale: string | undefined): Promise<MailPreview> {
    if (!isMailKind(kind))
      throw new ApiError(
        400,
        'invalid_request',
        `Unknown mail kind ${kind}; one of: ${Object.keys(MAIL_KINDS).join(', ')}.`,
        {
          field: 'kind',
        },
      );
    if (locale !== undefined && !(LOCALES as readonly string[]).includes(locale))
      throw new ApiError(400, 'invalid_request', `Unsupported locale ${locale}; one of: ${LOCALES.join(', ')}.`, {
        field: 'locale',
      });
    await this.requireTenant(tenantId);
    const r = await this.composeWith({ tenantId, kind, locale, vars: SAMPLE_VARS });
    return {
      kind,
      locale: asLocale(locale),
      ...r.mail,
      source: r.override ? 'override' : 'default',
      ...(r.error ? { error: r.error } : {}),
    };
  }
}
