/**
 * A tenant's branding as the admin API and the CLI take it (docs/branding.md). Each rule keeps
 * the branded page safe under its CSP: the logo is an https image (or one of this origin), the
 * colour a plain `#rrggbb`, the custom CSS bounded and unable to close its `<style>` element.
 */
import { z } from 'zod';

/** The most custom CSS a tenant may set, in characters (inlined into every page of its flows). */
export const MAX_CUSTOM_CSS = 8192;
export const MAX_BRANDING_URL = 2048;

/**
 * A logo URL: `https:` without credentials (its origin then joins the page's CSP `img-src`), or
 * an absolute path of this origin (`/…`, never `//host`, which is another origin). No `http:`
 * (mixed content, and a network attacker could swap the picture) and no `data:` (mail clients
 * do not show them, and the same logo is used in mails).
 */
export function isLogoUrl(v: string): boolean {
  if (/^\/(?![/\\])/.test(v)) return !/[\s\\"'<>]/.test(v);
  return isHttpsUrl(v);
}

function isHttpsUrl(v: string): boolean {
  if (!URL.canParse(v)) return false;
  const u = new URL(v);
  return u.protocol === 'https:' && u.hostname !== '' && u.username === '' && u.password === '';
}

/** A support link: an https URL, or a `mailto:` with an address (RFC 6068). */
export function isSupportUrl(v: string): boolean {
  if (/^mailto:/i.test(v)) return /^mailto:[^\s@<>"]+@[^\s@<>"]+$/i.test(v);
  return isHttpsUrl(v);
}

export const BrandingInput = z
  .strictObject({
    displayName: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(200)
      .optional()
      .describe("The name shown at the top of the tenant's pages; left out, the tenant's name"),
    logoUrl: z
      .string()
      .max(MAX_BRANDING_URL)
      .refine(isLogoUrl, 'must be an https URL without credentials, or a path of this service starting with /')
      .optional()
      .describe('The logo: an https URL, or a same-origin path such as /assets/logo.png'),
    primaryColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour written #rrggbb')
      .optional()
      .describe('The primary colour (buttons), #rrggbb; the text on it is chosen for contrast'),
    supportUrl: z
      .string()
      .max(MAX_BRANDING_URL)
      .refine(isSupportUrl, 'must be an https URL or a mailto: address')
      .optional()
      .describe('Where users get help: an https URL or mailto:'),
    customCss: z
      .string()
      .max(MAX_CUSTOM_CSS, `must be at most ${MAX_CUSTOM_CSS} characters`)
      .refine((v) => !/<\/style/i.test(v), 'must not contain </style')
      .refine((v) => !v.includes('\0'), 'must not contain NUL characters')
      .optional()
      .describe(`Extra CSS appended to the page's stylesheet (at most ${MAX_CUSTOM_CSS} characters)`),
  })
  .describe("A tenant's branding; PUT replaces it whole (a field left out is cleared)");

export type BrandingInput = z.output<typeof BrandingInput>;

export const BrandingView = z.looseObject({
  tenantId: z.string(),
  branding: BrandingInput.describe('The branding as stored (only the fields set)'),
  effective: z
    .looseObject({
      displayName: z.string(),
      logoUrl: z.string().optional(),
      primaryColor: z.string().optional(),
      primaryTextColor: z.string().optional(),
      supportUrl: z.string().optional(),
      customCss: z.string().optional(),
    })
    .describe("What the tenant's pages show: the name defaulted, the text colour on the primary colour computed"),
});
