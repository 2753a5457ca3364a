// node-oidc-provider ships no types; the bench uses a small surface of it.
declare module 'oidc-provider' {
  import type { Server } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    listen(port: number, host: string, cb: () => void): Server;
  }
}
