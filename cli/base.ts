/**
 * The base of every `iam` command. It parses flags, opens the database named by
 * IAM_DATABASE_URL (closing it whatever happens), refuses to work on an out-of-date schema,
 * and turns errors into one clear message and an exit code:
 *
 *   0  success
 *   1  failure: invalid input rejected by the service (the message names the flag), a
 *      configuration error, an unreachable database, a SQLite file that does not exist (never
 *      created here but by `db migrate --create`), an out-of-date schema
 *   2  usage: unknown command or flag, missing required flag, bad flag value (oclif's parser)
 *
 * With --json the command's result is printed as JSON on stdout, and so is an error:
 * `{"error": "<code>", "message": "<text>"}` (plus `details` for field-level problems).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { Command, Errors, type Interfaces } from '@oclif/core';
import {
  ConfigError,
  databaseFromEnv,
  defaultDatabaseUrl,
  loadConfig,
  type Config,
  type DatabaseConfig,
} from '../shared/config.js';
import { buildServices, type Services } from '../shared/container.js';
import { connect, createDataSource, migrationsCurrent } from '../shared/db/data-source.js';
import type { Database } from '../shared/db/index.js';
import { ApiError, type FieldIssue } from '../shared/errors.js';
import { setAuditSink, type Actor } from '../shared/services/audit.js';
import { bindSecretKey } from '../shared/services/secret-key.js';
import type { Tenant } from '../shared/db/entities.js';
import { isoTimes, keepsEpochTimes } from './json-times.js';

export type CmdFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type CmdArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

export const SCHEMA_NOT_CURRENT = 'the database schema is not current: run `iam db migrate`';

/** A failure the CLI reports itself: a stable code, a one-line message and an exit code. */
export class CliFailure extends Error {
  /** More fields of the `--json` error object (the Idempotency-Key used, current values). */
  context: Record<string, unknown> = {};
  constructor(
    public readonly code: string,
    message: string,
    public readonly exitCode = 1,
    public readonly details?: FieldIssue[],
  ) {
    super(message);
    this.name = 'CliFailure';
  }
  /** Everything the `--json` error object carries besides `error` and `message`. */
  jsonFields(): Record<string, unknown> {
    return { ...(this.details ? { details: this.details } : {}), ...this.context };
  }
}

export interface Report {
  code: string;
  message: string;
  exit: number;
  fields?: Record<string, unknown>;
}

/** Plain JSON (no colour), so the output can always be piped to jq or a script. */
export function printJson(json: unknown): void {
  process.stdout.write(JSON.stringify(json, null, 2) + '\n');
}

/** A command's `--json` result: times as ISO 8601 unless the specification fixes them as int64 (cli/json-times.ts). */
export function printResult(commandId: string | undefined, json: unknown): void {
  printJson(keepsEpochTimes(commandId) ? json : isoTimes(json));
}

/** The report of a failure every command reports alike: its own failures, oclif usage errors, the unexpected. */
export function commonReport(err: Error & { oclif?: { exit?: number } }): Report {
  if (err instanceof CliFailure)
    return { code: err.code, message: err.message, exit: err.exitCode, fields: err.jsonFields() };
  if (err instanceof Errors.CLIError || typeof err.oclif?.exit === 'number') {
    return { code: 'usage_error', message: err.message, exit: err.oclif?.exit ?? 2 };
  }
  return { code: 'internal_error', message: err.message || String(err), exit: 1 };
}

/**
 * How every command ends on an error: the exit code, then the error as JSON on stdout under
 * --json, else one line on stderr. Usage errors keep oclif's own format (with its "see --help"
 * hint), so they are rethrown.
 */
export function emitFailure(json: boolean, err: Error, report: Report): void {
  process.exitCode = report.exit;
  if (json) {
    printJson({ error: report.code, message: report.message, ...report.fields });
    return;
  }
  if (report.code === 'usage_error') throw err;
  process.stderr.write(`Error: ${report.message}\n`);
  if (report.code === 'internal_error' && process.env.DEBUG && err.stack) process.stderr.write(err.stack + '\n');
}

