import { BaseCommand, describeDatabase } from '../../base.js';
import { migrate, migrationsCurrent, pendingMigrations } from '../../../shared/db/data-source.js';
import { bindSecretKey } from '../../../shared/services/secret-key.js';

export interface MigrateResult {
  /** Migrations applied by this run, in order. */
  applied: string[];
  /** Every migration this version knows is now applied. */
  current: boolean;
}

export default class DbMigrate extends BaseCommand<typeof DbMigrate> {
  static override summary = 'Apply pending database schema migrations.';
  static override description =
    'Applies every migration this version of the service knows and has not yet applied to the database named by ' +
    'IAM_DATABASE_URL, printing a line per migration. Safe to run again: an up-to-date database is left alone. The ' +
    'daemon also migrates at start; on MySQL/MariaDB a lock makes sure only one process migrates at a time.\n\n' +
    'Every other command refuses to run until the schema is current.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    {
      description: 'Migrate a MariaDB database and print the result as JSON.',
      command: 'IAM_DATABASE_URL=mysql://iam:secret@db:3306/iam <%= config.bin %> <%= command.id %> --json',
    },
  ];
  static override requiresCurrentSchema = false;

  async run(): Promise<MigrateResult> {
    this.log(`Database: ${describeDatabase(this.settings.database)}`);
    const pending = await pendingMigrations(this.ds);
    if (pending.length) this.log(`${pending.length} pending migration${pending.length === 1 ? '' : 's'}`);

    // Shown as each one is applied, not at the end.
    const reported = new Set<string>();
    const applied = await migrate(this.ds, {
      onApplied: (name) => {
        if (reported.has(name)) return;
        reported.add(name);
        this.log(`  applied ${name}`);
      },
    });
    for (const name of applied) if (!reported.has(name)) this.log(`  applied ${name}`);
    await bindSecretKey(this.ds, this.settings.secretKey);

    if (applied.length === 0) this.log('Schema already current: no migrations to apply.');
    else this.log(`Applied ${applied.length} migration${applied.length === 1 ? '' : 's'}; the schema is current.`);
    return { applied, current: await migrationsCurrent(this.ds) };
  }
}
