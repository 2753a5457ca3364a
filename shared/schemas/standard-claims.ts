/**
 * The OpenID Connect Core §5.1 standard claims a user record can hold beyond `name` and
 * `email`, as an operator gives them (docs/claims.md, "Standard claims"). Each is validated to
 * the form §5.1 prescribes, so a relying party never receives a value it cannot parse.
 */
import { z } from 'zod';

/** OIDC Core §5.4: the claims each scope value asks for. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
};

/** A short human-readable string claim (names, nickname, gender): trimmed, 1 to 255 characters. */
const text = z.string().trim().min(1).max(255);
/** profile, picture, website: URLs (§5.1), http or https, at most 2048 characters. */
const webUrl = z.url({ protocol: /^https?$/ }).max(2048);

/**
 * §5.1 `birthdate`: ISO 8601 `YYYY-MM-DD`, `0000-MM-DD` when the year is withheld, or `YYYY`
 * alone. The date must exist (no 2023-02-30).
 */
const birthdate = z
  .string()
  .regex(/^\d{4}(-\d{2}-\d{2})?$/, { message: 'must be YYYY-MM-DD, 0000-MM-DD or YYYY (OIDC Core §5.1)' })
  .refine(
    (s) => {
      if (s.length === 4) return s !== '0000';
      const [y, m, d] = s.split('-').map(Number);
      // Year 0000 means "withheld"; check the day against a leap year so 0000-02-29 passes.
      const dt = new Date(Date.UTC(y === 0 ? 2000 : y, m - 1, d));
      return dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
    },
    { message: 'is not a calendar date' },
  );

/** §5.1 `zoneinfo`: a time zone of the IANA database, as the runtime knows it. */
const zoneinfo = z
  .string()
  .max(64)
  .refine(
    (s) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: s });
        return /^[A-Za-z0-9_+\-/]+$/.test(s);
      } catch {
        return false;
      }
    },
    { message: 'must be an IANA time zone name such as Europe/Paris (OIDC Core §5.1)' },
  );

/** §5.1 `locale`: a BCP 47 language tag (RFC 5646), stored in its canonical form. */
const locale = z
  .string()
  .max(35)
  .transform((s, ctx) => {
    try {
      const [canonical] = Intl.getCanonicalLocales(s);
      if (canonical) return canonical;
    } catch {
      /* refused below */
    }
    ctx.addIssue({ code: 'custom', message: 'must be a BCP 47 language tag such as fr-CA (OIDC Core §5.1)' });
    return z.NEVER;
  });

/**
 * §5.1 `phone_number`: E.164 is RECOMMENDED; this service requires it (a `+`, then 2 to 15
 * digits), with an optional RFC 3966 extension (`;ext=123`), so relying parties can dial it.
 */
const phoneNumber = z.string().regex(/^\+[1-9]\d{1,14}(;ext=\d{1,10})?$/, {
  message: 'must be an E.164 number such as +14155550100, optionally with ;ext=123 (OIDC Core §5.1)',
});

/** §5.1.1 Address Claim: every member optional, at least one present. */
const address = z
  .strictObject({
    formatted: z.string().trim().min(1).max(1024).optional(),
    street_address: z.string().trim().min(1).max(1024).optional(),
    locality: text.optional(),
    region: text.optional(),
    postal_code: z.string().trim().min(1).max(32).optional(),
    country: text.optional(),
  })
  .refine((a) => Object.keys(a).length > 0, { message: 'needs at least one member (OIDC Core §5.1.1)' });

/** The standard claims an operator may set on a user (all optional). */
export const StandardClaimsInput = {
  given_name: text.optional(),
  family_name: text.optional(),
  middle_name: text.optional(),
  nickname: text.optional(),
  preferred_username: text.optional(),
  profile: webUrl.optional(),
  picture: webUrl.optional(),
  website: webUrl.optional(),
  gender: z.string().trim().min(1).max(64).optional(),
  birthdate: birthdate.optional(),
  zoneinfo: zoneinfo.optional(),
  locale: locale.optional(),
  phone_number: phoneNumber.optional(),
  phone_number_verified: z.boolean().optional(),
  address: address.optional(),
};

/** The names of StandardClaimsInput, in §5.1's order. */
export const STANDARD_CLAIM_KEYS = Object.keys(StandardClaimsInput) as (keyof typeof StandardClaimsInput)[];

/** What `users.profile` holds: the claims set, each validated by StandardClaimsInput. */
export type StandardClaims = {
  [K in keyof typeof StandardClaimsInput]?: z.output<(typeof StandardClaimsInput)[K]>;
};

/** A user view's standard claims, for the OpenAPI document: each present only when set. */
export const StandardClaimsView = z.object({
  given_name: z.string().optional(),
  family_name: z.string().optional(),
  middle_name: z.string().optional(),
  nickname: z.string().optional(),
  preferred_username: z.string().optional(),
  profile: z.string().optional(),
  picture: z.string().optional(),
  website: z.string().optional(),
  gender: z.string().optional(),
  birthdate: z.string().optional(),
  zoneinfo: z.string().optional(),
  locale: z.string().optional(),
  phone_number: z.string().optional(),
  phone_number_verified: z.boolean().optional(),
  address: z.record(z.string(), z.string()).optional(),
});

/**
 * The optional scopes of OIDC Core §5.4 that a tenant turns on to release the matching claims
 * (`address`, `phone`). Off by default: a tenant that holds no address or phone number does not
 * offer them, and asking for one is `invalid_scope`.
 */
export const OPTIONAL_CLAIM_SCOPES = ['address', 'phone'] as const;
export type OptionalClaimScope = (typeof OPTIONAL_CLAIM_SCOPES)[number];

/** PUT /api/admin/tenants/{tenantId}/standard-claims */
export const StandardClaimScopesInput = z.strictObject({
  scopes: z
    .array(z.enum(OPTIONAL_CLAIM_SCOPES))
    .max(OPTIONAL_CLAIM_SCOPES.length)
    .refine((a) => new Set(a).size === a.length, { message: 'must not repeat a scope' }),
});
export const StandardClaimScopesView = z.object({
  tenantId: z.string(),
  scopes: z.array(z.enum(OPTIONAL_CLAIM_SCOPES)),
});