/** Where a database is, for messages: never the URL itself, which may carry a password. */
export function describeDatabase(db: DatabaseConfig): string {
  return db.kind === 'sqlite'
    ? `sqlite:${db.path}`
    : `mysql ${db.user ? `${db.user}@` : ''}${db.host}:${db.port}/${db.database}`;
}

/**
 * A SQLite file that is not there. Opening it would create a new, empty database (and a new
 * secret key beside it) wherever the command happens to run, which is never what an operator
 * who mistyped a path or ran `iam` from another directory wants: say where it looked instead.
 */
export function noDatabase(path: string, env: NodeJS.ProcessEnv): CliFailure {
  const source = env.IAM_DATABASE_URL?.trim()
    ? 'named by IAM_DATABASE_URL'
    : `IAM_DATABASE_URL is not set: the default is ${defaultDatabaseUrl(env)}` +
      (env.IAM_DATA_DIR?.trim().startsWith('/') ? '' : ', relative to the current directory');
  return new CliFailure(
    'database_not_found',
    `no database at ${path} (${source}). Point IAM_DATABASE_URL at the daemon's database ` +
      "(sqlite:/path/to/iam.db or mysql://…), with the daemon's IAM_SECRET_KEY or IAM_DATA_DIR (the directory of " +
      'its secret.key); or create a new database there with `iam db migrate --create`.',
  );
}

