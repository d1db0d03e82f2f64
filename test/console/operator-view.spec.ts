/*
 * The operator's view end to end: three replicas (OS processes) hold and wait for a mutex, a read
 * lock, a write lock, a fair lock and semaphore permits; the sample app's console API (behind its
 * guard), list() and the CLI all show every holder with its process id, fencing token, hold count
 * and waiters; a force release through the console evicts the holder, fences its stale write out,
 * grants a waiter a higher token and leaves an audit entry.
 */
import type { ForceReleaseRecord, LockInfo } from '../../lib/core';

/** GET /locks/api/locks/:key */
interface ShowBody {
  lock: LockInfo;
  forceReleases: ForceReleaseRecord[];
}
import { DistributedLockService } from '../../lib';
import {
  E2E_LOCK_PREFIX,
  startSampleAppUnderTest,
  type SampleAppUnderTest,
} from '../support/sample-app-under-test';
import { uniqueKey, useLockEnv } from '../support/lock-env';
import type { WorkerProcess } from '../support/spawn-worker';
import { waitUntil } from '../support/wait';
import { runCliProcess } from '../support/run-cli';

const env = useLockEnv({ keyPrefix: E2E_LOCK_PREFIX });
const AUTH = { authorization: `Basic ${Buffer.from('ops:ops').toString('base64')}` };

let sample: SampleAppUnderTest | undefined;
afterEach(async () => {
  await sample?.close();
  sample = undefined;
});

interface Replica {
  worker: WorkerProcess;
  pid: number;
  app: string;
}

async function startReplica(n: number): Promise<Replica> {
  const app = `replica-${n}`;
  const worker = env.worker('holder-worker.ts', { env: { APP: app } });
  const ready = await worker.waitForMessage((m) => m.type === 'ready', 60_000);
  return { worker, pid: ready.pid, app };
}

async function granted(r: Replica, id: string): Promise<number> {
  return (await r.worker.waitForMessage((m) => m.type === 'granted' && m.id === id, 60_000)).token;
}

const api = (path: string, init: RequestInit = {}) => fetch(`${sample!.url}/locks${path}`, init);

