/**
 * The client lifecycle's request and response shapes (docs/directory.md, "Clients"). A PATCH is
 * validated by registration's own schema: each field here is CreateClientInput's field (its
 * default removed, so an absent field stays absent), and the service then runs the merged
 * registration through CreateClientInput itself, cross-field rules included.
 */
import { z } from 'zod';
import { CreateClientInput } from './admin.js';

const f = CreateClientInput.shape;

export const PatchClientInput = z.strictObject({
  name: f.name.optional(),
  redirect_uris: f.redirect_uris.unwrap().optional(),
  allowed_origins: f.allowed_origins.unwrap().optional(),
  scopes: f.scopes.unwrap().optional(),
  grant_types: f.grant_types.unwrap().optional(),
  first_party: f.first_party.unwrap().optional(),
  token_endpoint_auth_method: f.token_endpoint_auth_method,
  /** null removes it. Giving one of jwks and jwks_uri removes the other. */
  jwks: f.jwks.unwrap().nullable().optional(),
  jwks_uri: f.jwks_uri.unwrap().nullable().optional(),
  /** null removes the logo. */
  logo_uri: f.logo_uri.unwrap().nullable().optional(),
  /** null returns to the default (docs/jarm.md). */
  authorization_signed_response_alg: f.authorization_signed_response_alg.unwrap().nullable().optional(),
  introspection_signed_response_alg: f.introspection_signed_response_alg.unwrap().nullable().optional(),
  /** RFC 9126 §6 and RFC 9101 §10.5 (docs/par.md). */
  require_pushed_authorization_requests: f.require_pushed_authorization_requests.unwrap().optional(),
  require_signed_request_object: f.require_signed_request_object.unwrap().optional(),
  /** null returns to the tenant's profile (docs/fapi.md). */
  fapi_profile: f.fapi_profile,
});
export type PatchClientInput = z.input<typeof PatchClientInput>;

/** Seconds the secrets live before a rotation keep working: at most 30 days; 0 ends them now. */
export const MAX_OLD_SECRET_EXPIRES_IN_S = 30 * 24 * 3600;
export const DEFAULT_OLD_SECRET_EXPIRES_IN_S = 24 * 3600;

export const AddClientSecretInput = z.strictObject({
  old_secret_expires_in: z
    .number()
    .int()
    .min(0)
    .max(MAX_OLD_SECRET_EXPIRES_IN_S)
    .default(DEFAULT_OLD_SECRET_EXPIRES_IN_S),
});
export type AddClientSecretInput = z.input<typeof AddClientSecretInput>;

export const ClientSecretView = z.object({
  id: z.string(),
  created_at: z.number().int(),
  /** Epoch ms; null: no expiry. */
  expires_at: z.number().int().nullable(),
});

export const AddedClientSecretView = ClientSecretView.extend({
  /** The new secret's value: shown here once, stored only as a keyed hash. */
  client_secret: z.string(),
  /** When the secrets live before this one stop working (epoch ms); null when there were none. */
  old_secrets_expire_at: z.number().int().nullable(),
});

/** A client named by its client_id or its row id (`cli_…`), as the agent metadata route does. */
export const ClientRef = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._~-]+$/, 'a client_id or a client id');
export const ClientSecretId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^csec_[A-Za-z0-9_-]+$/, 'a client secret id (csec_…)');
