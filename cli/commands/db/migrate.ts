import { Flags } from '@oclif/core';
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
    'Every other command refuses to run until the schema is current.\n\n' +
    'A SQLite file that does not exist is created only with --create: without it the command refuses, naming the ' +
    'path it looked at, so that running `iam` from another directory never leaves a new empty database (and secret ' +
    'key) there. The daemon creates its database by itself at its first start.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    {
      description: 'Create a new SQLite database at the path IAM_DATABASE_URL names, and migrate it.',
      command: 'IAM_DATABASE_URL=sqlite:/srv/iam/var/iam.db <%= config.bin %> <%= command.id %> --create',
    },
    {
      description: 'Migrate a MariaDB database and print the result as JSON.',
      command: 'IAM_DATABASE_URL=mysql://iam:secret@db:3306/iam <%= config.bin %> <%= command.id %> --json',
    },
  ];
  static override flags = {
    create: Flags.boolean({
      description:
        'create the SQLite database file (and a secret key beside it, unless IAM_SECRET_KEY is set) ' +
        'when it does not exist',
      default: false,
    }),
  };
  static override requiresCurrentSchema = false;

  protected override mayCreateDatabase(): boolean {
    return this.flags.create;
  }

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
