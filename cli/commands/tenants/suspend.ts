import { HttpCommand } from '../../http/base.js';
import { lifecycleFlags, runLifecycle } from '../../http/lifecycle.js';

export default class TenantsSuspend extends HttpCommand<typeof TenantsSuspend> {
  static override summary =
    'Suspend a tenant through the admin API: its clients and users stop getting and using tokens.';
  static override description =
    'Reads the tenant (GET /api/admin/tenants/{id}) and shows its lifecycle_state and updated_at, asks for ' +
    'confirmation (y/N; --yes skips it, ' +
    'and --json requires --yes because it never prompts), then POSTs /api/admin/tenants/{id}/lifecycle/suspend ' +
    'with those values as the precondition, ' +
    'so a concurrent change makes the service refuse (409, with the current values) rather than act on state you ' +
    'did not see. ' +
    'The Idempotency-Key is derived from the command, tenant, state read and reason unless --idempotency-key is ' +
    'given, and is printed; ' +
    're-running after a lost response replays the stored result ("already done (replayed)") instead of acting twice. ' +
    'Needs a login (`iam login`) with scope iam.platform. See docs/cli.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --reason "INC-4211: credential stuffing from this ' +
      'tenant"',
    {
      description: 'In a script (no prompt), with a key you keep so a retry is replayed, not repeated.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --reason "INC-4211" --idempotency-key ' +
        'inc-4211-suspend --yes --json',
    },
  ];
  static override flags = lifecycleFlags;

  async run() {
    return runLifecycle(this, this.client(), 'suspend', this.flags);
  }
}
