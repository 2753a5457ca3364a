import { Args, Flags } from '@oclif/core';
import { FAPI_PROFILES } from '../../../shared/schemas/fapi.js';
import { BaseCommand } from '../../base.js';
import { readJwksFile, showClient } from '../../client-view.js';
import { GRANT_TYPES } from '../../../shared/schemas/common.js';
import { SIGNING_ALGORITHMS } from '../../../shared/jws.js';

/** A signing algorithm flag as the PATCH field: `default` is null (the field cleared). */
const algPatch = (field: string, v: string | undefined) =>
  v === undefined ? {} : { [field]: v === 'default' ? null : v };

export default class ClientsUpdate extends BaseCommand<typeof ClientsUpdate> {
  static override summary = "Edit an OAuth client's registration.";
  static override description =
    'Changes only what a flag names; a repeatable flag replaces the whole list. The result is checked by ' +
    'the same rules as `iam clients create` (a bad value names the flag). --jwks-file or --jwks-uri replaces ' +
    'the other; an --auth-method other than private_key_jwt drops the keys. With --if-match (the etag of ' +
    '`iam clients get`) a client changed since then is refused. Audited as client.update. The same as ' +
    'PATCH /api/admin/tenants/{tenantId}/clients/{clientId}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --name "Web app" --redirect-uri https://app.example.com/cb',
    {
      description: 'Only if nobody changed it since you read it.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --scope api --if-match \'"3q2-…"\'',
    },
  ];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    name: Flags.string({ description: 'display name' }),
    'redirect-uri': Flags.string({
      description: 'redirect URI (repeatable; replaces the list)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'allowed-origin': Flags.string({
      description: 'CORS web origin (repeatable; replaces the list)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    scope: Flags.string({
      description: 'scope (repeatable; replaces the list)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'grant-type': Flags.string({
      description: 'grant type (repeatable; replaces the list)',
      options: GRANT_TYPES,
      multiple: true,
      multipleNonGreedy: true,
    }),
    'first-party': Flags.boolean({ description: 'first party (no consent screen); --no-first-party', allowNo: true }),
    'auth-method': Flags.string({
      description: 'token_endpoint_auth_method',
      options: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    }),
    'jwks-file': Flags.string({ description: 'private_key_jwt: a JWK Set file', exclusive: ['jwks-uri'] }),
    'jwks-uri': Flags.string({ description: 'private_key_jwt: an https URL of the JWK Set', exclusive: ['jwks-file'] }),
    'logo-uri': Flags.string({ description: 'https URL of the logo', exclusive: ['remove-logo'] }),
    'remove-logo': Flags.boolean({ description: 'remove the logo', exclusive: ['logo-uri'] }),
    'authorization-alg': Flags.string({
      description: 'authorization_signed_response_alg (JARM); default returns to ES256',
      options: [...SIGNING_ALGORITHMS, 'default'],
    }),
    'introspection-alg': Flags.string({
      description: 'introspection_signed_response_alg (RFC 9701); default returns to JSON unless asked',
      options: [...SIGNING_ALGORITHMS, 'default'],
    }),
    'if-match': Flags.string({ description: 'the etag of `iam clients get`: refuse if the client changed since' }),
    'require-par': Flags.boolean({
      description: 'require pushed authorization requests (RFC 9126); --no-require-par lifts it',
      allowNo: true,
    }),
    'require-signed-request-object': Flags.boolean({
      description: 'require signed request objects (RFC 9101); --no-require-signed-request-object lifts it',
      allowNo: true,
    }),
    'fapi-profile': Flags.string({
      description: "the client's own FAPI 2.0 profile (docs/fapi.md); tenant: follow its tenant's again",
      options: [...FAPI_PROFILES, 'tenant'],
    }),
  };
  static override fieldFlags = {
    name: 'name',
    redirect_uris: 'redirect-uri',
    allowed_origins: 'allowed-origin',
    scopes: 'scope',
    grant_types: 'grant-type',
    first_party: 'first-party',
    token_endpoint_auth_method: 'auth-method',
    jwks: 'jwks-file',
    jwks_uri: 'jwks-uri',
    logo_uri: 'logo-uri',
    authorization_signed_response_alg: 'authorization-alg',
    introspection_signed_response_alg: 'introspection-alg',
    require_pushed_authorization_requests: 'require-par',
    require_signed_request_object: 'require-signed-request-object',
    fapi_profile: 'fapi-profile',
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const jwks = readJwksFile(this, f['jwks-file']);
    const input: Record<string, unknown> = {
      ...(f.name !== undefined ? { name: f.name } : {}),
      ...(f['redirect-uri'] ? { redirect_uris: f['redirect-uri'] } : {}),
      ...(f['allowed-origin'] ? { allowed_origins: f['allowed-origin'] } : {}),
      ...(f.scope ? { scopes: f.scope } : {}),
      ...(f['grant-type'] ? { grant_types: f['grant-type'] } : {}),
      ...(f['first-party'] !== undefined ? { first_party: f['first-party'] } : {}),
      ...(f['auth-method'] ? { token_endpoint_auth_method: f['auth-method'] } : {}),
      ...(jwks !== undefined ? { jwks } : {}),
      ...(f['jwks-uri'] ? { jwks_uri: f['jwks-uri'] } : {}),
      ...(f['logo-uri'] !== undefined ? { logo_uri: f['logo-uri'] } : {}),
      ...(f['remove-logo'] ? { logo_uri: null } : {}),
      ...algPatch('authorization_signed_response_alg', f['authorization-alg']),
      ...algPatch('introspection_signed_response_alg', f['introspection-alg']),
      ...(f['require-par'] !== undefined ? { require_pushed_authorization_requests: f['require-par'] } : {}),
      ...(f['require-signed-request-object'] !== undefined
        ? { require_signed_request_object: f['require-signed-request-object'] }
        : {}),
      ...(f['fapi-profile'] ? { fapi_profile: f['fapi-profile'] === 'tenant' ? null : f['fapi-profile'] } : {}),
    };
    if (!Object.keys(input).length) this.error('name at least one thing to change (see --help)', { exit: 2 });
    this.serviceInput = input;
    const { client, etag } = await this.services.clientLifecycle.update(f.tenant, this.args.client, input, this.actor, {
      ...(f['if-match'] ? { ifMatch: f['if-match'] } : {}),
    });
    this.log(`Updated client "${client.name}" (${client.client_id}).`);
    this.log(showClient(client, etag));
    return { ...client, etag };
  }
}
