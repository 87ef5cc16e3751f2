/** Starts a sink or the emulator in a child process and talks to it over IPC. */
import { type ChildProcess, fork } from 'node:child_process';
import type { FromChild, ServerChildConfig, SinkStats, ToChild } from '../sink/protocol.js';
import { childScript } from './paths.js';

export interface ServerProcess {
  url: string;
  appId: string;
  clientId: string;
  clientSecret: string;
  scopeBase: string;
  pid: number;
  stats(): Promise<SinkStats>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
// A harness that dies must not leave servers behind.
process.on('exit', () => {
  for (const child of live) child.kill();
});

function nextMessage<T extends FromChild['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs = 30_000,
): Promise<Extract<FromChild, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`server child: no ${type} message in ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: FromChild) => {
      if (message.type === type) finish(undefined, message as Extract<FromChild, { type: T }>);
    };
    const onExit = (code: number | null) => finish(new Error(`server child exited (${code}) before ${type}`));
    function finish(error: Error | undefined, message?: Extract<FromChild, { type: T }>): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(message as Extract<FromChild, { type: T }>);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export async function startServerProcess(config: ServerChildConfig): Promise<ServerProcess> {
  const child = fork(childScript('server-main'), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const ready = await nextMessage(child, 'ready');
  const send = (message: ToChild) => child.send(message);
  return {
    url: ready.url,
    appId: ready.appId,
    clientId: ready.clientId,
    clientSecret: ready.clientSecret,
    scopeBase: ready.scopeBase,
    pid: child.pid ?? -1,
    async stats() {
      const reply = nextMessage(child, 'stats');
      send({ type: 'stats' });
      return (await reply).stats;
    },
    async reset() {
      const reply = nextMessage(child, 'reset-done');
      send({ type: 'reset' });
      await reply;
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      send({ type: 'close' });
      const timer = setTimeout(() => child.kill(), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs `use` with a started server, and always closes it. */
export async function withServer<T>(config: ServerChildConfig, use: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await startServerProcess(config);
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}
