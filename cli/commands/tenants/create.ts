import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields, time } from '../../format.js';
import { progressPrinter, provisioningSummary, requireSettled } from '../../provisioning.js';
import { toTenantView } from '../../../shared/services/directory.js';

export default class TenantsCreate extends BaseCommand<typeof TenantsCreate> {
  static override summary = 'Create a tenant and wait until it is provisioned.';
  static override description =
    `Creates a tenant, which starts in state provisioning, and runs its provisioning steps ` +
    `(request_accepted, schema_verified, signing_key_ready, mail_transport_verified, ` +
    `tenant_activated) here until the tenant is active (a line per step on stderr with --verbose; a ` +
    `failing step is always shown). The id ` +
    `it prints is what the clients and users commands take as --tenant; once this returns the tenant ` +
    `can be used at once. --json prints the tenant with a provisioning summary (operation_id, state, ` +
    `current_step, steps_done, steps_total, duration_ms); --verbose adds the whole operation, its steps and ` +
    `history, as \`iam provisioning show\` prints it.\n` +
    `\n` +
    `A failed step is retried with backoff (IAM_PROVISIONING_RETRY_BASE_MS); after ` +
    `IAM_PROVISIONING_MAX_ATTEMPTS failures the operation is blocked and the command exits 1 with ` +
    `error provisioning_blocked, naming the step and its error code: fix the cause, then run \`iam ` +
    `provisioning retry --tenant <id>\`.\n` +
    `\n` +
    `With --no-wait it returns at once with the tenant still provisioning; a running daemon ` +
    `provisions it (see \`iam provisioning show\`). Running daemons may pick up steps while this ` +
    `waits: each step runs once, wherever it is claimed.`;
  static override examples = [
    '<%= config.bin %> <%= command.id %> --name "Acme Corp"',
    {
      description: 'A tenant where anyone with a working mailbox may sign up.',
      command: '<%= config.bin %> <%= command.id %> --name "Community" --allow-signup',
    },
    {
      description: 'Capture the new tenant id in a script; the tenant is active when this returns.',
      command: 'TENANT=$(<%= config.bin %> <%= command.id %> --name "Acme Corp" --json | jq -r .id)',
    },
    {
      description: 'Return at once and let the daemon provision the tenant.',
      command: '<%= config.bin %> <%= command.id %> --name "Acme Corp" --no-wait',
    },
  ];
  static override flags = {
    name: Flags.string({ description: 'display name of the tenant', required: true }),
    'allow-signup': Flags.boolean({
      description: 'let unknown addresses sign up by proving their mailbox with an email code (off by default)',
      default: false,
    }),
    wait: Flags.boolean({
      description: 'wait until the tenant is provisioned (--no-wait returns at once, the tenant still provisioning)',
      default: true,
      allowNo: true,
    }),
    verbose: Flags.boolean({
      description: 'print each step on stderr as it runs; under --json add the whole operation with its history',
      default: false,
    }),
    timeout: Flags.integer({
      description: 'seconds to wait for provisioning, backoff included',
      default: 300,
      min: 1,
      max: 86_400,
    }),
  };
  static override fieldFlags = { name: 'name', allow_signup: 'allow-signup' };

  async run() {
    const input = { name: this.flags.name, allow_signup: this.flags['allow-signup'] };
    this.serviceInput = input;
    const wait = this.flags.wait;
    const verbose = this.flags.verbose;
    const printer = wait && !this.jsonEnabled() ? progressPrinter(true, { all: verbose }) : undefined;
    const provisioning = this.services.provisioning;
    const created = await provisioning.createTenant(input, this.actor);
    let { tenant, operation } = created;
    if (wait) {
      if (printer && verbose) {
        process.stderr.write(`Provisioning tenant ${tenant.id} (operation ${operation.operation_id})\n`);
      }
      operation = await provisioning.waitFor(tenant.id, { timeoutMs: this.flags.timeout * 1000, onProgress: printer });
      tenant = await this.services.directory.requireTenant(tenant.id);
    }
    if (wait) requireSettled(operation, this.flags.timeout);
    const view = toTenantView(tenant);
    const summary = provisioningSummary(operation);
    this.log(`Created tenant ${view.id}${wait ? '' : ' (provisioning; a running daemon activates it)'}`);
    this.log(
      fields([
        ['id', view.id],
        ['name', view.name],
        ['state', view.lifecycle_state],
        ['sign-up', view.allow_signup ? 'open' : 'closed'],
        ['created', time(view.created_at)],
        [
          'provisioning',
          `${summary.operation_id} ${summary.state}, ${summary.steps_done}/${summary.steps_total} steps` +
            (summary.duration_ms === null ? '' : ` in ${(summary.duration_ms / 1000).toFixed(1)} s`),
        ],
      ]),
    );
    // The tenant's own fields stay at the top (`jq -r .id`); the operation's 200-odd lines of
    // steps and history only when asked for.
    return { ...view, provisioning: verbose ? { ...summary, operation } : summary };
  }
}
