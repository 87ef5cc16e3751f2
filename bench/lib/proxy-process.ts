/** Starts the delay proxy (bench/net/delay-proxy.ts) in a child process and talks to it over IPC. */
import { type ChildProcess, fork } from 'node:child_process';
import type { ProxyStats } from '../net/delay-proxy.js';
import type { FromProxy, ProxyChildConfig, ToProxy } from '../net/protocol.js';
import { childScript } from './paths.js';

export interface ProxyProcess {
  /** `http://127.0.0.1:{port}`: the far-away address of the server behind the proxy. */
  url: string;
  stats(): Promise<ProxyStats>;
  /** Closes every connection through the proxy, so that the next run opens its own. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
// A harness that dies must not leave proxies behind.
process.on('exit', () => {
  for (const child of live) child.kill();
});

function nextMessage<T extends FromProxy['type']>(
  child: ChildProcess,
  type: T,
): Promise<Extract<FromProxy, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`proxy child: no ${type} message in 30 s`)), 30_000);
    const onMessage = (message: FromProxy) => {
      if (message.type === type) finish(undefined, message as Extract<FromProxy, { type: T }>);
    };
    const onExit = (code: number | null) => finish(new Error(`proxy child exited (${code}) before ${type}`));
    function finish(error: Error | undefined, message?: Extract<FromProxy, { type: T }>): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(message as Extract<FromProxy, { type: T }>);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export async function startProxyProcess(config: ProxyChildConfig): Promise<ProxyProcess> {
  const child = fork(childScript('delay-proxy-main'), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const ready = await nextMessage(child, 'ready');
  const send = (message: ToProxy) => child.send(message);
  return {
    url: ready.url,
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
