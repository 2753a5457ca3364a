/**
 * "Did you mean": what `iam` does with a command it does not know (oclif's `command_not_found`
 * hook, registered in package.json "oclif.hooks").
 *
 * At a terminal it hands over to @oclif/plugin-not-found, which asks "Did you mean … ? (Y/n)"
 * and runs the suggestion on a yes. That plugin is not listed in "oclif.plugins" on purpose:
 * there its hook would run beside this one for every typo (oclif runs every plugin's hook for
 * an event at once), and on its own, without a terminal, it prints no suggestion at all, exits
 * 127 and points at `iam help`, a command this CLI does not have. Without a terminal (a script,
 * CI), or under `--json`, this hook never prompts: it prints the nearest command, in the
 * space-separated form the operator types, once, and exits 2 like every usage error
 * (docs/cli.md, "Exit codes and errors").
 */
import { Errors, toConfiguredId, type Hook } from '@oclif/core';
import notFound from '@oclif/plugin-not-found';

/** Levenshtein distance (insertions, deletions, substitutions), on command ids like `tenants:list`. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/** The known command id nearest to `id`, or undefined when none is near enough to be a typo of it. */
export function nearestCommand(id: string, known: readonly string[]): string | undefined {
  let best: { id: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(id, k);
    if (!best || d < best.d) best = { id: k, d };
  }
  // A third of the typed id, at least 2: `tenant list` finds `tenants list`, `iam frobnicate` finds nothing.
  return best && best.d <= Math.max(2, Math.floor(id.length / 3)) ? best.id : undefined;
}

const hook: Hook.CommandNotFound = async function (opts) {
  const { config } = opts;
  const hidden = new Set(config.commands.filter((c) => c.hidden).map((c) => c.id));
  const known = [...config.commandIDs, ...config.commands.flatMap((c) => c.aliases)].filter((c) => !hidden.has(c));
  const json = (opts.argv ?? []).includes('--json');
  const typed = toConfiguredId(opts.id, config);
  const hint = `Run \`${config.bin} --help\` for every command.`;

  if (process.stdin.isTTY && !json) {
    try {
      // Prompts "Did you mean …?"; on a yes it runs the suggestion and returns its result.
      return await notFound.call(this, opts);
    } catch (e) {
      if (e instanceof Errors.ExitError) throw e;
      // Its own closing line names `iam help`; this CLI's help is `iam --help`.
      throw new Errors.CLIError(hint, { exit: 2 });
    }
  }

  const nearest = nearestCommand(opts.id, known);
  const suggestion = nearest ? `${config.bin} ${toConfiguredId(nearest, config)}` : undefined;
  const message =
    `\`${config.bin} ${typed}\` is not an ${config.bin} command.` +
    (suggestion ? ` Did you mean \`${suggestion}\`?` : '') +
    ` ${hint}`;
  if (json) {
    process.stdout.write(
      JSON.stringify({ error: 'unknown_command', message, ...(suggestion ? { suggestion } : {}) }, null, 2) + '\n',
    );
    this.exit(2);
  }
  throw new Errors.CLIError(message, { exit: 2 });
};

export default hook;
