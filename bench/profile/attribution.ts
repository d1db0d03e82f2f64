/*
 * Who makes Node work: each busy sample of a V8 .cpuprofile is charged to the nearest frame of its
 * stack, itself included, that is code of this repository (lib/, sample-app/, bench/http/), Nest,
 * ioredis or the HTTP framework; so Node internals (timers, promises, async hooks, EventTarget,
 * streams), socket writes, builtins and other packages (rxjs) count for the owned code that called
 * them, and the rows add up to the busy time. Samples
 * with no such ancestor are charged to the outermost Node frame of their stack (the event-loop entry:
 * processTicksAndRejections, listOnTimeout, onStreamRead...). GC has no stack: it is a row of its own.
 * Used by seckill-profile.ts (--attribute); on its own, for a whole profile:
 *   node -r ts-node/register/transpile-only bench/profile/attribution.ts FILE [--requests=N] [--top=N]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives, when it is code an ancestor can be charged to; undefined for Node's own. */
export function ownerOf(frame: CallFrame): string | undefined {
  const { url } = frame;
  if (!url || url.startsWith('node:')) return undefined;
  const path = url.replace(/^file:\/\//, '');
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (mod) {
    const [, pkg, rest] = mod;
    if (pkg!.startsWith('@nestjs/')) return `Nest ${pkg!.slice(8)}/${rest!.replace(/^dist\//, '')}`;
    if (pkg === 'ioredis') return `ioredis ${rest!.replace(/^built\//, '')}`;
    if (/^(express|fastify|find-my-way|light-my-request|avvio|body-parser|router|@fastify\/.*)$/.test(pkg!))
      return `HTTP framework ${pkg}`;
    return undefined; // rxjs, reflect-metadata, ...: not an owner, keep walking
  }
  const ours = /\/(lib|sample-app|bench\/http)\/(.*)$/.exec(path);
  if (ours) return `${ours[1]}/${ours[2]}`;
  return undefined;
}

function label(node: ProfileNode): string {
  const f = node.callFrame;
  const owner = ownerOf(f);
  const fn = f.functionName || '(anonymous)';
  if (owner) return `${owner} ${fn}:${f.lineNumber + 1}`;
  const where = f.url ? f.url.replace(/^file:\/\/.*node_modules\//, '').replace(/^node:/, '') : '';
  return where ? `${fn} (${where})` : fn;
}

export interface Attribution {
  /** µs of busy samples per ancestor label. */
  byAncestor: Map<string, number>;
  /** µs per ancestor per own (self) frame label. */
  selfByAncestor: Map<string, Map<string, number>>;
  /** µs of samples whose own frame is owned code (charged to itself). */
  ownedUs: number;
  busyUs: number;
}

/**
 * Charges the busy samples in [fromUs, toUs] (the profile's clock; all of them when omitted) whose
 * own frame has no owner to their nearest owning ancestor.
 */
export function attribute(profile: CpuProfile, fromUs = -Infinity, toUs = Infinity): Attribution {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ancestorOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const cached = ancestorOf.get(id);
    if (cached !== undefined) return cached;
    let outermost = byId.get(id)!;
    let found: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at)!;
      if (node.callFrame.functionName === '(root)') break;
      if (ownerOf(node.callFrame)) {
        found = label(node);
        break;
      }
      outermost = node;
    }
    const result = found ?? `(no owner) ${label(outermost)}`;
    ancestorOf.set(id, result);
    return result;
  };
  const byAncestor = new Map<string, number>();
  const selfByAncestor = new Map<string, Map<string, number>>();
  let ownedUs = 0;
  let busyUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    if (at < fromUs || at > toUs) continue;
    const node = byId.get(profile.samples[i]!)!;
    const fn = node.callFrame.functionName;
    if (fn === '(idle)' || fn === '(program)') continue;
    const spanUs = profile.timeDeltas[i + 1] ?? 0;
    busyUs += spanUs;
    if (ownerOf(node.callFrame)) ownedUs += spanUs;
    const ancestor = fn === '(garbage collector)' ? '(garbage collector)' : resolve(node.id);
    byAncestor.set(ancestor, (byAncestor.get(ancestor) ?? 0) + spanUs);
    let selves = selfByAncestor.get(ancestor);
    if (!selves) selfByAncestor.set(ancestor, (selves = new Map()));
    const self = label(node);
    selves.set(self, (selves.get(self) ?? 0) + spanUs);
  }
  return { byAncestor, selfByAncestor, ownedUs, busyUs };
}

