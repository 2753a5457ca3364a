/**
 * A directory user as a SCIM User (RFC 7643 §4.1) and back (docs/scim.md, "Users"): one
 * record. The columns hold what the service itself uses (userName, externalId, the sign-in
 * address, the name, the standard claims, the status); users.scim_attributes keeps the SCIM
 * representation the provisioning client last wrote (the enterprise extension and any other
 * attribute included), returned on GET with the columns laid over it.
 */
import { email as emailSchema } from '../../schemas/common.js';
import { StandardClaimsInput } from '../../schemas/standard-claims.js';
import type { ScimUserRow, ScimUserWrite } from '../../repositories/index.js';
import { invalidValue } from './errors.js';
import { withMeta, type ScimResource } from './render.js';
import { SCHEMA_USER, USER_TYPE } from './schema.js';
import type { CheckedBody } from './values.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The representation of a user the SCIM client never wrote (created by the admin API or a sign-up). */
function synthesized(row: ScimUserRow): Obj {
  const c = row.standard_claims ?? {};
  const name: Obj = { formatted: row.name };
  if (typeof c.given_name === 'string') name.givenName = c.given_name;
  if (typeof c.family_name === 'string') name.familyName = c.family_name;
  return {
    name,
    displayName: row.name,
    emails: [{ value: row.email, type: 'work', primary: true }],
    ...(typeof c.locale === 'string' ? { locale: c.locale } : {}),
  };
}

/** The user as GET /Users/{id} answers it (before projection). */
export function userResource(row: ScimUserRow, base: string): ScimResource {
  const stored = row.scim_attributes ?? synthesized(row);
  const schemas = [SCHEMA_USER];
  for (const k of Object.keys(stored)) if (k.toLowerCase().startsWith('urn:') && k !== SCHEMA_USER) schemas.push(k);
  const r: ScimResource = {
    ...stored,
    schemas,
    id: row.id,
    userName: row.user_name ?? row.email,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    active: row.status === 'active',
  };
  if (row.external_id === null) delete r.externalId;
  return withMeta(USER_TYPE, r, { base, created: row.created_at, lastModified: row.updated_at });
}

/** The sign-in address: the primary email, else the work one, else userName when it is an address. */
function signInEmail(core: Obj): string {
  const emails = list(core.emails);
  const chosen =
    emails.find((e) => e.primary === true && str(e.value)) ??
    emails.find((e) => typeof e.type === 'string' && e.type.toLowerCase() === 'work' && str(e.value));
  const candidate = str(chosen?.value) ?? str(core.userName);
  const parsed = emailSchema.safeParse(candidate ?? '');
  if (!parsed.success)
    throw invalidValue(
      'No sign-in address: give a primary or work email, or a userName that is an email address (docs/scim.md).',
    );
  return parsed.data;
}

/**
 * The standard claims (OIDC Core §5.1) a SCIM user fills; a value the claim refuses (a phone
 * number not in E.164) is left out of the claim, and kept in the SCIM attributes.
 */
function standardClaims(core: Obj): Obj {
  const name = obj(core.name);
  const phones = list(core.phoneNumbers);
  const phone =
    phones.find((p) => p.primary === true) ??
    phones.find((p) => typeof p.type === 'string' && p.type.toLowerCase() === 'work') ??
    phones[0];
  const candidates: Record<string, unknown> = {
    given_name: str(name.givenName),
    family_name: str(name.familyName),
    middle_name: str(name.middleName),
    nickname: str(core.nickName),
    profile: str(core.profileUrl),
    zoneinfo: str(core.timezone),
    locale: str(core.locale),
    phone_number: str(phone?.value),
  };
  const out: Obj = {};
  for (const [k, v] of Object.entries(candidates)) {
    if (v === undefined) continue;
    const parsed = StandardClaimsInput[k as keyof typeof StandardClaimsInput].safeParse(v);
    if (parsed.success) out[k] = parsed.data;
  }
  return out;
}

/**
 * The row a checked SCIM User body writes, and its `active` (undefined: not given). The
 * attributes of the extensions an unknown key names (`<urn>:<attr>`) are kept under that URN.
 */
export function userWrite(checked: CheckedBody): { write: ScimUserWrite; active?: boolean } {
  const core = checked.core;
  const userName = str(core.userName);
  if (!userName) throw invalidValue('userName is required.');
  if (userName.length > 255) throw invalidValue('userName is longer than 255 characters.');
  const externalId = str(core.externalId) ?? null;
  if (externalId && externalId.length > 255) throw invalidValue('externalId is longer than 255 characters.');
  const name = obj(core.name);
  const given = [str(name.givenName), str(name.familyName)].filter(Boolean).join(' ');
  const display = (str(name.formatted) ?? str(core.displayName) ?? (given || userName)).slice(0, 200);
  const { active, ...kept } = core;
  const attributes: Obj = { ...kept };
  delete attributes.password; // writeOnly, never stored: passwords are not set through SCIM
  delete attributes.id;
  delete attributes.meta;
  for (const [urn, ext] of Object.entries(checked.extensions)) if (Object.keys(ext).length) attributes[urn] = ext;
  // Attributes outside the schemas: kept (the caller has refused them first when the tenant's
  // SCIM source profile says so, user-mapping.ts).
  for (const [k, v] of Object.entries(checked.unknown)) {
    const ext = Object.keys(checked.extensions).find((u) => k.startsWith(`${u}:`));
    if (ext) attributes[ext] = { ...obj(attributes[ext]), [k.slice(ext.length + 1)]: v };
    else attributes[k] = v;
  }
  const claims = standardClaims(core);
  return {
    write: {
      email: signInEmail(core),
      name: display,
      standard_claims: Object.keys(claims).length ? claims : null,
      user_name: userName,
      external_id: externalId,
      scim_attributes: attributes,
    },
    ...(typeof active === 'boolean' ? { active } : {}),
  };
}
