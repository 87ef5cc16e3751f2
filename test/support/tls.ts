/** TLS on loopback for tests: a self-signed certificate made by openssl, and servers that use it. */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type TlsOptions } from 'node:tls';

export interface TestCertificate {
  key: string;
  cert: string;
  /** The certificate's PEM file, for NODE_EXTRA_CA_CERTS. */
  certFile: string;
  remove(): void;
}

/**
 * A self-signed P-256 certificate for localhost, 127.0.0.1 and ::1, valid for two days, made by
 * the `openssl` command (Node can sign no certificate itself) in a fresh temporary directory.
 */
export function selfSignedCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'push-api-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
    ],
    { stdio: 'ignore', timeout: 20_000 },
  );
  return {
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    certFile,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsFront {
  /** `https://localhost:{port}`. */
  url: string;
  /** TLS connections that completed their handshake and were piped on. */
  handshakes: number;
  close(): Promise<void>;
}

/**
 * A TLS terminator on 127.0.0.1 that pipes each connection, once its handshake completes, to
 * `targetPort` on 127.0.0.1 (an emulator's plain HTTP port): the emulator served over https.
 */
export async function startTlsFront(targetPort: number, options: TlsOptions): Promise<TlsFront> {
  const sockets = new Set<Socket>();
  const front = { url: '', handshakes: 0, close: async () => {} };
  const server: Server = createServer(options, (secure) => {
    front.handshakes++;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [secure, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    secure.pipe(upstream).pipe(secure);
  });
  server.on('tlsClientError', () => {});
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  front.url = `https://localhost:${(server.address() as AddressInfo).port}`;
  front.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return front;
}
