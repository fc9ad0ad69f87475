// The keep-alive http/https Agents of the upstream connection pool: Node's own, with two of their
// steps made cheaper, as measured in bench/results/gateway-profile.md ("The connection pool").
//
// Their pool's key is interned: the same string object for the same origin every time. Node 20's
// Agent builds the key ("host:port:…", `getName`) afresh on every request and stores it into its
// `sockets` and `freeSockets` tables, deleting it whenever a list empties, as one request at a
// time on a connection does. A key that is a new string each time misses V8's cache for that
// keyed store on every request (the store goes through V8's runtime), and each miss resets the
// count that would have the function optimised: `addRequest` and the agent's 'free' handler then
// run unoptimised for the life of the process. With the key interned, the store hits its cache
// and both are optimised.
//
// A connection kept for the next request reads the answer's `Keep-Alive` header from its raw
// header list. Node's own `keepSocketAlive` reads it from the answer's `headers`, whose first
// read builds an object of every header, which nothing else reads on the lean path.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * At most this many keys are interned per agent (one per upstream origin, so a handful); past
 * it, a key is used as Node builds it, as without this class, so nothing grows with traffic.
 */
export const maxInternedNames = 256;

/** `name` as the one string object this table holds for its text. */
export function internedName(name: string, names: Map<string, string>): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  if (names.size >= maxInternedNames) return name;
  // A property's key is V8's internalised string for its text: the one object for that text.
  const key = Object.keys({ [name]: true })[0] ?? name;
  names.set(key, key);
  return key;
}

/** The `timeout=N` of a `Keep-Alive` header in a raw header list, in ms; undefined if none. */
export function announcedIdleMs(rawHeaders: readonly string[]): number | undefined {
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length === 10 && name.toLowerCase() === 'keep-alive') {
      const timeout = /^timeout=(\d+)/.exec(rawHeaders[index + 1] ?? '')?.[1];
      return timeout === undefined ? undefined : Number.parseInt(timeout, 10) * 1000;
    }
  }
  return undefined;
}

/** What Node's Agent keeps and reads of itself and of a socket's request (untyped there). */
interface AgentState {
  keepAliveMsecs: number;
  options: { timeout?: number };
}
type PooledSocket = Socket & { _httpMessage?: { res?: IncomingMessage | null } | null };

/**
 * Node 20's `keepSocketAlive`, reading the answer's raw headers: TCP keep-alive on, the socket
 * unreferenced, idle for at most the agent's `timeout`, or a second less than the server
 * announced (`Keep-Alive: timeout=N`) when that is shorter; not kept when that leaves nothing.
 */
function keepForNextRequest(agent: AgentState, socket: PooledSocket): boolean {
  socket.setKeepAlive(true, agent.keepAliveMsecs);
  socket.unref();
  let idleMs = agent.options.timeout || 0;
  const answer = socket._httpMessage?.res;
  const announced = answer ? announcedIdleMs(answer.rawHeaders) : undefined;
  if (announced !== undefined) {
    const beforeTheServer = Math.max(announced - 1000, 0);
    if (beforeTheServer === 0) return false;
    if (beforeTheServer < idleMs) idleMs = beforeTheServer;
  }
  if (socket.timeout !== idleMs) socket.setTimeout(idleMs);
  return true;
}

/** Node's http or https Agent class. */
type AgentClass = new (options?: http.AgentOptions) => http.Agent;

/** `Base` with its pool key interned and its kept connections' hint read from raw headers. */
function pooled(Base: AgentClass) {
  return class extends Base {
    readonly #names = new Map<string, string>();

    override getName(options?: http.ClientRequestArgs): string {
      return internedName(super.getName(options), this.#names);
    }

    override keepSocketAlive(socket: Duplex): boolean {
      return keepForNextRequest(this as unknown as AgentState, socket as PooledSocket);
    }
  };
}

/** A keep-alive `http.Agent` of the upstream pool. */
export const PooledHttpAgent = pooled(http.Agent);
/** A keep-alive `https.Agent` of the upstream pool (its key holds the TLS options). */
export const PooledHttpsAgent = pooled(https.Agent);
