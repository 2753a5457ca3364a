import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import type { KeyInfo } from '../../../shared/services/keys.js';

export default class KeysList extends BaseCommand<typeof KeysList> {
  static override summary = 'List the token signing keys.';
  static override description =
    'Lists signing keys, newest first, with their status: active (signs new tokens), retiring (still published in ' +
    'the JWKS until its retire time, so tokens it signed keep verifying) or retired. Private keys are never shown.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --json | jq -r \'.[] | select(.status == "active") | .kid\'',
  ];

  async run(): Promise<KeyInfo[]> {
    const keys = await this.services.keys.list();
    this.log(
      table(
        keys,
        [
          { header: 'kid', value: (k) => k.kid },
          { header: 'alg', value: (k) => k.alg },
          { header: 'status', value: (k) => k.status },
          { header: 'created', value: (k) => time(k.created_at) },
          { header: 'retire at', value: (k) => time(k.retire_at) },
        ],
        'No signing keys. The daemon creates one at start, or run: iam keys rotate',
      ),
    );
    return keys;
  }
}
