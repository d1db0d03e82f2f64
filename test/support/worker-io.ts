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