describe('the operator view across processes', () => {
  it('lists every holder and waiter, and a console force release fences the evicted holder out', async () => {
    sample = await startSampleAppUnderTest(env.url);
    const service = sample.app.get(DistributedLockService);
    const [r1, r2, r3] = await Promise.all([1, 2, 3].map(startReplica));
    const base = uniqueKey('ops');
    const k = {
      mutex: `${base}:mutex`,
      read: `${base}:rw`,
      write: `${base}:w`,
      fair: `${base}:fair`,
      sem: `${base}:sem`,
    };

    r1!.worker.send({ type: 'acquire', id: 'm', key: k.mutex, reenter: 1 });
    r1!.worker.send({ type: 'acquire', id: 'f', key: k.fair, options: { fair: true } });
    r2!.worker.send({ type: 'acquire', id: 'r', key: k.read, options: { mode: 'read' } });
    r2!.worker.send({ type: 'acquire', id: 's', key: k.sem, options: { limit: 3, permits: 2 } });
    r3!.worker.send({ type: 'acquire', id: 'w', key: k.write, options: { mode: 'write' } });
    const tokens = {
      mutex: await granted(r1!, 'm'),
      fair: await granted(r1!, 'f'),
      read: await granted(r2!, 'r'),
      sem: await granted(r2!, 's'),
      write: await granted(r3!, 'w'),
    };
    // Waiters: two processes on the mutex, one each on the others.
    r2!.worker.send({ type: 'acquire', id: 'wm', key: k.mutex });
    r3!.worker.send({ type: 'acquire', id: 'wm', key: k.mutex });
    r3!.worker.send({ type: 'acquire', id: 'wf', key: k.fair, options: { fair: true } });
    r1!.worker.send({ type: 'acquire', id: 'wr', key: k.read, options: { mode: 'write' } });
    r3!.worker.send({ type: 'acquire', id: 'ws', key: k.sem, options: { limit: 3, permits: 2 } });
    r1!.worker.send({ type: 'acquire', id: 'ww', key: k.write, options: { mode: 'read' } });

    const label = (r: Replica, host: string) => `${r.app}@${host}#${r.pid}`;
    const expected = (info: LockInfo[] | undefined): boolean =>
      info?.length === 5 && info.every((l) => l.waiters.total === (l.key === k.mutex ? 2 : 1));
    const locks = await waitUntil(
      async () => {
        const { locks } = await service.list({ match: `${base}:*` });
        return expected(locks) && locks;
      },
      { timeoutMs: 30_000, description: 'list() to show five locks with their waiters' },
    );
    const host = locks[0]!.holders[0]!.owner.host;
    const byKey = new Map(locks.map((l) => [l.key, l]));
    const holderOf = (key: string) => byKey.get(key)!.holders;
    expect(holderOf(k.mutex)).toEqual([
      expect.objectContaining({
        owner: expect.objectContaining({ pid: r1!.pid, app: 'replica-1' }),
        fencingToken: tokens.mutex,
        holdCount: 2,
      }),
    ]);
    expect(holderOf(k.fair)).toMatchObject([
      { owner: { pid: r1!.pid }, fencingToken: tokens.fair, holdCount: 1 },
    ]);
    expect(holderOf(k.read)).toMatchObject([
      { owner: { pid: r2!.pid }, fencingToken: tokens.read, mode: 'read' },
    ]);
    expect(holderOf(k.sem)).toMatchObject([
      { owner: { pid: r2!.pid }, fencingToken: tokens.sem, permits: 2 },
    ]);
    expect(holderOf(k.write)).toMatchObject([
      { owner: { pid: r3!.pid }, fencingToken: tokens.write, mode: 'write' },
    ]);
    expect(byKey.get(k.mutex)!.kind).toBe('mutex');
    expect(byKey.get(k.mutex)!.waiters.byOwner).toEqual({ [label(r2!, host)]: 1, [label(r3!, host)]: 1 });
    expect(byKey.get(k.fair)!.waiters.byOwner).toEqual({ [label(r3!, host)]: 1 });
    expect(byKey.get(k.read)!.waiters.byOwner).toEqual({ [label(r1!, host)]: 1 });
    expect(byKey.get(k.sem)!.waiters.byOwner).toEqual({ [label(r3!, host)]: 1 });
    expect(byKey.get(k.write)!.waiters.byOwner).toEqual({ [label(r1!, host)]: 1 });

    // The JSON API behind the sample's guard shows the same holders.
    const summary = (list: LockInfo[]) =>
      list.map((l) => [
        l.key,
        l.kind,
        l.holders.map((h) => [h.owner.pid, h.fencingToken, h.holdCount]),
        l.waiters,
      ]);
    const res = await api(`/api/locks?match=${encodeURIComponent(`${base}:*`)}`, { headers: AUTH });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { locks: LockInfo[] };
    expect(summary(body.locks)).toEqual(summary(locks));
    const one = (await (
      await api(`/api/locks/${encodeURIComponent(k.sem)}`, { headers: AUTH })
    ).json()) as ShowBody;
    expect(one.lock).toMatchObject({ key: k.sem, kind: 'semaphore', holders: [{ owner: { pid: r2!.pid } }] });

    // Without the guard's credentials: 401 everywhere, and nothing is released.
    for (const [p, init] of [
      ['', {}],
      ['/api/locks', {}],
      ['/api/events', {}],
      ['/api/locks', { headers: { authorization: `Basic ${Buffer.from('ops:nope').toString('base64')}` } }],
      [`/api/locks/${encodeURIComponent(k.mutex)}/release`, { method: 'POST', body: '{"reason":"x"}' }],
    ] as const) {
      const refused = await api(p, init as RequestInit);
      expect([p, refused.status]).toEqual([p, 401]);
      await refused.body?.cancel();
    }
    expect(await service.isLocked(k.mutex)).toBe(true);

    // The CLI, as an operator without the app: list --json parses; release without a reason is refused.
    const cli = ['--redis', env.url, '--prefix', E2E_LOCK_PREFIX];
    const listed = await runCliProcess(['list', '--json', '--match', `${base}:*`, ...cli]);
    expect(listed.code).toBe(0);
    expect(summary((JSON.parse(listed.stdout) as { locks: LockInfo[] }).locks)).toEqual(summary(locks));
    const refused = await runCliProcess(['release', k.fair, ...cli]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--reason/);
    expect(await service.isLocked(k.fair)).toBe(true);

    // Force release through the console.
    const released = await api(`/api/locks/${encodeURIComponent(k.mutex)}/release`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'stuck since 03:00' }),
    });
    expect(released.status).toBe(200);
    expect(await released.json()).toEqual({ key: k.mutex, released: true });
    const lost = await r1!.worker.waitForMessage((m) => m.type === 'lost' && m.id === 'm', 30_000);
    expect(lost.reason).toBe('force-released');
    const winner = await Promise.race([
      r2!.worker
        .waitForMessage((m) => m.type === 'granted' && m.id === 'wm', 30_000)
        .then((m) => ({ r: r2!, m })),
      r3!.worker
        .waitForMessage((m) => m.type === 'granted' && m.id === 'wm', 30_000)
        .then((m) => ({ r: r3!, m })),
    ]);
    expect(winner.m.token).toBeGreaterThan(tokens.mutex);
    const record = `${E2E_LOCK_PREFIX}record:${base}`;
    winner.r.worker.send({ type: 'write', id: 'wm', resource: record });
    expect(await winner.r.worker.waitForMessage((m) => m.type === 'written' && m.id === 'wm')).toMatchObject({
      accepted: true,
    });
    r1!.worker.send({ type: 'write', id: 'm', resource: record });
    const stale = await r1!.worker.waitForMessage((m) => m.type === 'written' && m.id === 'm');
    expect(stale).toMatchObject({ accepted: false, token: tokens.mutex, last: winner.m.token });

    const audit = (await (
      await api(`/api/locks/${encodeURIComponent(k.mutex)}`, { headers: AUTH })
    ).json()) as ShowBody;
    expect(audit.forceReleases[0]).toMatchObject({
      key: k.mutex,
      kind: 'mutex',
      reason: 'stuck since 03:00',
      by: 'ops',
      evicted: [{ owner: { pid: r1!.pid, app: 'replica-1' }, fencingToken: tokens.mutex }],
    });
    expect(audit.forceReleases[0]!.fence).toBeGreaterThan(tokens.mutex);
    expect(audit.forceReleases[0]!.fence).toBeLessThan(winner.m.token);
    expect(audit.lock.holders[0]!.owner.pid).toBe(winner.r.pid);
  }, 240_000);
});
