import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { expiryFlag, grantSummary, jsonFlag } from '../../agent-grants.js';
import type { AgentGrantView } from '../../../shared/services/agents/grants.js';

export default class AgentGrantsCreate extends BaseCommand<typeof AgentGrantsCreate> {
  static override summary = 'Create an agent grant: what a user allows an agent client to do.';
  static override description =
    'The details are RFC 9396 authorization_details (1 to 20 objects with a `type`). The ceilings bound what ' +
    'each principal may grant, now and in every later update: {"updater": {...}, "grantor": {...}, "delegator": ' +
    '{...}, "machine_principal": {...}}, each mapping a type to its allowed actions (["*"]: any). The grant ' +
    'starts at generation 1 with the grantor consent recorded.';
  static override examples = [
    `<%= config.bin %> <%= command.id %> --tenant ten_123 --client cid_agent --grantor usr_1 \\
  --details '[{"type":"docs","actions":["read"]}]' --expires-in-days 30 \\
  --ceilings '{"updater":{"docs":["*"]},"grantor":{"docs":["read","write"]}}'`,
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --client cid_agent --grantor usr_1 ' +
      '--details "$(cat details.json)" --ceilings "$(cat ceilings.json)" --expires-in-days 30 --json',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    client: Flags.string({ description: "the agent client's client_id", required: true }),
    grantor: Flags.string({ description: 'id of the user granting', required: true }),
    delegator: Flags.string({ description: 'id of the user delegating on the grantor’s behalf' }),
    'machine-principal': Flags.string({ description: 'client_id of a machine principal the agent acts for' }),
    details: Flags.string({ description: 'authorization_details, a JSON array', required: true }),
    ceilings: Flags.string({ description: 'the principals’ ceilings, a JSON object', required: true }),
    purpose: Flags.string({ description: 'why (at most 500 characters)' }),
    'expires-at': Flags.integer({ description: 'deadline, ms since the epoch (at most 90 days ahead)' }),
    'expires-in-days': Flags.integer({ description: 'deadline in days from now (1 to 90)' }),
    scope: Flags.string({ description: 'a scope of the grant (repeatable; immutable)', multiple: true }),
    'task-set': Flags.string({ description: 'the task set, JSON (immutable)' }),
  };
  static override fieldFlags = {
    client_id: 'client',
    grantor_user_id: 'grantor',
    delegator_user_id: 'delegator',
    machine_principal_id: 'machine-principal',
    authorization_details: 'details',
    expires_at: 'expires-at',
  };

  async run(): Promise<AgentGrantView> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = {
      client_id: f.client,
      grantor_user_id: f.grantor,
      ...(f.delegator ? { delegator_user_id: f.delegator } : {}),
      ...(f['machine-principal'] ? { machine_principal_id: f['machine-principal'] } : {}),
      authorization_details: jsonFlag('details', f.details),
      ceilings: jsonFlag('ceilings', f.ceilings),
      ...(f.purpose !== undefined ? { purpose: f.purpose } : {}),
      expires_at: expiryFlag(f['expires-at'], f['expires-in-days']),
      ...(f.scope ? { scopes: f.scope } : {}),
      ...(f['task-set'] ? { task_set: jsonFlag('task-set', f['task-set']) } : {}),
    };
    this.serviceInput = input;
    const g = await this.services.agentGrants.create(f.tenant, input, this.actor);
    this.log(`Created agent grant ${g.grant_id}`);
    this.log(grantSummary(g));
    return g;
  }
}
