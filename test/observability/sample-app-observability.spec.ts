/*
 * The sample app's /health (Terminus) and /metrics (its own prom-client registry) over HTTP.
 */
import { register as globalRegistry } from 'prom-client';
import { startRedis, type RedisServerProcess } from '../support/redis-server';
import { startSampleAppUnderTest, type SampleAppUnderTest } from '../support/sample-app-under-test';

let redis: RedisServerProcess;
let sample: SampleAppUnderTest | undefined;

beforeAll(async () => {
  redis = await startRedis();
  sample = await startSampleAppUnderTest(redis.url);
});
afterAll(async () => {
  await sample?.close();
  await redis?.stop();
});

describe('sample app observability', () => {
  it('answers /health through Terminus', async () => {
    const res = await sample!.http.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', info: { 'distributed-lock': { status: 'up' } } });
  });

  it('counts the purchases of a decorated route on /metrics, in its own registry', async () => {
    await sample!.http.put('/seckill/obs-item').send({ stock: 5 }).expect(200);
    for (let i = 0; i < 3; i++) await sample!.http.post('/seckill/obs-item').expect(200);
    const res = await sample!.http.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    // The reset and three purchases each took the item lock once.
    expect(res.text).toMatch(/^distributed_lock_acquired_total\{kind="mutex",key="seckill"\} 4$/m);
    expect(res.text).toMatch(
      /^distributed_lock_hold_seconds_count\{kind="mutex",end="released",key="seckill"\} 4$/m,
    );
    expect(res.text).toMatch(/^distributed_lock_held 0$/m);
    expect(await globalRegistry.metrics()).not.toContain('distributed_lock');
  });
});
