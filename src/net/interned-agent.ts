// Node's keep-alive http/https Agents with their pool's key interned: the same string object for
// the same origin every time. Node 20's Agent builds the key ("host:port:…", `getName`) afresh on
// every request and stores it into its `sockets` and `freeSockets` tables, deleting it whenever a
// list empties, as one request at a time on a connection does. A key that is a new string each
// time misses V8's cache for that keyed store on every request (the store goes through V8's
// runtime), and each miss resets the count that would have the function optimised: `addRequest`
// and the agent's 'free' handler then run unoptimised for the life of the process. With the key
// interned, the store hits its cache and both are optimised. Measured in
// bench/results/gateway-profile.md ("The connection pool's key").
import http from 'node:http';
import https from 'node:https';

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

/** A keep-alive `http.Agent` whose pool key is interned. */
export class InternedHttpAgent extends http.Agent {
  private readonly names = new Map<string, string>();

  override getName(options?: http.ClientRequestArgs): string {
    return internedName(super.getName(options), this.names);
  }
}

/** A keep-alive `https.Agent` whose pool key (with its TLS options) is interned. */
export class InternedHttpsAgent extends https.Agent {
  private readonly names = new Map<string, string>();

  override getName(options?: https.RequestOptions): string {
    return internedName(super.getName(options), this.names);
  }
}
