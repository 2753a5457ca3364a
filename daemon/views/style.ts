/**
 * The one stylesheet of every server-rendered page (inlined under the page's CSP nonce).
 *
 * - Phones first: every box is border-box and `main` is never wider than the viewport, so a
 *   360 px screen scrolls only vertically; long addresses wrap instead of widening the page.
 * - WCAG 2.2 AA in light and dark (`prefers-color-scheme`): explicit colours (not the system's
 *   GrayText, ~3.9:1 on white) with text at 4.5:1 or more and borders and focus rings at 3:1 or
 *   more against the page (the pairs are listed in docs/account.md).
 * - The primary colour is `var(--brand)`, which a tenant's branding overrides (docs/branding.md);
 *   text on it is `var(--brand-text)` (white unless the branding says otherwise), so a light
 *   brand colour can keep its buttons legible. Links use `--link`, not the brand colour, since a
 *   brand colour chosen for white pages may be unreadable on the dark page.
 * - `main.wide` (or a `main` whose content is a `div.wide`) is the account page's wider column;
 *   the console's frame (`div.console-frame`) is wider still on a desktop, its details in two
 *   columns and its buttons their own width (on a phone, as everywhere, one column);
 *   and `table.stack` turns each table row into a card on a narrow screen (its cells labelled by
 *   their `data-label`).
 */
export const STYLE = `
  *, *::before, *::after { box-sizing: border-box; }
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.45;
    --bg: #ffffff; --fg: #1a1a1a; --muted: #4b5563; --line: #6b7280; --soft: #f3f4f6; --link: #1a56db;
    --error: #b91c1c; --focus: #b45309; --ok: #166534; }
  @media (prefers-color-scheme: dark) {
    :root { --bg: #121212; --fg: #ececec; --muted: #b3b3b3; --line: #8b8b8b; --soft: #1f1f1f; --link: #8ab4f8;
      --error: #ff8a80; --focus: #fbbf24; --ok: #86efac; }
  }
  body { margin: 0; padding: 1rem .75rem; display: grid; place-items: center; min-height: 100vh;
    background: var(--bg); color: var(--fg); overflow-wrap: anywhere; }
  main { width: 100%; max-width: 26rem; padding: clamp(1rem, 5vw, 2rem); border: 1px solid var(--line);
    border-radius: 12px; background: var(--bg); }
  main.wide, main:has(> .wide) { max-width: 48rem; }
  main:has(> .console-frame) { max-width: 80rem; }
  @media (min-width: 48rem) {
    .console-frame dl { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: .3rem 1.2rem; }
    .console-frame dd { margin: 0; }
    .console-frame a.button, .console-frame form button { display: inline-block; width: auto; min-width: 14rem;
      margin-right: .6rem; padding: .55rem 1.2rem; }
  }
  h1 { font-size: 1.4rem; margin-top: 0; }
  h2 { font-size: 1.15rem; margin-top: 2rem; }
  a { color: var(--link); }
  label { display: block; font-weight: 600; margin: 1rem 0 .35rem; }
  input[type=email], input[type=text] { width: 100%; font-size: 1.1rem; padding: .6rem; border-radius: 6px;
    border: 1px solid var(--line); background: var(--bg); color: var(--fg); }
  input[aria-invalid=true] { border: 2px solid var(--error); }
  textarea, select { width: 100%; font: inherit; padding: .6rem; border-radius: 6px; border: 1px solid var(--line);
    background: var(--bg); color: var(--fg); } textarea[aria-invalid=true] { border: 2px solid var(--error); }
  fieldset { border: 1px solid var(--line); border-radius: 6px; margin-top: 1rem; }
  label.check { font-weight: 400; margin: .4rem 0; }
  button, a.button { display: block; margin-top: 1.2rem; width: 100%; font-size: 1.05rem; padding: .7rem;
    border-radius: 6px; border: 1px solid transparent; background: var(--brand, #1a56db);
    color: var(--brand-text, #ffffff); cursor: pointer; text-align: center; text-decoration: none;
    font-family: inherit; }
  button.secondary, a.button.secondary { background: transparent; color: var(--link); border: 1px solid var(--line); }
  button.link { display: inline; width: auto; margin: 0; padding: 0; border: 0; background: none; color: var(--link);
    text-decoration: underline; font-size: inherit; }
  :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
  .error { color: var(--error); font-weight: 600; }
  .hint { color: var(--muted); font-size: .95rem; }
  [role=status] { color: var(--ok); font-weight: 600; }
  code { background: var(--soft); padding: .1rem .3rem; border-radius: 4px; }
  table { width: 100%; border-collapse: collapse; overflow-wrap: break-word; }
  td button { white-space: nowrap; }
  td, th { text-align: left; padding: .4rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  .skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; background: var(--bg); }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
    white-space: nowrap; }
  [hidden] { display: none !important; }
  ul.passkeys { list-style: none; padding: 0; }
  ul.passkeys > li { border-bottom: 1px solid var(--line); padding: .6rem 0; }
  ul.passkeys form { display: inline; }
  ul.passkeys button, details button, table.stack button { width: auto; margin-top: .5rem; padding: .4rem .8rem;
    font-size: .95rem; }
  td ul { margin: 0; padding-left: 1.1rem; }
  .badge { display: inline-block; font-size: .8rem; font-weight: 600; padding: .05rem .45rem; border-radius: 999px;
    border: 1px solid var(--ok); color: var(--ok); margin-left: .3rem; }
  nav.console { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: baseline; padding-bottom: .6rem;
    margin-bottom: 1rem; border-bottom: 1px solid var(--line); }
  nav.console a[aria-current=page] { font-weight: 700; text-decoration: none; }
  nav.console .hint { margin-left: auto; }
  nav.tabs { display: flex; flex-wrap: wrap; gap: .3rem .9rem; margin: -.4rem 0 1rem; font-size: .95rem; }
  nav.tabs a[aria-current=page] { font-weight: 700; text-decoration: none; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
  nav.paging { display: flex; gap: 1rem; justify-content: space-between; margin-top: .6rem; }
  @media (max-width: 40rem) {
    table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
    table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
    table.stack tr { border: 1px solid var(--line); border-radius: 8px; margin-bottom: .6rem; padding: .3rem .5rem; }
    table.stack td { border: 0; padding: .15rem 0; }
    table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  }
`;
