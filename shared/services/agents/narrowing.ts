/**
 * Whether updated RFC 9396 authorization_details stay within what the grantor consented to
 * (docs/agents.md, "What a PATCH may change"). A principal's ceiling bounds only `type` and
 * `actions`; everything else an entry carries (RFC 9396 §2.2 `locations`, `datatypes`,
 * `identifier`, `privileges`, and type-specific members such as a payment's
 * `instructedAmount` or `creditorAccount`, RFC 9396 §2.1) is bounded here, against the entry
 * the grantor consented to. The rule, per updated entry, against a consented entry of the same
 * `type`:
 *
 * - an array member is a subset of the consented one (each value deep-equal to a consented
 *   value), and not empty when the consented one is not (an empty list may read as "any");
 * - an amount object (`{ currency, amount }`) has the same currency and an amount ≤ the
 *   consented one (decimal, compared exactly);
 * - any other member (`identifier`, `creditorAccount`, …) is deep-equal;
 * - a member absent from the consented entry may not appear (absent means "not granted");
 * - a member present in the consented entry may not be dropped (absence can mean
 *   "unrestricted", as an absent `actions` does under RFC 9396 §2.2 as this service reads it).
 *
 * An updated entry passes when some consented entry of its type covers it. Every key of the
 * user's JSON is read as an own property (Object.keys / Object.hasOwn), never through
 * `obj[key]` on a plain object's prototype chain, so `constructor` or `__proto__` is a name
 * like any other.
 */

type Entry = Record<string, unknown>;

/** Why an updated entry is not within the consented ones: the field (relative to the entry) and a reason. */
export interface Widening {
  /** The updated entry's index in authorization_details. */
  index: number;
  /** The member that widens (`type` when no consented entry has that type). */
  member: string;
  message: string;
}

const own = (o: Entry, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

const isPlain = (v: unknown): v is Entry => !!v && typeof v === 'object' && !Array.isArray(v);

/** Structural equality of JSON values, over own keys only. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  if (!isPlain(a) || !isPlain(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,18}))?$/;

/** A non-negative decimal (string, or a number without exponent) as [integer, scale], or undefined. */
function decimal(v: unknown): [bigint, number] | undefined {
  const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
  if (typeof s !== 'string') return undefined;
  const m = DECIMAL.exec(s);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  return [BigInt(m[1] + frac), frac.length];
}

/** a ≤ b for two decimals, exactly (scaled to the same number of fraction digits). */
function decimalLe(a: [bigint, number], b: [bigint, number]): boolean {
  const scale = Math.max(a[1], b[1]);
  return a[0] * 10n ** BigInt(scale - a[1]) <= b[0] * 10n ** BigInt(scale - b[1]);
}

/** An amount object as RFC 9396 §2.1's `instructedAmount`: exactly `currency` and `amount`. */
function amountOf(v: unknown): { currency: string; amount: [bigint, number] } | undefined {
  if (!isPlain(v)) return undefined;
  const keys = Object.keys(v);
  if (keys.length !== 2 || !Object.hasOwn(v, 'currency') || !Object.hasOwn(v, 'amount')) return undefined;
  const currency = v.currency;
  const amount = decimal(v.amount);
  return typeof currency === 'string' && amount ? { currency, amount } : undefined;
}

/** Why `updated` (one member's value) is wider than `consented`, or undefined when it is within it. */
function memberWidens(consented: unknown, updated: unknown): string | undefined {
  if (Array.isArray(consented)) {
    if (!Array.isArray(updated)) return 'must stay an array of consented values';
    if (updated.length === 0 && consented.length > 0) return 'may not become empty (an empty list may mean any)';
    const extra = updated.filter((u) => !consented.some((c) => deepEqual(c, u)));
    if (extra.length) return `holds values that were not consented: ${JSON.stringify(extra).slice(0, 200)}`;
    return undefined;
  }
  const ca = amountOf(consented);
  if (ca) {
    const ua = amountOf(updated);
    if (!ua) return 'must stay an amount object with currency and amount';
    if (ua.currency !== ca.currency) return `must keep the consented currency ${JSON.stringify(ca.currency)}`;
    if (!decimalLe(ua.amount, ca.amount)) return 'may not exceed the consented amount';
    return undefined;
  }
  return deepEqual(consented, updated) ? undefined : 'must equal the consented value';
}

/** The first member of `u` that is not within `c` (same type assumed), or undefined. */
function entryWidens(c: Entry, u: Entry): { member: string; message: string } | undefined {
  for (const k of Object.keys(u)) {
    if (k === 'type') continue;
    if (!Object.hasOwn(c, k))
      return { member: k, message: 'was not in the consented entry (an absent member is not granted)' };
    const why = memberWidens(c[k], u[k]);
    if (why) return { member: k, message: why };
  }
  for (const k of Object.keys(c))
    if (!Object.hasOwn(u, k))
      return {
        member: k,
        message: 'was in the consented entry and may not be dropped (absence can mean unrestricted)',
      };
  return undefined;
}

/**
 * The first updated entry that no consented entry of its type covers, or undefined when every
 * one is within what was consented.
 */
export function widening(consented: Entry[], updated: Entry[]): Widening | undefined {
  // Entries grouped by type in a Map: a type string never indexes a plain object.
  const byType = new Map<string, Entry[]>();
  for (const c of consented) {
    const t = String(own(c, 'type'));
    const list = byType.get(t);
    if (list) list.push(c);
    else byType.set(t, [c]);
  }
  for (const [index, u] of updated.entries()) {
    const type = String(own(u, 'type'));
    const candidates = byType.get(type);
    if (!candidates) return { index, member: 'type', message: `type ${JSON.stringify(type)} was not consented` };
    let first: { member: string; message: string } | undefined;
    let covered = false;
    for (const c of candidates) {
      const why = entryWidens(c, u);
      if (!why) {
        covered = true;
        break;
      }
      first ??= why;
    }
    if (!covered) return { index, ...first! };
  }
  return undefined;
}
