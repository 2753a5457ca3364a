/**
 * Shapes of the mail template admin API (docs/email.md, "Templates"): a tenant's overrides of
 * the mails' subject, text and HTML per kind and locale, and the preview.
 */
import { z } from 'zod';
import { LOCALES } from '../i18n/types.js';
import { MAIL_KIND_NAMES } from '../services/mail/templates.js';
import { tenantId } from './common.js';

/** Largest part accepted: a subject is one header line (RFC 5322 §2.1.1's 998), a body a notification. */
export const MAX_SUBJECT_CHARS = 998;
export const MAX_BODY_CHARS = 32_000;

export const MailKindParam = z
  .enum(MAIL_KIND_NAMES as [string, ...string[]], {
    error: () => `must be one of: ${MAIL_KIND_NAMES.join(', ')}`,
  })
  .describe('the mail kind (docs/email.md, "Templates")');
export const MailLocaleParam = z
  .enum(LOCALES, { error: () => `must be one of: ${LOCALES.join(', ')}` })
  .describe('the locale of the template');

export const MailTemplateParams = z.strictObject({ tenantId, kind: MailKindParam, locale: MailLocaleParam });

const part = (max: number, what: string) =>
  z
    .string()
    .min(1, 'must not be empty (null or leave it out to keep the default)')
    .max(max, `must be at most ${max} characters`)
    .nullable()
    .optional()
    .describe(`${what}; {{name}} tags only, with the kind's variables; null or absent keeps the default`);

/** Body of PUT …/mail-templates/{kind}/{locale}: the parts to override (at least one). */
export const MailTemplateInput = z.strictObject({
  subject: part(MAX_SUBJECT_CHARS, 'the subject line'),
  text: part(MAX_BODY_CHARS, 'the plain-text body'),
  html: part(MAX_BODY_CHARS, 'the HTML body (values are escaped; the branded frame is added around it)'),
});

export const MailTemplateView = z.object({
  kind: z.string(),
  locale: z.string(),
  subject: z.string().nullable(),
  text: z.string().nullable(),
  html: z.string().nullable(),
  last_error: z.string().nullable().describe('the last send that could not use this override (the default was sent)'),
  last_error_at: z.number().int().nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const MailTemplateList = z.object({
  tenantId: z.string(),
  kinds: z.array(z.object({ kind: z.string(), variables: z.array(z.string()) })),
  items: z.array(MailTemplateView),
});

export const MailPreviewView = z.object({
  kind: z.string(),
  locale: z.string(),
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  source: z.enum(['default', 'override']),
  error: z.string().optional().describe('why the stored override could not be used (the default is shown)'),
});
