import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';

export default class NotificationsResolve extends BaseCommand<typeof NotificationsResolve> {
  static override summary = 'Resolve an operational notification state.';
  static override description =
    'Any prior state becomes resolved; the output names the previous state. Resolving a state that is already ' +
    'resolved changes nothing and says so (idempotent: true), so a retry is safe. While the condition still ' +
    'holds it is not raised again for the same subject until it has ended.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> ons_abc --tenant ten_123 --assigned-to noc@example.org',
    '<%= config.bin %> <%= command.id %> ons_abc --tenant ten_123 --json',
  ];
  static override args = { state: Args.string({ description: 'state id (ons_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    'assigned-to': Flags.string({ description: 'who handles it (recorded on the state)' }),
  };
  static override fieldFlags = { assignedTo: 'assigned-to' };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { result } = await this.services.fieldMapping.notifications.resolve(
      this.flags.tenant,
      this.args.state,
      this.flags['assigned-to'],
      this.actor,
    );
    this.log(
      result.idempotent
        ? `${result.id} was already resolved; nothing changed.`
        : `Resolved ${result.id} (was ${result.previousState}).`,
    );
    return result;
  }
}
