import { BaseCommand } from '../../base.js';
import { time } from '../../format.js';
import { KeyService, type KeyInfo } from '../../../shared/services/keys.js';

export default class KeysRotate extends BaseCommand<typeof KeysRotate> {
  static override summary = 'Rotate the token signing key.';
  static override description =
    `Generates a new active signing key and moves the current active key to retiring. The retiring ` +
    `key stays in the JWKS for IAM_KEY_RETIRE_AFTER_SECONDS (default one day), so tokens it signed ` +
    `keep verifying. Running daemons start signing with the new key within ` +
    `${KeyService.CACHE_MS / 1000} seconds.\n` +
    `\n` +
    `On a database without keys this creates the first one.`;
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];

  async run(): Promise<{ active: KeyInfo; retiring: KeyInfo[] }> {
    const result = await this.keyService().rotate(this.actor);
    this.log(`New active key: ${result.active.kid} (${result.active.alg})`);
    if (result.retiring.length === 0) this.log('No key was active before; nothing to retire.');
    for (const k of result.retiring) this.log(`Retiring key:   ${k.kid}, published until ${time(k.retire_at)}`);
    return result;
  }
}