/** Prints the ancestors charged most, in µs per request, with their top own frames. */
export function printAttribution(a: Attribution, requests: number, top = 25, selves = 3): void {
  const per = (us: number) => (us / requests).toFixed(1).padStart(7);
  console.log(
    `  busy ${per(a.busyUs).trim()} µs/req (own frames of owned code ${per(a.ownedUs).trim()}); ` +
      `by nearest owned frame (µs/req), with its top own frames:`,
  );
  for (const [ancestor, us] of [...a.byAncestor].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    const own = [...a.selfByAncestor.get(ancestor)!]
      .sort((x, y) => y[1] - x[1])
      .slice(0, selves)
      .map(([self, s]) => `${self} ${(s / requests).toFixed(1)}`)
      .join('; ');
    console.log(`  ${per(us)}  ${ancestor}\n             ${own}`);
  }
}

/** The coarse area of an ancestor label (attribute()'s rows). */
export function areaOf(ancestor: string): string {
  if (ancestor === '(garbage collector)') return 'GC';
  if (ancestor.startsWith('(no owner)'))
    return 'Node, no owned frame on the stack (event loop, HTTP parser, streams)';
  if (ancestor.startsWith('lib/'))
    return `this library: ${ancestor.split(' ')[0]!.split('/').slice(0, 3).join('/')}`;
  if (ancestor.startsWith('Nest core/interceptors/')) return 'Nest interceptor chain (interceptors-consumer)';
  if (ancestor.startsWith('Nest ')) return 'Nest, other';
  if (ancestor.startsWith('ioredis ')) return 'ioredis (its socket writes included)';
  if (ancestor.startsWith('HTTP framework')) return 'HTTP framework (its socket writes included)';
  return 'the app (sample-app, bench/http)';
}

/** µs per request by key (area or ancestor), summed over attributions (each with its request count), averaged. */
export function perRequest(
  runs: readonly { a: Attribution; requests: number }[],
  keyOf: (ancestor: string) => string,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const { a, requests } of runs) {
    for (const [ancestor, us] of a.byAncestor) {
      const k = keyOf(ancestor);
      out.set(k, (out.get(k) ?? 0) + us / requests / runs.length);
    }
  }
  return out;
}

/** A table of µs/request, app against app, rows by the largest difference (first minus second). */
export function printComparison(
  names: readonly [string, string],
  rows: readonly [Map<string, number>, Map<string, number>],
  top = 30,
  unit = 'µs/request',
): void {
  const keys = new Set([...rows[0].keys(), ...rows[1].keys()]);
  const table = [...keys]
    .map((k) => [k, rows[0].get(k) ?? 0, rows[1].get(k) ?? 0] as const)
    .sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]))
    .slice(0, top);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
  console.log(`| ${unit} | ${names[0]} | ${names[1]} | difference |\n|---|---:|---:|---:|`);
  for (const [k, x, y] of table)
    console.log(`| ${k} | ${x.toFixed(1)} | ${y.toFixed(1)} | ${(x - y).toFixed(1)} |`);
  const [x, y] = [sum(rows[0]), sum(rows[1])];
  console.log(`| all | ${x.toFixed(1)} | ${y.toFixed(1)} | ${(x - y).toFixed(1)} |`);
}

/** A node of V8's sampling heap profile. */
export interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children?: HeapNode[];
}

/**
 * Bytes allocated (sampled) by nearest owned frame of the allocating stack, itself included, as
 * attribute() charges CPU samples; the same labels, so the two tables read side by side.
 */
export function attributeAllocations(head: HeapNode): Attribution {
  const byAncestor = new Map<string, number>();
  const selfByAncestor = new Map<string, Map<string, number>>();
  let owned = 0;
  let all = 0;
  const walk = (node: HeapNode, ancestor: string | undefined, outermost: string | undefined) => {
    const f = node.callFrame;
    const isRoot = f.functionName === '(root)';
    const mine = !isRoot && ownerOf(f) ? label(node as unknown as ProfileNode) : undefined;
    const here = mine ?? ancestor;
    const outer = outermost ?? (isRoot ? undefined : label(node as unknown as ProfileNode));
    if (node.selfSize > 0) {
      all += node.selfSize;
      if (mine) owned += node.selfSize;
      const key = here ?? `(no owner) ${outer ?? '(root)'}`;
      byAncestor.set(key, (byAncestor.get(key) ?? 0) + node.selfSize);
      let selves = selfByAncestor.get(key);
      if (!selves) selfByAncestor.set(key, (selves = new Map()));
      const self = label(node as unknown as ProfileNode);
      selves.set(self, (selves.get(self) ?? 0) + node.selfSize);
    }
    for (const child of node.children ?? []) walk(child, here, outer);
  };
  walk(head, undefined, undefined);
  return { byAncestor, selfByAncestor, ownedUs: owned, busyUs: all };
}

if (require.main === module) {
  const [file] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const flag = (name: string, fallback: number) => {
    const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
    return hit ? Number(hit.slice(name.length + 3)) : fallback;
  };
  const profile = JSON.parse(readFileSync(file!, 'utf8')) as CpuProfile;
  printAttribution(attribute(profile), flag('requests', 1), flag('top', 25));
}
