/**
 * A lean HTTP/1.1 client for the load generators, in the manner of autocannon: raw `net`
 * sockets kept alive, one request at a time per socket, a small pool (a free list of idle
 * sockets, a new one opened when none is idle, up to maxSockets, then a queue), each
 * request written with a single `socket.write`. node:http's request/Agent costs the bench
 * CPU that it takes from the daemon under test on the same machine. Inputs are trusted
 * (no header validation); the response parser follows RFC 9112's message framing.
 */
import { connect, type Socket } from 'node:net';

export interface LeanResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}
interface Pending {
  method: string;
  payload: string;
  retried: boolean;
  settled: boolean;
  conn: Conn | null;
  timer?: NodeJS.Timeout;
  resolve: (r: LeanResponse) => void;
  reject: (e: Error) => void;
}
// Parser states.
const HEAD = 0,
  LENGTH = 1,
  CHUNK_SIZE = 2,
  CHUNK_DATA = 3,
  CHUNK_END = 4,
  TRAILERS = 5,
  EOF = 6,
  DONE = 7;
const EMPTY = Buffer.alloc(0);
const MAX_HEAD = 64 * 1024;
// RFC 9112 §9.3.1: only these may be retried automatically (RFC 9110 §9.2.2).
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);

class Conn {
  readonly socket: Socket;
  pending: Pending | null = null;
  reused = false;
  dead = false;
  received = 0;
  keepAliveMs = Infinity;
  idleUntil = Infinity;
  error: Error | undefined;
  buf: Buffer = EMPTY;
  state = HEAD;
  remaining = 0;
  keepAlive = true;
  status = 0;
  headers: Record<string, string | string[]> = {};
  body: Buffer[] = [];
  constructor(
    readonly client: LeanHttpClient,
    host: string,
    port: number,
  ) {
    this.socket = connect({ host, port }); // writes before 'connect' are buffered by net
    this.socket.setNoDelay(true);
    this.socket.on('data', (c: Buffer) => this.onData(c));
    this.socket.on('error', (e) => {
      this.error = e;
    }); // 'close' follows
    this.socket.on('close', () => client.onClose(this));
  }
  send(p: Pending): void {
    this.pending = p;
    p.conn = this;
    this.received = 0;
    this.socket.ref();
    this.socket.write(p.payload);
  }
  onData(chunk: Buffer): void {
    if (!this.pending) {
      this.socket.destroy();
      return;
    } // bytes on an idle socket (e.g. a 408): unusable
    this.received += chunk.length;
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    try {
      this.parse();
    } catch (e) {
      this.error = e as Error;
      this.socket.destroy();
    }
  }
  parse(): void {
    const b = this.buf;
    let pos = 0;
    for (;;) {
      switch (this.state) {
        case HEAD: {
          // RFC 9112 §2.1: start-line, fields, empty line
          const end = b.indexOf('\r\n\r\n', pos);
          if (end < 0) {
            if (b.length - pos > MAX_HEAD) throw new Error('response head too large');
            break;
          }
          this.head(b.toString('latin1', pos, end));
          pos = end + 4;
          continue;
        }
        case LENGTH:
        case CHUNK_DATA: {
          // body bytes are kept as Buffers: a UTF-8 sequence may span chunks
          const n = Math.min(this.remaining, b.length - pos);
          if (n > 0) this.body.push(b.subarray(pos, pos + n));
          pos += n;
          this.remaining -= n;
          if (this.remaining > 0) break;
          this.state = this.state === LENGTH ? DONE : CHUNK_END;
          continue;
        }
        case CHUNK_SIZE: {
          // RFC 9112 §7.1: chunk-size [ BWS ; chunk-ext ] CRLF
          const eol = b.indexOf('\r\n', pos);
          if (eol < 0) {
            if (b.length - pos > 4096) throw new Error('chunk line too long');
            break;
          }
          const line = b.toString('latin1', pos, eol),
            semi = line.indexOf(';');
          const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new Error(`bad chunk size ${JSON.stringify(line)}`);
          this.remaining = parseInt(hex, 16);
          this.state = this.remaining ? CHUNK_DATA : TRAILERS; // §7.1: last-chunk is size 0
          pos = eol + 2;
          continue;
        }
        case CHUNK_END: // the CRLF after chunk-data
          if (b.length - pos < 2) break;
          if (b[pos] !== 13 || b[pos + 1] !== 10) throw new Error('missing CRLF after chunk data');
          pos += 2;
          this.state = CHUNK_SIZE;
          continue;
        case TRAILERS: {
          // §7.1.2: trailer fields, then an empty line; the fields are discarded
          const eol = b.indexOf('\r\n', pos);
          if (eol < 0) {
            if (b.length - pos > MAX_HEAD) throw new Error('trailers too large');
            break;
          }
          if (eol === pos) this.state = DONE;
          pos = eol + 2;
          continue;
        }
        case EOF: // §6.3 item 8: the body runs until the server closes (see LeanHttpClient.onClose)
          if (pos < b.length) this.body.push(b.subarray(pos));
          pos = b.length;
          break;
        case DONE:
          this.client.complete(this, pos < b.length);
          return;
      }
      break;
    }
    this.buf = pos === b.length ? EMPTY : b.subarray(pos);
  }
  head(text: string): void {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.(\d) (\d{3})/.exec(lines[0]);
    if (!m) throw new Error(`bad status line ${JSON.stringify(lines[0])}`);
    const status = Number(m[2]);
    const h: Record<string, string | string[]> = {};
    for (let i = 1; i < lines.length; i++) {
      // §5.1: field-name ":" OWS field-value OWS
      const line = lines[i],
        c = line.indexOf(':');
      if (c <= 0) throw new Error(`bad header line ${JSON.stringify(line)}`);
      const name = line.slice(0, c).toLowerCase(),
        value = line.slice(c + 1).trim(),
        prev = h[name];
      if (name === 'set-cookie') {
        if (prev) (prev as string[]).push(value);
        else h[name] = [value];
      } // RFC 6265 §3: never joined
      else h[name] = prev === undefined ? value : `${prev}, ${value}`;
    }
    if (status < 200) {
      // RFC 9110 §15.2: interim responses precede the final one; skip them
      if (status === 101) throw new Error('unexpected 101 Switching Protocols');
      return;
    }
    this.status = status;
    this.headers = h;
    const connection = String(h['connection'] ?? '').toLowerCase();
    // §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
    this.keepAlive = m[1] === '0' ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection);
    // Like node's Agent (v19+): honour the server's Keep-Alive timeout hint, a second early.
    const hint = /\btimeout=(\d+)/.exec(String(h['keep-alive'] ?? ''));
    this.keepAliveMs = hint ? Number(hint[1]) * 1000 - 1000 : Infinity;
    const te = h['transfer-encoding'] as string | undefined,
      cl = h['content-length'] as string | undefined;
    if (status === 204 || status === 304 || this.pending!.method === 'HEAD')
      this.state = DONE; // §6.3 item 1
    else if (te !== undefined) {
      // §6.3 items 3-4: Transfer-Encoding overrides Content-Length (both present: don't reuse);
      // chunked must be the final coding, otherwise the body runs until close.
      if (cl !== undefined || m[1] === '0') this.keepAlive = false;
      if (/(?:^|,)\s*chunked\s*$/i.test(te)) this.state = CHUNK_SIZE;
      else {
        this.state = EOF;
        this.keepAlive = false;
      }
    } else if (cl !== undefined) {
      // §6.3 item 5: a list of identical values is allowed
      const v = cl.split(',').map((s) => s.trim());
      if (!/^\d+$/.test(v[0]) || v.some((x) => x !== v[0])) throw new Error(`bad content-length ${cl}`);
      this.remaining = Number(v[0]);
      this.state = this.remaining ? LENGTH : DONE;
    } else {
      this.state = EOF;
      this.keepAlive = false;
    } // §6.3 item 8
  }
  /** Ready for the next response. */
  reset(): void {
    this.state = HEAD;
    this.buf = EMPTY;
    this.body = [];
    this.headers = {};
    this.pending = null;
    this.reused = true;
    this.idleUntil = Date.now() + this.keepAliveMs;
    this.socket.unref(); // an idle pooled socket doesn't keep the process alive
  }
}

