/**
 * "No service constructed outside the container" (docs/architecture.md, "The container"): in
 * daemon/, cli/ and shared/ outside shared/services/ (whose files build their own parts) and
 * shared/container.ts, no `new X(` of a class exported from shared/services/**, and no call of
 * a factory exported from there. A service built by hand is how a CLI command drifted from the
 * daemon (the federation poll command without the download cap).
 *
 * A factory is an exported function declared to return a service class, or a `…Services`
 * bundle (`fieldMappingServices`). Error classes (those extending Error, or a class of
 * shared/errors.ts, or another such class) are thrown, not composed: they are not services.
 */

interface Violation {
  file: string;
  rule: string;
  detail: string;
}

const RULE = 'service-outside-container';
const SERVICES = 'shared/services/';
/** The container: its core and the directory's lifecycle part. */
const CONTAINER = ['shared/container.ts', 'shared/container-core.ts'];
/** Where the rule applies: the code that uses services (tests and bench/ are harnesses, not checked). */
const CHECKED = ['daemon/', 'cli/', 'shared/'];

/**
 * The exceptions, each with its reason. The scheduler keeps its own lease rows (the jobs
 * machinery itself, built per scheduler on the connection it is given; it has no settings).
 */
const ALLOWED: Record<string, string[]> = {
  'daemon/jobs/scheduler.ts': ['JobLeases'],
};

/** Comments removed, so a comment naming `new KeyService(` is not taken for code. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The classes and factories exported from shared/services/** that build a service. */
function servicesOf(files: Map<string, string>): { classes: Set<string>; factories: Set<string> } {
  const bases = new Map<string, string | undefined>();
  for (const [file, text] of files) {
    if (!file.startsWith(SERVICES)) continue;
    for (const m of code(text).matchAll(
      /^export\s+(?:abstract\s+)?class\s+(\w+)(?:<[^>{]*>)?(?:\s+extends\s+(\w+))?/gm,
    ))
      bases.set(m[1], m[2]);
  }
  const errors = new Set(['Error']);
  for (const m of code(files.get('shared/errors.ts') ?? '').matchAll(/^export\s+(?:abstract\s+)?class\s+(\w+)/gm))
    errors.add(m[1]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, base] of bases) if (base && errors.has(base) && !errors.has(name)) grew = !!errors.add(name);
  }
  const classes = new Set([...bases.keys()].filter((n) => !errors.has(n)));
  const factories = new Set<string>();
  for (const [file, text] of files) {
    if (!file.startsWith(SERVICES)) continue;
    // The declared return type, after the parameters (which stop at the function's first line
    // that closes a block, so an unannotated function never borrows a later one's type).
    const re = /^export\s+function\s+(\w+)\s*(?:<[^>]*>)?\(((?:(?!\n\}|\)\s*\{)[\s\S]){0,800}?)\)\s*:\s*(\w+)\s*\{/gm;
    for (const m of code(text).matchAll(re)) if (classes.has(m[3]) || /Services$/.test(m[3])) factories.add(m[1]);
  }
  return { classes, factories };
}

export function checkServiceConstruction(files: Map<string, string>): Violation[] {
  const { classes, factories } = servicesOf(files);
  const v: Violation[] = [];
  for (const [file, text] of files) {
    if (!CHECKED.some((d) => file.startsWith(d)) || file.startsWith(SERVICES) || CONTAINER.includes(file)) continue;
    const src = code(text);
    // `import { KeyService as Keys }`: the local name is the service too.
    const alias = new Map<string, string>();
    for (const clause of src.matchAll(/^\s*import\s*\{([^}]*)\}\s*from\b/gm))
      for (const m of clause[1].matchAll(/\b(\w+)\s+as\s+(\w+)\b/g)) alias.set(m[2], m[1]);
    const real = (name: string) => alias.get(name) ?? name;
    const allowed = new Set(ALLOWED[file] ?? []);
    const seen = new Set<string>();
    for (const m of src.matchAll(/\bnew\s+(\w+)\s*[(<]/g)) {
      const name = real(m[1]);
      if (classes.has(name) && !allowed.has(name) && !seen.has(name)) {
        seen.add(name);
        v.push({ file, rule: RULE, detail: `new ${name}( (add a getter to shared/container.ts)` });
      }
    }
    for (const m of src.matchAll(/(?<![\w.$])(\w+)\s*\(/g)) {
      const name = real(m[1]);
      if (factories.has(name) && !seen.has(name)) {
        seen.add(name);
        v.push({ file, rule: RULE, detail: `${m[1]}( builds a service (add a getter to shared/container.ts)` });
      }
    }
  }
  return v;
}
