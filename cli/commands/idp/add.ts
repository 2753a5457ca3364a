import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { fields, list, time } from '../../format.js';
import { readHidden, readStdin } from '../../http/prompt.js';

export default class IdpAdd extends BaseCommand<typeof IdpAdd> {
  static override summary = "Register an upstream OpenID provider the tenant's users may sign in through.";
  static override description =
    'Registers an upstream OpenID Connect provider (a company IdP, a social login) for one tenant: its login ' +
    'page then shows "Continue with <name>". The issuer must be an https URL without credentials, query or ' +
    'fragment; its discovery document (/.well-known/openid-configuration) is fetched now, so a typo or an ' +
    'unreachable provider is refused at once.\n' +
    '\n' +
    'The client secret is read from stdin (--client-secret-stdin), never from a flag, so it stays out of the ' +
    'shell history and the process list; at a terminal it is asked for without echo. It is stored encrypted and ' +
    'never shown again.\n' +
    '\n' +
    'Register the printed redirect URI at the upstream for this client. Repeat --scope for several values ' +
    '(default: openid email profile; add offline_access to keep upstream tokens fresh). With ' +
    '--link-by-verified-email an upstream user whose address the upstream reports as verified is linked to the ' +
    'local user with that address. See docs/identity-providers.md.';
  static override examples = [
    {
      description: 'A company IdP, the secret from a file.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 --issuer https://login.example.com --client-id iam ' +
        '--client-secret-stdin --name "Example Corp" < secret.txt',
    },
    {
      description: 'With refresh tokens and linking of verified addresses, the secret from a variable.',
      command:
        'printf %s "$SECRET" | <%= config.bin %> <%= command.id %> --tenant ten_123 --issuer ' +
        'https://accounts.example.org --client-id iam --client-secret-stdin --scope openid --scope email ' +
        '--scope offline_access --link-by-verified-email',
    },
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    issuer: Flags.string({ description: 'issuer identifier of the upstream provider (https)', required: true }),
    'client-id': Flags.string({ description: 'our client_id at the upstream', required: true }),
    'client-secret-stdin': Flags.boolean({
      description: 'read our client secret at the upstream from stdin (required)',
      required: true,
    }),
    scope: Flags.string({
      description: 'scope asked of the upstream (repeatable) [default: openid, email, profile]',
      multiple: true,
      multipleNonGreedy: true,
    }),
    name: Flags.string({ description: 'name on the login button [default: the issuer host]' }),
    slug: Flags.string({ description: 'short name, unique in the tenant [default: made from --name]' }),
    'link-by-verified-email': Flags.boolean({
      description: 'link upstream users to local users by an address the upstream reports verified',
      default: false,
    }),
  };
  static override fieldFlags = {
    issuer: 'issuer',
    client_id: 'client-id',
    client_secret: 'client-secret-stdin',
    scopes: 'scope',
    display_name: 'name',
    slug: 'slug',
    link_by_verified_email: 'link-by-verified-email',
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const secret = process.stdin.isTTY ? await readHidden('Client secret: ') : await readStdin();
    if (!secret) throw new CliFailure('invalid_request', '--client-secret-stdin: no secret on stdin', 1);
    const input: Record<string, unknown> = {
      issuer: f.issuer,
      client_id: f['client-id'],
      client_secret: secret,
      ...(f.scope ? { scopes: f.scope } : {}),
      ...(f.name !== undefined ? { display_name: f.name } : {}),
      ...(f.slug !== undefined ? { slug: f.slug } : {}),
      link_by_verified_email: f['link-by-verified-email'],
    };
    // Quoted back on a refusal: everything but the secret.
    this.serviceInput = { ...input, client_secret: undefined };
    if (!this.jsonEnabled()) process.stderr.write(`Fetching the discovery document of ${f.issuer} …\n`);
    const idp = await this.services.upstreamIdps.create(f.tenant, input, this.actor, '');
    this.log(`Registered upstream provider "${idp.display_name}" in tenant ${idp.tenant_id}`);
    this.log(
      fields([
        ['id', idp.id],
        ['slug', idp.slug],
        ['issuer', idp.issuer],
        ['client_id', idp.client_id],
        ['scopes', list(idp.scopes, ' ')],
        ['link by verified email', idp.link_by_verified_email ? 'yes' : 'no'],
        ['redirect URI', idp.redirect_uri],
        ['created', time(idp.created_at)],
      ]),
    );
    if (!this.jsonEnabled())
      process.stderr.write(`\nRegister ${idp.redirect_uri} as a redirect URI of ${idp.client_id} at the upstream.\n`);
    return idp;
  }
}
