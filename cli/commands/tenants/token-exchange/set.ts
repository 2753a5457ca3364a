import { readFileSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';
import { showTokenExchange } from '../../../token-exchange.js';

export default class TenantsTokenExchangeSet extends BaseCommand<typeof TenantsTokenExchangeSet> {
  static override summary = "Change a tenant's token exchange settings: ID-JAGs accepted and issued, delegation.";
  static override description =
    'Validates and stores what PUT /api/admin/settings/token-exchange takes, audited ' +
    '(tenant.token_exchange_settings.update): --file is that JSON body (- for stdin); fields left out keep their ' +
    'value, `idJag` and `idJagIssuance` are merged field by field, arrays are replaced whole. --require-may-act ' +
    'and --issuance / --no-issuance change one field without a file. An invalid value names its field (exit 1) ' +
    'and nothing is stored. See docs/token-exchange.md, "Issuing ID-JAGs" and "Delegation".';
  static override examples = [
    {
      description: 'Issue ID-JAGs for the web app to the chat service’s authorization server.',
      command:
        `echo '{"enabled":true,"idJagIssuance":{"enabled":true,"trustedAuthorizationServers":[{"issuer":` +
        `"https://as.chat.example","clients":[{"clientId":"web-app-id","targetClientId":"chat-client-id",` +
        `"scopes":["chat.read"]}]}]}}' | <%= config.bin %> <%= command.id %> --tenant ten_0123abcd --file -`,
    },
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --require-may-act',
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --no-issuance',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    file: Flags.string({ description: 'the settings as JSON, as the PUT takes them (- for stdin)' }),
    'require-may-act': Flags.boolean({
      description: 'an actor_token needs may_act in the subject token (RFC 8693 §4.4)',
      allowNo: true,
    }),
    issuance: Flags.boolean({
      description: 'issue ID-JAGs per the stored policy (idJagIssuance.enabled)',
      allowNo: true,
    }),
  };

  async run() {
    const f = this.flags;
    if (f.file === undefined && f['require-may-act'] === undefined && f.issuance === undefined)
      throw new CliFailure('usage_error', 'give at least one of --file, --require-may-act, --issuance', 2);
    const body = f.file === undefined ? {} : readJson(f.file);
    if (f['require-may-act'] !== undefined) body.requireMayAct = f['require-may-act'];
    if (f.issuance !== undefined) body.idJagIssuance = { ...(body.idJagIssuance ?? {}), enabled: f.issuance };
    await this.requireTenant(f.tenant);
    this.serviceInput = body;
    const r = await this.services.tokenExchangeSettings.update(f.tenant, body, this.actor);
    this.log(showTokenExchange(f.tenant, r.settings, r.note));
    return r;
  }
}

function readJson(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new CliFailure('usage_error', `--file: cannot read ${path}: ${(e as Error).message}`, 2);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new CliFailure('usage_error', `--file: ${path} is not JSON`, 2);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new CliFailure('usage_error', `--file: ${path} must hold a JSON object`, 2);
  return v as Record<string, unknown>;
}
