/**
 * Mail templates (docs/email.md, "Templates"): every mail the service sends has a kind, a small
 * set of variables, and a default per locale (subject, text, HTML) in the `mail` catalogue area
 * (shared/i18n/catalogues/mail.ts); a tenant may override any part per kind and locale
 * (shared/services/mail-templates.ts).
 *
 * The syntax is `{{name}}` and nothing else: no logic, no partials, no raw output, so a template
 * cannot run code or read what it was not given. A template is checked on save (an unknown
 * variable or a stray brace is refused, naming it) and again at send time, where a failure falls
 * back to the default. In the HTML part every value is escaped; the subject loses line breaks
 * (a header is one line).
 */
import { t, type Locale } from '../../i18n/index.js';
import type { TenantBranding } from '../branding-types.js';

/** Variables every kind has, filled from the tenant's branding and the issuer. */
export const COMMON_VARIABLES = ['tenant_name', 'issuer_host', 'support_url', 'logo_url', 'primary_color'] as const;

/** Each kind's own variables, documented in docs/email.md. */
export const MAIL_KINDS = {
  sign_in_code: ['code', 'expires_minutes'],
  email_confirmation: ['code', 'expires_minutes'],
  email_in_use: [],
  email_changed: ['old_email', 'new_email'],
  email_changed_by_admin: ['new_email_masked'],
  approval_requested: ['action', 'resource_class', 'request_id', 'step_key', 'expires_at'],
  data_export_ready: ['export_id'],
  invitation: ['sign_in_url', 'email'],
} as const satisfies Record<string, readonly string[]>;

export type MailKind = keyof typeof MAIL_KINDS;
export const MAIL_KIND_NAMES = Object.keys(MAIL_KINDS) as MailKind[];
export const isMailKind = (v: string): v is MailKind => Object.hasOwn(MAIL_KINDS, v);

/** The parts of a template. */
export const MAIL_PARTS = ['subject', 'text', 'html'] as const;
export type MailPart = (typeof MAIL_PARTS)[number];

export type MailVars = Partial<Record<string, string | number>>;

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

/** One override's parts; a missing part is the default's. */
export type TemplateParts = Partial<Record<MailPart, string | null>>;

/** Every variable a kind's template may name. */
export const variablesOf = (kind: MailKind): string[] => [...COMMON_VARIABLES, ...MAIL_KINDS[kind]];

const TAG = /\{\{\s*([A-Za-z0-9_.-]*)\s*\}\}/g;
const NAME = /^[a-z][a-z0-9_]*$/;

/** What is wrong with a template, as a sentence naming it; undefined when it is usable. */
export function templateProblem(kind: MailKind, part: MailPart, source: string): string | undefined {
  const allowed = new Set(variablesOf(kind));
  // Mustache's triple braces are raw (unescaped) output: there is none here.
  const raw = /\{\{\{|\}\}\}/.exec(source);
  if (raw) return `${part}: "${raw[0]}" is not supported (no raw output; the syntax is {{name}})`;
  for (const m of source.matchAll(TAG)) {
    const name = m[1];
    if (!NAME.test(name)) return `${part}: "${m[0]}" is not a variable (the syntax is {{name}})`;
    if (!allowed.has(name))
      return `${part}: unknown variable {{${name}}}; ${kind} has ${[...allowed].map((v) => `{{${v}}}`).join(', ')}`;
  }
  // What is left after the tags must have no braces pair: `{{#if}}`, `{{{raw}}}` or an unclosed tag.
  const stray = /\{\{[^{}]{0,40}\}\}|\{\{|\}\}/.exec(source.replace(TAG, ''));
  if (stray) return `${part}: "${stray[0]}" is not a {{name}} tag (no logic or raw output is supported)`;
  return undefined;
}

/** The first unknown variable of a template, for the error's `variable` field. */
export function unknownVariable(kind: MailKind, source: string): string | undefined {
  const allowed = new Set(variablesOf(kind));
  for (const m of source.matchAll(TAG)) if (NAME.test(m[1]) && !allowed.has(m[1])) return m[1];
  return undefined;
}

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Fills the tags of a checked template; `html` escapes every value. */
export function fill(source: string, vars: MailVars, html: boolean): string {
  return source.replace(TAG, (_, name: string) => {
    const v = vars[name];
    const s = v === undefined || v === null ? '' : String(v);
    return html ? escapeHtml(s) : s;
  });
}

