/** How a child process ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Options for {@link startRedis}. */
export interface StartRedisOptions {
  /** Port to listen on; default: a free one (retried if it is taken before redis binds it). */
  port?: number;
  /** Extra command-line arguments, e.g. ['--cluster-enabled', 'yes'] or ['--replicaof', host, port]. */
  args?: string[];
  /** Run as a sentinel with these sentinel.conf lines (port/bind/dir/logfile are added). */
  sentinelConfig?: string[];
  /** How long to wait for PING to answer; default 10 s. */
  startTimeoutMs?: number;
}

/** A redis-server (or sentinel) child process on 127.0.0.1. */
export interface RedisServerProcess {
  /** Lets the test process exit while this server runs (the process reaper still SIGKILLs it at exit). */
  unref(): void;
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:PORT` */
  readonly url: string;
  /** Pid of the current incarnation (changes on restart). */
  readonly pid: number;
  /** Private temporary working directory (removed by stop()). */
  readonly dir: string;
  readonly running: boolean;
  readonly paused: boolean;
  /** Settles when the current incarnation exits. */
  readonly exited: Promise<ExitStatus>;
  /** SIGTERM (and SIGCONT if paused), SIGKILL after `graceMs`; awaits exit; removes the dir. */
  stop(graceMs?: number): Promise<void>;
  /** Sends `signal` (default SIGKILL) as is; await `exited` to see the process go. */
  kill(signal?: NodeJS.Signals): void;
  /** Freezes the process (SIGSTOP): it holds its sockets but answers nothing. */
  pause(): void;
  /** Thaws a paused process (SIGCONT). */
  resume(): void;
  /** Stops if running, waits `downtimeMs`, starts again on the same port with the same args (empty dataset). */
  restart(options?: { downtimeMs?: number }): Promise<void>;
  /** Recent stdout/stderr plus the tail of the server log, for error messages. */
  output(): string;
}
