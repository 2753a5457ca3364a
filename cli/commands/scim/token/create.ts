import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { fields } from '../../../format.js';
import { SCIM_TOKEN_DEFAULT_DAYS, SCIM_TOKEN_MAX_DAYS } from '../../../../shared/services/scim/tokens.js';

export default class ScimTokenCreate extends BaseCommand<typeof ScimTokenCreate> {
  static override summary = 'Issue a long-lived SCIM bearer token for a client holding the scope scim.';
  static override description =
    'Okta and Microsoft Entra ID store one static bearer token for a SCIM connection, not client ' +
    'credentials. This issues an access token with the scope scim for a client_credentials client of the ' +
    `tenant that holds scim, valid --days days (default ${SCIM_TOKEN_DEFAULT_DAYS}, at most ` +
    `${SCIM_TOKEN_MAX_DAYS}). The token is printed once; its jti is in the audit log (scim.token.create) ` +
    'and is what `iam scim token revoke` takes. Rotation: create a new token, paste it into the IdP, then ' +
    'revoke the old one (docs/scim.md).';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --client Xk2v9c0aQ1pUuW3e',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --client Xk2v9c0aQ1pUuW3e --days 90 --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    client: Flags.string({ description: 'the client_id of a client_credentials client holding scim', required: true }),
    days: Flags.integer({ description: 'days the token is valid', default: SCIM_TOKEN_DEFAULT_DAYS, min: 1 }),
  };

  async run() {
    const { tenant, client, days } = this.flags;
    await this.requireTenant(tenant);
    const r = await this.services.scim.tokens.create(tenant, client, days, this.actor);
    this.log(
      fields([
        ['access_token', r.access_token],
        ['jti', r.jti],
        ['expires_at', new Date(r.expires_at).toISOString()],
      ]),
    );
    this.log('Paste the access token into the identity provider now: it is not shown again.');
    return r;
  }
}
