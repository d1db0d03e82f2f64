/*
 * The worker side of spawn-worker.ts: one JSON object per stdout line to the parent, one JSON
 * object per stdin line from it. Workers must not print anything else to stdout.
 */
import * as readline from 'readline';

/** Sends one message to the parent test (a JSON line on stdout; synchronous on Linux pipes). */
export function emit(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Calls `handler` for each JSON line the parent sends with send(); returns an unsubscribe. */
export function onParentMessage(handler: (message: any) => void): () => void {
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim()) handler(JSON.parse(line));
  });
  return () => lines.close();
}

/** Reads a required environment variable, failing loudly if the parent did not pass it. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`worker needs environment variable ${name}`);
  return value;
}

/**
 * The protocol of a worker that runs one workload: emits {type:'ready', pid} once `ready` resolved,
 * waits for {type:'go'}, runs `run`, emits its report as {type:'done', ...report} or
 * {type:'error', message}, then `close`s and exits (stdin, the parent's pipe, would keep it alive).
 * Progress lines ({type:'progress', ...progress()}) every 5 s make a stalled run diagnosable.
 */
export function runOnGo(workload: {
  ready?: () => Promise<unknown>;
  run: () => Promise<Record<string, unknown>>;
  progress?: () => Record<string, unknown>;
  close: () => Promise<void>;
}): void {
  const stop = onParentMessage((message: { type: string }) => {
    if (message.type !== 'go') return;
    stop();
    const progress = workload.progress;
    const ticker = progress && setInterval(() => emit({ type: 'progress', ...progress() }), 5000);
    ticker?.unref();
    workload
      .run()
      .then((report) => emit({ type: 'done', ...report }))
      .catch((error: unknown) => {
        emit({
          type: 'error',
          message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
        process.exitCode = 1;
      })
      .finally(async () => {
        clearInterval(ticker);
        await workload.close();
        process.exit();
      });
  });
  (workload.ready?.() ?? Promise.resolve()).then(
    () => emit({ type: 'ready', pid: process.pid }),
    (error: unknown) => {
      emit({ type: 'error', message: String(error) });
      process.exit(1);
    },
  );
}
