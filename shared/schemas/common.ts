import { z } from 'zod';
import { isMailbox } from '../config.js';
import { parseWebOrigin, redirectUriProblem } from '../redirect-uris.js';

/** RFC 6749 §3.3 scope-token: 1*( %x21 / %x23-5B / %x5D-7E ) */
export const scopeToken = z
  .string()
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be a scope token (printable ASCII, no space, quote or backslash)')
  .max(128);

export const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:token-exchange',
] as const;

/**
 * A redirect URI a client may register (RFC 6749 §3.1.2, RFC 8252 §7.1 and §7.3, RFC 9700 §4.1.3):
 * the rules are in shared/redirect-uris.ts. The message quotes the refused URI, escaped, so an
 * operator sees which one of several it was and any invisible character in it.
 */
export const redirectUri = z
  .string()
  .max(2048)
  .superRefine((v, ctx) => {
    const problem = redirectUriProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: `${problem} (got ${JSON.stringify(v.slice(0, 200))})` });
  });

/**
 * A web origin a client registers for CORS (shared/redirect-uris.ts, parseWebOrigin), turned
 * into the form a browser sends in its Origin header so that matching is exact.
 */
export const webOrigin = z
  .string()
  .max(300)
  .transform((v, ctx) => {
    const r = parseWebOrigin(v);
    if ('origin' in r) return r.origin;
    ctx.addIssue({ code: 'custom', message: `${r.problem} (got ${JSON.stringify(v.slice(0, 200))})` });
    return z.NEVER;
  });

export const tenantId = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a tenant id');
/**
 * An address mail can be sent to: at most 254 octets (RFC 5321 §4.5.3.1.3: a path of 256 with
 * its angle brackets) and a dot-atom local part, the same rule the mail composer applies, so an
 * address that is accepted here is never one that mail to it would refuse later.
 */
export const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email({ message: 'must be an email address' }).refine(isMailbox, { message: 'must be an email address' }));
export const displayName = z.string().trim().min(1, 'must not be empty').max(200);
