import { Flags } from '@oclif/core';
import { FAPI_PROFILES } from '../../../shared/schemas/fapi.js';
import { BaseCommand } from '../../base.js';
import { readJwksFile } from '../../client-view.js';
import { fields, list, time } from '../../format.js';
import { SIGNING_ALGORITHMS } from '../../../shared/jws.js';
import { GRANT_TYPES } from '../../../shared/schemas/common.js';

export default class ClientsCreate extends BaseCommand<typeof ClientsCreate> {
  static override summary = 'Register an OAuth client in a tenant.';
  static override description =
    `Registers an OAuth 2.0 / OpenID Connect client. A confidential client (the default) gets a ` +
    `generated client secret, printed once: only a hash is stored, so it cannot be shown again. A ` +
    `--public client (a native or browser app, RFC 8252) has no secret and must use PKCE.\n` +
    `\n` +
    `Repeat --redirect-uri, --grant-type, --scope and --audience for several values; each takes one ` +
    `value. Without --grant-type the client gets authorization_code and refresh_token, which need at ` +
    `least one --redirect-uri. Without --scope it gets openid, profile and email.\n` +
    `\n` +
    `The admin scopes (iam.admin, iam.platform) are for service clients: a client that holds one ` +
    `must have client_credentials as its only --grant-type. The account scope (the user's data ` +
    `export and every consent at /api/user/...) is for --first-party clients only.\n` +
    `\n` +
    `A confidential client authenticates with its secret (client_secret_basic, which also accepts the ` +
    `secret in the form body; or --auth-method client_secret_post). With --jwks-file or --jwks-uri it ` +
    `authenticates with private_key_jwt instead (RFC 7523): it signs a short-lived JWT with its private ` +
    `key, gets no secret, and any other method is refused.\n` +
    `\n` +
    `Tokens are signed with ES256 unless the client asks for another algorithm: --id-token-alg, ` +
    `--access-token-alg and --userinfo-alg take RS256, PS256, ES256 or EdDSA (OIDC Registration §2; ` +
    `with --userinfo-alg, /userinfo answers a signed JWT instead of JSON). A confidential client may be ` +
    `registered with --no-pkce to authorize without PKCE (for relying parties that cannot send it, such ` +
    `as the OpenID certification suite); PKCE it sends is still verified. A public client always needs PKCE.`;
  static override examples = [
    {
      description: 'A confidential web application.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name "Web app" --redirect-uri https://app.example.com/callback',
    },
    {
      description: 'A public native application with two loopback redirect URIs.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name "CLI tool" --public --redirect-uri http://127.0.0.1:8400/cb --redirect-uri http://[::1]:8400/cb',
    },
    {
      description: 'A public single-page application whose scripts call /token and /userinfo from its own origin.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name "SPA" --public --redirect-uri https://spa.example.com/cb --allowed-origin https://spa.example.com',
    },
    {
      description: 'A resource server that introspects tokens addressed to it, strictly.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name "Orders API" --grant-type client_credentials --scope introspect --resource-identifier https://orders.example.com --strict-introspection',
    },
    {
      description: 'A service using the client credentials grant for one API.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name "Billing worker" --grant-type client_credentials --scope invoices:read --audience https://api.example.com',
    },
    {
      description: 'A service that authenticates with private_key_jwt, its public keys fetched from a URL.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name "Payments" --grant-type client_credentials --scope pay --jwks-uri https://pay.example.com/jwks',
    },
    {
      description: 'The same with the public keys (a JWK Set) read from a file.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name Pay --grant-type client_credentials --jwks-file k',
    },
    {
      description: 'A confidential relying party that verifies RS256 only and sends no PKCE.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --name Legacy --redirect-uri https://rp.example.com/cb --id-token-alg RS256 --no-pkce',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant that owns the client', required: true }),
    name: Flags.string({ description: 'display name, shown on the consent page', required: true }),
    'redirect-uri': Flags.string({
      description:
        'allowed redirect URI, matched exactly: https, http on 127.0.0.1, [::1] or localhost ' +
        '(any port for a public client), or a reverse-domain private-use scheme ' +
        'such as com.example.app:/cb (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'grant-type': Flags.string({
      description: 'grant type the client may use (repeatable) [default: authorization_code, refresh_token]',
      options: GRANT_TYPES,
      multiple: true,
      multipleNonGreedy: true,
    }),
    scope: Flags.string({
      description: 'scope the client may request (repeatable) [default: openid, profile, email]',
      multiple: true,
      multipleNonGreedy: true,
    }),
    audience: Flags.string({
      description: 'resource (RFC 8707) the client may request tokens for (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    public: Flags.boolean({ description: 'a public client: no secret, PKCE required', default: false }),
    'first-party': Flags.boolean({
      description: 'a first-party client: users are not asked for consent',
      default: false,
    }),
    'resource-identifier': Flags.string({
      description: 'as a resource server: an audience this client serves, checked by strict introspection (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'allowed-origin': Flags.string({
      description:
        'web origin scheme://host[:port] (https, or http on a loopback host) whose scripts may call ' +
        '/token, /revoke and /userinfo for this client (CORS; repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'logo-uri': Flags.string({
      description: "https URL of the client's logo, shown with the user's consents (at most 2048 characters)",
    }),
    'strict-introspection': Flags.boolean({
      description:
        'introspection by this client answers active only for tokens addressed to one of its resource identifiers',
      default: false,
    }),
    'auth-method': Flags.string({
      description:
        'token_endpoint_auth_method, the one way the client authenticates at /token, /revoke and /introspect ' +
        '[default: none for --public, private_key_jwt with --jwks-file or --jwks-uri, else client_secret_basic]',
      options: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    }),
    'jwks-file': Flags.string({
      description: 'private_key_jwt: a file holding the client\'s public keys as a JWK Set ({"keys": [...]})',
      exclusive: ['jwks-uri'],
    }),
    'jwks-uri': Flags.string({
      description: "private_key_jwt: an https URL serving the client's JWK Set, fetched and cached by the service",
      exclusive: ['jwks-file'],
    }),
    'id-token-alg': Flags.string({
      description: "id_token_signed_response_alg: the ID token's signing algorithm [default: ES256]",
      options: [...SIGNING_ALGORITHMS],
    }),
    'access-token-alg': Flags.string({
      description: "access_token_signed_response_alg: the access token's signing algorithm [default: ES256]",
      options: [...SIGNING_ALGORITHMS],
    }),
    'userinfo-alg': Flags.string({
      description: 'userinfo_signed_response_alg: /userinfo answers a JWT signed with it [default: plain JSON]',
      options: [...SIGNING_ALGORITHMS],
    }),
    'authorization-alg': Flags.string({
      description:
        'authorization_signed_response_alg: the algorithm of its JWT authorization responses (JARM, ' +
        'response_mode=jwt) [default: ES256]',
      options: [...SIGNING_ALGORITHMS],
    }),
    'introspection-alg': Flags.string({
      description:
        'introspection_signed_response_alg: /introspect answers it with a JWT signed with it (RFC 9701) ' +
        '[default: JSON unless asked]',
      options: [...SIGNING_ALGORITHMS],
    }),
    pkce: Flags.boolean({
      description:
        'require PKCE at /authorize; --no-pkce lets a confidential client authorize without it (never a public one)',
      default: true,
      allowNo: true,
    }),
    'require-par': Flags.boolean({
      description:
        'require_pushed_authorization_requests: /authorize accepts only a pushed request (POST /par, RFC 9126) from it',
      default: false,
    }),
    'require-signed-request-object': Flags.boolean({
      description: 'require_signed_request_object: /authorize and /par accept only a signed request object (RFC 9101)',
      default: false,
    }),
    'fapi-profile': Flags.string({
      description: "fapi_profile: the client's own FAPI 2.0 profile, over its tenant's (docs/fapi.md)",
      options: [...FAPI_PROFILES],
    }),
  };
  static override fieldFlags = {
    name: 'name',
    redirect_uris: 'redirect-uri',
    grant_types: 'grant-type',
    scopes: 'scope',
    audiences: 'audience',
    public: 'public',
    first_party: 'first-party',
    resource_identifiers: 'resource-identifier',
    strict_introspection: 'strict-introspection',
    allowed_origins: 'allowed-origin',
    logo_uri: 'logo-uri',
    token_endpoint_auth_method: 'auth-method',
    jwks: 'jwks-file',
    jwks_uri: 'jwks-uri',
    id_token_signed_response_alg: 'id-token-alg',
    access_token_signed_response_alg: 'access-token-alg',
    userinfo_signed_response_alg: 'userinfo-alg',
    authorization_signed_response_alg: 'authorization-alg',
    introspection_signed_response_alg: 'introspection-alg',
    require_pkce: 'no-pkce',
    require_pushed_authorization_requests: 'require-par',
    require_signed_request_object: 'require-signed-request-object',
    fapi_profile: 'fapi-profile',
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const jwks = readJwksFile(this, f['jwks-file']);
    const input: Record<string, unknown> = {
      name: f.name,
      ...(f['redirect-uri'] ? { redirect_uris: f['redirect-uri'] } : {}),
      ...(f['grant-type'] ? { grant_types: f['grant-type'] } : {}),
      ...(f.scope ? { scopes: f.scope } : {}),
      ...(f.audience ? { audiences: f.audience } : {}),
      public: f.public,
      first_party: f['first-party'],
      ...(f['resource-identifier'] ? { resource_identifiers: f['resource-identifier'] } : {}),
      strict_introspection: f['strict-introspection'],
      ...(f['allowed-origin'] ? { allowed_origins: f['allowed-origin'] } : {}),
      ...(f['logo-uri'] !== undefined ? { logo_uri: f['logo-uri'] } : {}),
      ...(f['auth-method'] ? { token_endpoint_auth_method: f['auth-method'] } : {}),
      ...(jwks !== undefined ? { jwks } : {}),
      ...(f['jwks-uri'] ? { jwks_uri: f['jwks-uri'] } : {}),
      ...(f['id-token-alg'] ? { id_token_signed_response_alg: f['id-token-alg'] } : {}),
      ...(f['access-token-alg'] ? { access_token_signed_response_alg: f['access-token-alg'] } : {}),
      ...(f['userinfo-alg'] ? { userinfo_signed_response_alg: f['userinfo-alg'] } : {}),
      ...(f['authorization-alg'] ? { authorization_signed_response_alg: f['authorization-alg'] } : {}),
      ...(f['introspection-alg'] ? { introspection_signed_response_alg: f['introspection-alg'] } : {}),
      require_pkce: f.pkce,
      require_pushed_authorization_requests: f['require-par'],
      require_signed_request_object: f['require-signed-request-object'],
      ...(f['fapi-profile'] ? { fapi_profile: f['fapi-profile'] } : {}),
    };
    this.serviceInput = input;
    const { client, client_secret } = await this.services.directory.createClient(f.tenant, input, this.actor);

    this.log(`Created ${client.client_type} client "${client.name}" in tenant ${client.tenant_id}`);
    this.log(
      fields([
        ['id', client.id],
        ['client_id', client.client_id],
        ...(client_secret ? [['client_secret', client_secret] as [string, string]] : []),
        ['redirect URIs', list(client.redirect_uris)],
        ['grant types', list(client.grant_types)],
        ['scopes', list(client.scopes, ' ')],
        ['audiences', list(client.audiences)],
        ['allowed origins', list(client.allowed_origins)],
        ['first party', client.first_party ? 'yes' : 'no'],
        ...(client.logo_uri ? [['logo', client.logo_uri] as [string, string]] : []),
        ['auth method', client.token_endpoint_auth_method],
        ...(client.jwks_uri ? [['jwks_uri', client.jwks_uri] as [string, string]] : []),
        ...(client.jwks ? [['jwks', `${client.jwks.keys.length} key(s)`] as [string, string]] : []),
        ['ID token alg', client.id_token_signed_response_alg ?? 'ES256 (default)'],
        ['access token alg', client.access_token_signed_response_alg ?? 'ES256 (default)'],
        ['userinfo', client.userinfo_signed_response_alg ? `JWT, ${client.userinfo_signed_response_alg}` : 'JSON'],
        ['authorization responses (JARM)', client.authorization_signed_response_alg ?? 'ES256 (default)'],
        [
          'introspection',
          client.introspection_signed_response_alg ? `JWT, ${client.introspection_signed_response_alg}` : 'JSON',
        ],
        ['PKCE', client.require_pkce ? 'required' : 'optional (verified when sent)'],
        ['PAR', client.require_pushed_authorization_requests ? 'required' : 'optional'],
        ['request object', client.require_signed_request_object ? 'required (signed)' : 'optional'],
        ['created', time(client.created_at)],
      ]),
    );
    if (client_secret) {
      // On stderr as well as in --json mode, so it is seen even when stdout goes to a file.
      process.stderr.write(
        '\nWARNING: store the client secret now. It cannot be shown again: only a hash is stored.\n',
      );
    }
    return { ...client, ...(client_secret ? { client_secret } : {}) };
  }
}