function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers) has no user name.
    return process.env.USER || process.env.LOGNAME || `uid:${process.getuid?.() ?? 'unknown'}`;
  }
}

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true;
  static override baseFlags = {};

  /** False only for commands that work on an out-of-date schema (`db migrate`). */
  static requiresCurrentSchema = true;
  /** Service input field → flag name, so a rejected field is reported as the flag the operator typed. */
  static fieldFlags: Record<string, string> = {};

  protected flags!: CmdFlags<T>;
  protected args!: CmdArgs<T>;
  protected settings!: Config;
  protected ds!: Database;
  /** The input last handed to a service, to quote a rejected value back to the operator. */
  protected serviceInput: Record<string, unknown> | undefined;

  private get cmd(): typeof BaseCommand {
    return this.constructor as typeof BaseCommand;
  }

  /** Who is acting, for the audit log. */
  protected get actor(): Actor {
    return { type: 'cli', id: operatorName() };
  }

  /**
   * Every service, as the daemon builds it (shared/container.ts): the same configuration, the
   * same outbound policy, the same limits. Each is built when a command first uses it. The CLI
   * logs nothing (it prints), so the services get no logger; it never sends mail (a daemon's
   * deliverer does), and runners it drives (provisioning, claim renames, polls, scans) are safe
   * beside running daemons: each operation, source or link is claimed one-winner.
   */
  protected services!: Services<undefined>;

  /** This command's row-lease holder name (the upstream token scan's links), readable by an operator. */
  protected readonly leaseHolder =
    `cli:${hostname().slice(0, 64)}:${process.pid}:` + randomBytes(6).toString('base64url');

  /** The tenant named by --tenant, or a failure that says so. */
  protected async requireTenant(id: string): Promise<Tenant> {
    try {
      return await this.services.directory.requireTenant(id);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        throw new CliFailure('not_found', `--tenant: no tenant with id "${id}" (see \`iam tenants list\`)`);
      }
      throw e;
    }
  }

  public override async init(): Promise<void> {
    await super.init();
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: this.cmd.baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    });
    this.flags = flags as CmdFlags<T>;
    this.args = args as CmdArgs<T>;
    await this.openDatabase();
  }

  /** Whether a missing SQLite file may be created: only `db migrate --create`. */
  protected mayCreateDatabase(): boolean {
    return false;
  }

  private async openDatabase(): Promise<void> {
    // Before loadConfig, which would generate a secret key beside a database that is not there.
    const target = databaseFromEnv(process.env);
    if (target.kind === 'sqlite' && !existsSync(target.path) && !this.mayCreateDatabase()) {
      throw noDatabase(target.path, process.env);
    }
    this.settings = loadConfig(process.env);
    if (this.settings.secretKeySource === 'generated') {
      // The key seals signing keys and hashes client secrets: a CLI using a different key from
      // the daemon's writes data the daemon cannot use. Say so (never printing the key).
      process.stderr.write(
        `Warning: IAM_SECRET_KEY is not set and ${this.settings.dataDir}/secret.key did not exist, ` +
          'so a new secret key was generated there. ' +
          'The daemon must use the same key (the same IAM_SECRET_KEY, or the same IAM_DATA_DIR), ' +
          'or the client secrets and signing keys written here will not work.\n',
      );
    }
    const where = describeDatabase(this.settings.database);
    let ds: Database;
    try {
      ds = createDataSource(this.settings.database);
    } catch (e) {
      throw new CliFailure('database_unavailable', `cannot open the database ${where}: ${(e as Error).message}`);
    }
    try {
      // Few attempts: an operator at a terminal wants a quick answer, not a minute of retries.
      this.ds = await connect(ds, 3);
    } catch (e) {
      throw new CliFailure('database_unavailable', `cannot connect to the database ${where}: ${(e as Error).message}`);
    }
    this.services = buildServices(this.ds, this.settings, undefined, { role: 'cli' });
    if (this.cmd.requiresCurrentSchema) {
      if (!(await migrationsCurrent(this.ds))) throw new CliFailure('schema_not_current', SCHEMA_NOT_CURRENT);
      await bindSecretKey(this.ds, this.settings.secretKey);
      // An audit event written here reaches the audit webhook like one written by a daemon
      // (the outbox entry is in its transaction; a daemon's job delivers it).
      setAuditSink(this.services.auditSink);
    }
  }

  public override async finally(err: Error | undefined): Promise<void> {
    try {
      if (this.ds?.isInitialized) await this.ds.destroy();
    } finally {
      await super.finally(err);
    }
  }

  public override logJson(json: unknown): void {
    printResult(this.id, json);
  }

  public override catch(err: Error & { oclif?: { exit?: number } }): Promise<void> {
    if (err instanceof Errors.ExitError) throw err;
    emitFailure(this.jsonEnabled(), err, this.report(err));
    return Promise.resolve();
  }

  private report(err: Error & { oclif?: { exit?: number } }): Report {
    if (err instanceof ConfigError) return { code: 'config_error', message: err.message, exit: 1 };
    if (err instanceof ApiError) return this.reportApiError(err);
    return commonReport(err);
  }

  private flagFor(field: string): string {
    const [key] = field.split('.');
    const flag = this.cmd.fieldFlags[key];
    return flag ? `--${flag}` : field;
  }

  /** The rejected value, quoted, when the field names one element of the input. */
  private valueFor(field: string): string {
    const [key, index] = field.split('.');
    const v = this.serviceInput?.[key];
    const value: unknown =
      Array.isArray(v) && index !== undefined ? (v as unknown[])[Number(index)] : typeof v === 'string' ? v : undefined;
    return typeof value === 'string' ? ` ${JSON.stringify(value)}` : '';
  }

  private reportApiError(err: ApiError): Report {
    const details = Array.isArray(err.extra.details) ? (err.extra.details as FieldIssue[]) : undefined;
    if (err.status === 400 && details?.length) {
      // Each line once, whatever the service sent (two fields may map to one flag).
      const lines = [
        ...new Set(details.map((d) => `invalid ${this.flagFor(d.field)}${this.valueFor(d.field)}: ${d.message}`)),
      ];
      return { code: err.error, message: lines.join('\n'), exit: 1, fields: { details } };
    }
    const field = typeof err.extra.field === 'string' ? err.extra.field : undefined;
    return {
      code: err.error,
      message: field ? `${this.flagFor(field)}: ${err.message}` : err.message,
      exit: 1,
      ...(details ? { fields: { details } } : {}),
    };
  }
}
