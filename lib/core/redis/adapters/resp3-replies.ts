/**
 * Replies of RESP3 clients (node-redis 6 by default, Valkey GLIDE always) in the RESP2 shape the
 * engine decodes: a Lua `false` arrives as a boolean instead of nil (→ null), a `true` as a boolean
 * instead of 1, maps and sets as Map/Set or objects instead of flat arrays. The library's scripts
 * return integers, strings and arrays only, so nothing else differs between the protocols; arrays
 * are walked and copied only when an element changes.
 */
export function toResp2Shape(reply: unknown): unknown {
  if (reply === null || reply === undefined) return null;
  if (reply === false) return null;
  if (reply === true) return 1;
  if (typeof reply !== 'object') return reply;
  if (Array.isArray(reply)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < reply.length; i++) {
      const item: unknown = reply[i];
      const shaped = toResp2Shape(item);
      if (shaped !== item && !out) out = reply.slice(0, i);
      if (out) out.push(shaped);
    }
    return out ?? reply;
  }
  if (reply instanceof Map) return [...reply].flatMap(([k, v]) => [toResp2Shape(k), toResp2Shape(v)]);
  if (reply instanceof Set) return [...reply].map(toResp2Shape);
  if (Buffer.isBuffer(reply) || reply instanceof Error) return reply;
  // node-redis' default RESP3 map type: a plain object; GLIDE's GlideRecord: [{ key, value }] arrays (above).
  if (Object.getPrototypeOf(reply) === Object.prototype || Object.getPrototypeOf(reply) === null) {
    return Object.entries(reply).flatMap(([k, v]) => [k, toResp2Shape(v)]);
  }
  return String(reply); // a verbatim string or a big number wrapper
}
