import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields, list, time } from '../../format.js';
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
    `must have client_credentials as its only --grant-type.`;
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
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant that owns the client', required: true }),
    name: Flags.string({ description: 'display name, shown on the consent page', required: true }),
    'redirect-uri': Flags.string({
      description:
        'allowed redirect URI, matched exactly: https, http on 127.0.0.1 or [::1] (any port for a public client), ' +
        'or a reverse-domain private-use scheme such as com.example.app:/cb (repeatable)',
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
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
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
    };
    this.serviceInput = input;
    const { client, client_secret } = await this.directory().createClient(f.tenant, input, this.actor);

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
