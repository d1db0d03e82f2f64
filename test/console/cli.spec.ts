/*
 * The CLI as an operator runs it (its own process, from the sources) against locks a real engine
 * holds: show, release with a reason, audit, list --kind, text and JSON output, and the exit codes
 * the usage text promises (0 done, 1 not found, 2 bad command line, 3 Redis unreachable).
 */
import type { ForceReleaseRecord, LockInfo } from '../../lib/core';
import { LockLostError } from '../../lib/core/errors';
import { getFreePort } from '../support/free-port';
import { uniqueKey, useLockEnv, whenAborted } from '../support/lock-env';
import { runCliProcess } from '../support/run-cli';
import { waitUntil } from '../support/wait';

const PREFIX = 'cli:';
const env = useLockEnv({ keyPrefix: PREFIX });
const cli = (...args: string[]) => runCliProcess([...args, '--redis', env.url, '--prefix', PREFIX]);

describe('the CLI', () => {
  it('shows a held lock, force-releases it with a reason, and lists the release in the audit', async () => {
    const engine = env.engine({ keyPrefix: PREFIX, app: 'billing' });
    const key = uniqueKey('invoice');
    const handle = await engine.acquire(key);
    // The registry shows a held lock's engine from its next sync on (250-500 ms; later on a loaded
    // machine): the CLI runs once it does, so the text below has the app's name to show.
    await waitUntil(async () => (await engine.inspect(key))?.holders[0]?.owner.app === 'billing', {
      description: "the holder's engine in the registry",
    });

    const shown = await cli('show', key, '--json');
    expect(shown.code).toBe(0);
    const body = JSON.parse(shown.stdout) as { key: string; lock: LockInfo; forceReleases: unknown[] };
    expect(body.key).toBe(key);
    expect(body.lock).toMatchObject({ key, kind: 'mutex' });
    expect(body.lock.holders).toHaveLength(1);
    expect(body.lock.holders[0]).toMatchObject({ fencingToken: handle.fencingToken, holdCount: 1 });
    expect(body.forceReleases).toEqual([]);
    const text = await cli('show', key);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(key);
    expect(text.stdout).toContain('billing');

    const released = await cli('release', key, '--reason', 'stuck after deploy', '--by', 'ops-anna');
    expect(released.code).toBe(0);
    expect(released.stdout).toContain('Released');
    const reason = await whenAborted(handle.signal);
    expect((reason as LockLostError).reason).toBe('force-released');
    expect(await engine.isLocked(key)).toBe(false);

    const audit = await cli('audit', '--key', key, '--json');
    expect(audit.code).toBe(0);
    const { forceReleases } = JSON.parse(audit.stdout) as { forceReleases: ForceReleaseRecord[] };
    expect(forceReleases).toHaveLength(1);
    expect(forceReleases[0]).toMatchObject({ key, reason: 'stuck after deploy', by: 'ops-anna' });
    expect((await cli('audit', '--key', key)).stdout).toContain('stuck after deploy');
  });

  it('lists only the kind asked for', async () => {
    const engine = env.engine({ keyPrefix: PREFIX });
    const base = uniqueKey('kinds');
    const mutex = await engine.acquire(`${base}:m`);
    const reader = await engine.acquire(`${base}:r`, { mode: 'read' });
    try {
      // list() reads the registry, which each engine writes off the lock path (every 250 ms).
      await waitUntil(async () => (await engine.list({ match: `${base}:*` })).locks.length === 2, {
        description: 'both locks in the registry',
      });
      const listed = await cli('list', '--json', '--match', `${base}:*`, '--kind', 'read-write');
      expect(listed.code).toBe(0);
      const { locks } = JSON.parse(listed.stdout) as { locks: LockInfo[] };
      expect(locks.map((l) => [l.key, l.kind])).toEqual([[`${base}:r`, 'read-write']]);
    } finally {
      await mutex.release();
      await reader.release();
    }
  });

  it('exits 1 for a lock that is not held, 2 for a bad command line, 3 when Redis is unreachable', async () => {
    const free = uniqueKey('free');
    const show = await cli('show', free);
    expect(show.code).toBe(1);
    expect(show.stdout).toContain('is not held');
    expect((await cli('release', free, '--reason', 'cleanup')).code).toBe(1);
    const bad = await cli('list', '--kind', 'nonsense');
    expect(bad.code).toBe(2);
    const down = await runCliProcess(['list', '--redis', `redis://127.0.0.1:${await getFreePort()}`]);
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/Redis|ECONNREFUSED|connect/i);
  });
});
