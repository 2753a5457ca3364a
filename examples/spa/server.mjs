// Serves the single-page app: three static files, the browser build of oauth4webapi straight
// from node_modules, and /config.json from the environment. Nothing else runs on a server: the
// page itself signs the user in (a public client with PKCE) and calls the provider.
//
//   ISSUER=http://localhost:8080 CLIENT_ID=… node examples/spa/server.mjs
//
// Register it first (examples/spa/README.md). Plain JavaScript, no build.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === '') {
    console.error(`${name} is not set (see examples/spa/README.md)`);
    process.exit(2);
  }
  return v;
};

const PORT = Number(env('PORT', '5173'));
const config = JSON.stringify({
  issuer: env('ISSUER', 'http://localhost:8080'),
  clientId: env('CLIENT_ID'),
  scope: env('SCOPE', 'openid profile email'),
});

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const files = {
  '/': [here('index.html'), 'text/html; charset=utf-8'],
  '/app.mjs': [here('app.mjs'), 'text/javascript; charset=utf-8'],
  // oauth4webapi runs unchanged in browsers; its build imports nothing.
  '/oauth4webapi.mjs': [fileURLToPath(import.meta.resolve('oauth4webapi')), 'text/javascript; charset=utf-8'],
};

createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  // The page holds tokens in its memory: no framing by other sites, no inline or foreign script.
  const headers = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-security-policy':
      "default-src 'self'; style-src 'self' 'unsafe-inline'; connect-src *; frame-ancestors 'none'",
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...headers, allow: 'GET, HEAD' }).end();
  } else if (path === '/favicon.ico') {
    res.writeHead(204, headers).end(); // none, and no 404 in the console for it
  } else if (path === '/config.json') {
    res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(config);
  } else if (files[path]) {
    const [file, type] = files[path];
    res.writeHead(200, { ...headers, 'content-type': type }).end(await readFile(file));
  } else {
    res.writeHead(404, { ...headers, 'content-type': 'text/plain' }).end('not found');
  }
}).listen(PORT, () => console.log(`Example SPA on http://localhost:${PORT}`));
