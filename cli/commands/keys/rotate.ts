import { BaseCommand } from '../../base.js';
import { time } from '../../format.js';
import { KeyService, type KeyInfo } from '../../../shared/services/keys.js';

export default class KeysRotate extends BaseCommand<typeof KeysRotate> {
  static override summary = 'Rotate the token signing keys.';
  static override description =
    `Generates a new active signing key for every algorithm offered (ES256, the default, and RS256, ` +
    `PS256 and EdDSA for clients that register them) and moves the current active keys to retiring. ` +
    `A retiring key stays in the JWKS for IAM_KEY_RETIRE_AFTER_SECONDS (default one day), so tokens it signed ` +
    `keep verifying. Running daemons start signing with the new key within ` +
    `${KeyService.CACHE_MS / 1000} seconds.\n` +
    `\n` +
    `On a database without keys this creates the first ones. In --json, \`active\` is the default ` +
    `(ES256) key and \`active_keys\` lists every new key.`;
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];

  async run(): Promise<{ active: KeyInfo; active_keys: KeyInfo[]; retiring: KeyInfo[] }> {
    const result = await this.services.keys.rotate(this.actor);
    for (const k of result.active_keys) this.log(`New active key: ${k.kid} (${k.alg})`);
    if (result.retiring.length === 0) this.log('No key was active before; nothing to retire.');
    for (const k of result.retiring) this.log(`Retiring key:   ${k.kid}, published until ${time(k.retire_at)}`);
    return result;
  }
}
