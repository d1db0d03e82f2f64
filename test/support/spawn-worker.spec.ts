import * as path from 'path';
import { trackedChildPids } from './process-reaper';
import { spawnWorker } from './spawn-worker';

describe('spawnWorker', () => {
  const echoWorker = path.join(__dirname, 'fixtures', 'echo-worker.ts');

  it('exchanges JSON lines, pauses, resumes and is killed', async () => {
    const worker = spawnWorker(echoWorker, { env: { WORKER_NAME: 'w1' } });
    try {
      expect(await worker.waitForMessage((m) => m.type === 'ready')).toMatchObject({
        name: 'w1',
        pid: worker.pid,
      });
      expect(worker.stdoutNoise()).toEqual(['not json: ignored by the runner']);
      worker.send({ type: 'echo', value: 42 });
      expect(await worker.waitForMessage((m) => m.type === 'echo')).toEqual({ type: 'echo', value: 42 });
      worker.send({ type: 'tick' });
      await worker.waitForMessage((m) => m.type === 'tick');
      worker.pause();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const count = worker.messages.length;
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(worker.messages.length).toBe(count);
      worker.resume();
      await worker.waitForMessage((m) => m.type === 'tick' && m.at > Date.now() - 1000);
      worker.kill('SIGKILL');
      expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await expect(worker.waitForMessage((m) => m.type === 'never', 100)).rejects.toThrow(/exited/);
    } finally {
      await worker.stop();
    }
  });

  it('rejects a wait when the worker exits first', async () => {
    const worker = spawnWorker(echoWorker, { env: { WORKER_NAME: 'w2' } });
    await worker.waitForMessage((m) => m.type === 'ready');
    const wait = worker.waitForMessage((m) => m.type === 'never', 10_000);
    worker.send({ type: 'exit', code: 3 });
    await expect(wait).rejects.toThrow(/exited \(code 3/);
    expect(trackedChildPids()).not.toContain(worker.pid);
  });
});