export class LeanHttpClient {
  readonly #host: string;
  readonly #port: number;
  readonly #hostHeader: string;
  readonly #max: number;
  readonly #timeoutMs: number;
  readonly #idle: Conn[] = []; // the free list, used LIFO so that surplus sockets go cold
  readonly #queue: Pending[] = []; // waiting for a socket once maxSockets are busy
  readonly #all = new Set<Conn>();
  #closed = false;

  constructor(host: string, port: number, opts: { maxSockets?: number; timeoutMs?: number } = {}) {
    this.#host = host;
    this.#port = port;
    this.#hostHeader = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`; // RFC 9112 §3.2
    this.#max = opts.maxSockets ?? 64;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<LeanResponse> {
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.#hostHeader}\r\nConnection: keep-alive\r\n`;
    for (const k in headers) head += `${k}: ${headers[k]}\r\n`;
    if (body !== undefined) head += `Content-Length: ${Buffer.byteLength(body)}\r\n`; // bytes, not chars
    const payload = body === undefined ? head + '\r\n' : head + '\r\n' + body; // written as UTF-8
    return new Promise((resolve, reject) => {
      const p: Pending = { method, payload, retried: false, settled: false, conn: null, resolve, reject };
      p.timer = setTimeout(
        () => this.#fail(p, new Error(`${method} ${path}: no response in ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      if (this.#closed) return this.#fail(p, new Error('client closed'));
      let c: Conn | undefined;
      while ((c = this.#idle.pop()) && Date.now() >= c.idleUntil) this.#discard(c); // past the server's hint
      if (c) c.send(p);
      else if (this.#all.size < this.#max) this.#open().send(p);
      else this.#queue.push(p);
    });
  }

  /** Destroys every socket and rejects whatever is outstanding. */
  close(): void {
    this.#closed = true;
    for (const p of this.#queue.splice(0)) this.#fail(p, new Error('client closed'));
    for (const c of this.#all) {
      if (c.pending) this.#fail(c.pending, new Error('client closed'));
      this.#discard(c);
    }
  }

  #open(): Conn {
    const c = new Conn(this, this.#host, this.#port);
    this.#all.add(c);
    return c;
  }

  /** Forgets c at once (the pool slot is free now), its 'close' comes later. */
  #discard(c: Conn): void {
    if (c.dead) return;
    c.dead = true;
    this.#all.delete(c);
    const i = this.#idle.indexOf(c);
    if (i >= 0) this.#idle.splice(i, 1);
    c.socket.destroy();
  }

  #settle(p: Pending): boolean {
    if (p.settled) return false;
    p.settled = true;
    clearTimeout(p.timer);
    if (p.conn?.pending === p) p.conn.pending = null;
    return true;
  }
  #fail(p: Pending, e: Error): void {
    const c = p.conn;
    if (!this.#settle(p)) return;
    const q = this.#queue.indexOf(p);
    if (q >= 0) this.#queue.splice(q, 1);
    else if (c && !c.dead) {
      this.#discard(c);
      this.#next();
    } // a late response must not land on the next request
    p.reject(e);
  }
  #next(): void {
    // a pool slot came free: give it to a queued request
    if (this.#queue.length && this.#all.size < this.#max && !this.#closed) this.#open().send(this.#queue.shift()!);
  }

  /** Called by Conn when a response is complete; `extra`: bytes beyond it (not ours: don't reuse). */
  complete(c: Conn, extra: boolean): void {
    const p = c.pending!,
      res = { status: c.status, headers: c.headers, body: Buffer.concat(c.body).toString('utf8') };
    const reuse = c.keepAlive && !extra && !this.#closed;
    c.reset();
    if (!reuse) {
      this.#discard(c);
      this.#next();
    } else if (this.#queue.length) c.send(this.#queue.shift()!);
    else this.#idle.push(c);
    if (this.#settle(p)) p.resolve(res);
  }

  onClose(c: Conn): void {
    const p = c.pending;
    c.pending = null;
    const wasLive = !c.dead;
    this.#discard(c);
    if (p && !p.settled) {
      if (c.state === EOF && !c.error) {
        c.pending = p;
        this.complete(c, true);
        return;
      } // §6.3 item 8: close ends the body
      // The server closed a reused keep-alive socket before sending anything: most likely it
      // timed out the idle socket as we wrote. Retry once on a fresh socket, idempotent methods
      // only (RFC 9112 §9.3.1): a POST may have been processed after all.
      if (c.received === 0 && c.reused && !p.retried && IDEMPOTENT.has(p.method) && !this.#closed) {
        p.retried = true;
        this.#all.size < this.#max ? this.#open().send(p) : this.#queue.unshift(p);
        return;
      }
      const why = c.error?.message ?? 'connection closed';
      this.#fail(
        p,
        new Error(
          `${p.method}: ${why} ${c.received ? 'mid-response' : 'before a response'}${c.reused ? ' (reused socket)' : ''}`,
        ),
      );
    }
    if (wasLive) this.#next();
  }
}
