/**
 * The emulator over real HTTP, on loopback by default. srvx turns Node's request into a fetch
 * Request and writes the Response back; this file adds only what the socket alone knows
 * (Content-Length, chunked encoding), dropping connections, and a close() that really closes.
 *
 * Addresses: token service at `{url}/auth`, data API at `{url}`, storage host at `{url}/storage`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import { createPushApiHandler, type PushApiEmulator } from './handler.js';
import type { EmulatorOptions } from './options.js';

export interface StartEmulatorOptions extends Omit<EmulatorOptions, 'authUrl' | 'baseUrl' | 'uploadUrl'> {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Interface to listen on. @default '127.0.0.1' */
  host?: string;
}

export interface RunningEmulator {
  /** `http://{host}:{port}` */
  readonly url: string;
  /** `{url}/auth`: the token endpoint is `{authUrl}/oauth2/token`. */
  readonly authUrl: string;
  /** `{url}`: data paths are `{baseUrl}/services/push/v1/...`. */
  readonly baseUrl: string;
  /** `{url}/storage`: where signed upload addresses point. */
  readonly uploadUrl: string;
  /** State, faults and controls of the served emulator. */
  readonly mock: PushApiEmulator;
  /** Stops listening and closes every connection, idle keep-alive ones included. */
  close(): Promise<void>;
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startEmulator(options: StartEmulatorOptions = {}): Promise<RunningEmulator> {
  const { port = 0, host = '127.0.0.1', ...emulatorOptions } = options;
  let emulator: PushApiEmulator | undefined;
  let url = 'http://127.0.0.1';

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void serve(req, res);
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!emulator) return void res.destroy();
      const request = new NodeRequest({ req, res });
      const response = await emulator.handle(request, {
        wire: { contentLength: req.headers['content-length'], transferEncoding: req.headers['transfer-encoding'] },
        url: new URL(req.url ?? '/', url),
      });
      if (response.type === 'error') {
        // An injected dropped connection: the client sees a reset, as with a crashed server.
        req.socket.destroy();
        return;
      }
      // A refused body (411, 413, 403 on a PUT...) was not read; closing avoids draining it.
      if (!req.complete) response.headers.set('connection', 'close');
      await sendNodeResponse(res, response);
    } catch {
      res.destroy();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  url = `http://${hostForUrl(host)}:${address.port}`;
  emulator = createPushApiHandler({
    ...emulatorOptions,
    authUrl: `${url}/auth`,
    baseUrl: url,
    uploadUrl: `${url}/storage`,
    scopeBase: emulatorOptions.scopeBase,
  });

  let closing: Promise<void> | undefined;
  return {
    url,
    authUrl: `${url}/auth`,
    baseUrl: url,
    uploadUrl: `${url}/storage`,
    mock: emulator,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