/** The default of a kind's part in a locale (the `mail` catalogue area). */
export const defaultPart = (kind: MailKind, part: MailPart, locale: Locale): string =>
  t(locale, `mail.${kind}.${part}`);

const DEFAULT_COLOR = '#0b57d0';
const safeColor = (c: string | undefined): string => (c && /^#[0-9a-fA-F]{3,8}$/.test(c) ? c : DEFAULT_COLOR);
/** Only web (and, for support, mailto:) addresses go into an attribute: no `javascript:` or `data:` URL. */
const safeUrl = (u: string | undefined, mailto = false): string | undefined =>
  u && (mailto ? /^(https?:\/\/|mailto:)[^\s"'<>]+$/i : /^https?:\/\/[^\s"'<>]+$/i).test(u) ? u : undefined;

/** The variables every kind has, from the tenant's branding. */
export function commonVars(branding: TenantBranding, issuerHost: string): MailVars {
  return {
    tenant_name: branding.displayName,
    issuer_host: issuerHost,
    support_url: safeUrl(branding.supportUrl, true) ?? '',
    logo_url: safeUrl(branding.logoUrl) ?? '',
    primary_color: safeColor(branding.primaryColor),
  };
}

/**
 * The HTML document around a kind's HTML body (default or override): the tenant's logo and name
 * over a bar in its primary colour, and its support link under the body when it has one.
 */
export function htmlFrame(body: string, locale: Locale, branding: TenantBranding): string {
  const color = safeColor(branding.primaryColor);
  const logo = safeUrl(branding.logoUrl);
  const support = safeUrl(branding.supportUrl, true);
  const name = escapeHtml(branding.displayName);
  return (
    `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><title>${name}</title></head>` +
    '<body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;color:#1f2328;background:#ffffff">' +
    '<div style="max-width:560px;margin:0 auto">' +
    `<div style="border-bottom:3px solid ${color};padding-bottom:12px;margin-bottom:16px">` +
    (logo
      ? `<img src="${escapeHtml(logo)}" alt="${name}" height="40" style="vertical-align:middle;margin-right:8px">`
      : '') +
    `<strong style="font-size:18px;vertical-align:middle">${name}</strong></div>` +
    body +
    (support
      ? `<p style="margin-top:24px;font-size:13px;color:#59636e">${escapeHtml(t(locale, 'mail.layout.support'))} ` +
        `<a href="${escapeHtml(support)}" style="color:${color}">${escapeHtml(support)}</a></p>`
      : '') +
    '</div></body></html>'
  );
}

/**
 * Renders a kind in a locale: each part from `override` when it has one, else the default. Throws
 * (with the problem as its message) when an override's part does not check; the caller decides
 * what a failure means (the send path falls back to the default, see mail-templates.ts).
 */
export function renderMail(
  kind: MailKind,
  locale: Locale,
  vars: MailVars,
  branding: TenantBranding,
  override: TemplateParts = {},
): ComposedMail {
  const source = (part: MailPart): string => {
    const o = override[part];
    if (o === undefined || o === null) return defaultPart(kind, part, locale);
    const problem = templateProblem(kind, part, o);
    if (problem) throw new Error(problem);
    return o;
  };
  const subject = source('subject');
  const text = source('text');
  const html = source('html');
  return {
    subject: fill(subject, vars, false)
      .replace(/[\r\n]+/g, ' ')
      .trim(),
    text: fill(text, vars, false),
    html: htmlFrame(fill(html, vars, true), locale, branding),
  };
}

/** Sample values for a preview (`iam mail preview`, the admin API's preview). */
export const SAMPLE_VARS: Record<string, string> = {
  code: '123456',
  expires_minutes: '10',
  old_email: 'old@example.com',
  new_email: 'new@example.com',
  new_email_masked: 'n***@example.com',
  action: 'clients.delete',
  resource_class: 'client',
  request_id: 'apr_sample',
  step_key: 'security',
  expires_at: '2030-01-01T00:00:00.000Z',
  export_id: 'dex_sample',
  sign_in_url: 'https://id.example.com/account/sign-in?tenant=ten_sample&login_hint=ada%40example.com',
  email: 'ada@example.com',
};
