/**
 * The base of the operator commands that act through the daemon's admin API instead of the
 * database (`iam login`, `tenants suspend|resume`, `audit list`, `provisioning retry`,
 * `recovery reactivate`). It keeps cli/base.ts' conventions: `--json` prints the returned
 * object, errors are `{"error", "message", ...details}` under --json, and exit codes are
 * 0 success, 1 failure, 2 usage. It never opens the database: the credentials come from the
 * file `iam login` writes (cli/http/config.ts). See docs/cli.md.
 */
import { createHash } from 'node:crypto';
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import { CliFailure, commonReport, emitFailure, printResult } from '../base.js';
import { AdminClient } from './client.js';
import { configPath, readCredentials } from './config.js';
import { readLine } from './prompt.js';

export type HttpFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof HttpCommand)['baseFlags'] & T['flags']
>;
export type HttpArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

/** A usage problem found by the command itself (exit 2, like oclif's parser errors). */
export const usage = (code: string, message: string) => new CliFailure(code, message, 2);

/** A time flag (`--since`, `--until`): ISO 8601 or epoch milliseconds → epoch ms; else a usage error. */
export function timeFlag(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  const ms = Date.parse(v);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(v))
    throw usage(
      'invalid_time',
      `--${flag}: "${v}" is neither an ISO 8601 time (2026-11-22T03:00:00Z) nor epoch milliseconds`,
    );
  return ms;
}

/**
 * An Idempotency-Key derived from the operation and the state the command read: the same
 * command against the same state gives the same key, so a re-run after a lost response is
 * replayed by the service instead of acting again, while a run against changed state (a new
 * operation) gets a new key.
 */
export function deriveIdempotencyKey(parts: unknown[]): string {
  return `iamcli-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 40)}`;
}

export abstract class HttpCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true;
  static override baseFlags = {
    timeout: Flags.integer({
      description: 'seconds to wait for each HTTP response',
      default: 30,
      min: 1,
      max: 600,
      helpGroup: 'GLOBAL',
    }),
  };

  protected flags!: HttpFlags<T>;
  protected args!: HttpArgs<T>;
  private api: AdminClient | undefined;

  public override async init(): Promise<void> {
    await super.init();
    const ctor = this.constructor as typeof HttpCommand;
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: ctor.baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    });
    this.flags = flags as HttpFlags<T>;
    this.args = args as HttpArgs<T>;
  }

  /** The admin API as the logged-in client; refuses a missing or group/world-readable config. */
  protected client(): AdminClient {
    this.api ??= new AdminClient(readCredentials(configPath()), (this.flags.timeout ?? 30) * 1000);
    return this.api;
  }

  /** Progress and context for a person: stderr, and nothing under --json (stdout is the result). */
  note(message: string): void {
    if (!this.jsonEnabled()) process.stderr.write(message + '\n');
  }

  /**
   * y/N confirmation before an operation that changes state. `--yes` skips it; under --json
   * nothing is ever prompted, so --json without --yes is a usage error (a script must say
   * explicitly that it means to act). End of input is "no".
   */
  async confirm(question: string, yes: boolean): Promise<void> {
    if (yes) return;
    if (this.jsonEnabled())
      throw usage('confirmation_required', '--json never prompts: pass --yes to confirm the operation');
    const answer = await readLine(`${question} [y/N] `);
    if (!/^(y|yes)$/i.test(answer?.trim() ?? '')) throw new CliFailure('aborted', 'aborted: nothing was sent');
  }

  public override logJson(json: unknown): void {
    printResult(this.id, json);
  }

  public override catch(err: Error & { oclif?: { exit?: number } }): Promise<void> {
    if (err instanceof Errors.ExitError) return Promise.reject(err);
    emitFailure(this.jsonEnabled(), err, commonReport(err));
    return Promise.resolve();
  }
}

/** A failure that carries fields for the `--json` error object (e.g. the idempotency key used). */
export function withContext<E extends CliFailure>(e: E, context: Record<string, unknown>): E {
  e.context = { ...e.context, ...context };
  return e;
}
