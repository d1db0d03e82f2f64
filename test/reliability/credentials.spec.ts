/*
 * A wrong password and a bad TLS certificate (issue 18, point 7; bad-input table in
 * RELIABILITY.md): the call fails with a LockRedisError that says what is wrong, health says the
 * same, and the connection stops retrying instead of authenticating again twice a second forever.
 * TLS uses a self-signed certificate made with openssl for this test; with its CA the lock works.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { createLockEngine } from '../../lib/core';
import { LockRedisError } from '../../lib/core/errors';
import type { LockEngine } from '../../lib/core/engine/lock-engine';
import { getFreePort } from '../support/free-port';
import { commandCounts } from '../support/lock-env';
import { makeTempDir } from '../support/process-reaper';
import { redisInfo } from '../support/redis-command';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { closeClient, redisClient } from '../support/redis-assertions';
import { sleep } from '../support/wait';

const engines: LockEngine[] = [];
const open = (options: Parameters<typeof createLockEngine>[0]): LockEngine => {
  const engine = createLockEngine(options);
  engines.push(engine);
  return engine;
};
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

describe('a wrong password', () => {
  let server: RedisServerProcess;
  beforeAll(async () => {
    server = await startRedis();
    const admin = redisClient(server.url);
    await admin.call('ACL', 'SETUSER', 'app', 'on', '>right', '~*', '&*', '+@all');
    await closeClient(admin);
  });
  afterAll(async () => server?.stop());

  const authCalls = async (): Promise<number> => (await commandCounts(server.port)).get('auth') ?? 0;

  it('fails the call clearly, says so in health, and stops retrying', async () => {
    const engine = open({ redis: `redis://app:wrong@127.0.0.1:${server.port}`, keyPrefix: 'cred:' });
    const err = (await engine.acquire('k', { waitMs: 0 }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(LockRedisError);
    expect(err.message).toMatch(/WRONGPASS/);
    const readiness = await engine.readiness();
    expect(readiness.ready).toBe(false);
    expect((readiness as { reason?: string }).reason).toMatch(/refused the credentials.*not retrying/);
    const settled = await authCalls();
    // ioredis would reconnect (and AUTH again) every ~200-500 ms; wait long enough to see several.
    await sleep(1_500);
    expect(await authCalls()).toBe(settled);
    const again = (await engine.acquire('k', { waitMs: 0 }).catch((e: unknown) => e)) as Error;
    expect(again).toBeInstanceOf(LockRedisError);
    expect(again.message).toMatch(/refused the credentials .*WRONGPASS.*not retrying/);
  });

  it('works with the right password', async () => {
    const engine = open({ redis: `redis://app:right@127.0.0.1:${server.port}`, keyPrefix: 'cred:' });
    const handle = await engine.acquire('k', { waitMs: 0 });
    expect(await handle.release()).toBe(true);
  });
});

describe('a TLS certificate the client does not trust', () => {
  let server: RedisServerProcess;
  let tlsPort: number;
  let ca: Buffer;
  beforeAll(async () => {
    const dir = makeTempDir('redis-tls-');
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
      '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    ], { stdio: 'ignore' }); // prettier-ignore
    ca = fs.readFileSync(cert);
    tlsPort = await getFreePort();
    server = await startRedis({
      args: [
        '--tls-port',
        String(tlsPort),
        '--tls-cert-file',
        cert,
        '--tls-key-file',
        key,
        '--tls-auth-clients',
        'no',
      ],
    });
  });
  afterAll(async () => server?.stop());

  const connections = async (): Promise<number> =>
    Number((await redisInfo(server.port, 'stats')).total_connections_received);

  it('fails the call naming the certificate, and stops retrying', async () => {
    const engine = open({ redis: `rediss://127.0.0.1:${tlsPort}`, keyPrefix: 'tls:' });
    const err = (await engine.acquire('k', { waitMs: 0 }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(LockRedisError);
    expect(err.message).toMatch(/TLS certificate was rejected .*self-signed certificate.*tls: \{ ca \}/);
    const readiness = await engine.readiness();
    expect((readiness as { reason?: string }).reason).toMatch(/TLS certificate was rejected/);
    const settled = await connections();
    await sleep(1_500);
    // Only the INFO probes themselves connect from now on.
    expect((await connections()) - settled).toBeLessThanOrEqual(1);
  });

  it('works with rediss:// and the CA that signed the certificate', async () => {
    const engine = open({
      redis: { host: '127.0.0.1', port: tlsPort, tls: { ca } },
      keyPrefix: 'tls:',
    });
    const handle = await engine.acquire('k', { waitMs: 0 });
    expect(await handle.release()).toBe(true);
  });
});
