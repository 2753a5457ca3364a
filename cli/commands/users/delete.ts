import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { readLine } from '../../http/prompt.js';
import { fields } from '../../format.js';
import { userFlags } from '../../users-lifecycle.js';
import type { UserErasureResult } from '../../../shared/services/user-lifecycle.js';

export default class UsersDelete extends BaseCommand<typeof UsersDelete> {
  static override summary = 'Erase a user: the profile and every row naming the user, every token revoked.';
  static override description =
    'Deletes, in one transaction, the user and every row of the tenant that names them (sessions, devices, ' +
    'passkeys, consents, claim values, upstream links, data exports, email codes, relationships, approvals, ' +
    'the sign-in history) and revokes every token. The audit log keeps the user id and a keyed pseudonym, never ' +
    'the address or the name (docs/directory.md says exactly what stays). The address may be registered again. ' +
    "It cannot be undone: type the user's email address to confirm, or pass --confirm <email> (or --yes) in a " +
    'script; --json never prompts.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456',
    {
      description: 'In a script: the address names the user you mean to erase, checked before anything is deleted.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456 --confirm ada@example.com --json',
    },
  ];
  static override flags = {
    ...userFlags,
    confirm: Flags.string({ description: "the user's email address, typed in advance (no prompt)" }),
    yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation', default: false }),
  };

  async run(): Promise<UserErasureResult> {
    const { tenant, user, confirm, yes } = this.flags;
    await this.requireTenant(tenant);
    const found = await this.services.directory.scope(tenant).users.get(user);
    if (!found) throw new CliFailure('not_found', `--user: no user with id "${user}" in tenant ${tenant}`);
    const email = found.email.toLowerCase();
    if (!yes) {
      let typed = confirm;
      if (typed === undefined) {
        if (this.jsonEnabled())
          throw new CliFailure('confirmation_required', '--json never prompts: pass --confirm <email> or --yes', 2);
        typed = await readLine(`This erases user ${user} for good. Type the user's email address to confirm: `);
      }
      if (typed === undefined) throw new CliFailure('aborted', 'aborted: nothing was deleted');
      if (typed.trim().toLowerCase() !== email)
        throw new CliFailure('confirmation_mismatch', "the address typed is not the user's: nothing was deleted");
    }
    const r = await this.services.userLifecycle.erase(tenant, user, this.actor);
    this.log(`Erased user ${r.id} from tenant ${r.tenant_id}.`);
    this.log(
      fields([
        ['pseudonym (audit)', r.pseudonym],
        ...Object.entries(r.erased).map(([table, n]): [string, string] => [table, String(n)]),
      ]),
    );
    return r;
  }
}
