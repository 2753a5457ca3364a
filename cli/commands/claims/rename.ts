import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { fields, time } from '../../format.js';
import type { RenameResult } from '../../../shared/services/claim-rename.js';

export default class ClaimsRename extends BaseCommand<typeof ClaimsRename> {
  static override summary = 'Rename a custom claim, migrating its stored values, and wait until it is done.';
  static override description =
    `Renames the custom claim schema <id> to <new-key> in two phases (docs/claims.md, "Rename"): the ` +
    `values users have under the old key are copied to the new key in checkpointed batches, then the ` +
    `key switches in one transaction and the old values are deleted. Tokens and userinfo carry the ` +
    `claim under exactly one of the two keys throughout.\n` +
    `\n` +
    `The rename runs here, printing its progress (values copied of the users affected) to stderr, ` +
    `until it completes; running daemons may work it meanwhile (each batch runs once, wherever it ` +
    `is claimed). If this command or a daemon is killed, the rename resumes from its checkpoint.\n` +
    `\n` +
    `With --no-wait it returns the accepted operation at once (state copying) and a running daemon ` +
    `completes it; poll GET /api/admin/custom-claims/<id>/rename to follow it.`;
  static override examples = [
    '<%= config.bin %> <%= command.id %> ccs_123 employee_number --tenant ten_123',
    {
      description: 'Return at once and let the daemon do the work; print the operation.',
      command: '<%= config.bin %> <%= command.id %> ccs_123 employee_number --tenant ten_123 --no-wait --json',
    },
  ];
  static override args = {
    id: Args.string({ description: 'id of the custom claim schema', required: true }),
    'new-key': Args.string({ description: 'the new claim key', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    wait: Flags.boolean({
      description: 'wait until the rename has completed (--no-wait returns the accepted operation at once)',
      default: true,
      allowNo: true,
    }),
    timeout: Flags.integer({ description: 'seconds to wait for the rename', default: 3600, min: 1, max: 86_400 }),
  };
  static override fieldFlags = { new_field_key: 'new-key' };

  async run(): Promise<RenameResult> {
    await this.requireTenant(this.flags.tenant);
    const input = { new_field_key: this.args['new-key'] };
    this.serviceInput = input;
    const service = this.services.claimRename;
    // Not finished inside start (as the endpoint does for a small rename): the command works it
    // below with progress lines, or leaves it to the daemons under --no-wait.
    let result = await service.start(this.flags.tenant, this.args.id, input, this.actor, { inline: false });
    const op = result.operation;
    if (this.flags.wait) {
      const progress = !this.jsonEnabled();
      if (progress) process.stderr.write(`Renaming ${op.old_key} to ${op.new_key} (operation ${op.id})\n`);
      let last = '';
      result = await service.waitFor(this.flags.tenant, this.args.id, op.id, {
        timeoutMs: this.flags.timeout * 1000,
        onProgress: (r) => {
          const o = r.operation;
          const line =
            o.state === 'copying'
              ? `  copying: ${o.copied_count}/${o.affected_users}`
              : o.state === 'cleanup'
                ? `  cleanup: ${o.deleted_count}/${o.affected_users} old values deleted`
                : `  ${o.state}`;
          if (progress && line !== last) process.stderr.write(`${line}\n`);
          last = line;
        },
      });
      const end = result.operation;
      if (end.state === 'failed') {
        const f = new CliFailure(
          'rename_failed',
          `the rename of ${end.old_key} to ${end.new_key} failed (${end.error_code}); the claim keeps its key`,
        );
        f.context = { operation: end };
        throw f;
      }
      if (end.state !== 'completed') {
        const f = new CliFailure(
          'rename_timeout',
          `the rename is still ${end.state} after ${this.flags.timeout} s; it goes on in a running daemon`,
        );
        f.context = { operation: end };
        throw f;
      }
    }
    const o = result.operation;
    this.log(
      `${o.state === 'completed' ? 'Renamed' : 'Accepted the rename of'} ${o.old_key} to ${o.new_key}` +
        (o.state === 'completed' ? '' : ' (a running daemon completes it)'),
    );
    this.log(
      fields([
        ['schema', String(result.schema.id)],
        ['key', String(result.schema.field_key)],
        ['operation', `${o.id} (${o.state})`],
        ['affected users', String(o.affected_users)],
        ['copied', String(o.copied_count)],
        ['started', time(o.created_at)],
        ['completed', o.completed_at ? time(o.completed_at) : '-'],
      ]),
    );
    return result;
  }
}
