/**
 * The one stylesheet of every server-rendered page (inlined under the page's CSP nonce). The
 * primary colour is `var(--brand)`, which a tenant's branding overrides (docs/branding.md).
 */
export const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; display: grid; place-items: center; min-height: 100vh; background: Canvas; color: CanvasText; }
  main { width: min(26rem, 92vw); padding: 2rem; border: 1px solid GrayText; border-radius: 12px; }
  h1 { font-size: 1.4rem; margin-top: 0; }
  label { display: block; font-weight: 600; margin: 1rem 0 .35rem; }
  input[type=email], input[type=text] { width: 100%; box-sizing: border-box; font-size: 1.1rem; padding: .6rem;
    border-radius: 6px; border: 1px solid GrayText; }
  input[aria-invalid=true] { border: 2px solid #c62828; }
  button { margin-top: 1.2rem; width: 100%; font-size: 1.05rem; padding: .7rem; border-radius: 6px; border: 0;
    background: #1a56db; color: #fff; cursor: pointer; }
  button.secondary { background: transparent; color: LinkText; border: 1px solid GrayText; }
  :focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
  .error { color: #c62828; font-weight: 600; }
  .hint { color: GrayText; font-size: .95rem; }
  table { width: 100%; border-collapse: collapse; }
  td, th { text-align: left; padding: .4rem; border-bottom: 1px solid GrayText; }
  .skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; }
  [hidden] { display: none !important; }
  ul.passkeys { list-style: none; padding: 0; }
  ul.passkeys > li { border-bottom: 1px solid GrayText; padding: .6rem 0; }
  ul.passkeys form { display: inline; }
  ul.passkeys button, details button { width: auto; margin-top: .5rem; padding: .4rem .8rem; font-size: .95rem; }
`;
